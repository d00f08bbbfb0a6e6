/**
 * The tutorial's steps for each role, and what a player must do to finish each: a pure function of
 * the views the player has seen, so that it can be tested without a page.
 */
import type { Role } from '../../../shared/engine/state';
import type { GameView } from '../game/session';

/** What the player has done so far; each flag, once set, stays set. */
export interface Progress {
  readonly moved: boolean;
  readonly instructionSent: boolean;
  readonly turnPassed: boolean;
  readonly instructionShown: boolean;
  readonly cardSelected: boolean;
  readonly instructionDone: boolean;
  readonly setMade: boolean;
}

export const NO_PROGRESS: Progress = {
  moved: false, instructionSent: false, turnPassed: false, instructionShown: false, cardSelected: false, instructionDone: false, setMade: false,
};

export interface TutorialStep {
  readonly text: string;
  readonly done: keyof Progress;
}

export const TUTORIAL_STEPS: Readonly<Record<Role, readonly TutorialStep[]>> = {
  leader: [
    { text: 'Move your avatar (the violet ring) with the arrow keys: ↑ forward, ↓ back, ← and → to turn.', done: 'moved' },
    { text: 'Write an instruction for your follower that names a card, for example "Pick up the 1 red star", and press Enter.', done: 'instructionSent' },
    { text: "Press End turn (or Ctrl+Enter): it is then the follower's turn.", done: 'turnPassed' },
    { text: 'Watch the follower (the teal ring) carry out your instruction and mark it done.', done: 'instructionDone' },
    {
      text: 'Make a set: three cards whose colours, shapes and counts are all different. Tell the follower which cards to step on; you may step on cards too.',
      done: 'setMade',
    },
  ],
  follower: [
    { text: "You see only what is in front of you. The leader's instruction is on the right: read it.", done: 'instructionShown' },
    {
      text: 'Follow it: move with the arrow keys (↑ forward, ↓ back, ← and → to turn) and step on the card it names. You stand on the hex outlined in teal; the hex outlined in white is the one right in front of you.',
      done: 'cardSelected',
    },
    { text: 'When you have done what it says, press Done (or the D key).', done: 'instructionDone' },
    { text: 'Keep following the instructions until a set is made: three cards with all-different colours, shapes and counts.', done: 'setMade' },
  ],
};

/** Progress after the player saw `next` (having seen `previous` before it). */
export function progressAfter(progress: Progress, previous: GameView | null, next: GameView, role: Role): Progress {
  const me = role === 'leader' ? next.leader : next.follower;
  const before = previous && (role === 'leader' ? previous.leader : previous.follower);
  return {
    moved: progress.moved || (before !== null && me !== null && (me.x !== before.x || me.y !== before.y || me.heading !== before.heading)),
    instructionSent: progress.instructionSent || (role === 'leader' && next.instructions.length > 0),
    turnPassed: progress.turnPassed || (role === 'leader' && previous?.turn.role === 'leader' && next.turn.role === 'follower'),
    instructionShown: progress.instructionShown || next.instructions.some((instruction) => instruction.status === 'current' && instruction.shown),
    cardSelected: progress.cardSelected || (previous !== null && next.cards.some((card) => card.selected && !previous.cards.find((was) => was.id === card.id)?.selected)),
    instructionDone: progress.instructionDone || next.instructions.some((instruction) => instruction.status === 'done'),
    setMade: progress.setMade || next.score > 0,
  };
}

/** The index of the step to do now: the first not done; the number of steps when all are. */
export function currentStep(role: Role, progress: Progress): number {
  const steps = TUTORIAL_STEPS[role];
  const index = steps.findIndex((step) => !progress[step.done]);
  return index === -1 ? steps.length : index;
}
