/**
 * The sentences of a study's pages that depend on its games: who the partner is (on the rules and
 * play pages, and while the page takes its seat), and what the leader may do during the
 * follower's turn (the rules options the study's games are played by). Pure, so that they can be
 * tested without a page.
 */
import type { PublicStudy } from '../../../shared/study/studyFile';

type StudyGame = PublicStudy['game'];

/** The first sentence: another person in a study of pairs; a partner (never named) in a study of agents. */
export function partnerSentence(game: StudyGame): string {
  return game.partnerIsPerson ? 'You play a game with another person, over the internet.' : 'You play a game with a partner, over the internet.';
}

/** How the game starts once the worker asks for one: with arms at once (P-143), else when another participant comes. */
export function gameStartSentence(game: StudyGame): string {
  return game.partnerIsPerson ? 'Keep this page open: the game starts by itself when your partner arrives.' : 'Keep this page open: the game starts by itself in a moment.';
}

/** What the leader may do while the follower plays, or null when the games have neither option. */
export function leaderInterjections(game: StudyGame): string | null {
  const feedback = game.liveFeedback ? 'tell the follower "Good" or "Not that" as it moves' : null;
  const cancel = game.cancelInstructions ? "cancel the follower's instructions, which ends the follower's turn" : null;
  const both = [feedback, cancel].filter((part): part is string => part !== null);
  return both.length === 0 ? null : `While the follower plays, the leader may ${both.join(', or ')}.`;
}

/** The same, from the follower's side, or null. */
export function followerHears(game: StudyGame): string | null {
  const parts = [
    game.liveFeedback ? 'the leader may tell you "Good" or "Not that" (you see a thumb up or down)' : null,
    game.cancelInstructions ? 'the leader may cancel its instructions, which ends your turn' : null,
  ].filter((part): part is string => part !== null);
  return parts.length === 0 ? null : `While you move, ${parts.join(', and ')}.`;
}
