/**
 * The transition function of Table 2 (rules 1-8): `step(state, action)` returns the next state
 * and what happened, or refuses the action with a typed error and leaves the state as it was.
 */
import { SET_SIZE, cardWith, isValidSet, type Card } from './cards';
import { actionError, type ActionError } from './errors';
import { opposite, rotateLeft, rotateRight, type Cell, type Pose } from './hex';
import { cellIndex, stepTargetIndex } from './map';
import { drawCards, placementProblem } from './placement';
import { Draw } from './rng';
import { FEEDBACK_SIGNALS, MOVES, instructionLength, type Action, type FeedbackSignal } from './actions';
import { copyState, type DraftState, type GameState, type Instruction, type Turn } from './state';

/** Why control changed hands. */
export type TurnEndReason = 'end-turn' | 'timeout' | 'out-of-steps' | 'all-done' | 'cancelled';

export interface SetOutcome {
  /** The three cards that formed the set (they leave the board). */
  readonly cards: readonly number[];
  /** The cards placed in their stead. */
  readonly added: readonly Card[];
  readonly extraTurns: number;
}

/** What an accepted action did: recorded in the log and checked on replay. */
export interface Outcome {
  /** The mover's pose after a move, also when the move was blocked. */
  readonly pose?: Pose;
  /** The move changed nothing: an obstacle or the map's edge was in the way. */
  readonly blocked?: true;
  /** Ids of the cards whose selection flipped. */
  readonly toggled?: readonly number[];
  readonly set?: SetOutcome;
  /** Id of the instruction issued or marked done. */
  readonly instruction?: number;
  /** The leader's live feedback, and the instruction current when it was given. */
  readonly feedback?: { readonly signal: FeedbackSignal; readonly instruction: number };
  /** Ids of the instructions a cancel removed, the current one first. */
  readonly cancelled?: readonly number[];
  readonly turnEnded?: { readonly reason: TurnEndReason; readonly followerSkipped?: true };
  readonly turn: Turn;
  readonly turnsLeft: number;
  readonly score: number;
  readonly gameOver: boolean;
}

export type StepResult =
  | { readonly ok: true; readonly state: GameState; readonly outcome: Outcome }
  | { readonly ok: false; readonly error: ActionError };

export interface StepOptions {
  /**
   * Replacement cards to use if this action makes a set, instead of drawing them: replay uses the
   * cards a log recorded. They are checked against the placement rules.
   */
  readonly replacementCards?: readonly Card[];
}

/**
 * What an action did besides the turn counters. Every call site names every field (undefined when
 * absent) so that outcomes share one shape, which keeps `step` fast; JSON leaves undefined out.
 */
type Effects = { readonly [K in 'pose' | 'blocked' | 'toggled' | 'set' | 'instruction' | 'feedback' | 'cancelled' | 'turnEnded']-?: Outcome[K] | undefined };

const NO_EFFECTS: Effects = {
  pose: undefined,
  blocked: undefined,
  toggled: undefined,
  set: undefined,
  instruction: undefined,
  feedback: undefined,
  cancelled: undefined,
  turnEnded: undefined,
};

function accept(state: GameState, effects: Effects): StepResult {
  return {
    ok: true,
    state,
    outcome: {
      pose: effects.pose,
      blocked: effects.blocked,
      toggled: effects.toggled,
      set: effects.set,
      instruction: effects.instruction,
      feedback: effects.feedback,
      cancelled: effects.cancelled,
      turnEnded: effects.turnEnded,
      turn: state.turn,
      turnsLeft: state.turnsLeft,
      score: state.score,
      gameOver: state.gameOver,
    },
  };
}

const NO_OPTIONS: StepOptions = {};

export function step(state: GameState, action: Action, options: StepOptions = NO_OPTIONS): StepResult {
  const error = refusal(state, action);
  if (error) return { ok: false, error };
  switch (action.type) {
    case 'move':
      return move(state, action, options);
    case 'instruction':
      return instruct(state, action);
    case 'endTurn':
      return passControl(state, 'end-turn');
    case 'done':
      return markDone(state);
    case 'feedback':
      return giveFeedback(state, action);
    case 'cancel':
      return cancelInstructions(state);
    case 'timeout':
      return timeout(state, action);
  }
}

const isRole = (value: unknown): boolean => value === 'leader' || value === 'follower';

/**
 * Why `action` is refused in `state`, or null when the rules accept it. The checks run in the
 * order docs/rules.md gives ("Refused actions"): whether the game goes on, whether the action is
 * well formed, whether its actor may ever take it, whose turn it is, then the action's own
 * conditions. Actions come from outside, so nothing about their shape is assumed.
 */
export function refusal(state: GameState, action: Action): ActionError | null {
  if (state.gameOver) return actionError('GAME_OVER', 'the game is over');
  const malformed = malformation(action);
  if (malformed) return actionError('MALFORMED_ACTION', malformed);
  if (action.type === 'timeout') {
    return action.role === state.turn.role ? null : actionError('STALE_TIMEOUT', `the ${action.role}'s turn is already over`);
  }
  if (action.type === 'instruction' && action.actor === 'follower') return actionError('FOLLOWER_CANNOT_INSTRUCT', 'only the leader can give instructions');
  if (action.type === 'endTurn' && action.actor === 'follower') {
    return actionError('FOLLOWER_CANNOT_END_TURN', "the follower's turn ends by DONE on the last instruction, running out of steps or time");
  }
  if (action.type === 'done' && action.actor === 'leader') return actionError('LEADER_CANNOT_MARK_DONE', 'only the follower marks instructions done');
  if (action.type === 'feedback' || action.type === 'cancel') return leaderInterjectionRefusal(state, action);
  if (action.actor !== state.turn.role) return actionError('NOT_YOUR_TURN', `it is the ${state.turn.role}'s turn`);
  switch (action.type) {
    case 'move':
      return state.turn.stepsLeft > 0 ? null : actionError('NO_STEPS_LEFT', `the ${action.actor} has no steps left this turn`);
    case 'endTurn':
      return state.queue.length > 0 || state.config.endTurnWithEmptyQueue ? null : actionError('EMPTY_QUEUE', 'give the follower an instruction before ending the turn');
    case 'done':
      return state.queue.length > 0 ? null : actionError('EMPTY_QUEUE', 'there is no instruction to mark done');
    case 'instruction':
      if (queueIsFull(state)) return actionError('QUEUE_FULL', `the queue holds at most ${state.config.maxQueuedInstructions} instructions; wait for the follower`);
      if (action.text.trim().length === 0) return actionError('EMPTY_INSTRUCTION', 'an instruction needs some text');
      // A text has no more code points than UTF-16 units: only a longer one needs counting.
      if (action.text.length > state.config.maxInstructionLength && instructionLength(action.text) > state.config.maxInstructionLength) {
        return actionError('INSTRUCTION_TOO_LONG', `instructions are at most ${state.config.maxInstructionLength} characters, this one has ${instructionLength(action.text)}`);
      }
      return null;
  }
}

/**
 * Why the leader may not send feedback or cancel now: both are options of the rules, the leader's
 * alone, and only in the follower's turn (which always has a current instruction).
 */
function leaderInterjectionRefusal(state: GameState, action: Extract<Action, { type: 'feedback' | 'cancel' }>): ActionError | null {
  if (action.type === 'feedback') {
    if (!state.config.liveFeedback) return actionError('FEEDBACK_OFF', 'live feedback is off in this game');
    if (action.actor === 'follower') return actionError('FOLLOWER_CANNOT_GIVE_FEEDBACK', 'only the leader gives feedback');
  } else {
    if (!state.config.cancelInstructions) return actionError('CANCEL_OFF', 'cancelling instructions is off in this game');
    if (action.actor === 'follower') return actionError('FOLLOWER_CANNOT_CANCEL', 'only the leader cancels instructions');
  }
  if (state.turn.role !== 'follower') return actionError('NOT_FOLLOWER_TURN', `the leader may ${action.type === 'feedback' ? 'give feedback' : 'cancel'} only during the follower's turn`);
  return null;
}

export function queueIsFull(state: GameState): boolean {
  return state.config.maxQueuedInstructions !== null && state.queue.length >= state.config.maxQueuedInstructions;
}

/** What is wrong with the action's shape, or null. */
function malformation(action: Action): string | null {
  const shape = action as { type?: unknown; actor?: unknown; move?: unknown; text?: unknown; signal?: unknown; role?: unknown } | null | undefined;
  switch (shape?.type) {
    case 'timeout':
      if (shape.actor !== 'server') return 'only the server declares a timeout';
      return isRole(shape.role) ? null : `unknown role ${JSON.stringify(shape.role)}`;
    case 'move':
    case 'instruction':
    case 'endTurn':
    case 'done':
    case 'feedback':
    case 'cancel':
      if (!isRole(shape.actor)) return `unknown actor ${JSON.stringify(shape.actor)}`;
      if (shape.type === 'move' && !(MOVES as readonly unknown[]).includes(shape.move)) return `unknown move ${JSON.stringify(shape.move)}`;
      if (shape.type === 'instruction' && typeof shape.text !== 'string') return 'an instruction needs a text';
      if (shape.type === 'feedback' && !(FEEDBACK_SIGNALS as readonly unknown[]).includes(shape.signal)) return `unknown feedback signal ${JSON.stringify(shape.signal)}`;
      return null;
    default:
      return `unknown action type ${JSON.stringify(shape?.type)}`;
  }
}

/** Rules 4, 7 and 8: a world action costs a step; the follower's last step hands control back. */
function move(state: GameState, action: Extract<Action, { type: 'move' }>, options: StepOptions): StepResult {
  const role = action.actor;
  const from = role === 'leader' ? state.leader : state.follower;
  let to: Pose;
  switch (action.move) {
    case 'RL':
      to = { x: from.x, y: from.y, heading: rotateLeft(from.heading) };
      break;
    case 'RR':
      to = { x: from.x, y: from.y, heading: rotateRight(from.heading) };
      break;
    case 'MF':
    case 'MB': {
      const cell = stepTargetIndex(state.world, from, action.move === 'MF' ? from.heading : opposite(from.heading));
      // A move that would not change the pose changes nothing and costs no step.
      if (cell < 0) return accept(state, { ...NO_EFFECTS, pose: from, blocked: true });
      const width = state.world.width;
      to = { x: cell % width, y: Math.floor(cell / width), heading: from.heading };
      break;
    }
  }

  const next = copyState(state);
  if (role === 'leader') next.leader = to;
  else next.follower = to;
  next.turn = { role, stepsLeft: state.turn.stepsLeft - 1 };
  let toggled: number[] | undefined;
  let set: SetOutcome | undefined;
  if (to.x !== from.x || to.y !== from.y) {
    const entered = cardAt(state.cards, to);
    if (entered >= 0) {
      const cards = state.cards.slice();
      const card = cards[entered];
      cards[entered] = cardWith(card, !card.selected);
      toggled = [card.id];
      next.cards = cards;
      const made = completeSet(next, options);
      if (made && 'error' in made) return { ok: false, error: made.error };
      if (made) set = made;
    }
  }
  let turnEnded: Outcome['turnEnded'];
  if (role === 'follower' && next.turn.stepsLeft === 0) {
    endRound(next);
    turnEnded = { reason: 'out-of-steps' };
  }
  return accept(next, { pose: to, blocked: undefined, toggled, set, instruction: undefined, feedback: undefined, cancelled: undefined, turnEnded });
}

/** The index of the card on `cell`, or -1. */
function cardAt(cards: readonly Card[], cell: Cell): number {
  for (let i = 0; i < cards.length; i++) {
    if (cards[i].x === cell.x && cards[i].y === cell.y) return i;
  }
  return -1;
}

/** When the selection is a valid set: remove it, score, add extra turns and new cards (on `state`, a draft). */
function completeSet(state: DraftState, options: StepOptions): SetOutcome | { error: ActionError } | null {
  // Most card toggles leave fewer or more than a set's worth selected: count before building lists.
  let selectedCount = 0;
  for (const card of state.cards) if (card.selected) selectedCount++;
  if (selectedCount !== SET_SIZE) return null;
  const selected = state.cards.filter((card) => card.selected);
  if (!isValidSet(selected)) return null;
  const remaining = state.cards.filter((card) => !card.selected);
  const occupied = new Set<number>();
  for (const card of remaining) occupied.add(cellIndex(state.world, card));
  occupied.add(cellIndex(state.world, state.leader));
  occupied.add(cellIndex(state.world, state.follower));
  let added: readonly Card[];
  let rng = state.rng;
  if (options.replacementCards) {
    const ids = selected.map((_, i) => state.nextCardId + i);
    const problem = placementProblem(state.world, occupied, options.replacementCards, ids, remaining);
    if (problem) return { error: actionError('BAD_REPLACEMENT_CARDS', problem) };
    added = options.replacementCards.map((card) => cardWith(card, card.selected));
  } else {
    const draw = new Draw(state.rng);
    added = drawCards(draw, state.world, occupied, SET_SIZE, state.nextCardId, remaining);
    rng = draw.state();
  }
  const extraTurns = state.config.extraTurns[state.score] ?? 0;
  state.cards = [...remaining, ...added];
  state.nextCardId += SET_SIZE;
  state.score += 1;
  state.turnsLeft += extraTurns;
  state.rng = rng;
  return { cards: selected.map((card) => card.id), added, extraTurns };
}

/** A round (a leader turn and its follower turn, played or skipped) ends on `state`, a draft; the leader plays next. */
function endRound(state: DraftState): DraftState {
  const turnsLeft = state.turnsLeft - 1;
  if (turnsLeft <= 0) {
    state.turnsLeft = 0;
    state.turn = { role: 'leader', stepsLeft: 0 };
    state.gameOver = true;
  } else {
    state.turnsLeft = turnsLeft;
    state.turn = { role: 'leader', stepsLeft: state.config.leaderSteps };
  }
  return state;
}

/** Rules 2 and 3: the leader hands control to the follower, or, with an empty queue, skips its turn. */
function passControl(state: GameState, reason: TurnEndReason): StepResult {
  const next = copyState(state);
  if (state.queue.length > 0) {
    next.turn = { role: 'follower', stepsLeft: state.config.followerSteps };
    next.instructionsShown = state.nextInstructionId;
    return accept(next, { ...NO_EFFECTS, turnEnded: { reason } });
  }
  return accept(endRound(next), { ...NO_EFFECTS, turnEnded: { reason, followerSkipped: true } });
}

/** Rule 1: an instruction joins the end of the queue and costs no step. */
function instruct(state: GameState, action: Extract<Action, { type: 'instruction' }>): StepResult {
  const instruction: Instruction = { id: state.nextInstructionId, text: action.text };
  const next = copyState(state);
  next.queue = [...state.queue, instruction];
  next.nextInstructionId = state.nextInstructionId + 1;
  return accept(next, { ...NO_EFFECTS, instruction: instruction.id });
}

/** Rules 5 and 6: DONE removes the current instruction; after the last one the leader plays. */
function markDone(state: GameState): StepResult {
  const finished = state.queue[0];
  const rest = state.queue.slice(1);
  const next = copyState(state);
  next.queue = rest;
  next.previousInstruction = finished;
  if (rest.length > 0) return accept(next, { ...NO_EFFECTS, instruction: finished.id });
  return accept(endRound(next), { ...NO_EFFECTS, instruction: finished.id, turnEnded: { reason: 'all-done' } });
}

/** The leader's live feedback changes nothing in the game: it is recorded with the current instruction. */
function giveFeedback(state: GameState, action: Extract<Action, { type: 'feedback' }>): StepResult {
  return accept(state, { ...NO_EFFECTS, feedback: { signal: action.signal, instruction: state.queue[0].id } });
}

/**
 * CB2's cancel: the current and every queued instruction are cancelled, and the follower's turn
 * ends, the round with it, as when its steps run out.
 */
function cancelInstructions(state: GameState): StepResult {
  const cancelled = state.queue.map((instruction, i) => ({ id: instruction.id, text: instruction.text, current: i === 0 }));
  const next = copyState(state);
  next.queue = [];
  next.cancelled = [...state.cancelled, ...cancelled];
  return accept(endRound(next), { ...NO_EFFECTS, cancelled: cancelled.map((instruction) => instruction.id), turnEnded: { reason: 'cancelled' } });
}

/** A turn out of time ends like the leader's End Turn (rule 2 or 3) or the follower's last step (rule 7). */
function timeout(state: GameState, action: Extract<Action, { type: 'timeout' }>): StepResult {
  if (action.role === 'leader') return passControl(state, 'timeout');
  return accept(endRound(copyState(state)), { ...NO_EFFECTS, turnEnded: { reason: 'timeout' } });
}
