/** Parsers for command-line option values: each refuses bad input with a CliError. */
import { readFileSync } from 'node:fs';
import { redactUrl } from '../server/cluster';
import { POSTGRES_URL } from '../server/store/PgGameStore';
import { CliError } from './errors';

export function integerOption(name: string, min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^-?\d+$/.test(value.trim())) throw new CliError(`${name} must be an integer, got ${JSON.stringify(value)}`);
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new CliError(`${name} must be between ${min} and ${max}, got ${value}`);
    return n;
  };
}

/** Reads a text file, turning I/O failures into one readable line. */
export function readTextFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new CliError(`${path}: cannot read: ${why}`);
  }
}

/** --store's value (or STORE_URL's): a postgres:// URL, or undefined for the data directory. */
export function checkStoreUrl(url: string | undefined): string | undefined {
  if (url !== undefined && !POSTGRES_URL.test(url)) throw new CliError(`--store: ${redactUrl(url)} is not a postgres:// URL`);
  return url;
}
