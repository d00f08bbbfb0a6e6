/**
 * The tutorial's game in the page: the same checks as a real game (a refused action changes
 * nothing), a scripted leader that asks for the cards of a valid set, and a scripted follower that
 * cannot hold its turn for ever with no turn clock.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeCard, isValidSet, type Card } from '../../shared/engine/cards';
import { makeConfig } from '../../shared/engine/config';
import type { Heading } from '../../shared/engine/hex';
import { buildWorld, mapSchema } from '../../shared/engine/map';
import { seedRng } from '../../shared/engine/rng';
import { startGame } from '../../shared/engine/state';
import { PathPlanner } from '../../shared/nav/pathing';
import type { AgentAction, FollowerAgent, FollowerObservation } from '../../shared/agents/types';
import type { ServerRefusal } from '../../client/src/game/session';
import { MAX_BLOCKED_CHOICES, PARTNER_STEP_MS, scriptedLeaderTurn, setToCollect, TutorialGame } from '../../client/src/tutorial/TutorialGame';

const tutorial = mapSchema.parse(JSON.parse(readFileSync(join(__dirname, '../../maps/tutorial.json'), 'utf8')));
const tutorialCards: Card[] = tutorial.cards!.map((card, id) => ({ id, ...card, selected: false }));

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** Runs the partner's timers, one step at a time (each step awaits its agent). */
async function partnerSteps(steps: number): Promise<void> {
  for (let i = 0; i < steps; i++) await jest.advanceTimersByTimeAsync(PARTNER_STEP_MS);
}

test("a refused action is told in the engine's words and changes nothing", async () => {
  const game = new TutorialGame('follower');
  const refusals: ServerRefusal[] = [];
  game.on('refused', (refusal) => refusals.push(refusal));
  await game.start();
  const before = game.view;
  // The scripted leader has the first turn.
  game.send({ type: 'move', move: 'MF' });
  game.send({ type: 'done' });
  expect(refusals.map((refusal) => refusal.code)).toEqual(['NOT_YOUR_TURN', 'NOT_YOUR_TURN']);
  expect(game.view).toBe(before);
  game.stop();
});

test('the scripted leader first asks for a card of a valid set that the follower sees, a walk of one turn away', async () => {
  const game = new TutorialGame('follower');
  await game.start();
  await partnerSteps(1);
  const view = game.view!;
  expect(view.turn.role).toBe('follower');
  const current = view.instructions.find((instruction) => instruction.status === 'current')!;
  const set = setToCollect(tutorialCards);
  expect(isValidSet(set)).toBe(true);
  const named = set.find((card) => current.text === `Walk to the card with ${describeCard(card)} and step on it.`);
  expect(named).toBeDefined();
  // In the follower's own view (the engine's playerView), not only on the map.
  expect(view.cards.map((card) => card.id)).toContain(named!.id);
  expect(new PathPlanner(buildWorld(tutorial)).pathLength(tutorialCards, view.follower!, named!)).toBeLessThanOrEqual(view.turn.stepsLeft!);
  game.stop();
});

test('a card out of the follower\'s view is asked for with the way to turn to find it', () => {
  const config = makeConfig({ cardCount: tutorialCards.length });
  const at = (x: number, y: number, heading: Heading) => startGame(config, tutorial, { ...tutorial.spawn!, follower: { x, y, heading }, cards: tutorialCards, rng: seedRng(1) });
  const instruction = (x: number, y: number, heading: Heading) => (scriptedLeaderTurn(at(x, y, heading))[0] as { text: string }).text;
  // The set: 1 red star at (10, 6), 2 blue hearts at (14, 5), 3 yellow cubes at (12, 9). From the
  // start (12, 4), facing north-east, the hearts are two cells off and in view, the star is not.
  expect(instruction(12, 4, 'NE')).toBe('Walk to the card with 2 blue hearts and step on it.');
  expect(instruction(12, 4, 'W')).toBe('Walk to the card with 1 red star and step on it.');
  expect(instruction(12, 4, 'SE')).toBe('Walk to the card with 1 red star and step on it. It is behind you: turn round to find it.');
  expect(instruction(12, 4, 'SW')).toBe('Walk to the card with 1 red star and step on it. It is to your right: turn right to find it.');
  expect(instruction(13, 4, 'SE')).toBe('Walk to the card with 2 blue hearts and step on it. It is to your left: turn left to find it.');
  expect(instruction(5, 2, 'E')).toBe('Walk to the card with 1 red star and step on it. It is ahead of you, further than you can see.');
  expect(scriptedLeaderTurn(at(12, 4, 'NE')).map((action) => action.type)).toEqual(['instruction', 'endTurn']);
});

/** An agent that chooses a move the follower cannot make whenever there is one, and turns left otherwise. */
class Stubborn implements FollowerAgent {
  readonly name = 'stubborn';
  reset(): void {}
  act(observation: FollowerObservation): AgentAction {
    return (['MF', 'MB'] as const).find((move) => !observation.legal.includes(move)) ?? 'RL';
  }
}

test('a scripted follower that keeps choosing blocked moves presses Done instead of holding its turn for ever', async () => {
  const game = new TutorialGame('leader', new Stubborn());
  await game.start();
  game.send({ type: 'instruction', text: 'Stay there' });
  game.send({ type: 'endTurn' });
  const start = game.view!.follower!;
  // Turning, until something is in the way, then only blocked choices: none is played.
  let steps = 0;
  while (game.view!.turn.role === 'follower' && steps < 30) {
    await partnerSteps(1);
    steps++;
  }
  expect(game.view!.follower).toMatchObject({ x: start.x, y: start.y });
  const rotations = steps - MAX_BLOCKED_CHOICES;
  expect(rotations).toBeGreaterThanOrEqual(0);
  // Its turn ended after exactly MAX_BLOCKED_CHOICES blocked choices, by Done: the instruction is finished, steps were left.
  expect(game.view!.turn.role).toBe('leader');
  expect(game.view!.instructions.map((instruction) => instruction.status)).toEqual(['done']);
  expect(rotations).toBeLessThan(10);
  game.stop();
});
