/**
 * Log events in words, for people reading a replay: what the actor did, then what followed from it
 * (cards selected, a set, the turn passing, the game ending).
 */
import { describeCard, type Card } from '../engine/cards';
import type { Move } from '../engine/actions';
import type { Outcome } from '../engine/transition';
import type { LogEvent } from './format';

const MOVE_VERBS: Readonly<Record<Move, string>> = { MF: 'moved forward', MB: 'moved back', RL: 'turned left', RR: 'turned right' };

/** Instruction ids count from 0; people count from 1. */
export function instructionNumber(id: number): number {
  return id + 1;
}

/**
 * Sentences for one event: the action first, then its consequences. `cardsBefore` are the cards
 * on the board before the event, to name the cards a move selected or deselected.
 */
export function describeEvent(event: LogEvent, cardsBefore: readonly Card[]): string[] {
  const { outcome } = event;
  const sentences = [describeAction(event)];
  for (const id of outcome.toggled ?? []) {
    const card = cardsBefore.find((candidate) => candidate.id === id);
    sentences.push(card ? `The ${event.actor} ${card.selected ? 'deselected' : 'selected'} ${describeCard(card)}` : `The ${event.actor} toggled card ${id}`);
  }
  if (outcome.set) sentences.push(describeSet(outcome.set));
  const turn = describeTurnEnd(outcome);
  if (turn) sentences.push(turn);
  if (outcome.gameOver) sentences.push(`Game over: final score ${outcome.score}`);
  return sentences;
}

function describeAction(event: LogEvent): string {
  switch (event.type) {
    case 'move':
      return `The ${event.actor} ${MOVE_VERBS[event.payload.move]}${event.outcome.blocked ? ' (blocked)' : ''}`;
    case 'instruction':
      return `The ${event.actor} wrote instruction ${instructionNumber(event.outcome.instruction ?? 0)}: “${event.payload.text}”`;
    case 'done':
      return `The ${event.actor} marked instruction ${instructionNumber(event.outcome.instruction ?? 0)} done`;
    case 'endTurn':
      return `The ${event.actor} ended the turn`;
    case 'feedback':
      return `The ${event.actor} gave ${event.payload.signal} feedback on instruction ${instructionNumber(event.outcome.feedback?.instruction ?? 0)}`;
    case 'cancel':
      return `The ${event.actor} cancelled ${describeCancelled(event.outcome.cancelled ?? [])}`;
    case 'timeout':
      return `The ${event.payload.role}'s turn timed out`;
  }
}

function describeCancelled(ids: readonly number[]): string {
  const numbers = ids.map(instructionNumber);
  return numbers.length === 1 ? `instruction ${numbers[0]}` : `instructions ${numbers.slice(0, -1).join(', ')} and ${numbers[numbers.length - 1]}`;
}

function describeSet(set: NonNullable<Outcome['set']>): string {
  const turns = set.extraTurns === 0 ? 'no extra turns' : `+${plural(set.extraTurns, 'turn')}`;
  return `Set made: +1 point, ${plural(set.added.length, 'new card')}, ${turns}`;
}

/** Why control changed hands, and who plays next (or nothing when the game is over). */
function describeTurnEnd(outcome: Outcome): string | null {
  const ended = outcome.turnEnded;
  if (!ended) return null;
  const next = outcome.gameOver
    ? null
    : `the ${outcome.turn.role}'s turn begins${outcome.turn.role === 'leader' ? ` (${plural(outcome.turnsLeft, 'turn')} left)` : ''}`;
  let cause: string | null = null;
  if (ended.followerSkipped) cause = "No instructions are queued, so the follower's turn is skipped";
  else if (ended.reason === 'out-of-steps') cause = 'The follower is out of steps';
  else if (ended.reason === 'all-done') cause = 'All instructions are done';
  else if (ended.reason === 'cancelled') cause = "The follower's turn ends";
  if (!cause) return next && capitalise(next);
  return next ? `${cause}: ${next}` : cause;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
