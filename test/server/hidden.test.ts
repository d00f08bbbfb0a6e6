/**
 * Hidden information through the real room: two games whose follower views are the same at every
 * step, but which differ in everything the follower cannot know (the seed, the cards it never
 * sees, where the leader stands and turns out of its sight, how many instructions are queued and
 * what they say), send the follower byte-identical traffic.
 */
import fc from 'fast-check';
import {
  byActor,
  cellAt,
  drawSetup,
  GameSetupError,
  legalActions,
  makeConfig,
  startGame,
  step,
  visibleIndices,
  type Card,
  type Color,
  type GameMap,
  type GameState,
  type Move,
  type Pose,
} from '../../shared/engine';
import type { LogLine } from '../../shared/log/format';
import { generateMap } from '../../shared/maps/generate';
import { join, startTestServer, waitFor, type Player, type TestServer } from './harness';

jest.setTimeout(120_000);

const config = makeConfig();
const ROUNDS = 2;
/** The rooms' clock, fixed: deadlines and server times in the traffic do not depend on when a test runs. */
const NOW = () => 1_700_000_000_000;

/** One game to play: its room settings, and what the leader does in each round besides instructing. */
interface Game {
  readonly seed: number;
  readonly map: GameMap;
  /** Per round: extra instructions queued behind the round's instruction (never current). */
  readonly extraInstructions: readonly number[];
  /** Per round: pairs of leader turns (left then right), out of the follower's sight. */
  readonly leaderTurns: readonly number[];
}

interface Scenario {
  readonly a: Game;
  readonly b: Game;
  /** The follower's moves in each of its turns (the same in both games). */
  readonly followerMoves: readonly (readonly Move[])[];
}

/**
 * Builds the two games from random choices, or null when the choices do not give two valid games
 * with the same follower views (a set was made, which draws cards that could differ).
 */
function scenario(seed: number, choose: () => number, extra: number[], turns: number[]): Scenario | null {
  const map = generateMap(seed);
  const setup = drawSetup(config, map, seed);
  const mapA: GameMap = { ...map, spawn: { leader: setup.leader, follower: setup.follower }, cards: setup.cards.map(({ x, y, color, shape, count }) => ({ x, y, color, shape, count })) };
  // The follower's walk, and every cell it will ever see, played on game A in the engine.
  let state: GameState = startGame(config, mapA, setup);
  const width = map.width;
  const seen = new Set<number>();
  const look = () => visibleIndices(state.world, state.follower, config.view).forEach((cell) => seen.add(cell));
  look();
  const followerMoves: Move[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const action of [byActor('leader', { type: 'instruction', text: `instruction ${round}` }), byActor('leader', { type: 'endTurn' })]) {
      const result = step(state, action);
      if (!result.ok) return null;
      state = result.state;
    }
    const moves: Move[] = [];
    while (state.turn.role === 'follower') {
      const legal = legalActions(state, 'follower').moves;
      const move = legal[choose() % legal.length];
      const result = step(state, byActor('follower', { type: 'move', move }));
      if (!result.ok || result.outcome.set) return null;
      state = result.state;
      moves.push(move);
      look();
    }
    followerMoves.push(moves);
  }
  // Game B: the leader elsewhere out of sight (when it never comes into sight in A), other faces
  // on every card the follower never sees, another seed.
  const unseen = (cell: { x: number; y: number }) => !seen.has(cell.y * width + cell.x);
  const world = startGame(config, mapA, setup).world;
  const cardCells = new Set(setup.cards.map((card) => card.y * width + card.x));
  const hiddenCell = world.cardCells.find((cell) => unseen(cellAt(map, cell)) && !cardCells.has(cell) && cell !== setup.leader.y * width + setup.leader.x);
  const leader: Pose = unseen(setup.leader) && hiddenCell !== undefined ? { ...cellAt(map, hiddenCell), heading: 'W' } : setup.leader;
  const recolour: Record<Color, Color> = { orange: 'black', black: 'blue', blue: 'yellow', yellow: 'pink', pink: 'red', red: 'green', green: 'orange' };
  const cards: Card[] = setup.cards.map((card) => (unseen(card) ? { ...card, color: recolour[card.color], count: card.count === 3 ? 1 : ((card.count + 1) as Card['count']) } : card));
  if (cards.every((card, i) => card === setup.cards[i])) return null;
  const mapB: GameMap = { ...mapA, spawn: { leader, follower: setup.follower }, cards: cards.map(({ x, y, color, shape, count }) => ({ x, y, color, shape, count })) };
  try {
    drawSetup(config, mapB, seed + 1);
    startGame(config, mapB, { leader, follower: setup.follower, cards, rng: setup.rng });
  } catch (error) {
    if (error instanceof GameSetupError) return null;
    throw error;
  }
  const leaderHidden = unseen(leader);
  return {
    a: { seed, map: mapA, extraInstructions: [0, 0], leaderTurns: [0, 0] },
    b: { seed: seed + 1, map: mapB, extraInstructions: extra, leaderTurns: leaderHidden ? turns : [0, 0] },
    followerMoves,
  };
}

/** Plays one game of the scenario on its own server; returns the follower's raw frames and both logs. */
async function play(game: Game, followerMoves: Scenario['followerMoves']): Promise<{ frames: string[]; leaderFrames: string[]; log: LogLine[] }> {
  const ts: TestServer = await startTestServer({ seed: game.seed, map: game.map }, NOW);
  try {
    // The follower waits first, so that every frame of the game reaches the listener below.
    const follower = await join(ts.url, { role: 'follower' });
    await waitFor(() => follower.messages.some((m) => m.type === 'queue'), 'the follower to wait in the queue');
    const frames = recordFrames(follower);
    const leader = await join(ts.url, { role: 'leader' });
    const leaderFrames = recordFrames(leader);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
    for (let round = 0; round < ROUNDS; round++) {
      const views = follower.messages.length;
      leader.act({ type: 'instruction', text: `instruction ${round}` });
      for (let n = 0; n < game.extraInstructions[round]; n++) leader.act({ type: 'instruction', text: `a secret ${'x'.repeat(n * 7)} ${round}` });
      for (let n = 0; n < game.leaderTurns[round]; n++) {
        leader.act({ type: 'move', move: 'RL' });
        leader.act({ type: 'move', move: 'RR' });
      }
      leader.act({ type: 'endTurn' });
      await waitFor(() => follower.view?.turn.role === 'follower', `the follower's turn ${round}`);
      expect(follower.messages.length).toBe(views + 1);
      for (const move of followerMoves[round]) {
        const before = follower.messages.length;
        follower.act({ type: 'move', move });
        await waitFor(() => follower.messages.length > before, `the follower's ${move}`);
      }
      await waitFor(() => leader.view?.turn.role === 'leader', `the leader's turn after round ${round}`);
    }
    leader.room.reconnection.enabled = false;
    await leader.room.leave(true);
    await waitFor(() => follower.phase === 'ended' && follower.messages.some((m) => m.type === 'notice' && m.payload.kind === 'gameOver'), 'the game to end');
    expect(leader.errors().concat(follower.errors())).toEqual([]);
    return { frames, leaderFrames, log: ts.logs[0] };
  } finally {
    await ts.server.close();
  }
}

/** Every websocket frame the player's connection receives from now on, as hex. */
function recordFrames(player: Player): string[] {
  const frames: string[] = [];
  const socket = (player.room.connection.transport as unknown as { ws: { addEventListener(type: 'message', listener: (event: { data: ArrayBuffer }) => void): void } }).ws;
  socket.addEventListener('message', (event) => frames.push(Buffer.from(event.data).toString('hex')));
  return frames;
}

test('P-54: games that differ only in what the follower cannot know send it byte-identical frames', async () => {
  let played = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 5000 }),
      fc.infiniteStream(fc.nat()),
      fc.array(fc.integer({ min: 1, max: 3 }), { minLength: ROUNDS, maxLength: ROUNDS }),
      fc.array(fc.integer({ min: 1, max: 2 }), { minLength: ROUNDS, maxLength: ROUNDS }),
      async (seed, choices, extra, turns) => {
        const next = choices[Symbol.iterator]();
        const games = scenario(seed, () => next.next().value as number, extra, turns);
        fc.pre(games !== null);
        const a = await play(games!.a, games!.followerMoves);
        const b = await play(games!.b, games!.followerMoves);
        played++;
        // The games really differ: their logs, and what the leader was sent.
        const header = (log: LogLine[]) => log[0] as Extract<LogLine, { kind: 'header' }>;
        expect(header(b.log).seed).not.toBe(header(a.log).seed);
        expect(header(b.log).initial.cards).not.toEqual(header(a.log).initial.cards);
        expect(b.log.filter((l) => l.kind === 'event' && l.type === 'instruction').length).toBeGreaterThan(a.log.filter((l) => l.kind === 'event' && l.type === 'instruction').length);
        expect(b.leaderFrames).not.toEqual(a.leaderFrames);
        // What the follower was sent does not.
        expect(a.frames.length).toBeGreaterThan(2 * 10);
        expect(b.frames).toEqual(a.frames);
      },
    ),
    { numRuns: 3, endOnFailure: true },
  );
  expect(played).toBe(3);
});
