/**
 * The frames page: draws frames for models with the game's own world (client/src/world/), headless,
 * for `FrameRenderer` (shared/frames/node/renderer.ts), which loads it with `?socket=PATH` and sends
 * frame requests over that WebSocket. Each request is drawn and read back in one go (drawFrame's
 * part before its first await), so requests sent together are drawn one after another. Each answer is a binary message, the request's number (4 bytes,
 * little-endian) then the frame's bytes, or a text message `{ id, error }`.
 */
import type { FrameRequest } from '../../../shared/frames/frame';
import { drawFrame } from './draw';

const socketPath = new URLSearchParams(location.search).get('socket');
const container = document.getElementById('world')!;

if (socketPath) {
  const socket = new WebSocket(`ws://${location.host}${socketPath}`);
  socket.binaryType = 'arraybuffer';
  socket.addEventListener('message', (message) => {
    const { id, request } = JSON.parse(message.data as string) as { id: number; request: FrameRequest };
    drawFrame(container, request).then(
      (bytes) => {
        const answer = new Uint8Array(4 + bytes.length);
        new DataView(answer.buffer).setUint32(0, id, true);
        answer.set(bytes, 4);
        socket.send(answer);
      },
      (error: unknown) => socket.send(JSON.stringify({ id, error: error instanceof Error ? error.message : String(error) })),
    );
  });
}
