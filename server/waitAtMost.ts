/**
 * Waits for `work` for at most `ms`: true when it settled in time (resolved or rejected), false
 * when the time ran out. For steps of a shutdown that must not hang on a service that is away.
 */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = work.then(
    () => true,
    () => true,
  );
  const settledInTime = await Promise.race([settled, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  clearTimeout(timer);
  return settledInTime;
}
