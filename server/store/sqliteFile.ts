/**
 * Opening a SQLite file that other processes may be opening at the same moment (several `serve`
 * processes started together on one data directory).
 *
 * Switching a new file to WAL takes a lock that SQLite's busy handler does not wait for: the
 * pragma fails with SQLITE_BUSY at once, whatever the busy timeout, so it is tried again for a
 * while. Each store then makes or upgrades its schema in one IMMEDIATE transaction (see
 * `schemaTransaction`), so two processes never both add the same column.
 */
import Database from 'better-sqlite3';
import { createOwnerOnlyFile } from './ownerOnly';

const WAL_ATTEMPTS_MS = 10_000;

export function openSharedDatabase(path: string, options?: Database.Options): Database.Database {
  // Made its owner's only before SQLite opens it: the -wal and -shm files SQLite makes take its mode (P-128).
  if (!options?.readonly && !options?.fileMustExist) createOwnerOnlyFile(path);
  const db = new Database(path, options);
  try {
    useWal(db);
    db.pragma('foreign_keys = ON');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function useWal(db: Database.Database): void {
  const giveUpAt = Date.now() + WAL_ATTEMPTS_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > giveUpAt) throw error;
      // A few milliseconds, at random so that processes started together do not retry in step.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5 + Math.random() * 20);
    }
  }
}

/** Runs `work` (making or upgrading a schema) in one IMMEDIATE transaction: one process at a time. */
export function schemaTransaction(db: Database.Database, work: () => void): void {
  db.transaction(work).immediate();
}
