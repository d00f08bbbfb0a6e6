/**
 * The environment server's wire: how requests are read (ByteReader), answers written (JSON,
 * length-prefixed parts, concat) and bad ones refused (RequestError, with the kind the client
 * raises). shared/env/server.ts speaks it; the protocol's table is in its header.
 */
import { z } from 'zod';

/**
 * What went wrong, for the client to raise the right exception: `invalid` a bad request (options,
 * env id, action, episode), `setup` a seed that gives no game, `episode-over` a step with no
 * episode running, `internal` anything else (a bug: the message has the stack).
 */
export type ErrorKind = 'invalid' | 'setup' | 'episode-over' | 'internal';

export class RequestError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** `input` as `schema` says, or a bad request naming `what`. */
export function parse<T extends z.ZodType>(schema: T, input: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw new RequestError('invalid', `bad ${what}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** Reads a request's fields in order; running past its end is a bad request. */
export class ByteReader {
  private offset = 0;
  private readonly data: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.data = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  u8(): number {
    this.need(1);
    return this.data.getUint8(this.offset++);
  }

  u32(): number {
    this.need(4);
    const value = this.data.getUint32(this.offset, true);
    this.offset += 4;
    return value;
  }

  /** The next `length` bytes, as a view of the request. */
  take(length: number): Uint8Array {
    this.need(length);
    this.offset += length;
    return this.bytes.subarray(this.offset - length, this.offset);
  }

  /** Bytes not read yet. */
  get remaining(): number {
    return this.bytes.length - this.offset;
  }

  /** The request must end here. */
  end(): void {
    if (this.remaining > 0) throw new RequestError('invalid', `the request has ${this.remaining} bytes too many`);
  }

  text(length: number): string {
    this.need(length);
    const text = utf8Decoder.decode(this.bytes.subarray(this.offset, this.offset + length));
    this.offset += length;
    return text;
  }

  /** The rest of the request, as JSON. */
  json(): unknown {
    const text = this.text(this.bytes.length - this.offset);
    try {
      return JSON.parse(text);
    } catch {
      throw new RequestError('invalid', `not JSON: ${text.slice(0, 200)}`);
    }
  }

  private need(bytes: number): void {
    if (this.offset + bytes > this.bytes.length) throw new RequestError('invalid', 'the request ends too soon');
  }
}

export function json(value: unknown): Uint8Array {
  return utf8.encode(JSON.stringify(value));
}

export function lengthPrefixed(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + bytes.length);
  new DataView(out.buffer).setUint32(0, bytes.length, true);
  out.set(bytes, 4);
  return out;
}

/** The parts as one array (an answer is written in parts). */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
