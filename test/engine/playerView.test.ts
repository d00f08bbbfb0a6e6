/**
 * playerView, the one cut of what a player knows: checked on every state of real games against
 * an independent account of what each role may know, and against states that differ only in
 * what the follower cannot know.
 */
import {
  emptyMemory,
  isInvalidSelection,
  legalActions,
  playerView,
  remember,
  UNSEEN,
  visibleIndices,
  type Card,
  type GameState,
  type Memory,
  type PlayerView,
} from '../../shared/engine';
import { card, makeState, selfPlayStates, SET_FACES } from '../fixtures';
import { done, endTurn, mv, play, say } from './helpers';

const games = [3, 4].map(selfPlayStates);

/** Every key anywhere in a JSON value. */
function keysIn(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((item) => keysIn(item, into));
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      into.add(key);
      keysIn(item, into);
    }
  }
  return into;
}

describe("the follower's view on every state of two self-play games", () => {
  test('R-52, R-54, R-26: holds what it sees now and what it saw before, and nothing else', () => {
    let remembered = 0;
    let leaderSeen = 0;
    for (const states of games) {
      let memory = emptyMemory('follower');
      const seen = new Set<number>();
      const done: number[] = [];
      for (const state of states) {
        memory = remember(memory, state);
        const view = playerView(state, 'follower', memory);
        const width = state.world.width;
        const inView = new Set(visibleIndices(state.world, state.follower, state.config.view));
        inView.forEach((cell) => seen.add(cell));
        if (state.previousInstruction && !done.includes(state.previousInstruction.id)) done.push(state.previousInstruction.id);

        // The map: exactly the cells ever in view, as the map has them; props only there.
        expect(Object.keys(view.map).sort()).toEqual(['height', 'props', 'terrain', 'width']);
        const known = state.world.map.terrain.map((row, y) => [...row].map((letter, x) => (seen.has(y * width + x) ? letter : UNSEEN)).join(''));
        expect(view.map.terrain).toEqual(known);
        expect(view.map.props).toEqual(state.world.map.props.filter((prop) => seen.has(prop.y * width + prop.x)));

        // Cards and the leader only in view; remembered cards out of view, as they were.
        expect(view.cards).toEqual(state.cards.filter((card) => inView.has(card.y * width + card.x)).sort((a, b) => a.id - b.id));
        expect(view.rememberedCards.filter((card) => inView.has(card.y * width + card.x))).toEqual([]);
        remembered += view.rememberedCards.length;
        expect(view.leader).toEqual(inView.has(state.leader.y * width + state.leader.x) ? state.leader : null);
        if (view.leader) leaderSeen++;

        // Instructions: those finished, and the current one once shown; never a queued one.
        const current = state.queue[0];
        const shownCurrent = current !== undefined && current.id < state.instructionsShown ? [current.id] : [];
        expect(view.instructions.map((i) => i.id)).toEqual([...done, ...shownCurrent]);
        expect(view.instructions.filter((i) => !i.shown || i.status === 'queued')).toEqual([]);

        // Counters that could tell the leader's moves or the queue's length are not there.
        expect(view.turn).toEqual({ role: state.turn.role, stepsLeft: state.turn.role === 'follower' ? state.turn.stepsLeft : null });
        expect(view.invalidCards).toEqual([]);
        expect(view.legal).toEqual(legalActions(state, 'follower'));
        const keys = keysIn(view);
        expect(['seed', 'name', 'spawn', 'rng', 'queue', 'nextCardId', 'nextInstructionId', 'instructionsShown'].filter((key) => keys.has(key))).toEqual([]);
      }
    }
    expect(remembered).toBeGreaterThan(0);
    expect(leaderSeen).toBeGreaterThan(0);
  });

  test('R-54: is the same for states that differ only in what the follower cannot know', () => {
    let compared = 0;
    for (const states of games) {
      let memory = emptyMemory('follower');
      for (const state of states) {
        const before = memory;
        memory = remember(memory, state);
        const hidden = hide(state);
        if (!hidden) continue;
        compared++;
        const original = playerView(state, 'follower', memory);
        const other = playerView(hidden, 'follower', remember(before, hidden));
        expect(JSON.stringify(other)).toBe(JSON.stringify(original));
      }
    }
    expect(compared).toBeGreaterThan(100);
  });
});

/**
 * `state` with everything the follower cannot see changed: the cards out of view get other faces
 * and selections, the leader (when out of view) stands elsewhere out of view, more instructions
 * are queued behind the current one, and the generator's state and the next ids differ. Null when
 * there is nothing out of view to change.
 */
function hide(state: GameState): GameState | null {
  const width = state.world.width;
  const inView = new Set(visibleIndices(state.world, state.follower, state.config.view));
  const outOfView = (cell: { x: number; y: number }) => !inView.has(cell.y * width + cell.x);
  const cards = state.cards.map((card): Card => (outOfView(card) ? { ...card, color: card.color === 'red' ? 'blue' : 'red', count: card.count === 1 ? 2 : 1, selected: !card.selected } : card));
  if (cards.every((card, i) => card === state.cards[i])) return null;
  const elsewhere = state.world.cardCells.find((cell) => outOfView({ x: cell % width, y: Math.floor(cell / width) }) && cell !== state.leader.y * width + state.leader.x);
  const leader = outOfView(state.leader) && elsewhere !== undefined ? { x: elsewhere % width, y: Math.floor(elsewhere / width), heading: 'SW' as const } : state.leader;
  const extra = [0, 1, 2].map((n) => ({ id: state.nextInstructionId + n, text: `secret ${n}` }));
  return {
    ...state,
    cards,
    leader,
    queue: state.queue.length > 0 ? [...state.queue, ...extra] : state.queue,
    nextInstructionId: state.nextInstructionId + (state.queue.length > 0 ? 3 : 0),
    nextCardId: state.nextCardId + 30,
    rng: state.rng.map((n) => n ^ 0x5555),
  };
}

describe("R-53: the leader's view", () => {
  test('holds the whole game but the generator, with marks and every instruction', () => {
    for (const states of games) {
      let memory: Memory = emptyMemory('leader');
      const finished: number[] = [];
      for (const state of states) {
        memory = remember(memory, state);
        const view = playerView(state, 'leader', memory);
        if (state.previousInstruction && !finished.includes(state.previousInstruction.id)) finished.push(state.previousInstruction.id);
        expect(view.cards).toEqual([...state.cards].sort((a, b) => a.id - b.id));
        expect(view.leader).toEqual(state.leader);
        expect(view.follower).toEqual(state.follower);
        expect(view.turn).toEqual(state.turn);
        expect(view.map.terrain).toEqual(state.world.map.terrain);
        const selected = state.cards.filter((card) => card.selected);
        expect(view.invalidCards).toEqual(isInvalidSelection(selected) ? selected.map((card) => card.id).sort((a, b) => a - b) : []);
        expect(view.instructions.map((i) => [i.id, i.status, i.shown])).toEqual([
          ...finished.map((id) => [id, 'done', true]),
          ...state.queue.map((i, n) => [i.id, n === 0 ? 'current' : 'queued', i.id < state.instructionsShown]),
        ]);
        const keys = keysIn(view);
        expect(['seed', 'spawn', 'rng', 'nextCardId', 'nextInstructionId'].filter((key) => keys.has(key))).toEqual([]);
      }
    }
  });
});

describe('memory', () => {
  test('is returned unchanged when nothing new was witnessed, and survives JSON', () => {
    const state = makeState();
    const memory = remember(emptyMemory('follower'), state);
    expect(remember(memory, state)).toBe(memory);
    const leaderMemory = remember(emptyMemory('leader'), state);
    expect(remember(leaderMemory, state)).toBe(leaderMemory);
    const copied = JSON.parse(JSON.stringify(memory)) as Memory;
    expect(playerView(state, 'follower', copied)).toEqual(playerView(state, 'follower', memory));
  });

  test('counts moves that change the pose, and ages remembered cards by them', () => {
    let state = play(makeState({ config: { followerSteps: 30 } }), say('look around'), endTurn).state;
    let memory = remember(emptyMemory('follower'), state);
    const visible = playerView(state, 'follower', memory).cards.map((card) => card.id);
    expect(visible).toEqual([0, 1, 2]);
    for (let i = 0; i < 3; i++) {
      state = play(state, mv('follower', 'RL')).state;
      memory = remember(memory, state);
    }
    const view: PlayerView = playerView(state, 'follower', memory);
    expect(memory.moves).toBe(3);
    // Facing NE after the first turn, the cards due east are on the cone's edge, still in view:
    // last seen one move in, so two moves ago.
    expect(view.rememberedCards.map((card) => [card.id, card.seenAgo])).toEqual([
      [0, 2],
      [1, 2],
      [2, 2],
    ]);
    // DONE does not move the follower: the count stays.
    state = play(state, done).state;
    expect(remember(memory, state).moves).toBe(3);
  });

  test("a role's view needs that role's memory, and the follower's needs a witnessed state", () => {
    const state = makeState();
    expect(() => playerView(state, 'follower', remember(emptyMemory('leader'), state))).toThrow(/leader's memory/);
    expect(() => playerView(state, 'follower', emptyMemory('follower'))).toThrow(/remember/);
  });
});

describe('R-55: no occlusion', () => {
  test('a card behind a tree is in view, and so are the cells beyond it, when they lie in the cone', () => {
    // The fixture map has a tree on (2, 6); the follower looks east along row 6.
    const behindTree = card(0, 3, 6, { color: 'red', shape: 'star', count: 1 });
    const state = makeState({ follower: { x: 0, y: 6, heading: 'E' }, cards: [behindTree, ...SET_FACES.map((face, i) => card(i + 1, 5 + i, 1, face))] });
    const view = playerView(state, 'follower', remember(emptyMemory('follower'), state));
    expect(view.map.props).toEqual([expect.objectContaining({ x: 2, y: 6, type: 'tree' })]);
    expect(view.cards.map((c) => c.id)).toEqual([0]);
    expect(view.map.terrain[6][5]).toBe('G');
  });
});
