/**
 * What a hostile client meets at the transport: a frame limit that agrees with the instruction
 * limit, a message rate limit that ends only the sender's game and says why, and log output that
 * its frames cannot flood.
 */
import { makeConfig } from '../../shared/engine/config';
import { MAX_INSTRUCTION_TEXT } from '../../shared/engine/actions';
import { CLOSE_BAD_FRAME, CLOSE_FRAME_TOO_LARGE, CLOSE_RATE_LIMITED, MAX_FRAME_BYTES, MAX_MESSAGES_PER_SECOND } from '../../shared/protocol/messages';
import { serversForEachTest, sleep, startGame, waitFor, type Player, type TestServer } from './harness';

jest.setTimeout(30_000);

const serve = serversForEachTest();
afterEach(() => jest.restoreAllMocks());

/** The player's raw WebSocket, to send frames the SDK would not. */
const socketOf = (player: Player): { send(data: Uint8Array): void } => (player.room as any).connection.transport.ws;

function closeOf(player: Player): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => player.room.onLeave((code, reason) => resolve({ code, reason: reason ?? '' })));
}

const notices = (player: Player) => player.messages.filter((m) => m.type === 'notice').map((m) => m.payload);

/** The partner is told who left and why, then that the game is over; the log holds no event and ends as abandoned. */
async function expectEndedFor(partner: Player, ts: TestServer, reason: string): Promise<void> {
  await waitFor(() => notices(partner).some((n) => n.kind === 'gameOver'), 'the partner to hear the game is over');
  expect(notices(partner)).toEqual([
    { kind: 'partnerLeft', reason, message: expect.stringMatching(/.{10}/) },
    { kind: 'gameOver', reason: 'abandoned', score: 0 },
  ]);
  expect(partner.phase).toBe('ended');
  expect(ts.logs[0].map((line) => line.kind)).toEqual(['header', 'end']);
}

describe('P-75: the frame limit and the instruction limit agree', () => {
  test('R-43: the longest text that fits in a frame is answered INSTRUCTION_TOO_LONG, not a closed socket', async () => {
    expect(MAX_INSTRUCTION_TEXT).toBeGreaterThanOrEqual(MAX_FRAME_BYTES); // every UTF-16 unit takes a byte or more
    const ts = await serve({ seed: 3 });
    const { leader } = await startGame(ts.url);
    for (const text of ['x'.repeat(5000), 'x'.repeat(MAX_FRAME_BYTES - 64), 'é'.repeat((MAX_FRAME_BYTES - 64) / 2)]) {
      const errors = leader.errors().length;
      leader.act({ type: 'instruction', text });
      await waitFor(() => leader.errors().length > errors, `an answer to ${text.length} characters`);
      expect(leader.errors()[errors]).toMatchObject({ code: 'INSTRUCTION_TOO_LONG', refused: 'action' });
    }
    expect(ts.logs[0]).toHaveLength(1);
  });

  test('R-43: the longest instruction a config allows, in the widest characters (4 bytes each), fits in a frame', async () => {
    const wide = await serve({ seed: 3, config: makeConfig({ maxInstructionLength: 10_000 }) });
    const game = await startGame(wide.url);
    game.leader.act({ type: 'instruction', text: '🙂'.repeat(10_000) });
    await waitFor(() => game.leader.view!.instructions.length === 1, 'the instruction to be queued');
    expect(game.leader.errors()).toEqual([]);
  });

  test('P-78: a frame over the limit closes the sender with 1009 (Message Too Big); the partner is told the game ended', async () => {
    const ts = await serve({ seed: 3 });
    const { leader, follower } = await startGame(ts.url);
    const closed = closeOf(leader);
    socketOf(leader).send(new Uint8Array(MAX_FRAME_BYTES + 1));
    expect((await closed).code).toBe(CLOSE_FRAME_TOO_LARGE);
    await expectEndedFor(follower, ts, 'FRAME_TOO_LARGE');
  });
});

describe('P-76: the message rate limit', () => {
  test(`P-78: more than ${MAX_MESSAGES_PER_SECOND} frames in a second close the sender with 1008 and a reason; the partner is told the game ended`, async () => {
    const ts = await serve({ seed: 3 });
    const { leader, follower } = await startGame(ts.url);
    const closed = closeOf(leader);
    for (let i = 0; i < MAX_MESSAGES_PER_SECOND + 50; i++) leader.act({ type: 'endTurn' }); // refused: the queue is empty
    expect(await closed).toEqual({ code: CLOSE_RATE_LIMITED, reason: `RATE_LIMITED: more than ${MAX_MESSAGES_PER_SECOND} messages in a second` });
    await expectEndedFor(follower, ts, 'RATE_LIMITED');
  });

  test('a player at the limit plays on', async () => {
    const ts = await serve({ seed: 3 });
    const { leader } = await startGame(ts.url);
    for (let i = 0; i < MAX_MESSAGES_PER_SECOND - 5; i++) leader.act({ type: 'endTurn' });
    await waitFor(() => leader.errors().length === MAX_MESSAGES_PER_SECOND - 5, 'every refusal');
    await sleep(1000);
    leader.act({ type: 'instruction', text: 'go' });
    await waitFor(() => leader.view!.instructions.length === 1, 'the instruction to be queued');
    expect(leader.phase).toBe('playing');
  });
});

test('P-77, P-78: an undecodable frame closes the sender with 1007 and a reason; the partner is told the game ended', async () => {
  const ts = await serve({ seed: 3 });
  const { leader, follower } = await startGame(ts.url);
  const closed = closeOf(leader);
  socketOf(leader).send(new Uint8Array([13, 0xa6, ...Buffer.from('action'), 0xdb, 0xff, 0xff, 0xff, 0xff]));
  expect(await closed).toEqual({ code: CLOSE_BAD_FRAME, reason: 'BAD_FRAME: a frame that is not a well-formed message' });
  await expectEndedFor(follower, ts, 'BAD_FRAME');
});

test('P-79: undecodable frames cannot flood the server log: a few entries per connection, each cut short', async () => {
  const written: string[] = [];
  for (const level of ['error', 'warn', 'info', 'debug', 'trace'] as const) {
    jest.spyOn(console, level).mockImplementation((...args: unknown[]) => void written.push(args.join(' ')));
  }
  const ts = await serve({ seed: 3 });
  const { leader } = await startGame(ts.url);
  const closed = closeOf(leader);
  // An action message whose MessagePack body is cut off, 50 times before the server can close.
  const garbage = new Uint8Array([13, 0xa6, ...Buffer.from('action'), 0xdb, 0xff, 0xff, 0xff, 0xff]);
  for (let i = 0; i < 50; i++) socketOf(leader).send(garbage);
  await closed;
  await sleep(200);
  expect(written.filter((entry) => /MessagePack/.test(entry)).length).toBeGreaterThan(0);
  expect(written.length).toBeLessThanOrEqual(5);
  for (const entry of written) expect(entry.length).toBeLessThanOrEqual(2001);
});
