/**
 * Structure-aware fuzzing of the game server through the real transport. `npm run bench:fuzz`
 * (optionally `-- --frames N --seed S`) starts a server in this process and plays games in which
 * the leader's seat sends fast-check values shaped like the protocol's messages (the `action`
 * message with boundary strings, lone surrogates, huge, negative and non-finite numbers, deep
 * nesting and wrong types; unknown message types; raw bytes with and without Colyseus framing)
 * while a well-behaved follower watches. It prints frames sent, frames a second, crashes,
 * refusals by code and corrupted streams; test/server/fuzz.test.ts runs a small version.
 *
 * Every message frame waits for its answer (an `error`, or a view of what changed); a raw frame
 * is followed by a probe (DONE from the leader, always refused) and waits for the probe's answer.
 * A refused frame must leave the log as it was. A game the fuzzer's frames end (an undecodable
 * frame, LEAVE_ROOM, an oversized frame) must end for the follower with `gameOver`, and every
 * game's log must replay. The server's rate limit is lifted, or the fuzzer would only meet it.
 */
import { Client, type Room } from '@colyseus/sdk';
import fc from 'fast-check';
import WebSocket from 'ws';
import { startGameServer } from '../server/index';
import { MOVES } from '../shared/engine/actions';
import type { LogLine } from '../shared/log/format';
import { serializeLine } from '../shared/log/recorder';
import { replay } from '../shared/log/replay';
import { ACTION_MESSAGE, MAX_FRAME_BYTES, ROOM_NAME, applyViewMessage, type ClientView } from '../shared/protocol/messages';

// Node 20 has no global WebSocket, and the SDK looks for one.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

export interface FuzzFigures {
  frames: number;
  seconds: number;
  framesPerSecond: number;
  games: number;
  /** Uncaught exceptions in the process, and games a fault ended (`interrupted`). */
  crashes: number;
  refusals: Record<string, number>;
  /** Values the client itself could not encode, so never sent. */
  unencodable: number;
  /** Games the fuzzer's frames ended, by the close code its connection got. */
  closes: Record<string, number>;
  /** Broken promises: a refused frame that changed the log, a follower message out of protocol, a log that does not replay, no answer. */
  corrupted: string[];
}

const text = fc.oneof(
  { weight: 10, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 10, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 10, arbitrary: fc.constantFrom('', ' ', 'go', '\uD800', 'x\uDC00', '\u202Etsae og\u202C', '\u200B\u2060\uFEFF', '🙂'.repeat(301), 'x'.repeat(300), 'x'.repeat(301)) },
  // Around the frame limit: the largest is refused by closing the connection.
  { weight: 1, arbitrary: fc.constantFrom(MAX_FRAME_BYTES - 100, MAX_FRAME_BYTES - 100, MAX_FRAME_BYTES + 10).map((n) => 'x'.repeat(n)) },
);
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(NaN, Infinity, -Infinity, -0, 2 ** 53, -(2 ** 63), 1e308));
const deep = fc.integer({ min: 50, max: 2000 }).map((depth) => {
  let value: unknown = 'MF';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { type: value };
  return value;
});
const wrong = fc.oneof(number, fc.boolean(), fc.constant(null), fc.anything({ maxDepth: 3 }), deep);
const wildAction = fc.record(
  {
    type: fc.oneof(fc.constantFrom('move', 'move', 'instruction', 'instruction', 'endTurn', 'done', 'timeout', 'fly'), wrong),
    move: fc.oneof(fc.constantFrom(...MOVES), fc.string({ maxLength: 4 }), wrong),
    text: fc.oneof(text, text, wrong),
    actor: fc.constantFrom('leader', 'follower', 'server'),
    extra: wrong,
  },
  { requiredKeys: [] },
);
/** Mostly the protocol's own shapes with odd values, so that the engine's refusals are reached too. */
const action = fc.oneof(
  { weight: 3, arbitrary: fc.oneof(fc.constantFrom(...MOVES), fc.string({ maxLength: 4 }), wrong).map((move) => ({ type: 'move', move })) },
  { weight: 3, arbitrary: text.map((text) => ({ type: 'instruction', text })) },
  { weight: 1, arbitrary: fc.constantFrom({ type: 'endTurn' }, { type: 'done' }) },
  { weight: 3, arbitrary: wildAction },
);
type Frame = { kind: 'message'; type: string | number; payload: unknown } | { kind: 'raw'; bytes: Uint8Array };
const ROOM_DATA = 13;
const frame: fc.Arbitrary<Frame> = fc.oneof(
  { weight: 60, arbitrary: action.map((payload) => ({ kind: 'message' as const, type: ACTION_MESSAGE, payload })) },
  { weight: 10, arbitrary: fc.oneof(text, wrong).map((payload) => ({ kind: 'message' as const, type: ACTION_MESSAGE, payload })) },
  { weight: 10, arbitrary: fc.tuple(fc.oneof(fc.string({ maxLength: 20 }), fc.integer()), fc.oneof(action, wrong)).map(([type, payload]) => ({ kind: 'message' as const, type, payload })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ kind: 'raw' as const, bytes })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((tail) => ({ kind: 'raw' as const, bytes: Uint8Array.of(ROOM_DATA, ...tail) })) },
);

const FOLLOWER_MESSAGES = new Set(['seat', 'queue', 'view', 'notice']);
const ANSWER_MS = 5000;

interface Seat {
  room: Room;
  messages: { type: string; payload: any }[];
  view: ClientView | null;
  closed: number | null;
}

async function seat(url: string, options: Record<string, unknown>): Promise<Seat> {
  const room = await new Client(url).joinOrCreate(ROOM_NAME, options);
  const seat: Seat = { room, messages: [], view: null, closed: null };
  room.onMessage('*', (type, payload) => seat.messages.push({ type: String(type), payload }));
  room.onMessage('view', (payload) => {
    seat.messages.push({ type: 'view', payload });
    seat.view = applyViewMessage(seat.view, payload);
  });
  room.onLeave((code) => (seat.closed = code));
  return seat;
}

async function until(condition: () => boolean): Promise<boolean> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > ANSWER_MS) return false;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return true;
}

export async function runFuzz(options: { frames: number; seed: number }): Promise<FuzzFigures> {
  const logs: LogLine[][] = [];
  const server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    maxMessagesPerSecond: Infinity,
    roomSettings: { leaderTurnSeconds: 3600, followerTurnSeconds: 3600, patchRateMs: 50 },
    services: {
      startLog: (header) => {
        const lines: LogLine[] = [header];
        logs.push(lines);
        return { append: (line) => lines.push(line), end: (line) => lines.push(line) };
      },
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  const figures: FuzzFigures = { frames: 0, seconds: 0, framesPerSecond: 0, games: 0, crashes: 0, refusals: {}, unencodable: 0, closes: {}, corrupted: [] };
  const onCrash = (error: unknown) => {
    figures.crashes++;
    figures.corrupted.push(`uncaught: ${String(error)}`);
  };
  process.on('uncaughtException', onCrash);
  // Some values the client cannot encode (deep nesting, BigInt) are skipped: draw more than needed.
  const frames = fc.sample(frame, { seed: options.seed, numRuns: Math.ceil(options.frames * 1.2) + 10 });
  const started = performance.now();
  try {
    let index = 0;
    const more = () => index < frames.length && figures.frames < options.frames;
    while (more()) {
      // A private game per round, so that nothing else can join it.
      const leader = await seat(url, { role: 'leader', private: true });
      if (!(await until(() => leader.messages.some((m) => m.type === 'seat')))) throw new Error('no seat for the leader');
      const { code } = leader.messages.find((m) => m.type === 'seat')!.payload;
      const follower = await seat(url, { role: 'follower', code });
      if (!(await until(() => leader.view !== null && follower.view !== null))) throw new Error('a game did not start');
      const log = logs[figures.games++];
      const errorsOf = () => leader.messages.filter((m) => m.type === 'error');
      // The fuzzer leads until its frames end the game.
      for (; more() && leader.closed === null && leader.view!.phase === 'playing'; index++) {
        const next = frames[index];
        const lines = log.length;
        const errors = errorsOf().length;
        const views = leader.messages.filter((m) => m.type === 'view').length;
        try {
          if (next.kind === 'message') leader.room.send(next.type as string, next.payload);
          else {
            (leader.room as any).connection.transport.ws.send(next.bytes);
            leader.room.send(ACTION_MESSAGE, { type: 'done' });
          }
        } catch {
          figures.unencodable++; // nothing was sent
          continue;
        }
        figures.frames++;
        const probe = next.kind === 'raw';
        const answered = await until(() => {
          if (leader.closed !== null) return true;
          const fresh = errorsOf().slice(errors);
          if (probe) return fresh.some((e) => e.payload.refused === ACTION_MESSAGE && ['LEADER_CANNOT_MARK_DONE', 'GAME_ENDED'].includes(e.payload.code));
          return fresh.length > 0 || leader.messages.filter((m) => m.type === 'view').length > views;
        });
        if (!answered) figures.corrupted.push(`frame ${index}: no answer`);
        const refusals = errorsOf().slice(errors).slice(0, probe ? -1 : undefined);
        for (const { payload } of refusals) figures.refusals[payload.code] = (figures.refusals[payload.code] ?? 0) + 1;
        if (refusals.length > 0 && !probe && log.length !== lines) figures.corrupted.push(`frame ${index}: refused as ${refusals[0].payload.code} but the log changed`);
        // The follower marks every instruction done, so that the leader's turn comes back.
        while (leader.closed === null && follower.view?.turn.role === 'follower' && follower.view.phase === 'playing') {
          const seen = follower.messages.length;
          follower.room.send(ACTION_MESSAGE, { type: 'done' });
          if (!(await until(() => leader.closed !== null || follower.messages.length > seen))) break;
        }
      }
      if (leader.closed !== null) {
        figures.closes[leader.closed] = (figures.closes[leader.closed] ?? 0) + 1;
        if (!(await until(() => follower.messages.some((m) => m.type === 'notice' && m.payload.kind === 'gameOver')))) {
          figures.corrupted.push(`game ${figures.games}: the follower was not told the game ended`);
        }
      } else void leader.room.leave().catch(() => undefined);
      await until(() => log.at(-1)?.kind === 'end');
      for (const message of follower.messages) {
        if (!FOLLOWER_MESSAGES.has(message.type)) figures.corrupted.push(`game ${figures.games}: the follower got ${message.type}`);
      }
      if (log.at(-1)?.kind === 'end' && (log.at(-1) as { reason: string }).reason === 'interrupted') figures.crashes++;
      try {
        replay(log.map((line) => `${serializeLine(line)}\n`).join(''));
      } catch (error) {
        figures.corrupted.push(`game ${figures.games}: the log does not replay: ${String(error)}`);
      }
      void follower.room.leave().catch(() => undefined); // the answer may never come once the room is gone
    }
  } finally {
    process.off('uncaughtException', onCrash);
    figures.seconds = (performance.now() - started) / 1000;
    figures.framesPerSecond = Math.round(figures.frames / figures.seconds);
    await server.close();
  }
  return figures;
}

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? Number(process.argv[at + 1]) : fallback;
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} takes a whole number`);
  return value;
}

if (require.main === module) {
  void (async () => {
    const figures = await runFuzz({ frames: flag('frames', 100_000), seed: flag('seed', 1) });
    console.log(`frames sent        ${figures.frames}`);
    console.log(`frames a second    ${figures.framesPerSecond} (${figures.seconds.toFixed(1)} s)`);
    console.log(`games              ${figures.games}`);
    console.log(`crashes            ${figures.crashes}`);
    console.log(`refusals by code   ${JSON.stringify(figures.refusals)}`);
    console.log(`closes by code     ${JSON.stringify(figures.closes)}`);
    console.log(`not encodable      ${figures.unencodable} (the client refused to send them)`);
    console.log(`corrupted          ${figures.corrupted.length}${figures.corrupted.slice(0, 10).map((c) => `\n  ${c}`).join('')}`);
    console.log(JSON.stringify(figures));
    process.exit(figures.crashes + figures.corrupted.length > 0 ? 1 : 0);
  })();
}
