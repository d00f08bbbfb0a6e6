/**
 * The protocol's promises (docs/protocol.md) through real websocket clients on a real server:
 * joining, what `legal` offers, what a view holds for each role and how it is sent, the order of
 * the protocol's error codes, and a fault that ends one game and no other.
 */
import { Client } from '@colyseus/sdk';
import { matchMaker } from '@colyseus/core';
import { drawSetup, legalActions, makeConfig, startGame as startEngineGame, visibleIndices, type Move } from '../../shared/engine';
import { emptyMemory, playerView, remember } from '../../shared/engine/playerView';
import type { GameState } from '../../shared/engine/state';
import { eventAction, type LogEvent, type LogLine } from '../../shared/log/format';
import { replay } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { startGameServer } from '../../server/index';
import { WAIT_FAULT_MESSAGE } from '../../server/rooms/GameRoom';
import { join, sleep, startGame, startTestServer, track, waitFor, type Player, type TestServer } from './harness';

jest.setTimeout(60_000);

const config = makeConfig();
const MOVES: Move[] = ['MF', 'MB', 'RL', 'RR'];
let servers: { close(): Promise<void> }[] = [];

async function serve(settings: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const server = await startTestServer(settings);
  servers.push(server.server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

const eventsLogged = (ts: TestServer, game = 0): number => (ts.logs[game] ?? []).filter((line) => line.kind === 'event').length;
const views = (player: Player) => player.messages.filter((m) => m.type === 'view').map((m) => m.payload);
const SESSION_FACTS = ['phase', 'turnDeadline', 'partnerConnected', 'endReason'];
const VIEW_FIELDS = ['role', 'config', 'map', 'turn', 'turnsLeft', 'score', 'gameOver', 'leader', 'follower', 'cards', 'rememberedCards', 'invalidCards', 'instructions', 'legal', ...SESSION_FACTS];

/** Sends an action that must be accepted: it is logged and nobody is told off. */
async function accepted(ts: TestServer, player: Player, action: Parameters<Player['act']>[0]): Promise<void> {
  const events = eventsLogged(ts);
  const errors = player.errors().length;
  player.act(action);
  await waitFor(() => eventsLogged(ts) === events + 1 || player.errors().length > errors, `${JSON.stringify(action)} to be logged`);
  expect(player.errors().slice(errors)).toEqual([]);
}

/** Sends an action that must be refused with `code`: nothing is logged and nobody is sent a view. */
async function refused(ts: TestServer, players: Player[], player: Player, action: unknown, code: string, type = 'action'): Promise<void> {
  const events = eventsLogged(ts);
  const errors = player.errors().length;
  const sent = players.map((p) => views(p).length);
  player.room.send(type, action as never);
  await waitFor(() => player.errors().length > errors, `an error for ${JSON.stringify(action)}`);
  expect(player.errors()[errors]).toMatchObject({ code, refused: type });
  await sleep(30);
  expect(eventsLogged(ts)).toBe(events);
  expect(players.map((p) => views(p).length)).toEqual(sent);
}

describe('joining', () => {
  test('P-3: a player who gives no join options at all is seated in the cerealbar room, in the default pool', async () => {
    const ts = await serve({ seed: 3 });
    const first = track(await new Client(ts.url).joinOrCreate('cerealbar'));
    const second = track(await new Client(ts.url).joinOrCreate('cerealbar'));
    expect(second.room.roomId).toBe(first.room.roomId);
    await waitFor(() => first.phase === 'playing' && second.phase === 'playing', 'the game to start');
    const roles = [first, second].map((p) => p.messages.find((m) => m.type === 'seat')!.payload.role);
    expect(roles.sort()).toEqual(['follower', 'leader']);
    expect(ts.logs[0][0]).toMatchObject({ kind: 'header', meta: { pool: 'default' } });
  });

  test('P-10: the game starts when both seats are taken; the room is then locked, even to a join by id', async () => {
    const ts = await serve({ seed: 3 });
    const leader = await join(ts.url, { role: 'leader' });
    await waitFor(() => leader.messages.some((m) => m.type === 'queue'), 'the leader to wait');
    expect(leader.phase).toBe('waiting');
    const follower = await join(ts.url, { role: 'follower' });
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start at once');
    await expect(new Client(ts.url).joinById(leader.room.roomId, {})).rejects.toThrow(/is locked/);
    await expect(new Client(ts.url).joinById(leader.room.roomId, { role: 'follower' })).rejects.toThrow(/is locked/);
    const late = await join(ts.url, { role: 'any' });
    expect(late.room.roomId).not.toBe(leader.room.roomId);
    expect(late.phase).toBe('waiting');
    expect(ts.logs).toHaveLength(1);
  });
});

describe('actions', () => {
  test('P-14: an instruction is sanitised before its length is checked, and kept and shown as sanitised', async () => {
    const ts = await serve({ seed: 3 });
    const { leader, follower } = await startGame(ts.url);
    await accepted(ts, leader, { type: 'instruction', text: '  go\u0007 to\tthe \r\n\n tree \u0000now\u009f ' });
    await accepted(ts, leader, { type: 'instruction', text: `${'x'.repeat(150)}\u0001\u0002\u0003${'y'.repeat(150)}` });
    await waitFor(() => leader.view!.instructions.length === 2, 'both instructions in the view');
    expect(leader.view!.instructions.map((i) => i.text)).toEqual(['go to the tree now', `${'x'.repeat(150)}${'y'.repeat(150)}`]);
    const logged = ts.logs[0].filter((l): l is LogEvent => l.kind === 'event').map((e) => (eventAction(e) as { text: string }).text);
    expect(logged).toEqual(['go to the tree now', `${'x'.repeat(150)}${'y'.repeat(150)}`]);
    await refused(ts, [leader, follower], leader, { type: 'instruction', text: ` ${'z'.repeat(301)} ` }, 'INSTRUCTION_TOO_LONG');
    await refused(ts, [leader, follower], leader, { type: 'instruction', text: '\u0007\t\u007f\n ' }, 'EMPTY_INSTRUCTION');
    expect(leader.view!.instructions).toHaveLength(2);
    // MessagePack strings are UTF-8: a lone surrogate does not survive the SDK's encoder, and arrives as replacement characters.
    await accepted(ts, leader, { type: 'instruction', text: 'a\uD800b' });
    await waitFor(() => leader.view!.instructions.length === 3, 'the third instruction');
    expect(leader.view!.instructions[2].text).toMatch(/^a\uFFFD+b$/);
  });

  test('P-17, P-49, P-18, P-13: `legal` is exactly what the server accepts; a blocked move is not offered and is refused', async () => {
    // A seed whose leader starts with a move blocked (the room draws the map and the setup from it).
    let seed = 1;
    let state: GameState;
    for (; ; seed++) {
      const map = generateMap(seed);
      state = startEngineGame(config, map, drawSetup(config, map, seed));
      if (legalActions(state, 'leader').moves.length < 4) break;
    }
    const ts = await serve({ seed });
    const { leader, follower } = await startGame(ts.url);
    const both = [leader, follower];
    const offered = legalActions(state, 'leader').moves;
    expect(leader.view!.legal).toEqual({ moves: offered, instruction: true, maxInstructionLength: 300, endTurn: false, done: false, feedback: false, cancel: false });
    expect(follower.view!.legal).toEqual({ moves: [], instruction: false, maxInstructionLength: 300, endTurn: false, done: false, feedback: false, cancel: false });

    // The leader's turn: every move not offered is refused, and changes nothing.
    for (const move of MOVES.filter((m) => !offered.includes(m))) {
      await refused(ts, both, leader, { type: 'move', move }, 'MOVE_BLOCKED');
    }
    await refused(ts, both, leader, { type: 'endTurn' }, 'EMPTY_QUEUE');
    await refused(ts, both, leader, { type: 'done' }, 'LEADER_CANNOT_MARK_DONE');
    for (const move of MOVES) await refused(ts, both, follower, { type: 'move', move }, 'NOT_YOUR_TURN');
    await accepted(ts, leader, { type: 'instruction', text: 'walk' });
    await waitFor(() => leader.view!.legal.endTurn, 'End Turn to be offered');
    await accepted(ts, leader, { type: 'endTurn' });
    await waitFor(() => follower.view!.turn.role === 'follower' && leader.view!.turn.role === 'follower', 'the follower turn');
    expect(leader.view!.legal).toEqual({ moves: [], instruction: false, maxInstructionLength: 300, endTurn: false, done: false, feedback: false, cancel: false });
    expect(follower.view!.legal).toMatchObject({ instruction: false, endTurn: false, done: true });

    // The follower's turn: at each pose, what is not offered is refused and what is offered is accepted, for one step each.
    let steps = follower.view!.turn.stepsLeft!;
    expect(steps).toBe(10);
    let blocked = 0;
    for (let i = 0; i < 6; i++) {
      const legal = follower.view!.legal.moves;
      for (const move of MOVES.filter((m) => !legal.includes(m))) {
        await refused(ts, both, follower, { type: 'move', move }, 'MOVE_BLOCKED');
        blocked++;
      }
      const move = legal[i % legal.length];
      await accepted(ts, follower, { type: 'move', move });
      await waitFor(() => follower.view!.turn.stepsLeft === steps - 1, `the follower's ${move} to cost one step`);
      steps -= 1;
    }
    await refused(ts, both, follower, { type: 'endTurn' }, 'FOLLOWER_CANNOT_END_TURN');
    await accepted(ts, follower, { type: 'done' });
    await waitFor(() => leader.view!.turn.role === 'leader', 'the leader turn after DONE');
    expect(leader.view!.legal.moves.length).toBeGreaterThan(0);
    expect(follower.view!.legal).toEqual({ moves: [], instruction: false, maxInstructionLength: 300, endTurn: false, done: false, feedback: false, cancel: false });
    expect(blocked + MOVES.length - offered.length).toBeGreaterThan(0);
  });
});

describe('views', () => {
  test('P-1, P-21, P-37: each view is the full view first, then only the fields that changed; it is the playerView of the logged game and the session facts, and nothing else', async () => {
    const ts = await serve({ seed: 2 });
    const { leader, follower } = await startGame(ts.url);
    await accepted(ts, leader, { type: 'instruction', text: 'turn around' });
    await accepted(ts, leader, { type: 'instruction', text: 'then wait' });
    await accepted(ts, leader, { type: 'move', move: 'RL' });
    await accepted(ts, leader, { type: 'endTurn' });
    await waitFor(() => follower.view!.turn.role === 'follower', 'the follower turn');
    for (let i = 0; i < 3; i++) await accepted(ts, follower, { type: 'move', move: 'RR' });
    await accepted(ts, follower, { type: 'done' });
    await sleep(100);

    const states: GameState[] = [];
    replay(ts.logText(), { allowOpen: true, onState: (state) => states.push(state) });
    expect(states).toHaveLength(9);
    for (const player of [leader, follower]) {
      const messages = views(player);
      expect(messages[0].full).toBe(true);
      let held: Record<string, unknown> = messages[0].changes;
      expect(Object.keys(held).sort()).toEqual([...VIEW_FIELDS].sort());
      for (const message of messages.slice(1)) {
        expect(message.full).toBe(false);
        expect(Object.keys(message.changes).length).toBeGreaterThan(0);
        for (const [key, value] of Object.entries(message.changes)) {
          expect(VIEW_FIELDS).toContain(key);
          // Only what changed is sent.
          expect(JSON.stringify(value)).not.toBe(JSON.stringify(held[key]));
        }
        held = { ...held, ...message.changes };
      }
      expect(held).toEqual(player.view);
      const role = player.view!.role;
      const memory = states.reduce(remember, emptyMemory(role));
      const game = Object.fromEntries(Object.entries(held).filter(([key]) => !SESSION_FACTS.includes(key)));
      expect(game).toEqual(JSON.parse(JSON.stringify(playerView(states[states.length - 1], role, memory))));
      expect(player.view).toMatchObject({ phase: 'playing', partnerConnected: true, endReason: '' });
    }
    // The follower's views changed less often than the leader's: it was not sent what it cannot see.
    expect(views(follower).length).toBeLessThan(views(leader).length);
  });

  test('P-38, P-39, P-40, P-41, P-42, P-43, P-44, P-46, P-50, P-53: what each role sees, field by field', async () => {
    // Seed 2 starts the follower with cards in view.
    const ts = await serve({ seed: 2 });
    const { leader, follower } = await startGame(ts.url);
    const map = generateMap(2);
    const cell = (x: number, y: number) => y * map.width + x;
    const L = leader.view!;
    const F = follower.view!;
    expect([L.role, F.role]).toEqual(['leader', 'follower']);
    expect(L.config).toEqual(config);
    expect(F.config).toEqual(config);
    // The leader's map is the whole map; the follower's has `?` for cells it has not seen, and props only on seen cells.
    for (const view of [L, F]) expect(Object.keys(view.map).sort()).toEqual(['height', 'props', 'terrain', 'width']);
    expect(L.map).toEqual({ width: map.width, height: map.height, terrain: map.terrain, props: map.props });
    const seen = new Set(visibleIndices(map, F.follower, config.view));
    F.map.terrain.forEach((row, y) =>
      [...row].forEach((letter, x) => expect(letter).toBe(seen.has(cell(x, y)) ? map.terrain[y][x] : '?')),
    );
    expect(F.map.props).toEqual(map.props.filter((prop) => seen.has(cell(prop.x, prop.y))));
    expect(F.map.props.length).toBeLessThan(map.props.length);
    expect(L.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(F.turn).toEqual({ role: 'leader', stepsLeft: null });
    for (const view of [L, F]) expect([view.turnsLeft, view.score, view.gameOver]).toEqual([6, 0, false]);
    expect(L.leader).not.toBeNull();
    expect(F.leader === null ? null : F.leader).toEqual(seen.has(cell(L.leader!.x, L.leader!.y)) ? L.leader : null);
    expect(F.follower).toEqual(L.follower);
    expect(L.rememberedCards).toEqual([]);
    expect(F.rememberedCards).toEqual([]);
    expect([L.phase, F.phase]).toEqual(['playing', 'playing']);
    expect([L.endReason, F.endReason]).toEqual(['', '']);

    // The follower turns around: the cards it saw and sees no more are remembered as they were, with the moves since.
    await accepted(ts, leader, { type: 'instruction', text: 'look around' });
    await accepted(ts, leader, { type: 'endTurn' });
    await waitFor(() => follower.view!.turn.role === 'follower', 'the follower turn');
    expect(follower.view!.turn.stepsLeft).toBe(10);
    const seenAt = new Map<number, number>();
    const look = (moves: number) => follower.view!.cards.forEach((card) => seenAt.set(card.id, moves));
    look(0);
    expect(seenAt.size).toBeGreaterThan(0);
    for (let moves = 1; moves <= 4; moves++) {
      const before = views(follower).length;
      await accepted(ts, follower, { type: 'move', move: 'RL' });
      await waitFor(() => views(follower).length > before, 'the follower view after its move');
      const view = follower.view!;
      const inView = new Set(view.cards.map((card) => card.id));
      const visible = new Set(visibleIndices(map, view.follower, config.view));
      for (const card of view.cards) expect(visible.has(cell(card.x, card.y))).toBe(true);
      expect(view.rememberedCards.map((card) => card.id)).toEqual([...seenAt.keys()].filter((id) => !inView.has(id)).sort((a, b) => a - b));
      for (const { seenAgo, ...card } of view.rememberedCards) {
        expect(card).toEqual(leader.view!.cards.find((c) => c.id === card.id));
        expect(visible.has(cell(card.x, card.y))).toBe(false);
        expect(seenAgo).toBe(moves - seenAt.get(card.id)!);
      }
      look(moves);
      expect(follower.view!.follower).toEqual(leader.view!.follower);
    }
    expect(follower.view!.rememberedCards.length).toBeGreaterThan(0);
    expect(leader.view!.rememberedCards).toEqual([]);
    expect(follower.view!.map.terrain.join('')).toContain('?');
  });
});

describe('protocol errors', () => {
  test('P-31, P-33, P-34, P-35: the protocol codes are checked in order: the type, the game started and not over, then the payload', async () => {
    const ts = await serve({ seed: 4, reconnectSeconds: 0 });
    const leader = await join(ts.url, { role: 'leader' });
    const alone = [leader];
    const expectError = async (type: string, payload: unknown, code: string, message: RegExp) => {
      const errors = leader.errors().length;
      leader.room.send(type, payload as never);
      await waitFor(() => leader.errors().length > errors, `an error for ${type}`);
      expect(leader.errors()[errors]).toMatchObject({ code, refused: type, message: expect.stringMatching(message) });
    };
    await expectError('fly', { type: 'move', move: 'MF' }, 'UNKNOWN_MESSAGE', /no message type "fly"/);
    await expectError('action', { type: 'move', move: 'JUMP' }, 'GAME_NOT_STARTED', /waiting for the other player/);
    await expectError('action', 'MF', 'GAME_NOT_STARTED', /waiting/);
    expect(views(leader)).toEqual([]);

    const follower = await join(ts.url, { role: 'follower' });
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    await expectError('action', { type: 'move', move: 'JUMP' }, 'BAD_MESSAGE', /^bad action message: move: /);
    await expectError('action', { type: 'instruction', text: 42 }, 'BAD_MESSAGE', /^bad action message: text: /);
    await expectError('action', { type: 'move', move: 'MF', extra: 1 }, 'BAD_MESSAGE', /extra/);
    await expectError('fly', {}, 'UNKNOWN_MESSAGE', /fly/);
    expect(eventsLogged(ts)).toBe(0);
    expect(alone).toHaveLength(1);

    follower.room.reconnection.enabled = false;
    await follower.room.leave(true);
    await waitFor(() => leader.phase === 'ended', 'the game to end');
    await expectError('action', { type: 'move', move: 'JUMP' }, 'GAME_ENDED', /the game is over \(abandoned\)/);
    await expectError('action', { type: 'endTurn' }, 'GAME_ENDED', /over/);
    await expectError('fly', {}, 'UNKNOWN_MESSAGE', /fly/);
    expect(eventsLogged(ts)).toBe(0);
  });

  test('P-32: a message from a connection that holds no seat gets NOT_A_PLAYER and changes nothing', async () => {
    const ts = await serve({ seed: 4 });
    const { leader, follower } = await startGame(ts.url);
    const room = matchMaker.getLocalRoomById(leader.room.roomId) as unknown as { receive(client: unknown, type: string, message: unknown): void };
    const sent: { type: string; payload: any }[] = [];
    const stranger = { sessionId: 'no-such-seat', send: (type: string, payload: unknown) => sent.push({ type, payload }) };
    const before = [views(leader).length, views(follower).length];
    room.receive(stranger, 'action', { type: 'instruction', text: 'let me in' });
    room.receive(stranger, 'action', { type: 'endTurn' });
    expect(sent).toEqual([
      { type: 'error', payload: { code: 'NOT_A_PLAYER', message: 'you have no seat in this game', refused: 'action' } },
      { type: 'error', payload: { code: 'NOT_A_PLAYER', message: 'you have no seat in this game', refused: 'action' } },
    ]);
    await sleep(50);
    expect(eventsLogged(ts)).toBe(0);
    expect([views(leader).length, views(follower).length]).toEqual(before);
    expect(leader.view!.instructions).toEqual([]);
  });
});

test('P-61: a fault in a game that has not started sends the player waiting in it away, with words, and the next player finds a partner', async () => {
  const ts = await serve({ seed: 5 });
  const waiting = await join(ts.url, { role: 'leader', pool: 'faulty' });
  await waitFor(() => waiting.messages.some((m) => m.type === 'seat'), 'the seat');
  const closed = new Promise<{ code: number; reason?: string }>((resolve) => waiting.room.onLeave((code, reason) => resolve({ code, reason })));
  const room = matchMaker.getLocalRoomById(waiting.room.roomId) as unknown as { receive: () => void };
  room.receive = () => {
    throw new Error('a bug');
  };
  const stderr = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    waiting.act({ type: 'instruction', text: 'too early' });
    expect(await closed).toEqual({ code: 4002, reason: WAIT_FAULT_MESSAGE });
  } finally {
    stderr.mockRestore();
  }
  expect(ts.logs).toEqual([]);
  const { leader, follower } = await startGame(ts.url, { pool: 'faulty' });
  expect([leader.phase, follower.phase]).toEqual(['playing', 'playing']);
});

test('P-61: a fault inside a room ends that game as interrupted, and no other', async () => {
  const logs: LogLine[][] = [];
  const server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    roomSettings: { patchRateMs: 10, seed: 5 },
    services: {
      startLog: (header) => {
        const lines: LogLine[] = [header];
        logs.push(lines);
        return { append: (line) => lines.push(line), end: (line) => lines.push(line) };
      },
    },
  });
  servers.push(server);
  const url = `http://127.0.0.1:${server.port}`;
  const faulty = await startGame(url, { pool: 'faulty' });
  const other = await startGame(url, { pool: 'other' });
  // A bug in the faulty game's handler (a storage failure has its own ending: faults.test.ts).
  const room = matchMaker.getLocalRoomById(faulty.leader.room.roomId) as unknown as { act: () => void };
  room.act = () => {
    throw new Error('a bug');
  };
  const stderr = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    faulty.leader.act({ type: 'instruction', text: 'explode' });
    await waitFor(() => faulty.leader.phase === 'ended' && faulty.follower.phase === 'ended', 'the faulty game to end');
    expect(stderr.mock.calls.some(([first]) => /^game room .*: onMessage failed: Error: a bug/.test(String(first)))).toBe(true);
  } finally {
    stderr.mockRestore();
  }
  for (const player of [faulty.leader, faulty.follower]) {
    expect(player.view!.endReason).toBe('interrupted');
    await waitFor(() => player.messages.some((m) => m.type === 'notice' && m.payload.kind === 'gameOver' && m.payload.reason === 'interrupted'), 'the gameOver notice');
  }
  const faultyLog = logs.find((lines) => (lines[0] as any).meta.pool === 'faulty')!;
  expect(faultyLog.at(-1)).toMatchObject({ kind: 'end', reason: 'interrupted' });

  // The other game goes on.
  other.leader.act({ type: 'instruction', text: 'still fine' });
  await waitFor(() => other.leader.view!.instructions.length === 1, 'the other game to go on');
  expect(other.leader.phase).toBe('playing');
  expect(other.follower.view!.endReason).toBe('');
  expect(other.leader.errors()).toEqual([]);
  // And new games start.
  const next = await startGame(url, { pool: 'faulty' });
  expect(next.leader.view!.endReason).toBe('');
});
