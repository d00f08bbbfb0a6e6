/** Follower agents: observations, their text, the process protocol, and the built-in agents. */
import path from 'node:path';
import {
  SHAPES,
  cellIndex,
  describeCard,
  shapeName,
  step,
  updateState,
  visibleIndices,
  type Card,
  type GameState,
  type Pose,
} from '../../shared/engine';
import { HEURISTIC_UNDERSTANDS, HeuristicAgent, MAX_LOOKING_TURNS, RandomAgent, readMoves } from '../../shared/agents/builtin';
import { describeObservation, describeRelativePosition, directionWords, relativeBearing } from '../../shared/agents/language';
import { ObservationTracker, plainObservation } from '../../shared/agents/observation';
import { PlanPlayer } from '../../shared/agents/plans';
import { ProcessAgent, shellScript, type ProcessAgentOptions } from '../../shared/agents/node/processAgent';
import { agentError } from './agentError';
import { AGENT_ACTIONS, type AgentAction, type FollowerAgent, type FollowerObservation } from '../../shared/agents/types';
import { describeCardRequest, readCardRequest } from '../../shared/agents/instructions';
import { done, endTurn, mv, play, say } from '../engine/helpers';
import { makeState, selfPlayStates } from '../fixtures';
import fc from 'fast-check';
import { importCb2Game } from '../../shared/cb2/import';
import { loadRecording } from '../../shared/eval/recording';
import { serializeLine } from '../../shared/log/recorder';
import type { Outcome } from '../../shared/engine/transition';
import { feedbackAndCancelGame } from '../cb2/cb2Script';

const EXAMPLE_AGENT = path.join(__dirname, '../../examples/agents/random_agent.py');

const SELF_PLAY_SEEDS = [1, 2, 3];
const games = new Map(
  SELF_PLAY_SEEDS.map((seed) => {
    const states = selfPlayStates(seed);
    return [seed, { map: states[0].world.map, states }] as const;
  }),
);

/** The fixture with `text` queued and the follower's turn started (with room for long walks). */
function followerTurn(text: string, spec: Parameters<typeof makeState>[0] = {}): GameState {
  const state = makeState({ ...spec, config: { followerSteps: 30, ...spec.config } });
  return play(state, say(text), endTurn).state;
}

function withFollower(state: GameState, follower: Pose): GameState {
  return updateState(state, { follower });
}

const CARD_KEYS = ['color', 'count', 'id', 'selected', 'shape', 'x', 'y'];
const OBSERVATION_KEYS = [
  'instruction', 'leader', 'legal', 'map', 'pose', 'previousInstruction', 'rememberedCards', 'score', 'stepsLeft', 'turnsLeft', 'version', 'visibleCards', 'visibleCells',
];

describe('observation tracker', () => {
  test.each(SELF_PLAY_SEEDS)('self-play game %i: only what is in view, remembered cards as last seen', (seed) => {
    const { states } = games.get(seed)!;
    const tracker = new ObservationTracker();
    /** Each card's state and the follower's move count when it was last in view. */
    const lastSeen = new Map<number, { card: Card; at: number }>();
    let moves = 0;
    let pose: GameState['follower'] | null = null;
    let remembered = 0;
    for (const state of states) {
      if (pose && (pose.x !== state.follower.x || pose.y !== state.follower.y || pose.heading !== state.follower.heading)) moves++;
      pose = state.follower;
      const obs = tracker.observe(state);
      const view = new Set(visibleIndices(state.world, state.follower, state.config.view));
      expect(Object.keys(obs).sort()).toEqual(OBSERVATION_KEYS);
      expect(obs.visibleCells.map((cell) => cellIndex(state.world, cell))).toEqual([...view].sort((a, b) => a - b));
      // Exactly the cards in view, as they are.
      expect(obs.visibleCards).toEqual(state.cards.filter((c) => view.has(cellIndex(state.world, c))).sort((a, b) => a.id - b.id));
      for (const c of obs.visibleCards) expect(Object.keys(c).sort()).toEqual(CARD_KEYS);
      for (const rememberedCard of obs.rememberedCards) {
        expect(view.has(cellIndex(state.world, rememberedCard))).toBe(false);
        expect(Object.keys(rememberedCard).sort()).toEqual([...CARD_KEYS, 'seenAgo'].sort());
        // As it was when last in view, `seenAgo` moves ago.
        const { seenAgo, ...asSeen } = rememberedCard;
        expect(lastSeen.get(rememberedCard.id)).toEqual({ card: asSeen, at: moves - seenAgo });
      }
      remembered += obs.rememberedCards.length;
      expect(obs.leader).toEqual(view.has(cellIndex(state.world, state.leader)) ? state.leader : null);
      expect(obs.stepsLeft).toBe(state.turn.role === 'follower' ? state.turn.stepsLeft : 0);
      // The current instruction once shown (queued when a follower turn began), never a later one.
      const current = state.queue[0];
      expect(obs.instruction).toEqual(current !== undefined && current.id < state.instructionsShown ? current : null);
      // Legal: nothing outside the follower's turn; in it, each listed action is accepted and moves.
      if (state.turn.role !== 'follower') expect(obs.legal).toEqual([]);
      for (const code of obs.legal) {
        const result = step(state, code === 'DONE' ? { type: 'done', actor: 'follower' } : { type: 'move', actor: 'follower', move: code });
        expect(result.ok && !result.outcome.blocked).toBe(true);
      }
      // The known map: the cells in view are known, as the map has them.
      for (const cell of view) expect(obs.map.terrain[Math.floor(cell / state.world.width)][cell % state.world.width]).toBe(state.world.map.terrain[Math.floor(cell / state.world.width)][cell % state.world.width]);
      for (const c of obs.visibleCards) lastSeen.set(c.id, { card: c, at: moves });
    }
    expect(remembered).toBeGreaterThan(0);
  });

  test('remembers cards out of view, and forgets one whose cell is seen empty', () => {
    const tracker = new ObservationTracker();
    const start = makeState();
    expect(tracker.observe(start).visibleCards.map((c) => c.id)).toEqual([0, 1, 2]);

    const turnedAway = withFollower(start, { x: 1, y: 4, heading: 'W' });
    expect(tracker.observe(turnedAway).rememberedCards).toEqual([0, 1, 2].map((id) => ({ ...start.cards[id], seenAgo: 1 })));
    // Out of view, a change is not seen: card 1 is remembered unselected.
    const changedUnseen = updateState(turnedAway, { cards: start.cards.map((c) => (c.id === 1 ? { ...c, selected: true } : c)) });
    // seenAgo counts the follower's moves (pose changes), not observations: still 1.
    expect(tracker.observe(changedUnseen).rememberedCards.map((c) => [c.id, c.selected, c.seenAgo])).toEqual([
      [0, false, 1],
      [1, false, 1],
      [2, false, 1],
    ]);

    // Card 1 left the board (a set); looking back at its cell, the follower forgets it.
    const withoutCard1 = updateState(start, { cards: start.cards.filter((c) => c.id !== 1) });
    const back = tracker.observe(withoutCard1);
    expect(back.visibleCards.map((c) => c.id)).toEqual([0, 2]);
    expect(back.rememberedCards).toEqual([]);
    expect(tracker.observe(withFollower(withoutCard1, { x: 1, y: 4, heading: 'W' })).rememberedCards.map((c) => c.id)).toEqual([0, 2]);
  });

  test('a removed card is still remembered while its cell is out of view', () => {
    const tracker = new ObservationTracker();
    const start = makeState();
    tracker.observe(start);
    const gone = updateState(withFollower(start, { x: 1, y: 4, heading: 'W' }), { cards: start.cards.filter((c) => c.id !== 1) });
    expect(tracker.observe(gone).rememberedCards.map((c) => c.id)).toEqual([0, 1, 2]);
  });

  test('oracle data only when asked', () => {
    const state = followerTurn('pick up the 3 green cubes');
    const tracker = new ObservationTracker();
    expect('oracle' in tracker.observe(state)).toBe(false);
    expect('oracle' in tracker.observe(state, { oracle: false })).toBe(false);
    const oracle = tracker.observe(state, { oracle: true }).oracle!;
    expect(oracle.cards).toEqual(state.cards);
    expect(oracle.leader).toEqual(state.leader);
    expect(oracle.queue).toEqual(state.queue);
  });

  test('a view left unread (view: false) is, when read, what it would have been built at once', () => {
    // The self-play games, and a game with the leader's feedback and a cancel (witnessed with its outcomes).
    const cancelGame = loadRecording(importCb2Game(feedbackAndCancelGame()).lines.map((line) => `${serializeLine(line)}\n`).join(''));
    const sequences: { readonly states: readonly GameState[]; readonly outcomes: readonly (Outcome | undefined)[] }[] = [
      ...SELF_PLAY_SEEDS.map((seed) => ({ states: games.get(seed)!.states, outcomes: [] })),
      { states: cancelGame.states, outcomes: [undefined, ...cancelGame.events.map((event) => event.outcome)] },
    ];
    expect(cancelGame.cancelledIds.length).toBeGreaterThan(0);
    // Per moment: 0 witnessed only, 1 observed and read at once, 2 observed and read at the end (last
    // observed first), 3 observed and never read; witnessed before or after being observed, or
    // neither; and observed lazily (view: false) or not, in one tracker.
    const moments = fc.array(
      fc.record({ what: fc.integer({ min: 0, max: 3 }), witness: fc.constantFrom('before', 'after', 'no'), lazily: fc.boolean() }),
      { minLength: 50, maxLength: 50 },
    );
    let read = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: sequences.length - 1 }), moments, (which, plan) => {
        const { states, outcomes } = sequences[which];
        const eager = new ObservationTracker();
        const lazy = new ObservationTracker();
        const later: [FollowerObservation, FollowerObservation][] = [];
        states.forEach((state, i) => {
          const { what, witness, lazily } = plan[i % plan.length];
          if (what === 0 || witness === 'before') for (const tracker of [eager, lazy]) tracker.witness(state, outcomes[i]);
          if (what === 0) return;
          const built = eager.observe(state, { oracle: true });
          const unbuilt = lazy.observe(state, { oracle: true, view: !lazily });
          if (witness === 'after') for (const tracker of [eager, lazy]) tracker.witness(state, outcomes[i]);
          if (lazily) {
            // What needs no view is there at once; the view's fields are the class's getters.
            expect(Object.keys(unbuilt)).toEqual(Object.keys(built).filter((key) => !['visibleCells', 'visibleCards', 'rememberedCards', 'leader', 'map', 'legal'].includes(key)));
            expect({ ...unbuilt }).toEqual(Object.fromEntries(Object.keys(unbuilt).map((key) => [key, built[key as keyof FollowerObservation]])));
          }
          if (what === 1) {
            expect(unbuilt.rememberedCards).toEqual(built.rememberedCards);
            expect(JSON.stringify(unbuilt)).toBe(JSON.stringify(built));
            expect(plainObservation(unbuilt)).toEqual(built);
            read++;
          }
          if (what === 2) later.push([built, unbuilt]);
        });
        for (const [built, unbuilt] of later.reverse()) {
          expect(JSON.stringify(unbuilt)).toBe(JSON.stringify(built));
          expect(plainObservation(unbuilt)).toEqual(built);
        }
        read += later.length;
      }),
      { numRuns: 24 },
    );
    expect(read).toBeGreaterThan(1000);
  });

  test('never shares objects with the state', () => {
    const state = followerTurn('pick up the 3 green cubes');
    const obs = new ObservationTracker().observe(state, { oracle: true });
    expect(obs.pose).not.toBe(state.follower);
    expect(obs.visibleCards[0]).not.toBe(state.cards[0]);
    expect(obs.instruction).not.toBe(state.queue[0]);
  });
});

describe('relative directions', () => {
  test.each([
    [0, 'straight ahead'],
    [14, 'straight ahead'],
    [-30, 'ahead, slightly to the left'],
    [60, 'ahead to the right'],
    [-90, 'to the left'],
    [120, 'behind you to the right'],
    [-150, 'behind you, slightly to the left'],
    [180, 'behind you'],
    [-170, 'behind you'],
  ])('%i degrees: %s', (degrees, words) => {
    expect(directionWords(degrees)).toBe(words);
  });

  const east: Pose = { x: 1, y: 4, heading: 'E' };
  test.each([
    [east, { x: 1, y: 4 }, 'where you stand'],
    [east, { x: 2, y: 4 }, '1 hex straight ahead'],
    [east, { x: 4, y: 4 }, '3 hexes straight ahead'],
    [east, { x: 1, y: 5 }, '1 hex ahead to the left'], // the north-east neighbour
    [east, { x: 1, y: 3 }, '1 hex ahead to the right'], // the south-east neighbour
    [east, { x: 0, y: 5 }, '1 hex behind you to the left'], // north-west
    [east, { x: 0, y: 4 }, '1 hex behind you'],
    [east, { x: 3, y: 5 }, '3 hexes ahead, slightly to the left'],
    [east, { x: 1, y: 6 }, '2 hexes to the left'], // due north
    [{ x: 1, y: 4, heading: 'NE' }, { x: 1, y: 5 }, '1 hex straight ahead'],
    [{ x: 1, y: 4, heading: 'SW' }, { x: 1, y: 5 }, '1 hex behind you'],
  ] as const)('from %j to %j: %s', (pose, cell, words) => {
    expect(describeRelativePosition(pose, cell)).toBe(words);
  });

  test('mirror-image cells get opposite bearings', () => {
    const pose: Pose = { x: 4, y: 4, heading: 'NE' };
    expect(relativeBearing(pose, { x: 4, y: 6 })).toBe(-relativeBearing(pose, { x: 5, y: 5 }));
  });
});

describe('text observation', () => {
  test('describes the fixture: cards with colour, shape, count and direction, the way ahead', () => {
    const state = followerTurn('pick up the 3 green cubes');
    const text = describeObservation(new ObservationTracker().observe(state));
    expect(text).toBe(
      [
        'You face east. You have 30 steps left in this turn and 6 turns left in the game. The score is 0.',
        'Instruction: pick up the 3 green cubes',
        'Previous instruction: none',
        'Cards in view (3):',
        '- 1 hex straight ahead: a card with 1 red star.',
        '- 2 hexes straight ahead: a card with 2 blue hearts.',
        '- 3 hexes straight ahead: a card with 3 green cubes.',
        'Also in view:',
        '- a tree 2 hexes ahead to the left.',
        '- water on 1 hex, 4 hexes ahead, slightly to the right.',
        'The way ahead is clear.',
      ].join('\n'),
    );
  });

  test('remembered cards, landmarks, the leader and a blocked way', () => {
    const tracker = new ObservationTracker();
    const state = followerTurn('get the 2 red circles');
    tracker.observe(state);
    const selected = updateState(state, { cards: state.cards.map((c) => (c.id === 0 ? { ...c, selected: true } : c)) });
    tracker.observe(selected);
    // Facing the water at (4, 2) from (4, 3), with the leader at (1, 1) in view.
    const text = describeObservation(tracker.observe(withFollower(selected, { x: 4, y: 3, heading: 'SW' })));
    expect(text).toContain(
      [
        'You see no cards.',
        'Cards you saw earlier, out of view now (3):',
        '- Earlier you saw a card with 3 green cubes, about 1 hex behind you to the right (1 move ago).',
        '- Earlier you saw a card with 2 blue hearts, about 2 hexes to the right (1 move ago).',
        '- Earlier you saw a card with 1 red star, selected, about 3 hexes to the right (1 move ago).',
        'Also in view:',
        '- water on 1 hex, 1 hex straight ahead.',
        'The leader is 4 hexes ahead, slightly to the right, facing east.',
        'The way ahead is blocked by water.',
      ].join('\n'),
    );
  });

  test('a tree and the map edge block the way', () => {
    const state = followerTurn('turn left');
    const describeAt = (pose: Pose) => describeObservation(new ObservationTracker().observe(withFollower(state, pose)));
    expect(describeAt({ x: 2, y: 5, heading: 'NW' })).toContain('The way ahead is blocked by a tree.');
    expect(describeAt({ x: 0, y: 4, heading: 'W' })).toContain('The edge of the map is right ahead.');
  });

  test.each(SELF_PLAY_SEEDS)('self-play game %i: deterministic, and names every visible card', (seed) => {
    const { states } = games.get(seed)!;
    const texts = (tracker: ObservationTracker) => states.map((state) => describeObservation(tracker.observe(state)));
    const first = texts(new ObservationTracker());
    expect(texts(new ObservationTracker())).toEqual(first);
    const tracker = new ObservationTracker();
    states.forEach((state, i) => {
      const obs = tracker.observe(state);
      for (const c of obs.visibleCards) {
        const line = first[i].split('\n').find((l) => l.includes(`${describeRelativePosition(obs.pose, c)}: a card with ${describeCard(c)}`));
        expect(line).toBeDefined();
      }
    });
  });
});

/** Plays `agent` as the follower from `state` until DONE or `limit` actions; returns what happened. */
async function drive(agent: FollowerAgent, state: GameState, limit: number): Promise<{ actions: AgentAction[]; toggled: number[]; state: GameState }> {
  const tracker = new ObservationTracker();
  await agent.reset({ map: state.world.map, episodeId: 'test#0' });
  const actions: AgentAction[] = [];
  const toggled: number[] = [];
  const instruction = state.queue[0].id;
  const plans = new PlanPlayer<AgentAction>();
  while (actions.length < limit && state.queue[0]?.id === instruction) {
    const action = await plans.next(String(instruction), () => agent.act(tracker.observe(state)));
    if (action === null) throw new Error('the agent passed');
    actions.push(action);
    const result = step(state, action === 'DONE' ? done : mv('follower', action));
    if (!result.ok) throw new Error(`${action} refused: ${result.error.code}`);
    toggled.push(...(result.outcome.toggled ?? []));
    state = result.state;
  }
  return { actions, toggled, state };
}

describe('heuristic agent', () => {
  test('walks around the other cards to the named one, then says DONE', async () => {
    const agent = new HeuristicAgent();
    const { actions, toggled } = await drive(agent, followerTurn('pick up the 3 green cubes'), 30);
    expect(toggled).toEqual([2]);
    expect(actions[actions.length - 1]).toBe('DONE');
    expect(actions.length).toBeLessThanOrEqual(12);
    expect(agent.gaveUp).toBeNull();
  });

  test('unselects a selected card', async () => {
    const state = followerTurn('unselect the 2 red circles', { follower: { x: 3, y: 6, heading: 'E' } });
    const cards = state.cards.map((c) => (c.id === 3 ? { ...c, selected: true } : c));
    const { toggled, actions } = await drive(new HeuristicAgent(), updateState(state, { cards }), 30);
    expect(toggled).toEqual([3]);
    expect(actions[actions.length - 1]).toBe('DONE');
  });

  test('looks around when no known card fits, then gives up, saying why', async () => {
    const agent = new HeuristicAgent();
    const { actions, toggled } = await drive(agent, followerTurn('get the 2 yellow hearts'), 30);
    expect(actions).toEqual([...Array<AgentAction>(MAX_LOOKING_TURNS).fill('RR'), 'DONE']);
    expect(toggled).toEqual([]);
    expect(agent.gaveUp).toBe('I found no card with 2 yellow hearts that I could reach, even after looking around, so I marked "get the 2 yellow hearts" done. I know only the cards I have seen.');
  });

  test('marks an instruction it cannot read done at once, saying what it understands', async () => {
    const agent = new HeuristicAgent();
    const { actions } = await drive(agent, followerTurn('dance a little'), 30);
    expect(actions).toEqual(['DONE']);
    expect(agent.gaveUp).toBe(`I did not understand "dance a little", so I marked it done. ${HEURISTIC_UNDERSTANDS}`);
    expect(describeCardRequest(readCardRequest('the red ones')!)).toBe('card with red shapes');
    expect(describeCardRequest(readCardRequest('one plus')!)).toBe('card with 1 cross');
  });

  test("reads the shapes' names, one and several, and the engine's older words for them", () => {
    for (const shape of SHAPES) {
      for (const count of [1, 2] as const) {
        expect(readCardRequest(`get the ${count} red ${shapeName(shape, count)}`)).toEqual({ color: 'red', shape, count, select: true });
      }
    }
    expect(readCardRequest('the 3 blue toruses')?.shape).toBe('torus');
    expect(readCardRequest('a pink plus')?.shape).toBe('plus');
  });

  test('follows bare moves', async () => {
    const { actions } = await drive(new HeuristicAgent(), followerTurn('turn left and go forward two steps'), 30);
    expect(actions).toEqual(['RL', 'MF', 'MF', 'DONE']);
  });

  test.each([
    ['turn around', ['RR', 'RR', 'RR']],
    ['turn right, then go back 2', ['RR', 'MB', 'MB']],
    ['walk forward 25 steps', Array(10).fill('MF')],
    ['move ahead turn left', ['MF', 'RL']],
    ['wait here', []],
  ])('reads %j', (text, moves) => {
    expect(readMoves(text)).toEqual(moves);
  });

  test('on self-play states, toggles the named card when it is in view', async () => {
    let cases = 0;
    for (const seed of SELF_PLAY_SEEDS) {
      for (const state of games.get(seed)!.states) {
        const target = namedVisibleCard(state);
        if (!target) continue;
        const start = updateState(state, { turn: { role: 'follower', stepsLeft: 40 } });
        const { actions, toggled } = await drive(new HeuristicAgent(), start, 21);
        expect(toggled[0]).toBe(target.id);
        expect(actions.indexOf('DONE')).toBeLessThanOrEqual(20);
        cases++;
      }
    }
    expect(cases).toBeGreaterThanOrEqual(5);
  });
});

/**
 * At the start of a follower turn, the card the instruction names when it is the only card on the
 * board that fits and the follower sees it; otherwise null.
 */
function namedVisibleCard(state: GameState): Card | null {
  if (state.turn.role !== 'follower' || state.turn.stepsLeft !== state.config.followerSteps || state.queue.length === 0) return null;
  const request = readCardRequest(state.queue[0].text);
  if (!request?.color || !request.shape || !request.count) return null;
  const fits = state.cards.filter((c) => c.color === request.color && c.shape === request.shape && c.count === request.count);
  const view = visibleIndices(state.world, state.follower, state.config.view);
  return fits.length === 1 && view.includes(cellIndex(state.world, fits[0])) ? fits[0] : null;
}

describe('random agent', () => {
  async function actions(agent: RandomAgent, episodeId: string, n: number): Promise<AgentAction[]> {
    const state = makeState();
    await agent.reset({ map: state.world.map, episodeId });
    return Array.from({ length: n }, () => agent.act());
  }

  test('reproducible from the episode id, legal, DONE about one time in ten', async () => {
    const a = await actions(new RandomAgent(), 'game-1#3', 2000);
    expect(await actions(new RandomAgent(), 'game-1#3', 2000)).toEqual(a);
    expect(await actions(new RandomAgent(), 'game-1#4', 2000)).not.toEqual(a);
    expect(a.every((action) => AGENT_ACTIONS.includes(action))).toBe(true);
    const doneShare = a.filter((action) => action === 'DONE').length / a.length;
    expect(doneShare).toBeGreaterThan(0.07);
    expect(doneShare).toBeLessThan(0.13);
  });
});

describe('process agents', () => {
  const started: ProcessAgent[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((agent) => agent.close()));
  });

  function startAgent(command: string, options: ProcessAgentOptions = {}): ProcessAgent {
    const agent = new ProcessAgent(command, { handshakeTimeoutMs: 5_000, stepTimeoutMs: 5_000, ...options });
    started.push(agent);
    return agent;
  }

  /** An inline Python agent that gives these answers (a string is printed as is) and never answers the rest. */
  function scriptedAgent(answers: Partial<Record<'hello' | 'reset' | 'observe', unknown>>, options: ProcessAgentOptions = {}): ProcessAgent {
    const program = [
      'import json, os, sys, time',
      'answers = json.loads(os.environ["ANSWERS"])',
      'for line in sys.stdin:',
      '    kind = json.loads(line)["type"]',
      '    if kind == "close": break',
      '    if kind not in answers: time.sleep(60)',
      '    answer = answers[kind]',
      '    print(answer if isinstance(answer, str) else json.dumps(answer), flush=True)',
    ].join('\n');
    return startAgent(`python3 -c '${program}'`, { ...options, env: { ...process.env, ANSWERS: JSON.stringify(answers) } });
  }

  const HELLO = { type: 'hello', protocol: 'cerealbar-agent', version: 2, name: 'inline' };

  function expectGone(pid: number | undefined): void {
    expect(pid).toBeDefined();
    expect(() => process.kill(pid!, 0)).toThrow(/ESRCH/);
    expect(() => process.kill(-pid!, 0)).toThrow(/ESRCH/);
  }


  test('the Python example agent: handshake, reset, observe and act, close', async () => {
    const agent = startAgent(`python3 ${EXAMPLE_AGENT} --steps 3`);
    await agent.handshake();
    expect(agent.name).toBe('python-random');
    expect(agent.wantsOracleObservation).toBe(false);
    expect(agent.needsRecording).toBe(false);
    // The red star is straight ahead: the example moves forward, three times, then says DONE.
    const state = followerTurn('pick up the 1 red star');
    await agent.reset({ map: state.world.map, episodeId: 'fixture#0' });
    const obs = new ObservationTracker().observe(state);
    const actions = [];
    for (let i = 0; i < 4; i++) actions.push(await agent.act(obs));
    expect(actions).toEqual(['MF', 'MF', 'MF', 'DONE']);
    await agent.close();
    expectGone(agent.pid);
  });

  test('the Python example agent plays a whole instruction through the engine', async () => {
    const agent = startAgent(`python3 ${EXAMPLE_AGENT} --steps 5`);
    const { actions } = await drive(agent, followerTurn('pick up the 1 red star'), 10);
    expect(actions[0]).toBe('MF');
    expect(actions).toHaveLength(6);
    expect(actions[5]).toBe('DONE');
  });

  test('oracle data and the recording reach only agents that ask for them', async () => {
    const state = followerTurn('pick up the 1 red star');
    const obs = new ObservationTracker().observe(state, { oracle: true });
    const episode = { map: state.world.map, episodeId: 'x#0', recording: { actions: {}, changedCards: {}, cardVisits: {}, endPoses: {} } };
    const program = [
      'import json, sys',
      'for line in sys.stdin:',
      '    m = json.loads(line)',
      '    if m["type"] == "hello": print(json.dumps(dict(m, name="probe", oracle=len(sys.argv) > 1, needsRecording=len(sys.argv) > 1)), flush=True)',
      '    if m["type"] == "reset": privileged = ["recording" in m["episode"], "map" in m["episode"]]; print(json.dumps({"type": "ready"}), flush=True)',
      '    if m["type"] == "observe": seen = privileged + ["oracle" in m["observation"]]; print(json.dumps({"type": "act", "action": "MF" if all(seen) else "MB" if not any(seen) else "RL"}), flush=True)',
      '    if m["type"] == "close": break',
    ].join('\n');
    for (const [flag, expected] of [['', 'MB'], [' oracle', 'MF']] as const) {
      const agent = startAgent(`python3 -c '${program}'${flag}`);
      await agent.handshake();
      await agent.reset(episode);
      expect(await agent.act(obs)).toBe(expected);
    }
  });

  test('the known map goes with the first observation of an episode and whenever it changed', async () => {
    const program = [
      'import json, sys',
      'for line in sys.stdin:',
      '    m = json.loads(line)',
      '    if m["type"] == "hello": print(json.dumps(dict(m, name="maps")), flush=True)',
      '    if m["type"] == "reset": print(json.dumps({"type": "ready"}), flush=True)',
      '    if m["type"] == "observe": print(json.dumps({"type": "act", "action": "MF" if "map" in m["observation"] else "MB"}), flush=True)',
      '    if m["type"] == "close": break',
    ].join('\n');
    const agent = startAgent(`python3 -c '${program}'`);
    await agent.handshake();
    const state = followerTurn('look around');
    const tracker = new ObservationTracker();
    await agent.reset({ episodeId: 'x#0' });
    const first = tracker.observe(state);
    const same = tracker.observe(state);
    const turned = tracker.observe(play(state, mv('follower', 'RL')).state);
    expect(same.map).toBe(first.map);
    expect(turned.map).not.toBe(first.map);
    const answers = [await agent.act(first), await agent.act(same), await agent.act(turned), await agent.act(turned)];
    expect(answers).toEqual(['MF', 'MB', 'MF', 'MB']);
    await agent.reset({ episodeId: 'x#1' });
    expect(await agent.act(turned)).toBe('MF');
    await agent.close();
  });

  test('an agent that exits at once: crashed, with its exit code and stderr', async () => {
    const agent = startAgent(`node -e "console.error('something broke'); process.exit(3)"`);
    const error = await agentError(agent.handshake(), 'crashed');
    expect(error.details.exitCode).toBe(3);
    expect(error.message).toContain('exited with code 3');
    expect(error.message).toContain('something broke');
    await agent.close();
    expectGone(agent.pid);
  });

  test('an agent that dies in the middle of an episode: crashed, and every later call says so', async () => {
    const agent = startAgent(`python3 -c 'import sys, json; sys.stdin.readline(); print(json.dumps({"type": "hello", "protocol": "cerealbar-agent", "version": 2, "name": "x"}), flush=True); sys.stdin.readline(); sys.exit(7)'`);
    const state = makeState();
    const error = await agentError(agent.reset({ map: state.world.map, episodeId: 'x#0' }), 'crashed');
    expect(error.details.exitCode).toBe(7);
    expect(await agentError(agent.act(new ObservationTracker().observe(state)), 'crashed')).toBe(error);
  });

  test('an agent that never answers: timeout, and it is killed', async () => {
    const agent = startAgent(`node -e "setInterval(() => {}, 1000)"`, { handshakeTimeoutMs: 300 });
    const error = await agentError(agent.handshake(), 'timeout');
    expect(error.message).toContain('within 300 ms');
    expectGone(agent.pid);
  });

  test('an agent too slow to act: timeout', async () => {
    const agent = scriptedAgent({ hello: HELLO, reset: { type: 'ready' } }, { stepTimeoutMs: 300 });
    const state = makeState();
    await agent.reset({ map: state.world.map, episodeId: 'x#0' });
    await agentError(agent.act(new ObservationTracker().observe(state)), 'timeout');
    expectGone(agent.pid);
  });

  test('an agent that prints garbage', async () => {
    const agent = scriptedAgent({ hello: 'Loading model weights... done' });
    const error = await agentError(agent.handshake(), 'garbage');
    expect(error.details.line).toBe('Loading model weights... done');
    expectGone(agent.pid);
  });

  test('an agent that answers an illegal action', async () => {
    const agent = scriptedAgent({ hello: HELLO, reset: { type: 'ready' }, observe: { type: 'act', action: 'JUMP' } });
    const state = makeState();
    await agent.reset({ map: state.world.map, episodeId: 'x#0' });
    const error = await agentError(agent.act(new ObservationTracker().observe(state)), 'illegal-action');
    expect(error.message).toContain('"JUMP"');
    expectGone(agent.pid);
  });

  test.each([
    ['another protocol version', { hello: { ...HELLO, version: 1 } }, 'version 1'],
    ['another protocol', { hello: { ...HELLO, protocol: 'gym' } }, '"gym"'],
    ['the wrong message type', { hello: { type: 'ready' } }, 'expected "hello"'],
    ['a malformed hello', { hello: { ...HELLO, name: '' } }, 'malformed hello'],
  ])('an agent that answers with %s: protocol', async (_, answers, words) => {
    const agent = scriptedAgent(answers);
    const error = await agentError(agent.handshake(), 'protocol');
    expect(error.message).toContain(words);
    expectGone(agent.pid);
  });

  test.each([
    ['python3 my_agent.py --steps 3', 'exec python3 my_agent.py --steps 3'],
    [`python3 -c 'print("a; b")' "x|y"`, `exec python3 -c 'print("a; b")' "x|y"`],
    ['python3 $HOME/agent.py 2>/tmp/agent.log', 'exec python3 $HOME/agent.py 2>/tmp/agent.log'],
    ['cd agents && python3 a.py', 'cd agents && python3 a.py'],
    ['python3 a.py | tee log', 'python3 a.py | tee log'],
    ['MODEL=small python3 a.py', 'MODEL=small python3 a.py'],
    ['python3 "$(pwd)/a.py"', 'python3 "$(pwd)/a.py"'],
    ['exec python3 a.py', 'exec python3 a.py'],
  ])('the shell runs %j as %j', (command, script) => {
    expect(shellScript(command)).toBe(script);
  });

  test('close kills an agent that ignores it, and whatever it started', async () => {
    // The shell hands its stdin (kept as fd 3) to a background Python and waits: two processes.
    const agent = startAgent(
      `exec 3<&0; python3 -c 'import json, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); sys.stdin.readline(); print(json.dumps({"type": "hello", "protocol": "cerealbar-agent", "version": 2, "name": "stubborn"}), flush=True); time.sleep(60)' <&3 & wait`,
      { closeGraceMs: 200 },
    );
    await agent.handshake();
    const started = Date.now();
    await agent.close();
    expect(Date.now() - started).toBeLessThan(3_000);
    expectGone(agent.pid);
  });
});
