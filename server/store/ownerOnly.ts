/**
 * A data directory is its owner's only (P-128): it holds participants' platform ids
 * (workers.sqlite), every game's text (logs/, the index), LLM call records and the admin token.
 * The stores make their folders 0700 and their files 0600, which a umask can only narrow, never
 * widen; `tightenDataDir` brings a data directory made before (or by hand) to the same modes when
 * `serve` starts.
 */
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';

export const OWNER_DIR_MODE = 0o700;
export const OWNER_FILE_MODE = 0o600;

/** Makes `dir`, and any missing folder above it, its owner's only. */
export function makeOwnerOnlyDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: OWNER_DIR_MODE });
}

/** Creates `path` empty, its owner's only, unless it exists (so that SQLite, which gives a database's -wal and -shm files its mode, makes them so too). */
export function createOwnerOnlyFile(path: string): void {
  closeSync(openSync(path, 'a', OWNER_FILE_MODE));
}

/** The files the stores keep directly in a data directory (the admin token is not among them: see tightenDataDir). */
const DATA_FILES = ['games.sqlite', 'workers.sqlite'].flatMap((db) => [db, `${db}-wal`, `${db}-shm`, `${db}-journal`]).concat(['data-directory-id']);
/** Folders whose files are all the stores': the logs (files only), the LLM agents' call records (the whole tree). */
const LOGS_DIR = 'logs';
const RECORDS_DIR = 'llm';

export interface Tightened {
  /** What was made its owner's only: "<path> (mode 644)". */
  readonly changed: string[];
  /** What could not be: "<path>: <why>". */
  readonly problems: string[];
}

/**
 * Makes an existing data directory its owner's only: the directory, its logs/ and llm/ folders
 * (0700), and the stores' files in them (0600), where group or others have any right. Links are
 * not followed, and files that are not the stores' are left as they are. The admin token is left
 * to `resolveAdminToken`, which refuses one others could read: it may have been read, and only a
 * new token makes it secret again. A directory that does not exist is made, its owner's only.
 */
export function tightenDataDir(dataDir: string): Tightened {
  const changed: string[] = [];
  const problems: string[] = [];
  const tighten = (path: string, stats: Stats, mode: number) => {
    if ((stats.mode & 0o077) === 0) return;
    try {
      chmodSync(path, mode);
      changed.push(`${path} (mode ${(stats.mode & 0o777).toString(8)})`);
    } catch (error) {
      problems.push(`${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  /** lstat, or null for a path that is not there (or cannot be read, said in problems). */
  const look = (path: string): Stats | null => {
    try {
      return lstatSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') problems.push(`${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      return null;
    }
  };
  const entries = (dir: string): string[] => {
    try {
      return readdirSync(dir);
    } catch (error) {
      problems.push(`${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      return [];
    }
  };
  /** `deep`: its sub-folders too (the records); otherwise only its files (the logs). */
  const folder = (dir: string, deep: boolean) => {
    const stats = look(dir);
    if (!stats?.isDirectory()) return;
    tighten(dir, stats, OWNER_DIR_MODE);
    for (const name of entries(dir)) {
      const path = join(dir, name);
      const entry = look(path);
      if (entry?.isFile()) tighten(path, entry, OWNER_FILE_MODE);
      else if (deep && entry?.isDirectory()) folder(path, true);
    }
  };

  let root: Stats;
  try {
    // The directory given may be a link to one: it is followed, as every use of the directory does.
    root = statSync(dataDir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    makeOwnerOnlyDir(dataDir);
    return { changed, problems };
  }
  if (!root.isDirectory()) return { changed, problems };
  tighten(dataDir, root, OWNER_DIR_MODE);
  for (const name of DATA_FILES) {
    const path = join(dataDir, name);
    const stats = look(path);
    if (stats?.isFile()) tighten(path, stats, OWNER_FILE_MODE);
  }
  folder(join(dataDir, LOGS_DIR), false);
  folder(join(dataDir, RECORDS_DIR), true);
  return { changed, problems };
}
