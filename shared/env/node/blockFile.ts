/**
 * A batch's shared file (`OpenBlockFile` of shared/env/servedBatch.ts): the client makes it empty (in
 * /dev/shm, memory) and maps it; the server sizes it and copies the batch's block into it with one
 * positional write after each change. Node cannot map a file itself, and one write of the whole
 * block is a copy at memory speed.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import type { BlockFile } from '../servedBatch';

export function openBlockFile(path: string, bytes: number): BlockFile {
  // Not created here, and only when empty: a wrong path cannot clobber a file.
  const fd = openSync(path, 'r+');
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size !== 0) throw new Error(`the batch's file must be an empty regular file made by the client; this one has ${stats.size} bytes`);
    ftruncateSync(fd, bytes);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return {
    write(block: Uint8Array): void {
      // One write, which a regular file takes whole; the loop is for a short one.
      for (let written = 0; written < block.length; ) written += writeSync(fd, block, written, block.length - written, written);
    },
    close(): void {
      closeSync(fd);
    },
  };
}
