/**
 * The environment server the Python package runs: its answers decoded with the layouts it gives,
 * checked against the TypeScript environments' own results; errors; batches; the stdio transport.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { FOLLOWER_CODES } from '../../shared/engine/actions';
import { COLORS, SHAPES } from '../../shared/engine/cards';
import { HEADINGS } from '../../shared/engine/hex';
import { FollowerEnv, type EnvStep } from '../../shared/env/env';
import { GameEnv, type GameAction } from '../../shared/env/gameEnv';
import { LeaderEnv } from '../../shared/env/leaderEnv';
import type { Layout } from '../../shared/env/observationArrays';
import { ANSWER_HEADER_BYTES, concat, EnvServer, OPS, PROTOCOL, PROTOCOL_VERSION, STATUS, type MakeOptions } from '../../shared/env/server';
import { loadRecording } from '../../shared/eval/recording';
import type { FollowerObservation } from '../../shared/agents/types';
import { describeObservation } from '../../shared/agents/language';
import { serializeLine } from '../../shared/log/recorder';
import type { LogLine } from '../../shared/log/format';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';

const utf8 = new TextEncoder();
const text = new TextDecoder();

function selfPlayLog(seed: number): string {
  const lines: LogLine[] = [];
  playSelfPlayGame({ seed, map: generateMap(seed) }, (line) => lines.push(line));
  return lines.map((line) => `${serializeLine(line)}\n`).join('');
}

const LOGS: Record<string, string> = { 'game-1.jsonl': selfPlayLog(1) };

function newServer(): EnvServer {
  return new EnvServer((path) => {
    if (!(path in LOGS)) throw new Error('ENOENT: no such file');
    return loadRecording(LOGS[path]);
  });
}

interface Answer {
  readonly status: number;
  readonly payload: Uint8Array;
}

/** One request, its answer's parts joined and split into status and payload. */
function ask(server: EnvServer, ...fields: (number[] | Uint8Array | string | object)[]): Answer {
  const request = concat(fields.map((field) => (Array.isArray(field) ? new Uint8Array(field) : field instanceof Uint8Array ? field : utf8.encode(typeof field === 'string' ? field : JSON.stringify(field)))));
  const answer = concat(server.handle(request));
  const header = new DataView(answer.buffer, answer.byteOffset, ANSWER_HEADER_BYTES);
  expect(header.getUint32(0, true)).toBe(answer.length - ANSWER_HEADER_BYTES);
  return { status: header.getUint8(4), payload: answer.subarray(ANSWER_HEADER_BYTES) };
}

const u32 = (value: number) => {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setUint32(0, value, true);
  return bytes;
};

function okJson(answer: Answer): any {
  expect([answer.status, text.decode(answer.payload)]).toEqual([STATUS.ok, expect.anything()]);
  return JSON.parse(text.decode(answer.payload));
}

function errorOf(answer: Answer): { kind: string; message: string } {
  expect(answer.status).toBe(STATUS.error);
  return JSON.parse(text.decode(answer.payload));
}

function make(server: EnvServer, options: MakeOptions): { env: number; layout: Layout; episodes: string[] | null } {
  return okJson(ask(server, [OPS.make], options));
}

/** A block read back with its layout, as a reader in another language would. */
interface Decoded {
  readonly scalars: Record<string, number>;
  readonly arrays: Record<string, number[]>;
  readonly texts: Record<string, string>;
  readonly end: number;
}

function decode(layout: Layout, block: Uint8Array, from = 0): Decoded {
  const data = new DataView(block.buffer, block.byteOffset + from);
  const scalars: Record<string, number> = {};
  let offset = 0;
  for (const field of layout.scalars) {
    const read = { float64: () => data.getFloat64(offset, true), int32: () => data.getInt32(offset, true), uint8: () => data.getUint8(offset), int8: () => data.getInt8(offset) };
    scalars[field.name] = read[field.dtype]();
    offset += { float64: 8, int32: 4, uint8: 1, int8: 1 }[field.dtype];
  }
  const arrays: Record<string, number[]> = {};
  for (const field of layout.arrays) {
    const count = field.shape.reduce((n, size) => n * size, 1);
    const size = { float64: 8, int32: 4, uint8: 1, int8: 1 }[field.dtype];
    arrays[field.name] = Array.from({ length: count }, (_, i) => {
      const at = field.offset + i * size;
      return { float64: () => data.getFloat64(at, true), int32: () => data.getInt32(at, true), uint8: () => data.getUint8(at), int8: () => data.getInt8(at) }[field.dtype]();
    });
  }
  const texts: Record<string, string> = {};
  offset = layout.fixedBytes;
  for (const field of layout.texts) {
    const length = data.getUint32(offset, true);
    texts[field.name] = text.decode(block.subarray(from + offset + 4, from + offset + 4 + length));
    offset += 4 + length;
  }
  return { scalars, arrays, texts, end: from + offset };
}

/** What the follower's arrays must hold for `observation`, built from it directly. */
function expectFollowerBlock(decoded: Decoded, observation: FollowerObservation, width: number, withText = true): void {
  const at = (x: number, y: number) => y * width + x;
  const terrainCodes = ['?', 'G', 'P', 'W', 'D', 'H'];
  const terrain = new Array<number>(width * width).fill(0);
  observation.map.terrain.forEach((row, y) => [...row].forEach((letter, x) => (terrain[at(x, y)] = terrainCodes.indexOf(letter) + 1)));
  expect(decoded.arrays.terrain).toEqual(terrain);
  const visible = new Array<number>(width * width).fill(0);
  for (const cell of observation.visibleCells) visible[at(cell.x, cell.y)] = 1;
  expect(decoded.arrays.visible).toEqual(visible);
  const cards = new Array<number>(width * width * 4).fill(0);
  const seenAgo = new Array<number>(width * width).fill(-1);
  for (const card of [...observation.visibleCards.map((card) => ({ ...card, seenAgo: 0 })), ...observation.rememberedCards]) {
    const cell = at(card.x, card.y);
    cards.splice(cell * 4, 4, COLORS.indexOf(card.color) + 1, SHAPES.indexOf(card.shape) + 1, card.count, card.selected ? 1 : 0);
    seenAgo[cell] = card.seenAgo;
  }
  expect(decoded.arrays.cards).toEqual(cards);
  expect(decoded.arrays.card_seen_ago).toEqual(seenAgo);
  expect(decoded.arrays.pose).toEqual([observation.pose.x, observation.pose.y, HEADINGS.indexOf(observation.pose.heading)]);
  const leader = observation.leader;
  expect(decoded.arrays.leader).toEqual(leader ? [1, leader.x, leader.y, HEADINGS.indexOf(leader.heading)] : [0, -1, -1, -1]);
  expect([decoded.arrays.steps_left, decoded.arrays.turns_left, decoded.arrays.score]).toEqual([[observation.stepsLeft], [observation.turnsLeft], [observation.score]]);
  expect(decoded.arrays.action_mask).toEqual(FOLLOWER_CODES.map((code) => (observation.legal.includes(code) ? 1 : 0)));
  expect(decoded.texts.instruction).toBe(observation.instruction?.text ?? '');
  expect(decoded.texts.previous_instruction).toBe(observation.previousInstruction?.text ?? '');
  if (withText) expect(decoded.texts.description).toBe(describeObservation(observation));
}

function expectStep(decoded: Decoded, step: EnvStep): void {
  expect(decoded.scalars).toEqual({
    reward: step.reward,
    terminated: step.terminated ? 1 : 0,
    truncated: step.truncated ? 1 : 0,
    potential: step.info.potential,
    shaping: step.info.shaping,
    score: step.info.score,
    points: step.info.points,
    steps: step.info.steps,
    instruction_id: step.info.instructionId ?? -1,
  });
}

describe('the environment server', () => {
  test('hello names the protocol and its version', () => {
    expect(okJson(ask(newServer(), [OPS.hello]))).toMatchObject({ protocol: PROTOCOL, version: PROTOCOL_VERSION });
  });

  test("follower, self-play: every block holds the TypeScript FollowerEnv's observation, reward and info", () => {
    const server = newServer();
    const { env, layout, episodes } = make(server, { role: 'follower', reward: 'distance', gamma: 0.9 });
    expect(episodes).toBeNull();
    expect(layout.actions).toEqual([...FOLLOWER_CODES]);
    const reference = new FollowerEnv({ reward: 'distance', gamma: 0.9 });
    const start = reference.reset({ seed: 4 });
    const reset = ask(server, [OPS.reset], u32(env), { seed: 4 });
    expect(reset.status).toBe(STATUS.ok);
    const decoded = decode(layout, reset.payload);
    expectFollowerBlock(decoded, start.observation, 25);
    expect(decoded.scalars.potential).toBe(start.info.potential);
    const idLength = new DataView(reset.payload.buffer, reset.payload.byteOffset + decoded.end).getUint32(0, true);
    expect(text.decode(reset.payload.subarray(decoded.end + 4, decoded.end + 4 + idLength))).toBe('selfplay-4');

    for (let t = 0; t < 300; t++) {
      const action = (t * 7) % 5;
      const step = reference.step(FOLLOWER_CODES[action]);
      const answer = ask(server, [OPS.step], u32(env), [action]);
      expect(answer.status).toBe(STATUS.ok);
      const block = decode(layout, answer.payload);
      expectStep(block, step);
      expectFollowerBlock(block, step.observation, 25, t % 25 === 0);
      if (step.terminated || step.truncated) break;
    }
  });

  test('follower, logs: episodes are the recorded instructions, ids as in evaluation', () => {
    const server = newServer();
    const recording = loadRecording(LOGS['game-1.jsonl']);
    const { env, layout, episodes } = make(server, { role: 'follower', reward: 'ndtw', logs: ['game-1.jsonl'], description: false });
    expect(episodes).toEqual(recording.instructions.map((_, i) => `selfplay-1#${i}`));
    expect(layout.texts.map((field) => field.name)).toEqual(['instruction', 'previous_instruction']);
    const reference = new FollowerEnv({ reward: 'ndtw' });
    const start = reference.reset({ log: recording, instruction: 5 });
    const decoded = decode(layout, ask(server, [OPS.reset], u32(env), { episode: 5 }).payload);
    expectFollowerBlock(decoded, start.observation, 25, false);
    expectStep(decode(layout, ask(server, [OPS.step], u32(env), [0]).payload), reference.step('MF'));
    expect(errorOf(ask(server, [OPS.reset], u32(env), { episode: episodes!.length })).message).toMatch(/episode must be an index/);
    expect(errorOf(ask(server, [OPS.reset], u32(env), { seed: 1 })).message).toMatch(/logged episodes/);
  });

  test("leader: the blocks hold the leader's view; an instruction's text goes with action 5; refusals are named", () => {
    const server = newServer();
    const { env, layout } = make(server, { role: 'leader' });
    expect(layout.actions).toEqual(['MF', 'MB', 'RL', 'RR', 'END', 'INSTRUCTION']);
    const reference = new LeaderEnv();
    const { view } = reference.reset({ seed: 3 });
    const reset = decode(layout, ask(server, [OPS.reset], u32(env), { seed: 3 }).payload);
    expect(reset.arrays.pose).toEqual([view.leader!.x, view.leader!.y, HEADINGS.indexOf(view.leader!.heading)]);
    expect(reset.arrays.follower).toEqual([view.follower.x, view.follower.y, HEADINGS.indexOf(view.follower.heading)]);
    expect(reset.arrays.cards.filter((_, i) => i % 4 === 0 && reset.arrays.cards[i] > 0)).toHaveLength(view.cards.length);
    expect(reset.arrays.terrain.every((code) => code >= 2)).toBe(true);
    expect(reset.arrays.action_mask).toEqual([...['MF', 'MB', 'RL', 'RR'].map((move) => (view.legal.moves.includes(move as 'MF') ? 1 : 0)), 0, 1]);

    const refused = decode(layout, ask(server, [OPS.step], u32(env), [4]).payload);
    expect(refused.texts.refused).toBe('EMPTY_QUEUE');
    const instruction = 'get the 2 red stars';
    const said = decode(layout, ask(server, [OPS.step], u32(env), [5], u32(utf8.encode(instruction).length), instruction).payload);
    expect(said.texts).toEqual({ queue: instruction, previous_instruction: '', refused: '' });
    expect(said.arrays.queue_length).toEqual([1]);
    reference.step('END');
    const played = reference.step({ instruction });
    const ended = decode(layout, ask(server, [OPS.step], u32(env), [4]).payload);
    const after = reference.step('END');
    expect(ended.scalars).toEqual({ reward: after.reward, terminated: 0, truncated: 0, score: after.info.score, points: after.info.points, steps: after.info.steps, follower_actions: after.info.followerActions });
    expect(played.info.refused).toBeNull();
    expect(ended.arrays.pose).toEqual([after.view.leader!.x, after.view.leader!.y, HEADINGS.indexOf(after.view.leader!.heading)]);
    expect(text.decode(ask(server, [OPS.render], u32(env)).payload)).toMatch(/L leader {2}F follower/);
  });

  test('both: each block holds who is in control, who acted, the leader\'s view and the follower\'s at 8-byte boundaries', () => {
    const server = newServer();
    const made = okJson(ask(server, [OPS.make], { role: 'both', description: false, maxSteps: 50 }));
    expect(made.agents).toEqual(['leader', 'follower']);
    const layouts: Record<'leader' | 'follower', Layout> = made.layouts;
    // No shaping in the two-player game, and no follower inside the leader's steps.
    expect(layouts.follower.scalars.map((field) => field.name)).toEqual(['reward', 'terminated', 'truncated', 'score', 'points', 'steps', 'instruction_id']);
    expect(layouts.leader.scalars.map((field) => field.name)).toEqual(['reward', 'terminated', 'truncated', 'score', 'points', 'steps']);
    const reference = new GameEnv({ maxSteps: 50 });
    const read = (payload: Uint8Array) => {
      const leader = decode(layouts.leader, payload, 8);
      const followerAt = Math.ceil(leader.end / 8) * 8;
      expect(payload.subarray(leader.end, followerAt).every((byte) => byte === 0)).toBe(true);
      return { control: payload[0], actor: payload[1], leader, follower: decode(layouts.follower, payload, followerAt) };
    };
    const reset = read(ask(server, [OPS.reset], u32(made.env), { seed: 3 }).payload);
    const start = reference.reset({ seed: 3 });
    expect([reset.control, reset.actor]).toEqual([0, 2]);
    expectFollowerBlock(reset.follower, start.follower, 25, false);
    expect(reset.leader.arrays.follower).toEqual([start.leader.follower.x, start.leader.follower.y, HEADINGS.indexOf(start.leader.follower.heading)]);

    const instruction = 'get the 2 red stars';
    const steps: [number[], GameAction][] = [
      [[1, 0], { role: 'follower', action: 'MF' }],
      [[0, 5, ...u32(utf8.encode(instruction).length), ...utf8.encode(instruction)], { role: 'leader', action: { instruction } }],
      [[0, 4], { role: 'leader', action: 'END' }],
      [[1, 2], { role: 'follower', action: 'RL' }],
    ];
    for (const [request, action] of steps) {
      const answer = read(ask(server, [OPS.step], u32(made.env), request).payload);
      const wanted = reference.step(action);
      expect([answer.control, answer.actor]).toEqual([['leader', 'follower'].indexOf(wanted.control), request[0]]);
      expectFollowerBlock(answer.follower, wanted.follower, 25, false);
      expect(answer.leader.texts).toEqual({ queue: wanted.leader.instructions.filter((i) => i.status !== 'done').map((i) => i.text).join('\n'), previous_instruction: '', refused: wanted.info.refused?.code ?? '' });
      expect(answer.leader.scalars).toEqual({ reward: wanted.reward, terminated: 0, truncated: 0, score: wanted.info.score, points: wanted.info.points, steps: wanted.info.steps });
    }
    expect(errorOf(ask(server, [OPS.step], u32(made.env), [2, 0])).message).toMatch(/unknown role/);
    expect(errorOf(ask(server, [OPS.reset], u32(made.env), { episode: 0 })).message).toMatch(/reset with \{seed\}/);
    expect(text.decode(ask(server, [OPS.render], u32(made.env)).payload)).toMatch(/^follower's turn\nleader at/);
  });

  test('observer: encodes a follower observation given as JSON as a follower env would; it plays no game, and refuses bad observations', () => {
    const server = newServer();
    const observer = make(server, { role: 'observer', description: true });
    const reference = new FollowerEnv();
    const { observation } = reference.reset({ seed: 4 });
    const wire = JSON.parse(JSON.stringify(observation));
    const decoded = decode(observer.layout, ask(server, [OPS.encode], u32(observer.env), { observation: wire, steps: 3, points: 1 }).payload);
    expectFollowerBlock(decoded, observation, 25);
    expect(decoded.scalars).toMatchObject({ reward: 0, terminated: 0, truncated: 0, score: observation.score, points: 1, steps: 3 });
    expect(observer.layout.scalars.map((field) => field.name)).not.toContain('potential');
    expect(errorOf(ask(server, [OPS.reset], u32(observer.env), { seed: 1 })).message).toMatch(/an observer plays no game/);
    expect(errorOf(ask(server, [OPS.step], u32(observer.env), [0])).message).toMatch(/an observer plays no game/);
    const small = make(server, { role: 'observer', width: 9, height: 9 });
    expect(errorOf(ask(server, [OPS.encode], u32(small.env), { observation: wire, steps: 0 })).message).toMatch(/the observation's map is 25 x 25, larger than this observer's 9 x 9 grid/);
    expect(errorOf(ask(server, [OPS.encode], u32(observer.env), { observation: { ...wire, version: 1 }, steps: 0 })).message).toMatch(/bad observation.*version/s);
    const follower = make(server, { role: 'follower' });
    expect(errorOf(ask(server, [OPS.encode], u32(follower.env), { observation: wire, steps: 0 })).message).toBe('only an observer environment encodes observations');
  });

  test('stepMany: several envs step in one request, each answer as a single step would give it', () => {
    const server = newServer();
    const one = make(server, { role: 'follower', description: false });
    const two = make(server, { role: 'follower', description: false });
    const alone = make(server, { role: 'follower', description: false });
    for (const env of [one.env, two.env, alone.env]) ask(server, [OPS.reset], u32(env), { seed: 6 });
    const batch = ask(server, [OPS.stepMany], u32(3), u32(one.env), [0], u32(two.env), [2], u32(one.env), [3]);
    expect(batch.status).toBe(STATUS.ok);
    const blocks: Uint8Array[] = [];
    for (let offset = 0; offset < batch.payload.length; ) {
      const length = new DataView(batch.payload.buffer, batch.payload.byteOffset + offset).getUint32(0, true);
      blocks.push(batch.payload.slice(offset + 4, offset + 4 + length));
      offset += 4 + length;
    }
    const single = (action: number) => ask(server, [OPS.step], u32(alone.env), [action]).payload.slice();
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toEqual(single(0));
    expect(blocks[2]).toEqual(single(3));
    ask(server, [OPS.reset], u32(alone.env), { seed: 6 });
    expect(blocks[1]).toEqual(single(2));
  });

  test('errors name their kind: bad requests, a seed with no game, a step with no episode', () => {
    const server = newServer();
    expect(errorOf(ask(server, [99]))).toEqual({ kind: 'invalid', message: 'unknown op 99' });
    expect(errorOf(ask(server, [OPS.make], { role: 'follower', rewards: 'sparse' })).message).toMatch(/bad make options.*rewards/s);
    expect(errorOf(ask(server, [OPS.make], { role: 'follower', gamma: 2 })).kind).toBe('invalid');
    expect(errorOf(ask(server, [OPS.make], { role: 'follower', reward: 'ndtw' })).message).toMatch(/ndtw.*logs/);
    expect(errorOf(ask(server, [OPS.make], { role: 'follower', logs: ['missing.jsonl'] })).message).toMatch(/missing.jsonl: ENOENT/);
    expect(errorOf(ask(server, [OPS.make], 'not json')).message).toMatch(/not JSON/);
    const { env } = make(server, { role: 'follower' });
    expect(errorOf(ask(server, [OPS.step], u32(env), [0])).kind).toBe('episode-over');
    expect(errorOf(ask(server, [OPS.reset], u32(env), { seed: 139765 })).kind).toBe('setup');
    expect(errorOf(ask(server, [OPS.reset], u32(env), { seed: -1 })).message).toMatch(/bad reset options/);
    ask(server, [OPS.reset], u32(env), { seed: 1 });
    expect(errorOf(ask(server, [OPS.step], u32(env), [5])).message).toMatch(/unknown action 5/);
    expect(errorOf(ask(server, [OPS.step], u32(env))).message).toMatch(/ends too soon/);
    ask(server, [OPS.close], u32(env));
    expect(errorOf(ask(server, [OPS.step], u32(env), [0])).message).toMatch(/no environment/);
  });
});

describe('the stdio transport', () => {
  test('answers framed requests in order and exits when stdin closes', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '../../shared/env/node/main.ts')], { stdio: ['pipe', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    const frame = (body: Uint8Array) => Buffer.concat([u32(body.length), body]);
    child.stdin.write(Buffer.concat([frame(new Uint8Array([OPS.hello])), frame(new Uint8Array([42]))]));
    child.stdin.end();
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    const out = Buffer.concat(chunks);
    const first = out.readUInt32LE(0);
    expect([out[4], JSON.parse(out.subarray(8, 8 + first).toString()).protocol]).toEqual([STATUS.ok, PROTOCOL]);
    const second = out.subarray(8 + first);
    expect([second[4], JSON.parse(second.subarray(8).toString()).message]).toEqual([STATUS.error, 'unknown op 42']);
  });
});
