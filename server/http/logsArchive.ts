/**
 * Game logs as one download: a gzipped tar of `<gameId>.jsonl` files, streamed as it is written.
 * The logs come read (they are small): a game still being played is archived as far as it had
 * been written.
 */
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';

export interface ArchivedFile {
  /** The file's name in the archive. */
  readonly name: string;
  readonly text: string;
}

export async function streamLogsArchive(files: readonly ArchivedFile[], out: Writable): Promise<void> {
  const archive = pack();
  const written = pipeline(archive, createGzip(), out);
  try {
    for (const file of files) {
      const data = Buffer.from(file.text, 'utf8');
      await new Promise<void>((resolve, reject) => archive.entry({ name: file.name, size: data.length, mode: 0o644 }, data, (error) => (error ? reject(error) : resolve())));
    }
    archive.finalize();
  } catch (error) {
    archive.destroy(error as Error);
  }
  await written;
}
