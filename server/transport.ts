/**
 * Colyseus's WebSocket transport with the limits a hostile client meets set here, deliberately:
 * frames of at most MAX_FRAME_BYTES (ws refuses a bigger one and closes with 1009, Message Too
 * Big) and at most `maxMessagesPerSecond` frames a second (more closes with 1008, Policy
 * Violation, and a reason); a frame Colyseus cannot decode closes with 1007 and a reason. Colyseus's own rate limit closes silently, so rooms leave it off. The
 * room asks `expulsionOf` why a connection closed, to end the game and tell the partner. The log
 * output a connection's frames cause (Colyseus prints a stack for every undecodable frame) is
 * rate-limited per connection and for all connections together.
 */
import type { Server as HttpServer } from 'node:http';
import { WebSocketTransport } from '@colyseus/ws-transport';
import { WebSocket } from 'ws';
import { CloseCode } from '@colyseus/core';
import { CLOSE_BAD_FRAME, CLOSE_RATE_LIMITED, MAX_FRAME_BYTES, type Expulsion } from '../shared/protocol/messages';

/** How long an expelled client may take to answer the close before its socket is cut. */
const CLOSE_GRACE_MS = 1000;

const COLYSEUS_CLOSE_WITH_ERROR = CloseCode.WITH_ERROR;

const expulsions = new WeakMap<object, Expulsion>();

/** Log entries caused by clients, per window: from one connection, and from all of them together. */
const LOG_WINDOW_MS = 60_000;
const LOG_ENTRIES_PER_CONNECTION = 5;
const LOG_ENTRIES_FROM_CLIENTS = 100;
const LOG_ENTRY_CHARS = 2000;

/** The connection whose event is being handled: what is logged meanwhile, it caused. */
let speaking: WebSocket | null = null;

/** Why the server closed this connection (a Colyseus client's `ref`), if it did. */
export function expulsionOf(socket: object): Expulsion | undefined {
  return expulsions.get(socket);
}

export class GuardedTransport extends WebSocketTransport {
  constructor(server: HttpServer, maxMessagesPerSecond: number) {
    super({ server, maxPayload: MAX_FRAME_BYTES });
    // Before Colyseus's listener, which adds its message handler later: every frame is counted first.
    this.wss.prependListener('connection', (socket: WebSocket) => guard(socket, maxMessagesPerSecond));
  }
}

const WebSocketEmit = WebSocket.prototype.emit;

function guard(socket: WebSocket, maxMessagesPerSecond: number): void {
  let windowStart = 0;
  let frames = 0;
  const expel = (expulsion: Expulsion, close: () => void) => {
    if (expulsions.has(socket)) return;
    expulsions.set(socket, expulsion);
    close();
    // A client that ignores the close must not hold its game open until ws's 30 s timeout.
    setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
  };
  const emit = (event: string | symbol, args: unknown[]): boolean => {
    const outer = speaking;
    speaking = socket;
    try {
      return WebSocketEmit.call(socket, event, ...args);
    } finally {
      speaking = outer;
    }
  };
  // Frames are dropped here, before any handler sees them, once the connection is over its limit.
  socket.emit = (event: string | symbol, ...args: unknown[]): boolean => {
    if (event !== 'message') return emit(event, args);
    if (expulsions.has(socket)) return false;
    const now = performance.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      frames = 0;
    }
    if (++frames > maxMessagesPerSecond) {
      const message = `more than ${maxMessagesPerSecond} messages in a second`;
      expel({ code: 'RATE_LIMITED', message }, () => socket.close(CLOSE_RATE_LIMITED, `RATE_LIMITED: ${message}`));
      return false;
    }
    return emit(event, args);
  };
  // Colyseus closes a connection whose frame it cannot decode with 4002 and no reason, while that
  // frame is being handled; a 4002 at any other time (a stale socket replaced by a reconnection),
  // or with a reason (a room sending its player away), is not the client's fault.
  const close = socket.close.bind(socket);
  socket.close = (code?: number, reason?: string | Buffer): void => {
    if (code !== COLYSEUS_CLOSE_WITH_ERROR || (reason !== undefined && reason.length > 0) || speaking !== socket || expulsions.has(socket)) return close(code, reason);
    const message = 'a frame that is not a well-formed message';
    expel({ code: 'BAD_FRAME', message }, () => close(CLOSE_BAD_FRAME, `BAD_FRAME: ${message}`));
  };
  socket.on('error', (error: Error & { code?: string }) => {
    // ws has already closed the connection with 1009.
    if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') expel({ code: 'FRAME_TOO_LARGE', message: `a frame over ${MAX_FRAME_BYTES} bytes` }, () => undefined);
  });
}

interface Budget {
  start: number;
  used: number;
  suppressed: number;
}

const perConnection = new WeakMap<WebSocket, Budget>();
const fromClients: Budget = { start: 0, used: 0, suppressed: 0 };

/** Whether one more entry fits the budget; a new window first reports what the last one suppressed. */
function spend(budget: Budget, limit: number, now: number, write: (text: string) => void, whose: string): boolean {
  if (now - budget.start >= LOG_WINDOW_MS) {
    if (budget.suppressed > 0) write(`${budget.suppressed} log entries caused by ${whose} were suppressed in the last minute`);
    budget.start = now;
    budget.used = 0;
    budget.suppressed = 0;
  }
  if (budget.used >= limit) {
    budget.suppressed++;
    return false;
  }
  budget.used++;
  return true;
}

type LogMethod = (...args: unknown[]) => void;
export type Logger = Record<'debug' | 'info' | 'warn' | 'error' | 'trace', LogMethod>;

/**
 * `out` with every entry caused by a client's connection rate-limited (others pass as they are),
 * and cut to LOG_ENTRY_CHARS: Colyseus's logger, and the rooms' through it.
 */
export function clientLimitedLogger(out: Logger = console): Logger {
  const limited = (level: keyof Logger): LogMethod => (...args) => {
    const socket = speaking;
    if (!socket) return out[level](...args);
    const now = performance.now();
    const write = (text: string) => out.warn(text);
    let own = perConnection.get(socket);
    if (!own) perConnection.set(socket, (own = { start: now, used: 0, suppressed: 0 }));
    if (!spend(own, LOG_ENTRIES_PER_CONNECTION, now, write, 'one connection') || !spend(fromClients, LOG_ENTRIES_FROM_CLIENTS, now, write, 'clients')) return;
    const text = args.map((arg) => (typeof arg === 'string' ? arg : arg instanceof Error ? (arg.stack ?? String(arg)) : String(arg))).join(' ');
    out[level](text.length > LOG_ENTRY_CHARS ? `${text.slice(0, LOG_ENTRY_CHARS)}…` : text);
  };
  return { debug: limited('debug'), info: limited('info'), warn: limited('warn'), error: limited('error'), trace: limited('trace') };
}
