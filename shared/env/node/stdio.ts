/**
 * The environment server's transport: requests on stdin, each a little-endian u32 byte count and
 * that many bytes; answers on stdout, one per request and in order, each written as `handle` gives
 * it (its header says its length: shared/env/server.ts). It reads and writes
 * synchronously: the client waits for each answer anyway, and without the event loop a round trip
 * costs a few microseconds less. End of input (the client closed the pipe, or died) ends the loop.
 */
import { readSync, writevSync } from 'node:fs';

const STDIN = 0;
const STDOUT = 1;

/** Serves requests from stdin until it closes. */
export function serveStdio(handle: (request: Uint8Array) => Uint8Array[]): void {
  const header = new Uint8Array(4);
  const headerView = new DataView(header.buffer);
  for (;;) {
    if (!readExactly(header)) return;
    const request = new Uint8Array(headerView.getUint32(0, true));
    if (!readExactly(request)) return;
    writeAll(handle(request));
  }
}

/** Fills `buffer` from stdin; false at the end of input. */
function readExactly(buffer: Uint8Array): boolean {
  let filled = 0;
  while (filled < buffer.length) {
    const read = retrying(() => readSync(STDIN, buffer, filled, buffer.length - filled, null));
    if (read === 0) return false;
    filled += read;
  }
  return true;
}

function writeAll(parts: Uint8Array[]): void {
  let pending = parts;
  while (pending.length > 0) {
    let written = retrying(() => writevSync(STDOUT, pending));
    const rest: Uint8Array[] = [];
    for (const part of pending) {
      if (written >= part.length) written -= part.length;
      else {
        rest.push(part.subarray(written));
        written = 0;
      }
    }
    pending = rest;
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** A pipe left non-blocking by whoever started us answers EAGAIN when it is empty or full: wait a moment and retry. */
function retrying(io: () => number): number {
  for (;;) {
    try {
      return io();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}
