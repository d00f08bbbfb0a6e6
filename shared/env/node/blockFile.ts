/**
 * A batch's shared file (`OpenBlockFile` of shared/env/servedBatch.ts): the client makes it empty (in
 * /dev/shm, memory) and maps it; the server sizes it and copies the batch's block into it with
 * positional writes after each change (one, or one per field when batches in several processes
 * share the file). Node cannot map a file itself, and a write is a copy at memory speed.
 */
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import type { BlockFile } from '../servedBatch';

export function openBlockFile(path: string, bytes: number, shared: boolean): BlockFile {
  // Not created here, and only when empty, or (shared) sized by another batch and not written yet, so all zeros: a wrong path cannot clobber a file.
  const fd = openSync(path, 'r+');
  try {
    const stats = fstatSync(fd);
    const sizedBefore = shared && stats.isFile() && stats.size === bytes && allZeros(fd, bytes);
    if (!stats.isFile() || (stats.size !== 0 && !sizedBefore)) {
      const shareable = shared ? ` or one of ${bytes} zero bytes another batch of the same file sized` : '';
      throw new Error(`the batch's file must be an empty regular file made by the client${shareable}; this one has ${stats.size} bytes${stats.size === bytes && shared ? ', not all zero' : ''}`);
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

/** The file's first `bytes` bytes are all zero (as a file another batch sized, before any batch wrote into it). */
function allZeros(fd: number, bytes: number): boolean {
  const size = Math.min(bytes, 1 << 20);
  const chunk = Buffer.alloc(size);
  const zeros = Buffer.alloc(size);
  for (let position = 0; position < bytes; ) {
    const read = readSync(fd, chunk, 0, Math.min(size, bytes - position), position);
    if (read === 0 || Buffer.compare(chunk.subarray(0, read), zeros.subarray(0, read)) !== 0) return false;
    position += read;
  }
  return true;
}
