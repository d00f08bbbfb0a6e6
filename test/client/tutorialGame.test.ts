/**
 * The tutorial's game in the page: the same checks as a real game (a refused action changes
 * nothing), a scripted leader that asks for the cards of a valid set, and a scripted follower that
 * cannot hold its turn for ever with no turn clock.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeCard, isValidSet, type Card } from '../../shared/engine/cards';
import { mapSchema } from '../../shared/engine/map';
import type { AgentAction, FollowerAgent, FollowerObservation } from '../../shared/agents/types';
import type { ServerRefusal } from '../../client/src/game/session';
import { MAX_BLOCKED_CHOICES, PARTNER_STEP_MS, setToCollect, TutorialGame } from '../../client/src/tutorial/TutorialGame';

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

test('the scripted leader asks for a card of a valid set, then ends its turn', async () => {
  const game = new TutorialGame('follower');
  await game.start();
  await partnerSteps(1);
  const view = game.view!;
  expect(view.turn.role).toBe('follower');
  const current = view.instructions.find((instruction) => instruction.status === 'current')!;
  const set = setToCollect(tutorialCards);
  expect(isValidSet(set)).toBe(true);
  expect(set.map((card) => `Walk to the card with ${describeCard(card)} and step on it.`)).toContain(current.text);
  game.stop();
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
