/**
 * The leader's live feedback and cancel over real WebSockets (protocol P-120 to P-124): what the
 * server accepts, whom it tells, what it refuses and that the log replays.
 */
import { makeConfig, type GameConfigInput } from '../../shared/engine/config';
import type { LogEvent } from '../../shared/log/format';
import { replay } from '../../shared/log/replay';
import { serversForEachTest, startGame, waitFor, type Player } from './harness';

const serve = serversForEachTest();

/** A game with `options` in its config, in the follower's turn with two instructions queued, after one follower move. */
async function followerTurn(options: GameConfigInput) {
  const server = await serve({ seed: 7, config: makeConfig(options) });
  const { leader, follower } = await startGame(server.url);
  leader.act({ type: 'instruction', text: 'go to the red star' });
  leader.act({ type: 'instruction', text: 'then the blue heart' });
  leader.act({ type: 'endTurn' });
  await waitFor(() => follower.view?.turn.role === 'follower' && follower.view.legal.moves.length > 0, "the follower's turn");
  const move = follower.view!.legal.moves.find((m) => m === 'RL')!;
  follower.act({ type: 'move', move });
  await waitFor(() => follower.view?.turn.stepsLeft === 9, "the follower's move");
  return { server, leader, follower };
}

const notices = (player: Player, kind: string) => player.messages.filter((m) => m.type === 'notice' && m.payload.kind === kind).map((m) => m.payload);
const events = (text: string): LogEvent[] => text.split('\n').filter(Boolean).map((line) => JSON.parse(line)).filter((line) => line.kind === 'event');

describe('P-120: live feedback', () => {
  test('from the leader in the follower\'s turn reaches both players at once and the log, and changes no view', async () => {
    const { server, leader, follower } = await followerTurn({ liveFeedback: true });
    expect(leader.view!.legal.feedback).toBe(true);
    expect(follower.view!.legal.feedback).toBe(false);
    const followerViews = follower.messages.filter((m) => m.type === 'view').length;
    leader.act({ type: 'feedback', signal: 'negative' });
    await waitFor(() => notices(follower, 'feedback').length === 1 && notices(leader, 'feedback').length === 1, 'the feedback notices');
    expect(notices(follower, 'feedback')).toEqual([{ kind: 'feedback', signal: 'negative', afterStep: 1 }]);
    expect(notices(leader, 'feedback')).toEqual([{ kind: 'feedback', signal: 'negative', afterStep: 1 }]);
    leader.act({ type: 'feedback', signal: 'positive' });
    await waitFor(() => notices(follower, 'feedback').length === 2, 'the second signal');
    expect(follower.messages.filter((m) => m.type === 'view').length).toBe(followerViews);
    const logged = events(server.logText()).filter((event) => event.type === 'feedback');
    expect(logged.map((event) => [event.actor, event.payload, event.outcome.feedback])).toEqual([
      ['leader', { signal: 'negative' }, { signal: 'negative', instruction: 0 }],
      ['leader', { signal: 'positive' }, { signal: 'positive', instruction: 0 }],
    ]);
    expect(leader.errors()).toEqual([]);
  });
});

describe('P-121: refused feedback and cancel', () => {
  test('with the options off: FEEDBACK_OFF and CANCEL_OFF', async () => {
    const { leader } = await followerTurn({});
    expect(leader.view!.legal).toMatchObject({ feedback: false, cancel: false });
    leader.act({ type: 'feedback', signal: 'positive' });
    leader.act({ type: 'cancel' });
    await waitFor(() => leader.errors().length === 2, 'the refusals with the options off');
    expect(leader.errors().map((e) => [e.code, e.refused])).toEqual([
      ['FEEDBACK_OFF', 'action'],
      ['CANCEL_OFF', 'action'],
    ]);
  });

  test("from the follower, with a bad signal, or in the leader's turn: the documented code, and nothing changes", async () => {
    const { server, leader, follower } = await followerTurn({ liveFeedback: true, cancelInstructions: true });
    follower.act({ type: 'feedback', signal: 'positive' });
    follower.act({ type: 'cancel' });
    await waitFor(() => follower.errors().length === 2, "the follower's refusals");
    expect(follower.errors().map((e) => e.code)).toEqual(['FOLLOWER_CANNOT_GIVE_FEEDBACK', 'FOLLOWER_CANNOT_CANCEL']);
    leader.act({ type: 'feedback', signal: 'meh' } as never);
    leader.act({ type: 'feedback' } as never);
    await waitFor(() => leader.errors().length === 2, 'the malformed signals');
    expect(leader.errors().map((e) => e.code)).toEqual(['BAD_MESSAGE', 'BAD_MESSAGE']);
    expect(leader.errors()[0].message).toMatch(/signal/);
    // The follower's turn ends; in the leader's turn neither is legal.
    for (let i = 0; i < 9; i++) follower.act({ type: 'move', move: i % 2 ? 'RL' : 'RR' });
    await waitFor(() => leader.view?.turn.role === 'leader', "the leader's turn");
    expect(leader.view!.legal).toMatchObject({ feedback: false, cancel: false });
    leader.act({ type: 'feedback', signal: 'positive' });
    leader.act({ type: 'cancel' });
    await waitFor(() => leader.errors().length === 4, "the refusals in the leader's turn");
    expect(leader.errors().slice(2).map((e) => e.code)).toEqual(['NOT_FOLLOWER_TURN', 'NOT_FOLLOWER_TURN']);
    expect(events(server.logText()).some((event) => event.type === 'feedback' || event.type === 'cancel')).toBe(false);
    expect(notices(follower, 'feedback')).toEqual([]);
  });
});

describe('P-122: cancel', () => {
  test("ends the follower's turn with its instructions cancelled in both views, tells both, and the log replays", async () => {
    const { server, leader, follower } = await followerTurn({ cancelInstructions: true });
    expect(leader.view!.legal.cancel).toBe(true);
    const turnsLeft = leader.view!.turnsLeft;
    leader.act({ type: 'cancel' });
    await waitFor(() => leader.view?.turn.role === 'leader' && follower.view?.turn.role === 'leader', "the leader's turn after the cancel");
    expect(notices(follower, 'cancelled')).toEqual([{ kind: 'cancelled' }]);
    expect(notices(leader, 'cancelled')).toEqual([{ kind: 'cancelled' }]);
    expect(leader.view!.turnsLeft).toBe(turnsLeft - 1);
    expect(leader.view!.instructions.map((i) => [i.text, i.status])).toEqual([
      ['go to the red star', 'cancelled'],
      ['then the blue heart', 'cancelled'],
    ]);
    expect(follower.view!.instructions.map((i) => [i.text, i.status])).toEqual([['go to the red star', 'cancelled']]);
    expect(JSON.stringify(follower.messages)).not.toContain('then the blue heart');
    const cancel = events(server.logText()).find((event) => event.type === 'cancel')!;
    expect(cancel.outcome).toMatchObject({ cancelled: [0, 1], turnEnded: { reason: 'cancelled' } });
    const replayed = replay(server.logText(), { allowOpen: true });
    expect(replayed.final.cancelled.map((i) => i.id)).toEqual([0, 1]);
  });
});
