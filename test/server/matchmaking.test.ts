/** How players meet: open seats, fair roles, private codes, pools, and the scripted follower. */
import { COLORS, SHAPES, describeCard } from '../../shared/engine/cards';
import { makeConfig } from '../../shared/engine/config';
import { visibleIndices } from '../../shared/engine/view';
import { readCardRequest } from '../../shared/agents/instructions';
import { HEURISTIC_UNDERSTANDS } from '../../shared/agents/builtin';
import { matchMaker } from '@colyseus/core';
import { Client } from '@colyseus/sdk';
import { PRIVATE_CODE_LENGTH, SEAT_RESERVATION_SECONDS } from '../../server/rooms/GameRoom';
import { createPrivate, join, sleep, startTestServer, track, waitFor, type Player, type TestServer } from './harness';

jest.setTimeout(60_000);

let ts: TestServer;
beforeEach(async () => {
  ts = await startTestServer({ seed: 11, botStepMs: 5 });
});
afterEach(async () => {
  await ts.server.close();
});

const roleOf = async (player: Player): Promise<string> => {
  await waitFor(() => player.messages.some((m) => m.type === 'seat'), 'a seat');
  return player.messages.find((m) => m.type === 'seat')!.payload.role;
};

test('P-9: two players asking for the same seat wait in different games; a follower joins the first', async () => {
  const first = await join(ts.url, { role: 'leader' });
  const second = await join(ts.url, { role: 'leader' });
  expect(second.room.roomId).not.toBe(first.room.roomId);
  const follower = await join(ts.url, { role: 'follower' });
  expect(follower.room.roomId).toBe(first.room.roomId);
  await waitFor(() => first.phase === 'playing', 'the first game to start');
  expect(second.phase).toBe('waiting');
});

describe('P-20: the queue', () => {
  const queues = (player: Player) => player.messages.filter((m) => m.type === 'queue').map((m) => m.payload);
  const placeIs = (player: Player, position: number, waiting: number) =>
    waitFor(() => {
      const last = queues(player).at(-1);
      return last?.position === position && last?.waiting === waiting;
    }, `queue place ${position} of ${waiting}`);

  test('a waiting player hears its place among the games lacking the same seat, and when it moves up', async () => {
    const first = await join(ts.url, { role: 'leader' });
    const expert = await join(ts.url, { role: 'leader', pool: 'expert' });
    const { creator: lab } = await createPrivate(ts.url, { role: 'leader' });
    const withBot = await join(ts.url, { role: 'leader', botFollower: true });
    const second = await join(ts.url, { role: 'leader' });
    await placeIs(second, 2, 2);
    // The first hears of the second within a poll.
    await placeIs(first, 1, 2);
    expect(queues(first)).toEqual([
      { position: 1, waiting: 1 },
      { position: 1, waiting: 2 },
    ]);
    expect(queues(expert)).toEqual([{ position: 1, waiting: 1 }]);
    expect(queues(lab)).toEqual([{ position: 1, waiting: 1 }]);

    const follower = await join(ts.url, { role: 'follower' });
    expect(follower.room.roomId).toBe(first.room.roomId);
    await placeIs(second, 1, 1);
    // A game that has started (or never waited, with the scripted follower) stops sending it.
    await sleep(1200);
    const firstAfterStart = first.messages.slice(first.messages.findIndex((m) => m.type === 'view'));
    expect(firstAfterStart.some((m) => m.type === 'queue')).toBe(false);
    expect(queues(follower)).toEqual([]);
    expect(queues(withBot)).toEqual([]);
  });

  test('a waiting player who reconnects hears its place again', async () => {
    const { creator: leader } = await createPrivate(ts.url, { role: 'leader' });
    await placeIs(leader, 1, 1);
    leader.room.reconnection.enabled = false;
    const token = leader.room.reconnectionToken;
    leader.room.connection.close(4999, 'test drop');
    // Only a dropped seat can be reconnected to: wait until the server has seen the drop.
    await waitFor(() => matchMaker.getLocalRoomById(leader.room.roomId).clients.length === 0, 'the server to see the drop');
    const back = track(await new Client(ts.url).reconnect(token));
    await placeIs(back, 1, 1);
  });
});

test('P-4, P-19: players asking for either seat get one at random, and always meet', async () => {
  const roles = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const { creator: a, code } = await createPrivate(ts.url, { role: 'any' });
    const b = await join(ts.url, { role: 'any', code });
    expect(b.room.roomId).toBe(a.room.roomId);
    const [ra, rb] = [await roleOf(a), await roleOf(b)];
    expect(new Set([ra, rb])).toEqual(new Set(['leader', 'follower']));
    roles.add(ra);
  }
  expect(roles).toEqual(new Set(['leader', 'follower']));
});

test('P-5, P-6: quick play never lands in a private game, and pools stay apart', async () => {
  const { creator: privateLeader } = await createPrivate(ts.url, { role: 'leader' });
  const expertLeader = await join(ts.url, { role: 'leader', pool: 'expert' });
  const quick = await join(ts.url, { role: 'any' });
  expect(quick.room.roomId).not.toBe(privateLeader.room.roomId);
  expect(quick.room.roomId).not.toBe(expertLeader.room.roomId);
  const expertFollower = await join(ts.url, { role: 'any', pool: 'expert' });
  expect(expertFollower.room.roomId).toBe(expertLeader.room.roomId);
  expect(await roleOf(expertFollower)).toBe('follower');
});

describe('P-7: the scripted follower', () => {
  test('a leader who asks for it plays at once; the bot walks to a named card in its view and marks DONE', async () => {
    // Seed 2 starts the follower with a card in view whose face no other card has.
    await ts.server.close();
    ts = await startTestServer({ seed: 2, botStepMs: 5 });
    const leader = await join(ts.url, { role: 'leader', botFollower: true });
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    expect(leader.view!.cards).toHaveLength(21);
    expect(leader.view!.partnerConnected).toBe(true);
    const cards = leader.view!.cards;
    const follower = leader.view!.follower;
    const inView = new Set(visibleIndices({ width: 25, height: 25 }, { x: follower.x, y: follower.y, heading: follower.heading }, makeConfig().view));
    // A card the follower can see, and the only one with its face (the bot sees only its view).
    const target = cards.find(
      (c) => inView.has(c.y * 25 + c.x) && cards.filter((o) => o.color === c.color && o.shape === c.shape && o.count === c.count).length === 1,
    );
    expect(target).toBeDefined();
    leader.act({ type: "instruction", text: `please pick up the ${describeCard(target!)}` });
    leader.act({ type: 'endTurn' });
    await waitFor(() => leader.view!.turn.role === 'follower', 'the follower turn');
    await waitFor(() => leader.view!.turn.role === 'leader', 'the bot to finish its turn', 10_000);
    const log = ts.logs[0];
    const followerEvents = log.filter((l: any) => l.kind === 'event' && l.actor === 'follower') as any[];
    expect(followerEvents.length).toBeGreaterThan(0);
    const reached = followerEvents.some((e) => e.outcome.toggled?.includes(target!.id));
    const done = followerEvents.some((e) => e.type === 'done');
    // Either it got there and said DONE, or it ran out of its ten steps on the way.
    expect(reached ? done : followerEvents.filter((e) => e.type === 'move').length === 10).toBe(true);
    expect(log[0]).toMatchObject({ meta: { players: expect.arrayContaining([expect.objectContaining({ role: 'follower', kind: 'bot' })]) } });
  });

  test('P-116: when it marks an instruction done without doing it, the leader is told why', async () => {
    const leader = await join(ts.url, { role: 'leader', botFollower: true });
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    // A face no card on the board has: the bot cannot find it, looks around, and gives up.
    const faces = new Set(leader.view!.cards.map(describeCard));
    const missing = COLORS.flatMap((color) => SHAPES.map((shape) => describeCard({ color, shape, count: 2 }))).find((face) => !faces.has(face))!;
    leader.act({ type: 'instruction', text: 'dance a little' });
    leader.act({ type: 'instruction', text: `get the ${missing}` });
    leader.act({ type: 'endTurn' });
    const told = () => leader.messages.filter((m) => m.type === 'notice' && m.payload.kind === 'followerGaveUp').map((m) => m.payload.message);
    await waitFor(() => told().length === 2, 'the bot to give up on both instructions', 10_000);
    expect(told()).toEqual([
      `I did not understand "dance a little", so I marked it done. ${HEURISTIC_UNDERSTANDS}`,
      `I found no card with ${missing} that I could reach, even after looking around, so I marked "get the ${missing}" done. I know only the cards I have seen.`,
    ]);
    expect(leader.view!.instructions.map((instruction) => instruction.status)).toEqual(['done', 'done']);
  });

  test('only a leader can ask for it', async () => {
    await expect(join(ts.url, { role: 'follower', botFollower: true })).rejects.toThrow(/only a leader can ask for the scripted follower/);
  });

  test('a leader asking for it never joins a waiting human', async () => {
    const waiting = await join(ts.url, { role: 'follower' });
    const leader = await join(ts.url, { role: 'leader', botFollower: true });
    expect(leader.room.roomId).not.toBe(waiting.room.roomId);
  });
});

test('P-8, P-19: crowdsourcing ids are kept as given, with an opaque player id, in the log header', async () => {
  const ids = { workerId: 'A1B2C3', assignmentId: 'asg-9', hitId: 'hit 42' };
  const { creator: leader, code } = await createPrivate(ts.url, { role: 'leader', ...ids });
  await join(ts.url, { role: 'follower', code });
  await waitFor(() => leader.phase === 'playing', 'the game to start');
  const players = (ts.logs[0][0] as any).meta.players;
  expect(players).toEqual([
    { role: 'leader', playerId: expect.stringMatching(/^[0-9a-f-]{36}$/), kind: 'human', ...ids },
    { role: 'follower', playerId: expect.stringMatching(/^[0-9a-f-]{36}$/), kind: 'human' },
  ]);
  expect(players[0].playerId).toBe(leader.messages.find((m) => m.type === 'seat')!.payload.playerId);
});

test('reading a card request out of an instruction', () => {
  expect(readCardRequest('pick up the 2 red stars')).toEqual({ color: 'red', shape: 'star', count: 2, select: true });
  expect(readCardRequest('Unselect the three blue toruses!')).toEqual({ color: 'blue', shape: 'torus', count: 3, select: false });
  expect(readCardRequest('go left twice')).toBeNull();
});

describe('many players at once', () => {
  test('P-72: 50 leaders and 50 followers arriving at once make 50 games, with no refusals', async () => {
    const roles = [...Array<string>(50).fill('leader'), ...Array<string>(50).fill('follower')];
    const joins = await Promise.allSettled(roles.map((role) => join(ts.url, { role })));
    const refused = joins.filter((result) => result.status === 'rejected');
    expect(refused.map((result) => String((result as PromiseRejectedResult).reason))).toEqual([]);
    const players = joins.map((result) => (result as PromiseFulfilledResult<Player>).value);
    const games = new Map<string, string[]>();
    for (const player of players) games.set(player.room.roomId, [...(games.get(player.room.roomId) ?? []), await roleOf(player)]);
    expect(games.size).toBe(50);
    for (const seats of games.values()) expect(seats.sort()).toEqual(['follower', 'leader']);
    await waitFor(() => players.every((player) => player.phase === 'playing'), 'every game to start', 10_000);
  });
});

/** A seat reserved over HTTP, as the SDK asks for one, whose websocket never comes. */
async function reserveOnly(options: Record<string, unknown>): Promise<{ roomId: string }> {
  const res = await fetch(`${ts.url}/matchmake/joinOrCreate/cerealbar`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(options) });
  expect(res.status).toBe(200);
  return (await res.json()) as { roomId: string };
}

describe('seat reservations', () => {
  test('P-73: a reserved seat nobody connects to is free again within a few seconds', async () => {
    const leader = await join(ts.url, { role: 'leader' });
    const squatted = await reserveOnly({ role: 'follower' });
    expect(squatted.roomId).toBe(leader.room.roomId);
    // While it is reserved, a follower gets a game of its own.
    const early = await join(ts.url, { role: 'follower' });
    expect(early.room.roomId).not.toBe(leader.room.roomId);
    await early.room.leave(true);
    await sleep(SEAT_RESERVATION_SECONDS * 1000 + 300);
    const follower = await join(ts.url, { role: 'follower' });
    expect(follower.room.roomId).toBe(leader.room.roomId);
    await waitFor(() => leader.phase === 'playing', 'the game to start');
  });

  test('P-74: one worker id never holds both seats of a game: the second is refused with the reason', async () => {
    const first = await join(ts.url, { role: 'leader', workerId: 'W7' });
    await expect(join(ts.url, { role: 'follower', workerId: 'W7' })).rejects.toThrow(/worker W7 already has a seat in a game waiting for a partner/);
    const { code } = await createPrivate(ts.url, { role: 'leader', workerId: 'W8' });
    await expect(join(ts.url, { role: 'follower', code, workerId: 'W8' })).rejects.toThrow(/worker W8 already has a seat/);
    // Nothing changed: the first game still has its follower seat open, for anyone else.
    const follower = await join(ts.url, { role: 'follower', workerId: 'W9' });
    expect(follower.room.roomId).toBe(first.room.roomId);
    await waitFor(() => first.phase === 'playing', 'the game to start');
  });

  test('P-74: simultaneous requests of one worker get one seat, and the other the reason', async () => {
    const joins = await Promise.allSettled([join(ts.url, { role: 'leader', workerId: 'W5' }), join(ts.url, { role: 'follower', workerId: 'W5' })]);
    expect(joins.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(String((joins.find((result) => result.status === 'rejected') as PromiseRejectedResult).reason)).toMatch(/worker W5 already has a seat/);
  });
});

describe('private games', () => {
  const openGames = async () => (await matchMaker.query({ name: 'cerealbar' })).length;

  test('P-71, P-6, P-19: creating one returns a code from the server; the partner joins with it in any case', async () => {
    const { creator, code } = await createPrivate(ts.url, { role: 'leader' });
    expect(code).toMatch(new RegExp(`^[a-hjkmnp-z2-9]{${PRIVATE_CODE_LENGTH}}$`));
    const other = await createPrivate(ts.url, { role: 'leader' });
    expect(other.code).not.toBe(code);
    const partner = await join(ts.url, { role: 'follower', code: code.toUpperCase() });
    expect(partner.room.roomId).toBe(creator.room.roomId);
    await waitFor(() => creator.phase === 'playing', 'the game to start');
    // The partner's own seat message may land a moment after the creator sees the game start.
    await waitFor(() => partner.messages.some((m) => m.type === 'seat'), "the partner's seat");
    expect(partner.messages.find((m) => m.type === 'seat')!.payload.code).toBe(code);
  });

  test('P-11, P-6: a code no game has is an error, and makes no game', async () => {
    await createPrivate(ts.url, { role: 'leader' });
    const before = await openGames();
    await expect(join(ts.url, { role: 'follower', code: 'nosuchgame' })).rejects.toThrow(/^no game with this code$/);
    await expect(new Client(ts.url).join('cerealbar', { code: 'nosuchgame' })).rejects.toThrow(/^no game with this code$/);
    expect(await openGames()).toBe(before);
  });

  test('the code of a game that has started is no longer a way in', async () => {
    const { creator, code } = await createPrivate(ts.url, { role: 'leader' });
    await join(ts.url, { role: 'follower', code });
    await waitFor(() => creator.phase === 'playing', 'the game to start');
    await expect(join(ts.url, { role: 'any', code })).rejects.toThrow(/^no game with this code$/);
  });

  test('P-11: joining one by its room id needs its code too', async () => {
    const { creator, code } = await createPrivate(ts.url, { role: 'leader' });
    const roomId = creator.room.roomId;
    await expect(new Client(ts.url).joinById(roomId, { role: 'follower' })).rejects.toThrow(/no game with this code/);
    await expect(new Client(ts.url).joinById(roomId, { role: 'follower', code: 'wrongcode2' })).rejects.toThrow(/no game with this code/);
    await expect(new Client(ts.url).joinById(roomId, { role: 'follower', private: true })).rejects.toThrow(/no game with this code/);
    const partner = track(await new Client(ts.url).joinById(roomId, { role: 'follower', code }));
    await waitFor(() => creator.phase === 'playing' && partner.phase === 'playing', 'the game to start');
  });

  test('P-71: a new private game takes no code of the player\'s choosing', async () => {
    await expect(join(ts.url, { private: true, code: 'mine' })).rejects.toThrow(/bad join option code: a new private game gets its code from the server/);
  });
});
