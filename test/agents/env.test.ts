/** The headless follower environment: Gymnasium's reset/step, both modes, rewards and shaping. */
import { FollowerEnv, type EnvStep, type FollowerEnvOptions, type ResetOptions } from '../../shared/env/env';
import { StaticOracle } from '../../shared/agents/oracles';
import { AGENT_ACTIONS, type AgentAction, type EpisodeStart, type FollowerObservation } from '../../shared/agents/types';
import { Draw, seedRng } from '../../shared/engine/rng';
import { GeodesicDistance } from '../../shared/eval/distance';
import { DEFAULT_SUCCESS_THRESHOLD, normalizedDynamicTimeWarping } from '../../shared/eval/metrics';
import { loadRecording, type Recording } from '../../shared/eval/recording';
import { recordingFor } from '../../shared/eval/runner';
import type { LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { buildWorld, type GameMap } from '../../shared/engine/map';
import type { KnownMap } from '../../shared/engine/playerView';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';

function selfPlayLines(seed: number): LogLine[] {
  const lines: LogLine[] = [];
  playSelfPlayGame({ seed, map: generateMap(seed) }, (line) => lines.push(line));
  return lines;
}

const logText = (lines: readonly LogLine[]) => lines.map((line) => `${serializeLine(line)}\n`).join('');

const SEEDS = [1, 2, 3];
const logs = new Map(SEEDS.map((seed) => [seed, logText(selfPlayLines(seed))]));
const recordings = new Map(SEEDS.map((seed) => [seed, loadRecording(logs.get(seed)!)]));
/** Self-play game 2 has no follower timeouts, which the environment cannot reproduce (the agent has no "wait" action). */
const EXACT_SEED = 2;

type Policy = (observation: FollowerObservation) => AgentAction;

/** The static oracle agent, given the recorded follower's actions for every instruction. */
function staticOracle(recording: Recording): Policy {
  const oracle = new StaticOracle();
  const start: EpisodeStart = {
    map: recording.header.map,
    episodeId: recording.header.gameId,
    recording: recordingFor(recording),
  };
  oracle.reset(start);
  return (observation) => oracle.act(observation);
}

function randomPolicy(seed: number): Policy {
  const draw = new Draw(seedRng(seed));
  return () => draw.pick(AGENT_ACTIONS);
}

/** The follower's actions in a recorded game from event `from` on (the agent's whole part, timeouts aside). */
function recordedFollowerActions(recording: Recording, from: number): AgentAction[] {
  return recording.events
    .slice(from)
    .flatMap((event): AgentAction[] => (event.type === 'move' && event.actor === 'follower' ? [event.payload.move] : event.type === 'done' ? ['DONE'] : []));
}

interface Played {
  readonly reset: ReturnType<FollowerEnv['reset']>;
  readonly steps: EnvStep[];
}

/** Plays until the episode ends, or after `limit` steps. */
function play(env: FollowerEnv, options: ResetOptions, policy: Policy, limit = Infinity): Played {
  const reset = env.reset(options);
  const steps: EnvStep[] = [];
  let observation = reset.observation;
  while (steps.length < limit) {
    const result = env.step(policy(observation));
    steps.push(result);
    observation = result.observation;
    if (result.terminated || result.truncated) break;
  }
  return { reset, steps };
}

/** A policy that plays the actions in order. */
function inOrder(actions: readonly AgentAction[]): Policy {
  let next = 0;
  return () => actions[next++];
}

const last = <T>(items: readonly T[]): T => items[items.length - 1];
const total = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0);

/** Potentials before each step: phi(s_t) for t = 0..T-1, from reset's info and each step's info. */
function potentialsBefore({ reset, steps }: Played): number[] {
  return [reset.info.potential, ...steps.slice(0, -1).map((s) => s.info.potential)];
}

/** Indices of the steps that kept the instruction (no DONE, no game end): F uses one target on both sides. */
function sameTargetSteps({ reset, steps }: Played): number[] {
  const before = [reset.info.instructionId, ...steps.map((s) => s.info.instructionId)];
  return steps.flatMap((s, t) => (s.info.instructionId === before[t] && !s.terminated ? [t] : []));
}

describe('reset and step', () => {
  test('Gymnasium shapes: reset gives an observation and info, step gives observation, reward, terminated, truncated, info', () => {
    const env = new FollowerEnv();
    const recording = recordings.get(1)!;
    const { observation, info } = env.reset({ log: logs.get(1)!, instruction: 3 });
    expect(observation.version).toBe(2);
    expect(observation.instruction?.id).toBe(recording.instructions[3].id);
    expect(observation.pose).toEqual(recording.states[recording.instructions[3].start].follower);
    expect(info).toMatchObject({ instructionId: recording.instructions[3].id, outcome: null, shaping: 0, points: 0, steps: 0, potential: 0 });
    expect(info.episodeId).toBe(`${recording.header.gameId}#3`);
    // The policy learns the terrain from its observations: what it has seen, nothing in info.
    expect('map' in info).toBe(false);
    expect(knownCellsAgree(observation.map, recording.header.map)).toBe(true);

    const result = env.step(recording.instructions[3].actions[0]);
    expect(Object.keys(result).sort()).toEqual(['info', 'observation', 'reward', 'terminated', 'truncated']);
    expect(typeof result.reward).toBe('number');
    expect(result.terminated).toBe(false);
    expect(result.truncated).toBe(false);
    expect(Object.keys(result.info).sort()).toEqual(['instructionId', 'outcome', 'points', 'potential', 'score', 'shaping', 'steps']);
    expect(result.info.steps).toBe(1);
    expect(result.info.outcome?.pose).toEqual(result.observation.pose);

    const seeded = env.reset({ seed: 5 });
    expect(seeded.info.episodeId).toBe('selfplay-5');
    expect(knownCellsAgree(seeded.observation.map, generateMap(5))).toBe(true);
    expect(seeded.observation.instruction).not.toBeNull();
    expect(seeded.observation.stepsLeft).toBeGreaterThan(0);
  });

  test('deterministic: the same reset and actions give the same observations, rewards and infos', () => {
    for (const options of [{ seed: 7 }, { log: recordings.get(3)!, instruction: 2 }] as ResetOptions[]) {
      const first = play(new FollowerEnv({ reward: 'distance' }), options, randomPolicy(11));
      const env = new FollowerEnv({ reward: 'distance' });
      play(env, { seed: 99 }, randomPolicy(3)); // an earlier episode on the same env changes nothing
      const second = play(env, options, randomPolicy(11));
      expect(first.steps.length).toBeGreaterThan(10);
      expect(second).toEqual(first);
    }
  });

  test('stepping before reset or after the episode ended throws; so does an unknown action', () => {
    const env = new FollowerEnv({ maxSteps: 3 });
    expect(() => env.step('MF')).toThrow(/reset\(\)/);
    const { steps } = play(env, { seed: 4 }, randomPolicy(1));
    expect(last(steps).truncated || last(steps).terminated).toBe(true);
    expect(() => env.step('MF')).toThrow(/episode is over/);
    env.reset({ seed: 4 });
    expect(() => env.step('JUMP' as AgentAction)).toThrow(/unknown action/);
  });

  test('bad options and reset arguments are refused with clear errors', () => {
    expect(() => new FollowerEnv({ gamma: 1.5 })).toThrow(/gamma/);
    expect(() => new FollowerEnv({ maxSteps: 0 })).toThrow(/maxSteps/);
    const recording = recordings.get(1)!;
    expect(() => new FollowerEnv().reset({ log: recording, instruction: recording.instructions.length })).toThrow(/instruction must be an index/);
    expect(() => new FollowerEnv({ reward: 'ndtw' }).reset({ seed: 1 })).toThrow(/ndtw.*log mode/);
  });
});

describe('log mode', () => {
  test.each(SEEDS)('game %i: the static oracle reaches the recorded score and the game ends (terminated, not truncated)', (seed) => {
    const recording = recordings.get(seed)!;
    const finalScore = last(recording.states).score;
    const n = recording.instructions.length;
    for (const index of [0, Math.floor(n / 2), n - 1]) {
      const played = play(new FollowerEnv({ maxSteps: 10_000 }), { log: recording, instruction: index }, staticOracle(recording));
      const end = last(played.steps);
      expect(end.info.score).toBe(finalScore);
      expect([end.terminated, end.truncated]).toEqual([true, false]);
      // Sparse rewards: the points made from the start on, by either player.
      expect(total(played.steps.map((s) => s.reward))).toBe(finalScore - recording.states[recording.instructions[index].start].score);
      expect(total(played.steps.map((s) => s.info.points))).toBe(finalScore - played.reset.info.score);
    }
  });

  test('replaying the recorded follower exactly ends the episode on its last recorded action', () => {
    const recording = recordings.get(EXACT_SEED)!;
    const followerTimeouts = recording.events.filter((e) => e.type === 'timeout' && e.payload.role === 'follower');
    expect(followerTimeouts).toHaveLength(0);
    const actions = recordedFollowerActions(recording, recording.instructions[0].start);
    const { steps } = play(new FollowerEnv({ maxSteps: 10_000 }), { log: logs.get(EXACT_SEED)!, instruction: 0 }, inOrder(actions), actions.length);
    expect(steps).toHaveLength(actions.length);
    expect(steps.slice(0, -1).every((s) => !s.terminated && !s.truncated)).toBe(true);
    expect(last(steps).terminated).toBe(true);
    expect(last(steps).info.score).toBe(last(recording.states).score);
    expect(last(steps).observation.pose).toEqual(last(recording.states).follower);
  });

  test("E-20: a game whose follower ran out of time replays exactly too: its turns end where the human's did", () => {
    const recording = loadRecording(logText(selfPlayLines(830056)));
    expect(recording.events.filter((e) => e.type === 'timeout' && e.payload.role === 'follower').length).toBeGreaterThan(0);
    const actions = recordedFollowerActions(recording, recording.instructions[0].start);
    const { steps } = play(new FollowerEnv({ maxSteps: 10_000 }), { log: recording, instruction: 0 }, inOrder(actions), actions.length);
    expect(steps).toHaveLength(actions.length);
    expect(last(steps).terminated).toBe(true);
    expect(last(steps).info.score).toBe(last(recording.states).score);
    expect(last(steps).observation.pose).toEqual(last(recording.states).follower);
  });

  test('truncated when the recorded leader has no turn left to play (an unfinished log)', () => {
    const lines = selfPlayLines(EXACT_SEED);
    const recording = recordings.get(EXACT_SEED)!;
    // Cut the log where the follower's turn of instruction 10 starts: the leader turns after it are missing.
    const cut = recording.instructions[10].start;
    const open = loadRecording(logText(lines.filter((line) => line.kind === 'header' || (line.kind === 'event' && line.seq <= cut))));
    const played = play(new FollowerEnv({ maxSteps: 10_000 }), { log: open, instruction: 0 }, staticOracle(recording));
    const end = last(played.steps);
    expect([end.terminated, end.truncated]).toEqual([false, true]);
    expect(played.steps.slice(0, -1).every((s) => !s.truncated)).toBe(true);
    // It ends when the follower's turn is over and the leader would have to play.
    expect(end.info.outcome?.turnEnded).toBeDefined();
    expect(end.observation.stepsLeft).toBe(0);
  });

  test('truncated at the step limit', () => {
    const { steps } = play(new FollowerEnv({ maxSteps: 5 }), { log: recordings.get(1)!, instruction: 0 }, staticOracle(recordings.get(1)!));
    expect(steps).toHaveLength(5);
    expect([last(steps).terminated, last(steps).truncated]).toEqual([false, true]);
  });
});

describe('seed mode', () => {
  test('a whole game with random actions, against the scripted leader', () => {
    for (const seed of [1, 2, 3]) {
      const played = play(new FollowerEnv({ reward: 'distance', maxSteps: 10_000 }), { seed }, randomPolicy(seed));
      const end = last(played.steps);
      expect(end.terminated).toBe(true);
      expect(end.observation.turnsLeft).toBe(0);
      // The game's end is terminal: phi = 0 there, so the last F is -phi(s).
      expect(end.info.potential).toBe(0);
      expect(end.info.shaping).toBeCloseTo(-last(potentialsBefore(played)), 12);
      expect(played.steps.every((s) => Number.isFinite(s.reward) && s.info.potential <= 0)).toBe(true);
      const sparse = play(new FollowerEnv({ reward: 'sparse', maxSteps: 10_000 }), { seed }, randomPolicy(seed));
      expect(total(sparse.steps.map((s) => s.reward))).toBe(last(sparse.steps).info.score);
    }
  });

  test('instructions come from the scripted leader and carry a distance potential', () => {
    const played = play(new FollowerEnv({ reward: 'distance', maxSteps: 300 }), { seed: 8 }, randomPolicy(8));
    const instructions = new Set(played.steps.map((s) => s.info.instructionId).filter((id) => id !== null));
    expect(instructions.size).toBeGreaterThan(1);
    expect(played.reset.info.potential).toBeLessThan(0);
  });
});

describe('shaping', () => {
  const oracleRun = (options: FollowerEnvOptions, seed = 1, instruction = 0) =>
    play(new FollowerEnv({ maxSteps: 10_000, ...options }), { log: recordings.get(seed)!, instruction }, staticOracle(recordings.get(seed)!));

  test.each(['distance', 'ndtw'] as const)('%s: F = gamma phi(s\') - phi(s) on every step that keeps the instruction', (reward) => {
    const played = oracleRun({ reward, gamma: 0.9 });
    const phi = potentialsBefore(played);
    const kept = sameTargetSteps(played);
    expect(kept.length).toBeGreaterThan(played.steps.length / 2);
    for (const t of kept) expect(played.steps[t].info.shaping).toBeCloseTo(0.9 * played.steps[t].info.potential - phi[t], 12);
  });

  test.each(['distance', 'ndtw'] as const)('%s: over one instruction F telescopes, sum gamma^t F_t = gamma^T phi(s_T) - phi(s_0)', (reward) => {
    for (const gamma of [1, 0.9]) {
      const played = oracleRun({ reward, gamma }, 3, 4);
      // The instruction's moves, before its DONE: one target throughout.
      const moves = recordings.get(3)!.instructions[4].actions.length - 1;
      const steps = played.steps.slice(0, moves);
      expect(steps.every((s) => s.info.instructionId === played.reset.info.instructionId)).toBe(true);
      const discounted = total(steps.map((s, t) => gamma ** t * s.info.shaping));
      expect(discounted).toBeCloseTo(gamma ** moves * last(steps).info.potential - played.reset.info.potential, 10);
    }
  });

  test.each(['distance', 'ndtw'] as const)('%s: the shaped return minus the sparse return is the sum of F', (reward) => {
    for (const gamma of [1, 0.99]) {
      const shaped = oracleRun({ reward, gamma }, 2, 5);
      const sparse = oracleRun({ reward: 'sparse' }, 2, 5);
      expect(shaped.steps.map((s) => s.info.points)).toEqual(sparse.steps.map((s) => s.reward));
      const returns = (played: Played) => total(played.steps.map((s) => s.reward));
      expect(returns(shaped) - returns(sparse)).toBeCloseTo(total(shaped.steps.map((s) => s.info.shaping)), 10);
      expect(sparse.steps.every((s) => s.info.shaping === 0 && s.info.potential === 0)).toBe(true);
    }
  });

  test('distance: phi is minus the geodesic distance to the nearest target; F > 0 stepping toward it, F < 0 away', () => {
    const recording = recordings.get(1)!;
    const distance = new GeodesicDistance(buildWorld(recording.header.map));
    let toward = 0;
    recording.instructions.forEach((instruction, index) => {
      const start = recording.states[instruction.start];
      const targets = start.cards.filter((card) => instruction.changedCards.includes(card.id));
      if (targets.length === 0 || start.turn.stepsLeft < 2) return;
      const phi = (cell: { x: number; y: number }, changed: readonly number[] = []) => {
        const pending = targets.filter((card) => !changed.includes(card.id));
        return pending.length === 0 ? 0 : -Math.min(...pending.map((card) => distance.between(cell, card)));
      };
      for (const gamma of [1, 0.99]) {
        const env = new FollowerEnv({ reward: 'distance', gamma });
        expect(env.reset({ log: recording, instruction: index }).info.potential).toBe(phi(start.follower));
        for (const action of ['MF', 'MB', 'RL'] as const) {
          env.reset({ log: recording, instruction: index });
          const { info } = env.step(action);
          const after = phi(info.outcome!.pose!, info.outcome!.toggled);
          expect(info.potential).toBe(after);
          expect(info.shaping).toBeCloseTo(gamma * after - phi(start.follower), 12);
          if (after > phi(start.follower)) {
            expect(info.shaping).toBeGreaterThan(0);
            toward++;
          }
          if (after < phi(start.follower)) expect(info.shaping).toBeLessThan(0);
        }
      }
    });
    expect(toward).toBeGreaterThan(5);
  });

  test("an instruction change: phi(s') is taken for the next instruction, so F pays for the move to its target", () => {
    // The oracle changes every target before DONE, so phi(s) is 0 when it says DONE; phi(s') is
    // the potential of the instruction current after it, and F = gamma * phi(s') - 0.
    const played = oracleRun({ reward: 'distance', gamma: 0.9 }, 1, 0);
    const phi = potentialsBefore(played);
    const dones = played.steps.flatMap((s, t) => (s.info.outcome?.instruction !== undefined ? [t] : []));
    expect(dones.length).toBeGreaterThan(5);
    for (const t of dones) {
      expect(phi[t]).toBe(0);
      expect(played.steps[t].info.shaping).toBeCloseTo(0.9 * played.steps[t].info.potential, 12);
    }
    expect(dones.some((t) => played.steps[t].info.potential < 0)).toBe(true);
  });

  test('ndtw: phi is the nDTW of the path so far against the recorded path; following it exactly reaches 1', () => {
    const recording = recordings.get(2)!;
    const distance = new GeodesicDistance(buildWorld(recording.header.map));
    for (const index of [0, 7, 15]) {
      const instruction = recording.instructions[index];
      const env = new FollowerEnv({ reward: 'ndtw', gamma: 1 });
      const { info } = env.reset({ log: recording, instruction: index });
      const startCell = instruction.path[0];
      expect(info.potential).toBeCloseTo(normalizedDynamicTimeWarping(instruction.path, [startCell], distance.between, DEFAULT_SUCCESS_THRESHOLD), 12);
      const moves = instruction.actions.slice(0, -1);
      const steps = moves.map((action) => env.step(action));
      expect(last(steps).info.potential).toBeCloseTo(1, 12);
      // The gains add up to nDTW(final) - nDTW(start): the nDTW paper's fidelity reward.
      expect(total(steps.map((s) => s.info.shaping))).toBeCloseTo(1 - info.potential, 12);
      // DONE moves phi to the next instruction's reference path: F = phi(next) - 1 with gamma = 1.
      const done = env.step('DONE');
      expect(done.info.shaping).toBeCloseTo(done.info.potential - 1, 12);
    }
  });
});

/** Every cell of `known` is unseen (`?`) or the map's own terrain, and some are seen. */
function knownCellsAgree(known: KnownMap, map: GameMap): boolean {
  const seen = known.terrain.join('').replaceAll('?', '').length;
  return seen > 0 && known.terrain.every((row, y) => [...row].every((letter, x) => letter === '?' || letter === map.terrain[y][x]));
}
