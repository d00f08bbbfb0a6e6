/**
 * A batch's shared file (`OpenBlockFile` of shared/env/servedBatch.ts): the client makes it empty (in
 * /dev/shm, memory) and maps it; the server sizes it and copies the batch's block into it with
 * positional writes after each change (one, or one per field when batches in several processes
 * share the file). Node cannot map a file itself, and a write is a copy at memory speed.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import type { BlockFile } from '../servedBatch';

export function openBlockFile(path: string, bytes: number, shared: boolean): BlockFile {
  // Not created here, and only when empty (or, shared, sized for this very layout by another batch): a wrong path cannot clobber a file.
  const fd = openSync(path, 'r+');
  try {
    const stats = fstatSync(fd);
    const sizedBefore = shared && stats.size === bytes;
    if (!stats.isFile() || (stats.size !== 0 && !sizedBefore)) {
      throw new Error(`the batch's file must be an empty regular file made by the client${shared ? ` or one of ${bytes} bytes another batch sized` : ''}; this one has ${stats.size} bytes`);
    }
    if (!sizedBefore) ftruncateSync(fd, bytes);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return {
    write(block: Uint8Array, position: number): void {
      // One write, which a regular file takes whole; the loop is for a short one.
      for (let written = 0; written < block.length; ) written += writeSync(fd, block, written, block.length - written, position + written);
    },
    close(): void {
      closeSync(fd);
    },
  };
}
