/**
 * The lock on making a quick-play game in a pool. Colyseus lets simultaneous requests with the
 * same filter wait for one another's new room, but a leader's filter and a follower's differ
 * (each asks for its own seat open): without more, a leader and a follower arriving at the same
 * moment in an empty pool would each make a game and wait in it for ever. So a quick-play game is
 * made under a lock per pool, kept in Colyseus's presence (shared by every process through
 * Redis) and held until the new room is listed; whoever takes the lock next looks again first
 * (server/index.ts, where Colyseus is about to make a room).
 */
import { matchMaker } from '@colyseus/core';

/** The lock is given up after this long even if its room never got listed (its process died). */
const LOCK_SECONDS = 2;
const POLL_MS = 10;

export function creationLockKey(pool: string, study: string): string {
  return `cerealbar:creating:${JSON.stringify([pool, study])}`;
}

/** Waits for the lock (at most LOCK_SECONDS: a holder that died lets it expire) and takes it. */
export async function takeCreationLock(key: string): Promise<void> {
  const deadline = Date.now() + LOCK_SECONDS * 1000;
  while ((await matchMaker.presence.incr(key)) > 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  await matchMaker.presence.expire(key, LOCK_SECONDS);
}

export async function releaseCreationLock(key: string): Promise<void> {
  await matchMaker.presence.del(key);
}
