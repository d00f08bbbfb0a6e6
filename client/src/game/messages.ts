/**
 * What the game screen says when something happens that the player did not do: a partner who
 * left, a connection the server closed, a turn out of time or skipped, the game's end, and an
 * instruction that stays current after its follower's turn. Plain words for people who have not
 * read the rules; the server's codes go to small print (`detail`), for support. Pure functions of
 * what the server sent, so that they can be tested without a page.
 */
import type { FeedbackSignal } from '../../../shared/engine/actions';
import type { Role } from '../../../shared/engine/state';
import { CLOSE_BAD_FRAME, CLOSE_FRAME_TOO_LARGE, CLOSE_RATE_LIMITED, type Expulsion } from '../../../shared/protocol/messages';
import type { GameView } from './session';

/** A sentence, and the server's own words and codes for whoever helps the player (shown in small print). */
export interface Explained {
  readonly text: string;
  readonly detail: string;
}

const GAME_ENDED = 'The game has ended.';

/** Colyseus's close codes (its CloseCode) that a player's connection can end with. */
const SERVER_SHUTDOWN = 4001;
const WITH_ERROR = 4002;
const FAILED_TO_RECONNECT = 4003;
const CONSENTED = 4000;

/** What a connection did to be closed by the server (protocol P-75 to P-78), after "because it" or "because your browser". */
function offence(code: Expulsion['code'], message: string | undefined): string {
  switch (code) {
    case 'RATE_LIMITED':
      // The server's message names its limit ("more than 100 messages in a second").
      return message && /^more than \d+ messages in a second$/.test(message) ? `sent ${message}` : 'sent too many messages too quickly';
    case 'FRAME_TOO_LARGE':
      return 'sent a message larger than the server accepts';
    case 'BAD_FRAME':
      return 'sent data the server could not read';
  }
}

const EXPULSION_CODES: readonly Expulsion['code'][] = ['RATE_LIMITED', 'FRAME_TOO_LARGE', 'BAD_FRAME'];
const isExpulsion = (code: unknown): code is Expulsion['code'] => (EXPULSION_CODES as readonly unknown[]).includes(code);

/** What a `partnerLeft` notice carries (protocol P-29). */
export interface PartnerLeft {
  readonly reason?: string;
  readonly message?: string;
}

/**
 * Why the partner is gone, in one sentence: the server closed its connection (and why), it did
 * not come back after losing the connection (`wasAway`: a `partnerDisconnected` came first and no
 * `partnerReconnected`), or it left.
 */
export function partnerLeftReason(partner: Role, notice: PartnerLeft, wasAway: boolean): Explained {
  if (isExpulsion(notice.reason)) {
    return {
      text: `The server closed the ${partner}'s connection because it ${offence(notice.reason, notice.message)}.`,
      detail: notice.message ? `${notice.reason}: ${notice.message}` : notice.reason,
    };
  }
  const detail = notice.reason ? `${notice.reason}${notice.message ? `: ${notice.message}` : ''}` : '';
  if (wasAway) return { text: `The ${partner} lost the connection and did not come back in time.`, detail };
  return { text: `The ${partner} left the game.`, detail };
}

/** The banner for a `partnerLeft` notice: why, and that the game is over (the server abandons it). */
export function partnerLeftBanner(partner: Role, notice: PartnerLeft, wasAway: boolean): Explained {
  const why = partnerLeftReason(partner, notice, wasAway);
  return { text: `${why.text} ${GAME_ENDED}`, detail: why.detail };
}

/**
 * Why this player's own connection was closed for good (the SDK's onLeave: the code and reason of
 * the WebSocket close, or the SDK's own after failed reconnections).
 */
export function connectionClosed(code: number, reason: string): Explained {
  const detail = `code ${code}${reason ? `: ${reason}` : ''}`;
  const [prefix, ...rest] = reason.split(': ');
  const said = rest.join(': ');
  const expelledFor: Expulsion['code'] | null = isExpulsion(prefix)
    ? prefix
    : code === CLOSE_RATE_LIMITED
      ? 'RATE_LIMITED'
      : code === CLOSE_FRAME_TOO_LARGE
        ? 'FRAME_TOO_LARGE'
        : code === CLOSE_BAD_FRAME
          ? 'BAD_FRAME'
          : null;
  if (expelledFor) return { text: `The server closed your connection because your browser ${offence(expelledFor, said || undefined)}. ${GAME_ENDED}`, detail };
  switch (code) {
    case SERVER_SHUTDOWN:
      return { text: `The server was stopped. ${GAME_ENDED}`, detail };
    case FAILED_TO_RECONNECT:
      return { text: 'The connection was lost and could not be restored, so you are no longer in the game.', detail };
    case WITH_ERROR:
      // The server's reason is a sentence for players (e.g. the game could not start).
      return { text: reason ? `The server closed your connection: ${reason}.` : 'The server closed your connection after an error.', detail };
    case CONSENTED:
    case 1000:
      return { text: 'The server closed your connection to the game.', detail };
    default:
      return { text: 'The connection to the game was lost.', detail };
  }
}

/** Why the game ended, for the game-over dialog; `partnerLeft` is the reason heard in `partnerLeft`, if any. */
export function endReasonText(reason: string, partner: Role, partnerLeft: Explained | null): string {
  switch (reason) {
    case 'turns-exhausted':
      return 'No turns are left.';
    case 'abandoned':
      // Only the player who stayed hears the game end this way.
      return partnerLeft?.text ?? `The ${partner} left the game.`;
    case 'server-shutdown':
      return 'The server was stopped.';
    case 'interrupted':
      return 'An error on the server interrupted the game.';
    case 'storage-failed':
      return 'The server could not save this game, so it has ended.';
    default:
      return reason;
  }
}

/**
 * A `timeout` notice (protocol P-26). `queued`: the leader's own view held an instruction not yet
 * done when its time ran out (the notice comes before the view that follows the timeout); without
 * one the follower's turn is skipped (rules R-29, R-3).
 */
export function timeoutText(timedOut: Role, me: Role, queued: boolean): string {
  if (timedOut !== me) return timedOut === 'leader' ? 'The leader ran out of time: its turn is over.' : "The follower ran out of time: its turn is over, and the leader's begins.";
  if (me === 'follower') return "Your time ran out: your turn is over, and the leader's begins.";
  return queued
    ? "Your time ran out: the follower's turn begins."
    : "Your time ran out with no instruction for the follower, so its turn was skipped: your next turn begins.";
}

/** A `turnSkipped` notice, to the follower only (protocol P-25). */
export const TURN_SKIPPED_TEXT = "The leader's turn ended with no instruction for you, so your turn was skipped.";

export function partnerDisconnectedText(partner: Role, seconds: number): string {
  return `The ${partner} lost the connection: waiting up to ${seconds} s for them to come back. The turn's clock keeps running. If they do not come back in time, the game ends.`;
}

/** A key pressed out of turn. */
export function waitText(turn: Role, connected: boolean): string {
  return connected ? `It is the ${turn}'s turn: wait for yours.` : 'Not connected: wait for the connection to come back.';
}

/** A move key with no steps left (only the leader keeps its turn at 0 steps: rule R-4). */
export const NO_STEPS_TEXT = 'You have no steps left this turn: you can still write instructions and end your turn.';

/**
 * The current instruction in the leader's turn, once the follower has seen it: the follower's
 * turn ended (out of steps or time) before it pressed Done, so it stays current (rule R-7; only
 * Done finishes an instruction, a set made does not). Null when there is nothing to explain.
 */
export function unfinishedInstructionNote(view: GameView): string | null {
  if (view.phase !== 'playing' || view.turn.role !== 'leader') return null;
  const current = view.instructions.find((instruction) => instruction.status === 'current');
  if (!current?.shown) return null;
  return view.role === 'follower'
    ? 'Your turn ended before you pressed Done, so this instruction is still yours. In your next turn, carry on with it, or press Done at once if it is finished.'
    : "The follower's turn ended before it pressed Done, so this instruction is still current: the follower carries on with it next turn. Only Done finishes an instruction, not a set.";
}

/** The tag of the current instruction in the player's list: "not done yet" when the note above explains it. */
export function currentTag(view: GameView): string {
  const unfinished = unfinishedInstructionNote(view) !== null;
  if (view.role === 'follower') return unfinished ? 'Not done yet' : 'Now';
  return unfinished ? 'Current · not done yet' : 'Current';
}

/** The words of each feedback signal, shown with its icon: the cue never rests on colour alone. */
export const FEEDBACK_WORDS: Readonly<Record<FeedbackSignal, string>> = { positive: 'Good', negative: 'Not that' };

/** Where in the follower's turn a feedback came (`afterStep`: the steps it had taken in this turn). */
function whenInTurn(afterStep: number): string {
  return afterStep === 0 ? 'before its first step' : `after its step ${afterStep}`;
}

/** The leader's confirmation of its feedback, from the server's `feedback` notice. */
export function feedbackSentText(signal: FeedbackSignal, afterStep: number): string {
  return `Sent “${FEEDBACK_WORDS[signal]}” to the follower, ${whenInTurn(afterStep)}.`;
}

/**
 * A `cancelled` notice. `cancelled`: for the leader, how many instructions its view held not yet
 * done (the notice comes before the view that shows them cancelled).
 */
export function cancelledText(me: Role, cancelled: number): string {
  if (me === 'follower') return "The leader cancelled its instructions, so your turn is over: the leader's turn begins.";
  const what = cancelled === 1 ? "the follower's instruction" : `the follower's ${cancelled} instructions`;
  return `You cancelled ${what}: its turn is over, and yours begins.`;
}

/** What the Cancel control asks before it cancels (a second press within the time, as a stray key must not empty the queue). */
export function cancelConfirmText(pending: number, key: string, seconds: number): string {
  const what = pending === 1 ? 'the current instruction' : pending === 2 ? 'both instructions' : `all ${pending} instructions`;
  return `Press Cancel or ${key} again within ${seconds} s to cancel ${what} and end the follower's turn.`;
}

/** Seconds past the turn's deadline with no word from the server before the page says the game is paused. */
export const SERVER_SILENT_SECONDS = 5;

export const SERVER_SILENT_TEXT = 'The game is paused: the server is not answering. Your game is kept, and goes on where it was when the server is back.';

export function serverStalledText(seconds: number): string {
  return `The server stopped for ${seconds} s and is back. The game goes on where it was: the turn kept the time it had left.`;
}
