/**
 * A walk's target that no one may stand on (a hill where hills are obstacles, water, a prop): no
 * walk reaches it, and the planner says so. Its search went out from the target along steps out of
 * it, which have no way back: the target's neighbours got distance 1 and a walk on them turned for
 * ever, so that `pathLength` threw ("walk to (x, y) does not end") and `nextMove` turned in place.
 *
 * The heuristic follower plans on the cells it has seen with CerealBar's rules, so in a CB2-rules
 * game a card on a hill is such a target: the study game of the fixture stalled on one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HeuristicAgent } from '../../shared/agents/builtin';
import { ObservationTracker } from '../../shared/agents/observation';
import type { AgentAction } from '../../shared/agents/types';
import { byActor } from '../../shared/engine/actions';
import { followerPlayerAction } from '../../shared/agents/actions';
import type { Move } from '../../shared/engine/actions';
import { HEADINGS, hexDistance, opposite, rotateLeft, rotateRight, type Cell, type Pose } from '../../shared/engine/hex';
import { buildWorld, isWalkable, stepTarget, type World } from '../../shared/engine/map';
import type { GameState } from '../../shared/engine/state';
import { step } from '../../shared/engine/transition';
import { replay } from '../../shared/log/replay';
import { PathPlanner } from '../../shared/nav/pathing';
import { card, SET_FACES, smallMap } from '../fixtures';

/** Where `move` takes `pose` on `world`, or null when it is blocked. */
function applyMove(world: World, pose: Pose, move: Move): Pose | null {
  if (move === 'RL' || move === 'RR') return { ...pose, heading: move === 'RL' ? rotateLeft(pose.heading) : rotateRight(pose.heading) };
  const to = stepTarget(world, pose, move === 'MF' ? pose.heading : opposite(pose.heading));
  return to && { ...to, heading: pose.heading };
}

describe('the path planner and a target no one may stand on', () => {
  const world = buildWorld(smallMap());
  // The fixture's hill, water and tree.
  const targets: readonly (Cell & { what: string })[] = [
    { x: 6, y: 6, what: 'hill' },
    { x: 4, y: 2, what: 'water' },
    { x: 2, y: 6, what: 'tree' },
  ];

  test.each(targets)('on the $what at ($x, $y), from every pose next to it: no walk (-1, null), never a walk that does not end', (target) => {
    expect(isWalkable(world, target)).toBe(false);
    const cards = [card(0, target.x, target.y, SET_FACES[0])];
    let poses = 0;
    for (const toward of HEADINGS) {
      const from = stepTarget(world, { x: target.x, y: target.y }, toward);
      if (!from) continue;
      for (const heading of HEADINGS) {
        const planner = new PathPlanner(world);
        const pose = { ...from, heading };
        expect(planner.pathLength(cards, pose, target)).toBe(-1);
        expect(planner.nextMove(cards, pose, target)).toBeNull();
        expect(planner.cellsTo(cards, from, target)).toBe(-1);
        poses++;
      }
    }
    expect(poses).toBeGreaterThanOrEqual(6 * 4);
  });

  test.each(targets)('toward the $what at ($x, $y) as a place (nextMoveToward), a walk ends next to it', (target) => {
    const planner = new PathPlanner(world);
    let pose: Pose = { x: 0, y: 0, heading: 'NE' };
    const moves: Move[] = [];
    for (let move = planner.nextMoveToward([], pose, target); move; move = planner.nextMoveToward([], pose, target)) {
      moves.push(move);
      expect(moves.length).toBeLessThan(40);
      const next = applyMove(world, pose, move);
      expect(next).not.toBeNull();
      pose = next!;
    }
    expect(moves.length).toBeGreaterThan(0);
    expect(hexDistance(pose, target)).toBe(1);
  });

  test('a target next to the hill is still walked to', () => {
    const planner = new PathPlanner(world);
    const target = { x: 5, y: 6 };
    const cards = [card(0, target.x, target.y, SET_FACES[0])];
    expect(planner.pathLength(cards, { x: 1, y: 4, heading: 'E' }, target)).toBeGreaterThan(0);
    expect(planner.nextMove(cards, { x: 1, y: 4, heading: 'E' }, target)).not.toBeNull();
  });
});

describe('the heuristic follower in the study game that stalled on a card on a hill', () => {
  const log = readFileSync(join(__dirname, '..', 'fixtures', 'heuristic-card-on-a-hill-stall.jsonl'), 'utf8');
  /** The game after event `seq`, and a tracker that witnessed every state up to it. */
  function at(seq: number): { state: GameState; tracker: ObservationTracker } {
    const tracker = new ObservationTracker();
    let found: GameState | null = null;
    replay(log, {
      onState: (state, event) => {
        if (found) return;
        tracker.witness(state);
        if (event?.seq === seq) found = state;
      },
    });
    return { state: found!, tracker };
  }

  test('asked at event 162, it acts (the card it knows is on a hill it plans as an obstacle), and given the steps it marks the instruction done with its reason', async () => {
    const { state: reached, tracker } = at(162);
    expect(reached.config.walkableHills).toBe(true);
    expect(reached.follower).toEqual({ x: 20, y: 14, heading: 'NE' });
    expect(reached.queue[0].text).toBe('pick up the card with 1 green cross, 4 hexes straight ahead');
    const agent = new HeuristicAgent();
    await agent.reset({ episodeId: 'heuristic-stall#13' });
    const observation = tracker.observe(reached);
    // The one card that fits, known to the follower, lies on a hill.
    const known = [...observation.visibleCards, ...observation.rememberedCards].filter((c) => c.color === 'green' && c.shape === 'plus' && c.count === 1);
    expect(known.map(({ x, y }) => ({ x, y }))).toEqual([{ x: 22, y: 19 }]);
    expect(reached.world.map.terrain[19][22]).toBe('H');

    // It walks toward the place the instruction gives (it threw here).
    expect(agent.act(observation)).toBe('MF');

    // With steps to spare it walks there, looks around, and gives up with its reason.
    let state: GameState = reached;
    const instruction = state.queue[0].id;
    const actions: AgentAction[] = [];
    let action: AgentAction = 'MF';
    for (;;) {
      actions.push(action);
      const result = step(state, byActor('follower', followerPlayerAction(action)));
      if (!result.ok) throw new Error(`${action} refused: ${result.error.code}`);
      state = result.state;
      if (state.queue[0]?.id !== instruction || actions.length >= 40) break;
      state = { ...state, turn: { ...state.turn, stepsLeft: 10 } };
      action = agent.act(tracker.observe(state)) as AgentAction;
    }
    expect(actions[actions.length - 1]).toBe('DONE');
    expect(state.queue[0]?.id).not.toBe(instruction);
    expect(agent.gaveUp).toMatch(/^I found no card with 1 green cross that I could reach, even after looking around, so I marked "pick up the card with 1 green cross, 4 hexes straight ahead" done/);
  });
});
