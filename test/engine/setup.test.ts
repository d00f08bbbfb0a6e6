/** Starting games: what createGame draws, and the setups it refuses. */
import { GameSetupError, createGame, hasValidSet, makeConfig, mapSchema, snapshot, startGame, seedRng, type GameMap } from '../../shared/engine';
import { generateMap } from '../../shared/maps/generate';
import { card, makeState, smallMap, SET_FACES } from '../fixtures';

const config = makeConfig();

describe('R-56: createGame', () => {
  test('the same map and seed give the same game; another seed another game', () => {
    const map = generateMap(3);
    expect(snapshot(createGame(config, map, 5))).toEqual(snapshot(createGame(config, map, 5)));
    expect(snapshot(createGame(config, map, 6))).not.toEqual(snapshot(createGame(config, map, 5)));
  });

  test('R-16: 21 unselected cards with a valid set, on distinct cells, off the players', () => {
    for (let seed = 0; seed < 50; seed++) {
      const state = createGame(config, generateMap(seed), seed);
      expect(state.cards).toHaveLength(21);
      expect(state.cards.every((c) => !c.selected)).toBe(true);
      expect(hasValidSet(state.cards)).toBe(true);
      const cells = new Set(state.cards.map((c) => `${c.x},${c.y}`));
      expect(cells.size).toBe(21);
      expect(cells.has(`${state.leader.x},${state.leader.y}`)).toBe(false);
      expect(cells.has(`${state.follower.x},${state.follower.y}`)).toBe(false);
    }
  });

  test('a map without spawns: players start on distinct path cells facing NE', () => {
    const map: GameMap = { ...generateMap(8), spawn: undefined };
    const state = createGame(config, map, 8);
    for (const pose of [state.leader, state.follower]) {
      expect(map.terrain[pose.y][pose.x]).toBe('P');
      expect(pose.heading).toBe('NE');
    }
    expect(state.leader).not.toEqual(state.follower);
  });

  test('starts with the leader in control, Ψ_l steps, six turns, score 0 and an empty queue', () => {
    const state = createGame(config, generateMap(1), 1);
    expect(snapshot(state)).toMatchObject({ turn: { role: 'leader', stepsLeft: 5 }, turnsLeft: 6, score: 0, queue: [], previousInstruction: null, gameOver: false });
  });

  test.each([-1, 1.5, 2 ** 32, Number.NaN])('refuses the seed %p', (seed) => {
    expect(() => createGame(config, generateMap(1), seed)).toThrow(/the seed must be an integer from 0 to 4294967295/);
  });

  test('refuses a map too small for the cards', () => {
    const tiny = mapSchema.parse({ format: 'cerealbar-map', version: 1, width: 5, height: 5, terrain: ['GGGGG', 'GGGGG', 'GGGGG', 'GGGGG', 'GGGGG'] });
    expect(() => createGame(config, tiny, 1)).toThrow(GameSetupError);
    expect(() => createGame(config, tiny, 1)).toThrow(/the play region has 9 inner cells; 23 are needed/);
  });
});

describe('startGame refuses setups that break the placement rules', () => {
  const rng = seedRng(1);
  const cards = [card(0, 2, 4, SET_FACES[0]), card(1, 3, 4, SET_FACES[1]), card(2, 4, 4, SET_FACES[2])];
  const start = (overrides: object) =>
    startGame(makeConfig({ cardCount: 3 }), smallMap(), { leader: { x: 1, y: 1, heading: 'E' }, follower: { x: 1, y: 4, heading: 'E' }, cards, rng, ...overrides });

  test('a valid setup starts', () => {
    expect(start({}).cards).toHaveLength(3);
  });

  test.each([
    ['a player on water', { leader: { x: 4, y: 2, heading: 'E' } }, /the leader starts at \(4, 2\), outside the walkable play region/],
    ['a player off the map', { follower: { x: -1, y: 0, heading: 'E' } }, /the follower starts at \(-1, 0\)/],
    ['a card on the outer ring', { cards: [cards[0], cards[1], card(2, 0, 4, SET_FACES[2])] }, /card 2 at \(0, 4\) is not on a reachable inner cell/],
    ['a card under a player', { cards: [cards[0], cards[1], card(2, 1, 1, SET_FACES[2])] }, /card 2 at \(1, 1\) is on an occupied cell/],
    ['two cards on one cell', { cards: [cards[0], cards[1], card(2, 2, 4, SET_FACES[2])] }, /card 2 at \(2, 4\) is on an occupied cell/],
    ['no valid set', { cards: [cards[0], cards[1], card(2, 4, 4, SET_FACES[0])] }, /the board would hold no valid set/],
    ['a selected card', { cards: [cards[0], cards[1], card(2, 4, 4, SET_FACES[2], true)] }, /is selected/],
    ['the wrong number of cards', { cards: cards.slice(0, 2) }, /the game needs 3 cards, the setup has 2/],
    ['card ids out of order', { cards: [cards[1], cards[0], cards[2]] }, /card 0 has id 1, expected 0/],
  ])('%s', (_name, overrides, message) => {
    expect(() => start(overrides)).toThrow(GameSetupError);
    expect(() => start(overrides)).toThrow(message);
  });

  test('the fixture is a legal setup', () => {
    expect(makeState().cards).toHaveLength(5);
  });
});
