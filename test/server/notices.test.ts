/**
 * P-24: every `notice` the server sends is one of the protocol's (noticeSchema), with no field
 * beyond its kind's. Games over real WebSockets give each kind, and every notice their players
 * receive parses as itself; the last test checks that every kind was seen.
 */
import { Client } from '@colyseus/sdk';
import { makeConfig } from '../../shared/engine/config';
import { MAX_MESSAGES_PER_SECOND, noticeSchema } from '../../shared/protocol/messages';
import { AgentRunStopped, type FollowerAgent } from '../../shared/agents/types';
import { STALL_MS } from '../../server/processStalls';
import type { SeatAgentStarter } from '../../server/rooms/seatAgents';
import { join, serversForEachTest, startGame, track, waitFor, type Player } from './harness';

jest.setTimeout(30_000);

const serve = serversForEachTest();

/** Every notice the players of the tests below received, in order. */
const received: { kind: string }[] = [];
const noticesOf = (player: Player): { kind: string }[] => player.messages.filter((m) => m.type === 'notice').map((m) => m.payload);
const told = (player: Player, kind: string) => noticesOf(player).some((notice) => notice.kind === kind);

/** The players' notices each parse as themselves; they are kept for the last test. */
function keep(...players: Player[]): void {
  for (const notice of players.flatMap(noticesOf)) {
    expect(noticeSchema.parse(notice)).toEqual(notice);
    received.push(notice);
  }
}

test("a game of two people: the leader's feedback and cancel, a partner who drops, comes back and leaves, the game's end", async () => {
  const ts = await serve({ seed: 3, reconnectSeconds: 5, config: makeConfig({ liveFeedback: true, cancelInstructions: true }) });
  const { leader, follower } = await startGame(ts.url);
  leader.act({ type: 'instruction', text: 'first' });
  leader.act({ type: 'instruction', text: 'second' });
  leader.act({ type: 'endTurn' });
  await waitFor(() => follower.view!.turn.role === 'follower', 'the follower turn');
  follower.act({ type: 'move', move: follower.view!.legal.moves[0] });
  await waitFor(() => follower.view!.turn.stepsLeft! < follower.view!.config.followerSteps, "the follower's step");
  leader.act({ type: 'feedback', signal: 'positive' });
  await waitFor(() => told(follower, 'feedback'), 'the feedback notice');
  leader.act({ type: 'cancel' });
  await waitFor(() => told(follower, 'cancelled'), 'the cancelled notice');

  follower.room.reconnection.enabled = false;
  const token = follower.room.reconnectionToken;
  follower.room.connection.close(4999, 'test drop');
  await waitFor(() => told(leader, 'partnerDisconnected'), 'the leader to hear of the drop');
  const back = track(await new Client(ts.url).reconnect(token));
  await waitFor(() => told(leader, 'partnerReconnected'), 'the leader to hear of the return');
  await back.room.leave(true);
  await waitFor(() => told(leader, 'partnerLeft') && told(leader, 'gameOver'), 'the leader to hear that the follower left and the game is over');
  keep(leader, follower, back);
});

test("a turn that runs out, and the follower's turn skipped", async () => {
  const ts = await serve({ seed: 3, leaderTurnSeconds: 1 });
  const { leader, follower } = await startGame(ts.url);
  await waitFor(() => told(leader, 'timeout') && told(follower, 'turnSkipped'), "the leader's turn to run out", 5000);
  keep(leader, follower);
});

test('a partner the server closed for breaking its rate limit', async () => {
  const ts = await serve({ seed: 3 });
  const { leader, follower } = await startGame(ts.url);
  for (let i = 0; i < MAX_MESSAGES_PER_SECOND + 50; i++) leader.act({ type: 'endTurn' }); // refused: the queue is empty
  await waitFor(() => told(follower, 'gameOver'), 'the follower to hear the game is over');
  expect(noticesOf(follower).find((notice) => notice.kind === 'partnerLeft')).toMatchObject({ reason: 'RATE_LIMITED' });
  keep(follower);
});

test('the scripted follower giving up on an instruction', async () => {
  const ts = await serve({ seed: 2, botStepMs: 5 });
  const leader = await join(ts.url, { role: 'leader', botFollower: true });
  await waitFor(() => leader.phase === 'playing', 'the game to start');
  leader.act({ type: 'instruction', text: 'dance a little' });
  leader.act({ type: 'endTurn' });
  await waitFor(() => told(leader, 'followerGaveUp'), 'the follower to give up', 10_000);
  keep(leader);
});

test('P-150: an agent that stops for the rest of the game', async () => {
  // A follower whose run has stopped (as the LLM agent's once the server's budget is spent).
  const stopped: SeatAgentStarter = async () => ({
    role: 'follower',
    identity: { name: 'stopped', spec: 'test' },
    agent: {
      name: 'stopped',
      reset() {},
      act(): never {
        throw new AgentRunStopped('the budget is spent');
      },
    } as FollowerAgent,
  });
  const ts = await serve({ seed: 2, botStepMs: 5 }, undefined, stopped);
  const leader = await join(ts.url, { role: 'leader', botFollower: true });
  await waitFor(() => leader.phase === 'playing', 'the game to start');
  leader.act({ type: 'instruction', text: 'go' });
  leader.act({ type: 'endTurn' });
  await waitFor(() => told(leader, 'agentStopped'), 'the leader to hear that its agent stopped', 10_000);
  keep(leader);
});

test('P-154: a stall of the server process: both players are told once it runs again', async () => {
  const ts = await serve({ seed: 3 });
  const { leader, follower } = await startGame(ts.url);
  // The server runs in this process: nothing runs while it is blocked, as in a stop.
  const until = Date.now() + STALL_MS + 1000;
  while (Date.now() < until); // eslint-disable-line no-empty
  await waitFor(() => told(leader, 'serverStalled') && told(follower, 'serverStalled'), 'both players to hear of the stall');
  const stall = leader.messages.find((m) => m.type === 'notice' && m.payload.kind === 'serverStalled')!.payload as { seconds: number };
  const { seconds } = stall;
  expect(seconds).toBeGreaterThanOrEqual(6);
  expect(seconds).toBeLessThanOrEqual(8);
  keep(leader, follower);
});

test('the tests above received every kind of notice', () => {
  const kinds = noticeSchema.options.map((option) => option.shape.kind.value);
  expect(new Set(received.map((notice) => notice.kind))).toEqual(new Set(kinds));
});
