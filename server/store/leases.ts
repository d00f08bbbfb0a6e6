/**
 * A store's hold on its games (P-112): every open store holds a lease that names its process and
 * renews it every LEASE_RENEW_MS, and recovery closes only the games of stores that are gone.
 * Both game stores keep leases (SqliteGameStore in its index, PgGameStore in the database too)
 * and judge them here.
 */
import { processRuns, processStart } from './processes';

/** How long a lease holds without renewal, for a store of another machine, and how often a store renews its own. */
export const LEASE_MS = 10_000;
export const LEASE_RENEW_MS = 2_000;

/** The start of this process (processStart), which its leases name beside its pid. */
export const OWN_PROCESS_START = processStart(process.pid);

/** A store's lease. */
export interface StoreLease {
  readonly storeId: string;
  readonly pid: number;
  /** processStart(pid) when the lease was taken, where the machine tells it. */
  readonly pidStart: string | null;
  /** Epoch ms of the last renewal, by the clock that renews the leases. */
  readonly renewedAt: number;
}

/**
 * Whether the store that holds `lease` is gone. On this machine its process decides, never the
 * lease's age: a process stalled past its lease (a long GC, swap, SIGSTOP, a paused machine) or a
 * clock stepped forward must not have its games closed under it, and a pid used again by another
 * process is told apart by its start. A store of another machine is judged by its lease, as `now`
 * (by the clock that renews the leases) finds it.
 */
export function leaseGone(lease: StoreLease, onThisMachine: boolean, now: number): boolean {
  if (!onThisMachine) return lease.renewedAt < now - LEASE_MS;
  if (!processRuns(lease.pid)) return true;
  // A process runs with that pid: another one, if it tells a start other than the lease's.
  const start = lease.pidStart === null ? null : processStart(lease.pid);
  return start !== null && start !== lease.pidStart;
}
