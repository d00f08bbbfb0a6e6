/** The sentences of a study's rules page that follow its games: the partner, and the leader's options. */
import { followerHears, leaderInterjections, partnerSentence } from '../../client/src/study/rulesWords';

const game = (changes: Partial<{ partnerIsPerson: boolean; liveFeedback: boolean; cancelInstructions: boolean }> = {}) => ({
  partnerIsPerson: true,
  liveFeedback: false,
  cancelInstructions: false,
  ...changes,
});

test('a study of pairs says the partner is another person; a study of agents names no one', () => {
  expect(partnerSentence(game())).toBe('You play a game with another person, over the internet.');
  expect(partnerSentence(game({ partnerIsPerson: false }))).toBe('You play a game with a partner, over the internet.');
});

test("the leader's options are told to both roles as the games have them, and not at all without them", () => {
  expect(leaderInterjections(game())).toBeNull();
  expect(followerHears(game())).toBeNull();
  expect(leaderInterjections(game({ liveFeedback: true }))).toBe('While the follower plays, the leader may tell the follower "Good" or "Not that" as it moves.');
  expect(followerHears(game({ liveFeedback: true }))).toBe('While you move, the leader may tell you "Good" or "Not that" (you see a thumb up or down).');
  expect(leaderInterjections(game({ cancelInstructions: true }))).toBe("While the follower plays, the leader may cancel the follower's instructions, which ends the follower's turn.");
  expect(followerHears(game({ liveFeedback: true, cancelInstructions: true }))).toBe(
    'While you move, the leader may tell you "Good" or "Not that" (you see a thumb up or down), and the leader may cancel its instructions, which ends your turn.',
  );
  expect(leaderInterjections(game({ liveFeedback: true, cancelInstructions: true }))).toContain('"Not that" as it moves, or cancel');
});
