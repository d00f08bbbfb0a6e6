/**
 * Whether a process of this machine still runs: what decides, on one machine, that a store is
 * gone (its lease names its process). Its pid alone can mislead once the pid is used again, so
 * its start time is kept beside it where the machine tells it.
 */
import { readFileSync } from 'node:fs';

/** Whether process `pid` of this machine runs (a signal 0 reaches it, or exists but is not ours). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When process `pid` started, in the kernel's clock ticks since boot (field 22 of Linux's
 * /proc/<pid>/stat, after the command name, which may hold spaces and parentheses); null where
 * the machine does not tell it. A pid is used again once its process has ended: with its start,
 * the process that holds a lease is known even then.
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
