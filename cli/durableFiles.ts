/**
 * A file written whole or not at all: the text goes to a temporary file beside it, flushed to
 * disk, then renamed over the name. A run killed while writing leaves the old file or the new
 * one, never half of one; what `--resume` reads is always whole.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';

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
