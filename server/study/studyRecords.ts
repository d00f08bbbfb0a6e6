/**
 * A study's records of its games (a worker's game started, a game ended), written in the order
 * they happened and written again until the worker store takes them: a database that is away for
 * a while (a failover, an outage) loses none of them, and a worker is never left in a game that
 * ended. A refusal of the store's own (a WorkerError) is final, and said.
 */
import { WorkerError } from '../store/workerChanges';
import { waitAtMost } from '../waitAtMost';

/** How long to wait before writing a record again after the store failed. */
export const RECORD_RETRY_MS = 1000;

interface PendingRecord {
  readonly what: string;
  readonly write: () => unknown;
  readonly written: () => void;
}

export class StudyRecords {
  private readonly pending: PendingRecord[] = [];
  private writing: Promise<void> | null = null;
  private active = false;

  constructor(
    /** Told once per failure streak, and when a record is refused. */
    private readonly warn: (line: string) => void,
    private readonly retryMs = RECORD_RETRY_MS,
  ) {}

  /** Writes the record after those before it; resolves once it is written (or refused). */
  add(what: string, write: () => unknown): Promise<void> {
    return new Promise((written) => {
      this.pending.push({ what, write, written });
      if (!this.active) {
        this.active = true;
        this.writing = this.writeAll();
      }
    });
  }

  /** Waits at most `ms` for every record to be written; what is still waiting then. */
  async settled(ms: number): Promise<string[]> {
    if (this.writing) await waitAtMost(this.writing, ms);
    return this.pending.map((record) => record.what);
  }

  private async writeAll(): Promise<void> {
    let failing = false;
    try {
      while (this.pending.length > 0) {
        const next = this.pending[0]!;
        try {
          await next.write();
        } catch (error) {
          if (!(error instanceof WorkerError)) {
            if (!failing) this.warn(`${next.what} could not be written (tried again every ${this.retryMs / 1000} s until it is): ${(error as Error)?.message ?? String(error)}`);
            failing = true;
            // Waiting to try again keeps no process alive: a stopping server says what is left (settled).
            await new Promise((resolve) => setTimeout(resolve, this.retryMs).unref());
            continue;
          }
          this.warn(`${next.what} was refused: ${error.message}`);
        }
        if (failing) this.warn(`${next.what} is written now`);
        failing = false;
        this.pending.shift();
        next.written();
      }
    } finally {
      this.active = false;
    }
  }
}
