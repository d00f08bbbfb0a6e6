/**
 * The environment server the Python package runs: its answers decoded with the layouts it gives,
 * checked against the TypeScript environments' own results; errors; batches; the stdio transport.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FOLLOWER_CODES } from '../../shared/engine/actions';
import { COLORS, SHAPES } from '../../shared/engine/cards';
import { HEADINGS } from '../../shared/engine/hex';
import * as envModule from '../../shared/env/env';
import { FollowerEnv, type EnvStep, type RewardKind } from '../../shared/env/env';
import { GameEnv, type GameAction } from '../../shared/env/gameEnv';
import { LeaderEnv } from '../../shared/env/leaderEnv';
import type { GridSize, Layout } from '../../shared/env/observationArrays';
import { ANSWER_HEADER_BYTES, EnvServer, OPS, PROTOCOL, PROTOCOL_VERSION, STATUS, type MakeOptions } from '../../shared/env/server';
import { MAX_KEPT_STARTS, type BatchOptions, type BlockFile } from '../../shared/env/servedBatch';
import { concat } from '../../shared/env/wire';
import { openBlockFile } from '../../shared/env/node/blockFile';
import { allocateBatchBuffers, batchRegions, followerBatchLayout, type BatchRegion } from '../../shared/env/batch/buffers';
import { FollowerBatch } from '../../shared/env/batch/followerBatch';
import { loadRecording, type Recording } from '../../shared/eval/recording';
import type { FollowerObservation } from '../../shared/agents/types';
import { describeObservation } from '../../shared/agents/language';
import { serializeLine } from '../../shared/log/recorder';
import type { LogLine } from '../../shared/log/format';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { Draw, seedRng } from '../../shared/engine/rng';

const utf8 = new TextEncoder();
const text = new TextDecoder();

function selfPlayLog(seed: number, size?: GridSize): string {
  const lines: LogLine[] = [];
  playSelfPlayGame({ seed, map: generateMap(seed, size) }, (line) => lines.push(line));
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

/** A shared file kept in memory: what the client would map. */
class MemoryFile implements BlockFile {
  readonly data: Uint8Array;
  writes = 0;
  closed = false;

  constructor(readonly bytes: number) {
    this.data = new Uint8Array(bytes);
  }

  write(bytes: Uint8Array, position: number): void {
    expect(position + bytes.length).toBeLessThanOrEqual(this.bytes);
    this.data.set(bytes, position);
    this.writes++;
  }

  close(): void {
    this.closed = true;
  }
}

/** A server with in-memory files (`files`, which servers given the same map share) and `logs` (name: text). */
function batchServer(logs: Record<string, string> = {}, files = new Map<string, MemoryFile>()): { server: EnvServer; files: Map<string, MemoryFile> } {
  const server = new EnvServer(
    (path) => {
      if (!(path in logs)) throw new Error('ENOENT: no such file');
      return loadRecording(logs[path]);
    },
    (path, bytes, shared) => {
      if (path === 'missing') throw new Error('ENOENT: no such file');
      // As the Node server's files: a shared batch opens a file another sized only while none wrote into it.
      const sized = files.get(path);
      if (sized && !(shared && sized.bytes === bytes && sized.data.every((byte) => byte === 0))) throw new Error(`the batch's file must be an empty regular file made by the client; this one has ${sized.bytes} bytes`);
      const file = sized ?? new MemoryFile(bytes);
      files.set(path, file);
      return file;
    },
  );
  return { server, files };
}

interface MadeBatch {
  readonly batch: number;
  readonly layout: Layout;
  readonly regions: BatchRegion[];
  readonly bytes: number;
  readonly episodes: string[] | null;
}

const u32s = (values: readonly number[]) => concat(values.map(u32));

/** Where two blocks first differ (the field), or null when they are equal: faster than toEqual on typed arrays, and says more. */
function blockDifference(regions: readonly BatchRegion[], block: Uint8Array, expected: Uint8Array): string | null {
  if (block.length !== expected.length) return `${block.length} bytes, expected ${expected.length}`;
  if (Buffer.compare(block, expected) === 0) return null;
  const at = block.findIndex((byte, i) => byte !== expected[i]);
  const region = [...regions].reverse().find((candidate) => candidate.offset <= at);
  return `${region?.group}.${region?.name} differs at byte ${at}`;
}

/** The slots an answer to batchReset or batchStep lists. */
function failedSlots(answer: Answer): number[] {
  expect(answer.status).toBe(STATUS.ok);
  const view = new DataView(answer.payload.buffer, answer.payload.byteOffset, answer.payload.length);
  const count = view.getUint32(0, true);
  expect(answer.payload.length).toBe(4 + 4 * count);
  return Array.from({ length: count }, (_, i) => view.getUint32(4 + 4 * i, true));
}

/** A batch beside the served one, on its own arrays in one block: the bytes the file must hold. */
function referenceBatch(
  options: { size: number; reward: RewardKind; gamma: number; maxSteps: number; recordings?: readonly Recording[] },
  grid: GridSize = { width: 25, height: 25 },
): { batch: FollowerBatch; block: () => Uint8Array } {
  const buffers = allocateBatchBuffers(followerBatchLayout(grid, options.maxSteps), options.size);
  const batch = new FollowerBatch({ ...options, buffers });
  return { batch, block: () => new Uint8Array(buffers.step.reward.buffer) };
}

describe('the environment server: batches through a shared file', () => {
  const options = { size: 5, reward: 'distance', gamma: 0.9, maxSteps: 7 } as const;

  test("the file holds the batch's arrays after every reset, step and resetAt; ended environments start on the seeds given; seeds with no game are answered", () => {
    const { server, files } = batchServer();
    const made: MadeBatch = okJson(ask(server, [OPS.batchMake], { ...options, file: 'batch-a' } satisfies BatchOptions));
    const file = files.get('batch-a')!;
    expect(made.layout).toEqual(followerBatchLayout({ width: 25, height: 25 }, options.maxSteps));
    expect(made.bytes).toBe(file.bytes);
    expect(made.regions.map((region) => `${region.group}.${region.name}`)).toEqual(expect.arrayContaining(['step.reward', 'observation.cards', 'info.action_mask']));
    const reference = referenceBatch(options);

    // 139765 gives no game: its slot is answered, and has none until resetAt starts it.
    const seeds = [3, 139765, 4, 5, 6];
    expect(failedSlots(ask(server, [OPS.batchReset], u32(made.batch), u32s(seeds)))).toEqual([1]);
    expect(errorOf(ask(server, [OPS.batchStep], u32(made.batch), [0, 0, 0, 0, 0], u32(0)))).toEqual({ kind: 'episode-over', message: expect.stringMatching(/1 environments have no game/) });
    expect(errorOf(ask(server, [OPS.batchResetAt], u32(made.batch), u32(0), u32(9))).message).toMatch(/environment 0 has a game/);
    expect(ask(server, [OPS.batchResetAt], u32(made.batch), u32(1), u32(139765)).payload).toEqual(new Uint8Array([0]));
    expect(ask(server, [OPS.batchResetAt], u32(made.batch), u32(1), u32(7)).payload).toEqual(new Uint8Array([1]));
    reference.batch.reset([3, 7, 4, 5, 6]);
    expect(blockDifference(made.regions, file.data, reference.block())).toBeNull();

    const draw = new Draw(seedRng(5));
    const { terminated, truncated } = reference.batch.buffers.step;
    let nextSeed = 100;
    let autoresets = 0;
    let failures = 0;
    for (let t = 0; t < 60; t++) {
      const actions = Array.from({ length: options.size }, () => draw.int(0, FOLLOWER_CODES.length - 1));
      const ended = Array.from({ length: options.size }, (_, slot) => slot).filter((slot) => terminated[slot] || truncated[slot]);
      // Now and then an autoreset is handed the seed with no game.
      const given = ended.map((_, i) => (t % 9 === 4 && i === 0 ? 139765 : nextSeed++));
      const slotSeeds = new Float64Array(options.size);
      ended.forEach((slot, i) => (slotSeeds[slot] = given[i]));
      const failed = failedSlots(ask(server, [OPS.batchStep], u32(made.batch), actions, u32(given.length), u32s(given)));
      expect(failed).toEqual([...reference.batch.step(actions, slotSeeds)]);
      for (const slot of failed) {
        expect(ask(server, [OPS.batchResetAt], u32(made.batch), u32(slot), u32(nextSeed)).payload).toEqual(new Uint8Array([1]));
        expect(reference.batch.resetAt(slot, nextSeed++)).toBe(true);
      }
      expect(blockDifference(made.regions, file.data, reference.block())).toBeNull();
      autoresets += ended.length;
      failures += failed.length;
    }
    // Episodes of at most 7 steps: many autoresets, and some on the seed with no game.
    expect(autoresets).toBeGreaterThan(30);
    expect(failures).toBeGreaterThan(0);
    expect(file.closed).toBe(false);
    expect(ask(server, [OPS.batchClose], u32(made.batch)).status).toBe(STATUS.ok);
    expect(file.closed).toBe(true);
    expect(errorOf(ask(server, [OPS.batchStep], u32(made.batch), [0, 0, 0, 0, 0], u32(0))).message).toBe(`no batch ${made.batch} (closed, or never made)`);
    expect(errorOf(ask(server, [OPS.batchClose], u32(made.batch))).message).toMatch(/no batch/);
  });

  test('bad requests get clear errors and change nothing', () => {
    const { server, files } = batchServer();
    const bad = (options: object) => errorOf(ask(server, [OPS.batchMake], options));
    expect(bad({ ...options, size: 0, file: 'x' }).message).toMatch(/bad batch options.*size/s);
    expect(bad({ ...options, size: 70_000, file: 'x' }).message).toMatch(/bad batch options.*size/s);
    expect(bad({ ...options, reward: 'ndtw', file: 'x' }).message).toMatch(/'ndtw' reward needs recorded reference paths/);
    expect(bad({ ...options, reward: 'dense', file: 'x' }).message).toMatch(/bad batch options.*reward/s);
    expect(bad({ ...options, description: true, file: 'x' }).message).toMatch(/bad batch options.*description/s);
    expect(bad({ ...options }).message).toMatch(/bad batch options.*file/s);
    expect(bad({ ...options, file: 'missing' })).toEqual({ kind: 'invalid', message: 'missing: ENOENT: no such file' });
    expect(errorOf(ask(newServer(), [OPS.batchMake], { ...options, file: 'x' })).message).toMatch(/opens no files/);
    expect(errorOf(ask(server, [OPS.batchReset], u32(1), u32s([1, 2, 3, 4, 5]))).message).toBe('no batch 1 (closed, or never made)');
    expect(files.size).toBe(0);

    const made: MadeBatch = okJson(ask(server, [OPS.batchMake], { ...options, file: 'b' }));
    const file = files.get('b')!;
    expect(errorOf(ask(server, [OPS.batchStep], u32(made.batch), [0, 0, 0, 0, 0], u32(0)))).toEqual({ kind: 'episode-over', message: 'the batch was never reset: reset it before a step' });
    expect(errorOf(ask(server, [OPS.batchReset], u32(made.batch), u32s([1, 2, 3, 4]))).message).toBe('reset takes 5 seeds (u32), got 16 bytes for them');
    expect(errorOf(ask(server, [OPS.batchReset], u32(made.batch), u32s([1, 2, 3, 4, 5]), [0])).message).toMatch(/reset takes 5 seeds/);
    expect(file.writes).toBe(0);
    expect(failedSlots(ask(server, [OPS.batchReset], u32(made.batch), u32s([1, 2, 3, 4, 5])))).toEqual([]);
    const reference = referenceBatch(options);
    reference.batch.reset([1, 2, 3, 4, 5]);
    const writes = file.writes;
    const refusals: [Uint8Array | number[], RegExp][] = [
      [[0, 0, 0, 0], /ends too soon/],
      [[0, 0, 0, 0, 5, ...u32(0)], /unknown action 5 for environment 4/],
      [[0, 0, 0, 0, 0], /ends too soon/],
      [[0, 0, 0, 0, 0, ...u32(1), ...u32(8)], /the seeds of the environments whose episode ended at the previous step: 0, got 1/],
      [[0, 0, 0, 0, 0, ...u32(0), 1], /step takes 0 seeds/],
    ];
    for (const [request, message] of refusals) expect(errorOf(ask(server, [OPS.batchStep], u32(made.batch), request)).message).toMatch(message);
    expect(errorOf(ask(server, [OPS.batchResetAt], u32(made.batch), u32(5), u32(1))).message).toBe('slot must be from 0 to 4, got 5');
    expect(errorOf(ask(server, [OPS.batchResetAt], u32(made.batch), u32(0), u32(1), [0])).message).toMatch(/1 bytes too many/);
    expect(file.writes).toBe(writes);
    // Unchanged: the next good step is the reference's.
    failedSlots(ask(server, [OPS.batchStep], u32(made.batch), [0, 1, 2, 3, 4], u32(0)));
    reference.batch.step([0, 1, 2, 3, 4], new Float64Array(5));
    expect(blockDifference(made.regions, file.data, reference.block())).toBeNull();
  });

  test('batches in two processes share one file, each writing its rows of every field: the file holds what one batch of all the environments would', () => {
    const files = new Map<string, MemoryFile>();
    const servers = [batchServer({}, files).server, batchServer({}, files).server];
    const rows = [
      { first: 0, size: 2 },
      { first: 2, size: 3 },
    ];
    const made: MadeBatch[] = rows.map(({ first, size }, i) => okJson(ask(servers[i], [OPS.batchMake], { ...options, size, file: 'shared', rows: { first, of: options.size } } satisfies BatchOptions)));
    // Both answer the file's layout, that of a batch of all five.
    const whole = batchRegions(followerBatchLayout({ width: 25, height: 25 }, options.maxSteps), options.size);
    for (const answer of made) expect({ regions: answer.regions, bytes: answer.bytes }).toEqual({ regions: whole.regions, bytes: whole.bytes });
    expect(files.size).toBe(1);
    const file = files.get('shared')!;
    const reference = referenceBatch(options);
    const part = <T>(values: readonly T[], i: number): T[] => values.slice(rows[i].first, rows[i].first + rows[i].size);

    // The processes write at the same time: here each goes first in turn, so that one writing into the other's rows would show.
    const inTurn = (t: number): number[] => (t % 2 === 0 ? [0, 1] : [1, 0]);
    const seeds = [3, 4, 5, 6, 7];
    inTurn(1).forEach((i) => expect(failedSlots(ask(servers[i], [OPS.batchReset], u32(made[i].batch), u32s(part(seeds, i))))).toEqual([]));
    reference.batch.reset(seeds);
    expect(blockDifference(whole.regions, file.data, reference.block())).toBeNull();
    const draw = new Draw(seedRng(8));
    const { terminated, truncated } = reference.batch.buffers.step;
    let nextSeed = 100;
    let autoresets = 0;
    for (let t = 0; t < 40; t++) {
      const actions = Array.from({ length: options.size }, () => draw.int(0, FOLLOWER_CODES.length - 1));
      const slotSeeds = Array.from({ length: options.size }, (_, slot) => (terminated[slot] || truncated[slot] ? nextSeed++ : -1));
      inTurn(t).forEach((i) => {
        const given = part(slotSeeds, i).filter((seed) => seed >= 0);
        expect(failedSlots(ask(servers[i], [OPS.batchStep], u32(made[i].batch), part(actions, i), u32(given.length), u32s(given)))).toEqual([]);
      });
      expect(reference.batch.step(actions, Float64Array.from(slotSeeds, (seed) => Math.max(seed, 0)))).toEqual([]);
      expect(blockDifference(whole.regions, file.data, reference.block())).toBeNull();
      autoresets += slotSeeds.filter((seed) => seed >= 0).length;
    }
    expect(autoresets).toBeGreaterThan(15);

    // Rows must lie within the file, and a file sized for another layout is not shared.
    const bad = (extra: object) => errorOf(ask(servers[0], [OPS.batchMake], { ...options, file: 'other', ...extra }));
    expect(bad({ size: 3, rows: { first: 3, of: 5 } }).message).toMatch(/bad batch options.*rows.*must lie within the file's rows.of environments/s);
    expect(bad({ rows: { first: -1, of: 5 } }).message).toMatch(/bad batch options.*rows/s);
    expect(bad({ rows: { first: 0, of: 70_000 } }).message).toMatch(/bad batch options.*rows/s);
    expect(bad({ rows: { first: 0, of: 5, last: 4 } }).message).toMatch(/bad batch options.*rows/s);
    expect(errorOf(ask(servers[0], [OPS.batchMake], { ...options, size: 1, file: 'shared', rows: { first: 0, of: 6 } })).message).toMatch(/must be an empty regular file .* this one has/);
    expect(errorOf(ask(servers[0], [OPS.batchMake], { ...options, file: 'shared' })).message).toMatch(/must be an empty regular file .* this one has/);
    // Written into: not another batch's file to share any more, even with the same layout.
    expect(errorOf(ask(servers[0], [OPS.batchMake], { ...options, size: 1, file: 'shared', rows: { first: 0, of: 5 } })).message).toMatch(/must be an empty regular file .* this one has/);
    expect(files.size).toBe(1);
  });

  test('with logs, a batch plays their episodes (seeds are episode numbers), padded to the largest map; episode numbers out of range are refused and change nothing', () => {
    const logs = { 'game-1.jsonl': LOGS['game-1.jsonl'], 'wide.jsonl': selfPlayLog(3, { width: 30, height: 21 }) };
    const recordings = Object.values(logs).map(loadRecording);
    const { server, files } = batchServer(logs);
    const logOptions = { ...options, reward: 'ndtw', gamma: 1, logs: Object.keys(logs) } as const;
    expect(errorOf(ask(server, [OPS.batchMake], { ...logOptions, logs: ['game-1.jsonl', 'missing.jsonl'], file: 'x' }))).toEqual({ kind: 'invalid', message: 'missing.jsonl: ENOENT: no such file' });
    expect(files.size).toBe(0);
    const made: MadeBatch = okJson(ask(server, [OPS.batchMake], { ...logOptions, file: 'logs' } satisfies BatchOptions));
    const file = files.get('logs')!;
    // The follower env's episodes with the same logs; the grid is the largest map's.
    expect(made.episodes).toEqual(make(server, { role: 'follower', logs: logOptions.logs }).episodes);
    expect(made.episodes).toHaveLength(recordings[0].instructions.length + recordings[1].instructions.length);
    expect(made.layout).toEqual(followerBatchLayout({ width: 30, height: 25 }, options.maxSteps));
    const count = made.episodes!.length;
    const reference = referenceBatch({ ...logOptions, recordings }, { width: 30, height: 25 });

    expect(errorOf(ask(server, [OPS.batchReset], u32(made.batch), u32s([0, 1, count, 2, 3])))).toEqual({
      kind: 'invalid',
      message: `this batch plays logged episodes: its seeds are episode numbers from 0 to ${count - 1}, got ${count}`,
    });
    expect(file.writes).toBe(0);
    const draw = new Draw(seedRng(8));
    const episodes = () => Array.from({ length: options.size }, () => draw.int(0, count - 1));
    const first = [count - 1, ...episodes().slice(1)];
    expect(failedSlots(ask(server, [OPS.batchReset], u32(made.batch), u32s(first)))).toEqual([]);
    reference.batch.reset(first);
    expect(blockDifference(made.regions, file.data, reference.block())).toBeNull();

    const { terminated, truncated } = reference.batch.buffers.step;
    let autoresets = 0;
    let shaped = 0;
    for (let t = 0; t < 80; t++) {
      const actions = Array.from({ length: options.size }, () => draw.int(0, FOLLOWER_CODES.length - 1));
      const ended = Array.from({ length: options.size }, (_, slot) => slot).filter((slot) => terminated[slot] || truncated[slot]);
      const given = episodes().slice(0, ended.length);
      if (ended.length > 0) {
        const writes = file.writes;
        expect(errorOf(ask(server, [OPS.batchStep], u32(made.batch), actions, u32(given.length), u32s([...given.slice(1), count + 5]))).message).toMatch(/episode numbers from 0 to .*got \d+/);
        expect(file.writes).toBe(writes);
      }
      const slotSeeds = new Float64Array(options.size);
      ended.forEach((slot, i) => (slotSeeds[slot] = given[i]));
      expect(failedSlots(ask(server, [OPS.batchStep], u32(made.batch), actions, u32(given.length), u32s(given)))).toEqual([]);
      expect(reference.batch.step(actions, slotSeeds)).toEqual([]);
      expect(blockDifference(made.regions, file.data, reference.block())).toBeNull();
      autoresets += ended.length;
      shaped += reference.batch.buffers.info.shaping.filter((value) => value !== 0).length;
    }
    // Episodes of at most 7 steps: many autoresets; the nDTW potentials of the recorded paths shaped the rewards.
    expect(autoresets).toBeGreaterThan(30);
    expect(shaped).toBeGreaterThan(50);
    expect(ask(server, [OPS.batchClose], u32(made.batch)).status).toBe(STATUS.ok);
  });

  test('a batch made with keptStarts gives the same bytes as one without, starting each seed it keeps only once; keptStarts is refused out of range and with logs', () => {
    const { server, files } = batchServer(LOGS);
    const bad = (extra: object) => errorOf(ask(server, [OPS.batchMake], { ...options, file: 'x', ...extra }));
    for (const keptStarts of [-1, 1.5, MAX_KEPT_STARTS + 1, '4']) expect(bad({ keptStarts }).message).toMatch(/bad batch options.*keptStarts/s);
    expect(bad({ keptStarts: 4, reward: 'ndtw', logs: ['game-1.jsonl'] }).message).toMatch(/keptStarts is for self-play games by seed: a batch with logs keeps no starts/);
    expect(files.size).toBe(0);

    // Four levels, one of which gives no game; the batch keeps them all.
    const levels = [3, 139765, 4, 5];
    const kept: MadeBatch = okJson(ask(server, [OPS.batchMake], { ...options, file: 'kept', keptStarts: levels.length } satisfies BatchOptions));
    const plain: MadeBatch = okJson(ask(server, [OPS.batchMake], { ...options, file: 'plain' }));
    const starts = jest.spyOn(envModule, 'selfPlayStart');
    try {
      const draw = new Draw(seedRng(6));
      const level = () => levels[draw.int(0, levels.length - 1)];
      const startsOf = (send: () => void) => {
        const before = starts.mock.calls.length;
        send();
        return starts.mock.calls.length - before;
      };
      let keptStarts = 0;
      let plainStarts = 0;
      // Both batches get the same requests; a slot whose seed gave no game is started on the next drawn level.
      const both = (op: number, ...parts: (Uint8Array | number[])[]) => {
        let failed: number[] = [];
        keptStarts += startsOf(() => (failed = failedSlots(ask(server, [op], u32(kept.batch), ...parts))));
        plainStarts += startsOf(() => expect(failedSlots(ask(server, [op], u32(plain.batch), ...parts))).toEqual(failed));
        for (const slot of failed) {
          for (;;) {
            const seed = level();
            let started: Uint8Array | undefined;
            keptStarts += startsOf(() => (started = ask(server, [OPS.batchResetAt], u32(kept.batch), u32(slot), u32(seed)).payload));
            plainStarts += startsOf(() => expect(ask(server, [OPS.batchResetAt], u32(plain.batch), u32(slot), u32(seed)).payload).toEqual(started));
            if (started![0] === 1) break;
          }
        }
        expect(blockDifference(kept.regions, files.get('kept')!.data, files.get('plain')!.data)).toBeNull();
      };
      both(OPS.batchReset, u32s(Array.from({ length: options.size }, level)));
      const flags = (name: string) => kept.regions.find((region) => region.group === 'step' && region.name === name)!.offset;
      const [terminated, truncated] = [flags('terminated'), flags('truncated')];
      let autoresets = 0;
      for (let t = 0; t < 60; t++) {
        const actions = Array.from({ length: options.size }, () => draw.int(0, FOLLOWER_CODES.length - 1));
        const data = files.get('kept')!.data;
        const ended = Array.from({ length: options.size }, (_, slot) => slot).filter((slot) => data[terminated + slot] || data[truncated + slot]);
        both(OPS.batchStep, actions, u32(ended.length), u32s(ended.map(level)));
        autoresets += ended.length;
      }
      // Episodes of at most 7 steps: dozens of starts, each a copy in the batch that keeps them.
      expect(autoresets).toBeGreaterThan(30);
      expect(plainStarts).toBeGreaterThan(autoresets);
      expect(keptStarts).toBe(levels.length);
    } finally {
      starts.mockRestore();
    }
  });

  test('the Node server sizes the client\'s empty file and writes the block into it, or its rows of a file another batch sized; it opens no other file', () => {
    const directory = mkdtempSync(join(tmpdir(), 'cerealbar-batch-test-'));
    try {
      const server = new EnvServer(() => {
        throw new Error('no logs here');
      }, openBlockFile);
      const path = join(directory, 'batch');
      writeFileSync(path, '');
      const made: MadeBatch = okJson(ask(server, [OPS.batchMake], { ...options, file: path }));
      expect(statSync(path).size).toBe(made.bytes);
      failedSlots(ask(server, [OPS.batchReset], u32(made.batch), u32s([1, 2, 3, 4, 5])));
      failedSlots(ask(server, [OPS.batchStep], u32(made.batch), [0, 2, 0, 3, 4], u32(0)));
      const reference = referenceBatch(options);
      reference.batch.reset([1, 2, 3, 4, 5]);
      reference.batch.step([0, 2, 0, 3, 4]);
      expect(blockDifference(made.regions, new Uint8Array(readFileSync(path)), reference.block())).toBeNull();
      expect(ask(server, [OPS.batchClose], u32(made.batch)).status).toBe(STATUS.ok);

      // Two batches (servers) sharing one file: the first sizes it, the second writes its rows of the file as sized.
      const shared = join(directory, 'shared');
      writeFileSync(shared, '');
      const second = new EnvServer(() => {
        throw new Error('no logs here');
      }, openBlockFile);
      const parts: MadeBatch[] = [
        okJson(ask(server, [OPS.batchMake], { ...options, size: 2, file: shared, rows: { first: 0, of: 5 } })),
        okJson(ask(second, [OPS.batchMake], { ...options, size: 3, file: shared, rows: { first: 2, of: 5 } })),
      ];
      expect(statSync(shared).size).toBe(made.bytes);
      failedSlots(ask(server, [OPS.batchReset], u32(parts[0].batch), u32s([1, 2])));
      failedSlots(ask(second, [OPS.batchReset], u32(parts[1].batch), u32s([3, 4, 5])));
      failedSlots(ask(server, [OPS.batchStep], u32(parts[0].batch), [0, 2], u32(0)));
      failedSlots(ask(second, [OPS.batchStep], u32(parts[1].batch), [0, 3, 4], u32(0)));
      expect(blockDifference(made.regions, new Uint8Array(readFileSync(shared)), reference.block())).toBeNull();
      // Sized for 5: a batch laid out for another number of environments, or one without rows, refuses it; so does one for 5 once the batches wrote into it.
      const written = readFileSync(shared);
      expect(errorOf(ask(second, [OPS.batchMake], { ...options, size: 2, file: shared, rows: { first: 0, of: 6 } })).message).toMatch(/must be an empty regular file made by the client or one of \d+ zero bytes another batch of the same file sized; this one has \d+ bytes$/);
      expect(errorOf(ask(second, [OPS.batchMake], { ...options, file: shared })).message).toMatch(/must be an empty regular file made by the client; this one has \d+ bytes$/);
      expect(errorOf(ask(second, [OPS.batchMake], { ...options, size: 2, file: shared, rows: { first: 0, of: 5 } })).message).toMatch(/this one has \d+ bytes, not all zero$/);
      expect(Buffer.compare(readFileSync(shared), written)).toBe(0);
      // Nor does a file of the very size that holds anything else: it is left as it was.
      const other = join(directory, 'other');
      writeFileSync(other, Buffer.alloc(made.bytes, 'A'));
      expect(errorOf(ask(second, [OPS.batchMake], { ...options, size: 2, file: other, rows: { first: 0, of: 5 } })).message).toMatch(/not all zero$/);
      expect(readFileSync(other).equals(Buffer.alloc(made.bytes, 'A'))).toBe(true);

      writeFileSync(join(directory, 'full'), 'data');
      expect(errorOf(ask(server, [OPS.batchMake], { ...options, file: join(directory, 'full') })).message).toMatch(/must be an empty regular file.*4 bytes/);
      expect(readFileSync(join(directory, 'full'), 'utf8')).toBe('data');
      expect(errorOf(ask(server, [OPS.batchMake], { ...options, file: join(directory, 'absent') })).message).toMatch(/ENOENT/);
      expect(errorOf(ask(server, [OPS.batchMake], { ...options, file: directory })).message).toMatch(/EISDIR|must be an empty regular file/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
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
