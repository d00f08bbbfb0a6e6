/**
 * Files a run killed at any moment leaves usable, for `--resume`:
 * - `writeFileAtomically`: the text goes to a temporary file beside the name, flushed to disk, then
 *   renamed over it, so the old file or the new one is there, never half of one;
 * - `appendJsonLine` / `readJsonLines`: one JSON value a line, each appended and flushed as it comes;
 *   a line cut short by a kill is skipped on reading (the next line starts on a line of its own).
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';

export function writeFileAtomically(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.partial`;
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

export function appendJsonLine(path: string, value: unknown): void {
  const fd = openSync(path, 'a');
  try {
    // A line cut short before it (a kill mid-write) ends here, so that this one parses on its own.
    writeSync(fd, `\n${JSON.stringify(value)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The whole lines of `path` (none when it does not exist). */
export function readJsonLines<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        return line.trim() === '' ? [] : [JSON.parse(line) as T];
      } catch {
        return []; // a line cut short by a kill
      }
    });
}
