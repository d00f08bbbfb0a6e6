/**
 * Cascaded evaluation on small hand-made games, where what the agent does is known move by move:
 * the cascade stops at the first instruction not followed (the paper's convention), `continue`
 * plays on, and the proportion of points is not clipped at 1.
 */
import { StaticOracle } from '../../shared/agents/oracles';
import type { AgentAction, FollowerAgent, FollowerObservation } from '../../shared/agents/types';
import { makeConfig, seedRng, type Action, type Card, type Pose } from '../../shared/engine';
import type { LogLine } from '../../shared/log/format';
import { GameRecorder, makeHeader, serializeLine } from '../../shared/log/recorder';
import { loadRecording, type Recording } from '../../shared/eval/recording';
import { DEFAULT_EVAL_OPTIONS, runEpisode, type EvalOptions } from '../../shared/eval/runner';
import { aggregate, countUndefined } from '../../shared/eval/report';
import { card, SET_FACES, smallMap } from '../fixtures';

/**
 * A game on the 9 x 9 fixture map: the leader gives `instructions` in its first turn; then the
 * follower plays `follower` (its action codes, or any action, such as a timeout and the leader's
 * next turn).
 */
function handMadeRecording(cards: Card[], followerStart: Pose, instructions: string[], follower: (AgentAction | Action)[]): Recording {
  const lines: LogLine[] = [];
  const header = makeHeader({
    gameId: 'hand-made',
    startedAt: new Date(0),
    seed: 42,
    config: makeConfig({ cardCount: cards.length }),
    map: smallMap(),
    setup: { leader: { x: 6, y: 1, heading: 'E' }, follower: followerStart, cards, rng: seedRng(42) },
  });
  const recorder = new GameRecorder(header, (line) => lines.push(line));
  const actions: Action[] = [
    ...instructions.map((text): Action => ({ type: 'instruction', actor: 'leader', text })),
    { type: 'endTurn', actor: 'leader' },
    ...follower.map((a): Action => (typeof a !== 'string' ? a : a === 'DONE' ? { type: 'done', actor: 'follower' } : { type: 'move', actor: 'follower', move: a })),
  ];
  actions.forEach((action, t) => {
    const result = recorder.apply(action, t * 1000);
    if (!result.ok) throw new Error(`the hand-made game refuses ${JSON.stringify(action)}: ${result.error.message}`);
  });
  return loadRecording(lines.map((line) => `${serializeLine(line)}\n`).join(''));
}

/** Plays a fixed script per instruction id and remembers which instructions it was asked about. */
class ScriptedAgent implements FollowerAgent {
  readonly name = 'scripted';
  readonly asked: number[] = [];
  private readonly taken = new Map<number, number>();

  constructor(private readonly scripts: Record<number, AgentAction[]>) {}

  reset(): void {
    this.taken.clear();
    this.asked.length = 0;
  }

  act(observation: FollowerObservation): AgentAction {
    const id = observation.instruction!.id;
    this.asked.push(id);
    const n = this.taken.get(id) ?? 0;
    this.taken.set(id, n + 1);
    return this.scripts[id]?.[n] ?? 'DONE';
  }
}

const cascaded = (options: Partial<EvalOptions> = {}): EvalOptions => ({ ...DEFAULT_EVAL_OPTIONS, mode: 'cascaded', ...options });

/**
 * The follower starts on (2, 4) facing E. Instruction 0: "select the red star behind you" (X on
 * (1, 4)); instruction 1: "now the blue heart and the green cube ahead" (on (3, 4) and (4, 4)),
 * which completes a set with X: 1 point. Another red star, X', lies on (2, 5), north-east.
 *
 * The agent selects X' instead of X for instruction 0: it did not follow it (it changed {X'}, the
 * human {X}). For instruction 1 it does exactly what the human did and changes the same two cards,
 * so instruction 1 is followed, and with X' its selection is a set too: it scores the point.
 */
describe('the cascade and the first instruction not followed', () => {
  const X = card(0, 1, 4, SET_FACES[0]);
  const XPrime = card(1, 2, 5, SET_FACES[0]);
  const cards = [X, XPrime, card(2, 3, 4, SET_FACES[1]), card(3, 4, 4, SET_FACES[2])];
  const recording = handMadeRecording(cards, { x: 2, y: 4, heading: 'E' }, ['select the red star behind you', 'now the blue heart and the green cube ahead'], [
    'MB',
    'MF',
    'DONE',
    'MF',
    'MF',
    'DONE',
  ]);
  const wrongThenRight = () =>
    new ScriptedAgent({
      0: ['RL', 'MF', 'MB', 'RR', 'DONE'], // X' instead of X
      1: ['MF', 'MF', 'DONE'], // as the human
    });

  test('the recording is what the test assumes', () => {
    expect(recording.instructions.map((i) => i.changedCards)).toEqual([[0], [2, 3]]);
    expect(recording.states[recording.states.length - 1].score).toBe(1);
  });

  test('E-10, E-11: by default the example stops at the first failure: instruction 1 is never played, its point never scored', async () => {
    expect(DEFAULT_EVAL_OPTIONS.cascade).toBe('stop-at-first-failure');
    const agent = wrongThenRight();
    const result = await runEpisode(agent, recording, 0, cascaded());
    expect(result.error).toBeNull();
    expect(new Set(agent.asked)).toEqual(new Set([0]));
    expect(result.actions).toEqual(['RL', 'MF', 'MB', 'RR', 'DONE']);
    expect(result.cascaded).toMatchObject({
      cascade: 'stop-at-first-failure',
      instructionsFollowed: 0,
      instructionsPossible: 2,
      proportionFollowed: 0,
      pointsScored: 0,
      pointsPossible: 1,
      proportionPoints: 0,
      played: [{ instructionId: 0, followed: false }],
    });
  });

  test("E-12, E-16: 'continue' plays on: instruction 1 is followed and its point scored, but the count of followed instructions still stops at instruction 0", async () => {
    const agent = wrongThenRight();
    const result = await runEpisode(agent, recording, 0, cascaded({ cascade: 'continue' }));
    expect(result.error).toBeNull();
    expect(new Set(agent.asked)).toEqual(new Set([0, 1]));
    expect(result.actions).toEqual(['RL', 'MF', 'MB', 'RR', 'DONE', 'MF', 'MF', 'DONE']);
    expect(result.cascaded).toMatchObject({
      cascade: 'continue',
      instructionsFollowed: 0,
      instructionsPossible: 2,
      pointsScored: 1,
      pointsPossible: 1,
      proportionPoints: 1,
      played: [
        { instructionId: 0, followed: false },
        { instructionId: 1, followed: true },
      ],
    });
  });

  test('E-1: the example that starts at instruction 1 follows it, under either convention', async () => {
    for (const cascade of ['stop-at-first-failure', 'continue'] as const) {
      const result = await runEpisode(wrongThenRight(), recording, 1, cascaded({ cascade }));
      // The example starts from the recorded state, where the human had already selected X.
      expect(result.cascaded).toMatchObject({ instructionsFollowed: 1, instructionsPossible: 1, proportionFollowed: 1, pointsScored: 1, proportionPoints: 1 });
    }
  });

  test('an agent that follows instruction 0 goes on to instruction 1 under the default convention', async () => {
    const agent = new ScriptedAgent({ 0: ['MB', 'MF', 'DONE'], 1: ['MF', 'MF', 'DONE'] });
    const result = await runEpisode(agent, recording, 0, cascaded());
    expect(result.cascaded).toMatchObject({ instructionsFollowed: 2, proportionFollowed: 1, pointsScored: 1, proportionPoints: 1 });
  });
});

/**
 * The follower starts on (1, 4) facing E with two sets in a row ahead: A on (2..4, 4) and B on
 * (5..7, 4). The human makes set A (1 point) and stops; the agent walks on and makes B too.
 */
describe('E-15: the proportion of points is not clipped', () => {
  const B_FACES = [
    { color: 'orange', shape: 'torus', count: 1 },
    { color: 'pink', shape: 'diamond', count: 2 },
    { color: 'black', shape: 'triangle', count: 3 },
  ] as const;
  const cards = [...SET_FACES.map((face, i) => card(i, 2 + i, 4, face)), ...B_FACES.map((face, i) => card(3 + i, 5 + i, 4, face))];
  const recording = handMadeRecording(cards, { x: 1, y: 4, heading: 'E' }, ['pick up the three cards ahead of you'], ['MF', 'MF', 'MF', 'DONE']);
  const greedy = () => new ScriptedAgent({ 0: ['MF', 'MF', 'MF', 'MF', 'MF', 'MF', 'DONE'] });

  test('an agent that scores more than the recorded game gets a proportion above 1', async () => {
    expect(recording.states[recording.states.length - 1].score).toBe(1);
    for (const cascade of ['stop-at-first-failure', 'continue'] as const) {
      const result = await runEpisode(greedy(), recording, 0, cascaded({ cascade }));
      // It changed six cards where the human changed three: not followed, but two points scored.
      expect(result.cascaded).toMatchObject({ instructionsFollowed: 0, pointsScored: 2, pointsPossible: 1, proportionPoints: 2 });
      const scores = aggregate([result]);
      expect(scores.proportionPoints).toBe(2);
      expect(countUndefined([result]).proportionPoints).toBe(0);
    }
  });

  test('E-13, E-22: an example whose recorded game scores nothing has no proportion of points, and the report counts it', async () => {
    const idle = handMadeRecording(cards, { x: 1, y: 4, heading: 'E' }, ['wait here'], ['DONE']);
    const scored = await runEpisode(greedy(), recording, 0, cascaded());
    const unscored = await runEpisode(greedy(), idle, 0, cascaded());
    expect(unscored.cascaded).toMatchObject({ pointsScored: 2, pointsPossible: 0, proportionPoints: null });
    const scores = aggregate([scored, unscored]);
    expect(scores.proportionPoints).toBe(2);
    expect(scores.episodesWithPoints).toBe(1);
    expect(countUndefined([scored, unscored]).proportionPoints).toBe(1);
  });
});

/**
 * The follower starts on (1, 4) facing E; a red star X lies on (2, 4), the rest of a set far away.
 * The human steps onto X and two cells on, to (4, 4), and says DONE.
 */
describe('E-7, E-9: single mode against where the human stopped', () => {
  const cards = [card(0, 2, 4, SET_FACES[0]), card(1, 3, 7, SET_FACES[1]), card(2, 5, 7, SET_FACES[2])];
  const recording = handMadeRecording(cards, { x: 1, y: 4, heading: 'E' }, ['take the red star and walk on'], ['MF', 'MF', 'MF', 'DONE']);
  const single = (script: AgentAction[]) => runEpisode(new ScriptedAgent({ 0: script }), recording, 0, { ...DEFAULT_EVAL_OPTIONS, mode: 'single' });

  test('the same cards and one hex short: relaxed but not exact; two hexes short: neither', async () => {
    const exact = (await single(['MF', 'MF', 'MF', 'DONE'])).single!;
    expect(exact).toMatchObject({ cardAccuracy: 1, exactEnvAccuracy: 1, relaxedEnvAccuracy: 1, sequenceAccuracy: 1 });
    const oneShort = (await single(['MF', 'MF', 'DONE'])).single!;
    expect(oneShort).toMatchObject({ cardAccuracy: 1, exactEnvAccuracy: 0, relaxedEnvAccuracy: 1, sequenceAccuracy: 0 });
    const twoShort = (await single(['MF', 'DONE'])).single!;
    expect(twoShort).toMatchObject({ cardAccuracy: 1, exactEnvAccuracy: 0, relaxedEnvAccuracy: 0 });
  });

  test("the path metrics compare the agent's cells with the human's", async () => {
    expect((await single(['MF', 'MF', 'MF', 'DONE'])).single!.metrics).toMatchObject({ PL: 3, NE: 0, SR: 1, nDTW: 1 });
    expect((await single(['MF', 'MF', 'DONE'])).single!.metrics).toMatchObject({ PL: 2, NE: 1, SR: 1 });
    expect((await single(['MF', 'DONE'])).single!.metrics).toMatchObject({ PL: 1, NE: 2, SR: 0, SPL: 0 });
  });
});

/**
 * The human's first turn ends by timeout after one action; the leader ends its next turn at once
 * and the human finishes. The agent's first turn runs out after one action too, so the recorded
 * leader's turn comes where it came.
 */
describe("E-20: the agent's turns end where the human's time ran out", () => {
  const cards = [card(0, 2, 4, SET_FACES[0]), card(1, 3, 7, SET_FACES[1]), card(2, 5, 7, SET_FACES[2])];
  const timeout: Action = { type: 'timeout', actor: 'server', role: 'follower' };
  const endTurn: Action = { type: 'endTurn', actor: 'leader' };
  const recording = handMadeRecording(cards, { x: 1, y: 4, heading: 'E' }, ['turn around, then take the star'], ['RR', timeout, endTurn, 'RL', 'MF', 'DONE']);

  test('one action in the first turn, then the recorded leader turn, then a turn of its own length', async () => {
    const stepsSeen: (number | null)[] = [];
    const script: AgentAction[] = ['RL', 'RR', 'RR', 'RL', 'RL', 'RR', 'MF', 'DONE'];
    const agent: FollowerAgent = { name: 'counting', reset: () => {}, act: (observation) => (stepsSeen.push(observation.stepsLeft), script[stepsSeen.length - 1]) };
    const result = await runEpisode(agent, recording, 0, cascaded());
    expect(result.error).toBeNull();
    expect(result.actions).toEqual(script);
    // 10 steps, then the timeout after one action: a new turn of 10 steps, used to the end.
    expect(stepsSeen).toEqual([10, 10, 9, 8, 7, 6, 5, 4]);
    expect(result.cascaded).toMatchObject({ instructionsFollowed: 1, proportionFollowed: 1 });
  });

  test('the static oracle replays a recorded game with follower timeouts exactly', async () => {
    const result = await runEpisode(new StaticOracle(), recording, 0, cascaded());
    expect(result.actions).toEqual(['RR', 'RL', 'MF', 'DONE']);
    expect(result.cascaded).toMatchObject({ instructionsFollowed: 1, pointsScored: 0 });
  });
});
