/**
 * `cerealbar frames`: a frame renderer for another program (the Python package's render modes):
 * frame requests as JSON lines on stdin, each answered on stdout in order by a 4-byte little-endian
 * length and the frame's bytes, or by the length 0xFFFFFFFF, a 4-byte length and a one-line
 * message in UTF-8 when the request is refused or cannot be drawn. It ends when stdin does.
 */
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { frameRequestSchema } from '../../shared/frames/frame';
import { startRenderer } from '../render/frameOptions';

const REFUSED = 0xffffffff;

function lengthPrefixed(bytes: Buffer, length = bytes.length): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32LE(length);
  return Buffer.concat([head, bytes]);
}

function refusal(message: string): Buffer {
  const text = Buffer.from(message.split('\n')[0], 'utf8');
  return Buffer.concat([lengthPrefixed(Buffer.alloc(0), REFUSED), lengthPrefixed(text)]);
}

export function registerFramesCommand(program: Command): void {
  program
    .command('frames')
    .description('draw frames for another program: frame requests as JSON lines on stdin, frames on stdout (docs/rendering.md)')
    .action(async () => {
      const renderer = await startRenderer();
      try {
        for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
          if (line.trim() === '') continue;
          let answer: Buffer;
          try {
            const parsed = frameRequestSchema.safeParse(JSON.parse(line));
            if (!parsed.success) answer = refusal(`not a frame request: ${parsed.error.issues[0].path.join('.') || 'the line'}: ${parsed.error.issues[0].message}`);
            else answer = lengthPrefixed(await renderer.render(parsed.data));
          } catch (error) {
            answer = refusal(error instanceof SyntaxError ? `not JSON: ${error.message}` : (error as Error).message);
          }
          if (!process.stdout.write(answer)) await new Promise((done) => process.stdout.once('drain', done));
        }
      } finally {
        await renderer.close();
      }
    });
}
