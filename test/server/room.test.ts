/**
 * The game room through real websocket clients (@colyseus/sdk) on a real server: whole games,
 * timers, reconnection, hidden information and every kind of bad message.
 */
import { makeConfig } from '../../shared/engine/config';
import type { GameState } from '../../shared/engine/state';
import { isVisible, visibleIndices } from '../../shared/engine/view';
import type { LogEvent } from '../../shared/log/format';
import { replay } from '../../shared/log/replay';
import { Client } from '@colyseus/sdk';
import { createPrivate, join, serversForEachTest, sleep, startGame, track, waitFor, type Player, type TestServer } from './harness';
import { pickSelfPlayGame, send } from './selfPlayGames';

jest.setTimeout(60_000);

const config = makeConfig();
const serve = serversForEachTest();

/**
 * Collects everything in the follower's views that the follower may not know. Given the true
 * states of the game (`truth`), it also checks the leader's avatar: the follower may see the
 * leader only in a pose in which it really was inside the follower's view.
 */
function watchFollowerSecrets(follower: Player, truth?: GameState[]): { views: number; leaderInView: number; violations: string[] } {
  const report = { views: 0, leaderInView: 0, violations: [] as string[] };
  follower.onView((view) => {
    report.views += 1;
    const visible = new Set(visibleIndices({ width: 25, height: 25 }, view.follower, config.view));
    for (const card of view.cards) {
      if (!visible.has(card.y * 25 + card.x)) report.violations.push(`card ${card.id} at (${card.x}, ${card.y}) outside the view`);
    }
    if (view.leader) {
      report.leaderInView += 1;
      if (!visible.has(view.leader.y * 25 + view.leader.x)) report.violations.push(`the leader at (${view.leader.x}, ${view.leader.y}) outside the view`);
      const held = view.leader;
      if (truth && !truth.some((s) => s.leader.x === held.x && s.leader.y === held.y && s.leader.heading === held.heading && isVisible({ width: 25, height: 25 }, s.follower, config.view, s.leader))) {
        report.violations.push(`the leader at ${JSON.stringify(held)}, never seen there`);
      }
    }
    for (const instruction of view.instructions) {
      if (instruction.status === 'queued') report.violations.push(`queued instruction ${instruction.id}`);
      if (!instruction.shown) report.violations.push(`unshown instruction ${instruction.id}`);
    }
    if (view.invalidCards.length > 0) report.violations.push('invalid-selection marks');
    if (view.turn.role === 'leader' && view.turn.stepsLeft !== null) report.violations.push("the leader's steps");
    const mapKeys = Object.keys(view.map).sort().join(',');
    if (mapKeys !== 'height,props,terrain,width') report.violations.push(`map fields ${mapKeys}`);
    view.map.props.forEach((prop) => {
      if (view.map.terrain[prop.y][prop.x] === '?') report.violations.push(`a prop on an unseen cell (${prop.x}, ${prop.y})`);
    });
  });
  return report;
}

/** How many actions the server has logged for its first game. */
const eventsLogged = (ts: TestServer): number => (ts.logs[0] ?? []).filter((line) => line.kind === 'event').length;

const withoutTime = (e: LogEvent) => ({ ...e, t: 0 });

describe('a whole game over the network', () => {
  test('P-40, P-41, P-43, P-45, P-47, P-48, P-30: two clients replay a self-play game action by action: the server logs exactly the same game, and each view keeps its promises', async () => {
    const { seed, events, truth } = pickSelfPlayGame();
    const ts = await serve({ seed, leaderTurnSeconds: 2, followerTurnSeconds: 2 });
    const { leader, follower } = await startGame(ts.url);
    const secrets = watchFollowerSecrets(follower, truth);
    // The leader's red marks, worked out from the faces of the selected cards it is sent.
    let invalidSelections = 0;
    leader.onView((view) => {
      const selected = view.cards.filter((card) => card.selected);
      const alike = selected.some((a, i) => selected.slice(i + 1).some((b) => a.color === b.color || a.shape === b.shape || a.count === b.count));
      const expected = selected.length > 3 || alike ? selected.map((card) => card.id).sort((a, b) => a - b) : [];
      if (expected.length > 0) invalidSelections += 1;
      expect(view.invalidCards).toEqual(expected);
    });
    for (const event of events) {
      // Under the room's limit of 100 messages a second (Colyseus drops the rest).
      await sleep(12);
      if (event.actor !== 'server') send(event.actor === 'leader' ? leader : follower, event);
      await waitFor(() => eventsLogged(ts) >= event.seq, `event ${event.seq} (${event.type} by ${event.actor})`);
      expect(leader.errors().concat(follower.errors())).toEqual([]);
    }
    await waitFor(() => leader.phase === 'ended' && follower.phase === 'ended', `the game to end (${leader.phase}, ${follower.phase}, ${JSON.stringify(follower.messages.slice(-3))})`);

    const logged = ts.logs[0].filter((l): l is LogEvent => l.kind === 'event');
    expect(logged.map(withoutTime)).toEqual(events.map(withoutTime));
    const result = replay(ts.logText());
    expect(result.final.gameOver).toBe(true);
    expect(result.end?.reason).toBe('turns-exhausted');
    expect(result.final.score).toBeGreaterThanOrEqual(3);
    expect(leader.view!.score).toBe(result.final.score);
    await waitFor(() => follower.view!.endReason === 'turns-exhausted', 'the end reason');
    for (const player of [leader, follower]) {
      expect(player.messages.filter((m) => m.type === 'notice' && m.payload.kind === 'gameOver').map((m) => m.payload)).toEqual([
        { kind: 'gameOver', reason: 'turns-exhausted', score: result.final.score },
      ]);
    }
    expect(invalidSelections).toBeGreaterThan(0);
    expect(follower.messages.some((m) => m.type === 'notice' && m.payload.kind === 'turnSkipped')).toBe(true);

    expect(secrets.views).toBeGreaterThan(100);
    expect(secrets.leaderInView).toBeGreaterThan(0);
    expect(secrets.violations).toEqual([]);
  });
});

describe('hidden information', () => {
  test('P-48, P-15, P-16: an instruction reaches the follower only when its turn begins, and queued ones never', async () => {
    const ts = await serve({ seed: 3 });
    const { leader, follower } = await startGame(ts.url);
    leader.act({ type: 'instruction', text: 'first' });
    leader.act({ type: 'instruction', text: 'second' });
    await waitFor(() => leader.view!.instructions.length === 2, 'the leader to see both instructions');
    await sleep(50);
    expect(leader.view!.instructions.map((i) => [i.text, i.status, i.shown])).toEqual([
      ['first', 'current', false],
      ['second', 'queued', false],
    ]);
    expect(follower.view!.instructions).toEqual([]);

    leader.act({ type: 'endTurn' });
    await waitFor(() => follower.view!.instructions.length === 1, 'the follower to see the current instruction');
    expect(follower.view!.instructions.map((i) => i.text)).toEqual(['first']);
    follower.act({ type: 'done' });
    await waitFor(() => follower.view!.instructions.length === 2, 'the follower to see previous and current');
    expect(follower.view!.instructions.map((i) => [i.text, i.status])).toEqual([
      ['first', 'done'],
      ['second', 'current'],
    ]);
  });

  test('P-45: the follower receives only the cards inside its view; the leader receives all of them', async () => {
    const ts = await serve({ seed: 7 });
    const { leader, follower } = await startGame(ts.url);
    await sleep(50);
    expect(leader.view!.cards).toHaveLength(21);
    const visible = new Set(visibleIndices({ width: 25, height: 25 }, follower.view!.follower, config.view));
    const expected = leader.view!.cards.filter((c) => visible.has(c.y * 25 + c.x)).map((c) => c.id);
    expect(follower.view!.cards.map((c) => c.id).sort()).toEqual(expected.sort());
  });
});

describe('turn timers', () => {
  test('P-51, P-56, P-25, P-26: the deadline is in the state; a leader timeout with an empty queue skips the follower turn', async () => {
    const ts = await serve({ seed: 2, leaderTurnSeconds: 0.4 });
    const before = Date.now();
    const { leader, follower } = await startGame(ts.url);
    expect(leader.view!.turnDeadline).toBeGreaterThanOrEqual(before + 300);
    expect(leader.view!.turnDeadline).toBeLessThanOrEqual(Date.now() + 400);
    await waitFor(() => leader.view!.turnsLeft === 5, 'the leader turn to time out');
    expect(leader.view!.turn.role).toBe('leader');
    expect(follower.messages.some((m) => m.type === 'notice' && m.payload.kind === 'turnSkipped')).toBe(true);
    expect(leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'turnSkipped')).toBe(false);
    for (const player of [leader, follower]) {
      expect(player.messages.some((m) => m.type === 'notice' && m.payload.kind === 'timeout' && m.payload.role === 'leader')).toBe(true);
    }
    const timeout = ts.logs[0].find((l): l is LogEvent => l.kind === 'event' && l.type === 'timeout')!;
    expect(timeout.outcome.turnEnded).toEqual({ reason: 'timeout', followerSkipped: true });
  });

  test("P-22, P-55: view messages carry the server's clock, to count down to the deadline on a skewed clock", async () => {
    const ts = await serve({ seed: 2 });
    const before = Date.now();
    const { leader, follower } = await startGame(ts.url);
    for (const player of [leader, follower]) {
      const first = player.messages.find((m) => m.type === 'view')!.payload;
      expect(first.full).toBe(true);
      expect(first.changes.map.width).toBe(25);
      expect(first.changes.config).toEqual(config);
      expect(first.changes.config.turnSeconds).toEqual({ leader: 45, follower: 15 });
      expect(first.serverNow).toBeGreaterThanOrEqual(before);
      expect(first.serverNow).toBeLessThanOrEqual(Date.now());
      // The first turn's clock starts just before the first view is sent.
      expect(first.changes.turnDeadline - first.serverNow).toBeGreaterThan(44_000);
      expect(first.changes.turnDeadline - first.serverNow).toBeLessThanOrEqual(45_000);
    }
  });

  test('P-26, P-56: a follower timeout hands control back to the leader', async () => {
    const ts = await serve({ seed: 2, followerTurnSeconds: 0.3 });
    const { leader, follower } = await startGame(ts.url);
    leader.act({ type: 'instruction', text: 'go' });
    leader.act({ type: 'endTurn' });
    await waitFor(() => follower.view!.turn.role === 'follower', 'the follower turn');
    follower.act({ type: 'move', move: 'RL' });
    await waitFor(() => leader.view!.turn.role === 'leader', 'the follower turn to time out', 3000);
    expect(leader.view!.turnsLeft).toBe(5);
    expect(leader.view!.turn.stepsLeft).toBe(5);
    expect(leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'timeout' && m.payload.role === 'follower')).toBe(true);
  });
});

describe('bad messages get a specific error and change nothing', () => {
  test('P-12, P-13, P-23, P-31, P-35, P-36: each kind of bad message', async () => {
    const ts = await serve({ seed: 4, leaderSteps: undefined } as never);
    const { leader, follower } = await startGame(ts.url);
    const cases: [Player, string, unknown, string][] = [
      [leader, 'fly', {}, 'UNKNOWN_MESSAGE'],
      [leader, 'move', { move: 'MF' }, 'UNKNOWN_MESSAGE'],
      [leader, 'action', { type: 'move', move: 'JUMP' }, 'BAD_MESSAGE'],
      [leader, 'action', 'MF', 'BAD_MESSAGE'],
      [leader, 'action', { type: 'move', move: 'MF', extra: 1 }, 'BAD_MESSAGE'],
      [leader, 'action', { type: 'jump' }, 'BAD_MESSAGE'],
      [leader, 'action', { type: 'instruction', text: 42 }, 'BAD_MESSAGE'],
      [leader, 'action', { type: 'instruction', text: 'x'.repeat(301) }, 'INSTRUCTION_TOO_LONG'],
      [leader, 'action', { type: 'instruction', text: ' \u0000\u0007 \n ' }, 'EMPTY_INSTRUCTION'],
      [leader, 'action', { type: 'endTurn' }, 'EMPTY_QUEUE'],
      [leader, 'action', { type: 'done' }, 'LEADER_CANNOT_MARK_DONE'],
      [follower, 'action', { type: 'instruction', text: 'hi' }, 'FOLLOWER_CANNOT_INSTRUCT'],
      [follower, 'action', { type: 'endTurn' }, 'FOLLOWER_CANNOT_END_TURN'],
      [follower, 'action', { type: 'move', move: 'MF' }, 'NOT_YOUR_TURN'],
      [follower, 'action', { type: 'done' }, 'NOT_YOUR_TURN'],
    ];
    for (const [player, type, payload, code] of cases) {
      const errors = player.errors().length;
      player.room.send(type, payload as never);
      await waitFor(() => player.errors().length > errors, `an error for ${type} ${JSON.stringify(payload)}`);
      expect(player.errors()[errors]).toMatchObject({ code, refused: type });
      expect(player.errors()[errors].message.length).toBeGreaterThan(10);
    }
    expect(eventsLogged(ts)).toBe(0);
    expect(ts.logs[0]).toHaveLength(1);

    // The room still runs: the leader can play, and runs out of steps.
    for (let i = 0; i < 5; i++) leader.act({ type: 'move', move: 'RL' });
    await waitFor(() => leader.view!.turn.stepsLeft === 0, 'five leader steps');
    leader.act({ type: 'move', move: 'RL' });
    await waitFor(() => leader.errors().some((e) => e.code === 'NO_STEPS_LEFT'), 'NO_STEPS_LEFT');
    expect(eventsLogged(ts)).toBe(5);
  });

  test('P-33, P-34, P-58, P-50, P-51, P-53: before the partner joins, and after the game ended', async () => {
    const ts = await serve({ seed: 4 });
    const leader = await join(ts.url, { role: 'leader' });
    leader.act({ type: 'move', move: 'MF' });
    await waitFor(() => leader.errors().length === 1, 'an error');
    expect(leader.errors()[0].code).toBe('GAME_NOT_STARTED');

    const follower = await join(ts.url, { role: 'follower' });
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    follower.room.reconnection.enabled = false;
    await follower.room.leave(true);
    await waitFor(() => leader.phase === 'ended', 'the game to end');
    expect(leader.view!.endReason).toBe('abandoned');
    expect(leader.view!.turnDeadline).toBe(0);
    leader.act({ type: 'move', move: 'MF' });
    await waitFor(() => leader.errors().length === 2, 'an error');
    expect(leader.errors()[1].code).toBe('GAME_ENDED');
    const end = ts.logs[0][ts.logs[0].length - 1];
    expect(end).toMatchObject({ kind: 'end', reason: 'abandoned' });
    expect(replay(ts.logText()).end?.reason).toBe('abandoned');
  });

  test('P-11, P-4, P-5, P-6, P-8: bad join options, and a taken seat asked for by code, are refused', async () => {
    const ts = await serve();
    await expect(join(ts.url, { role: 'captain' })).rejects.toThrow(/bad join option role/);
    await expect(join(ts.url, { pool: 'has spaces' })).rejects.toThrow(/bad join option pool/);
    await expect(join(ts.url, { code: 'a/b' })).rejects.toThrow(/bad join option code/);
    await expect(join(ts.url, { workerId: 'w'.repeat(201) })).rejects.toThrow(/bad join option workerId/);
    await expect(join(ts.url, { botFollower: 'yes' })).rejects.toMatchObject({ code: 400, message: expect.stringMatching(/bad join option botFollower/) });
    await join(ts.url, { role: 'leader', pool: 'ids', workerId: 'w'.repeat(200) });
    const { code } = await createPrivate(ts.url, { role: 'leader' });
    await expect(join(ts.url, { role: 'leader', code })).rejects.toThrow(/the leader seat of this game is taken/);
    const second = await join(ts.url, { role: 'any', code });
    await waitFor(() => second.messages.some((m) => m.type === 'seat'), 'a seat');
    expect(second.messages.find((m) => m.type === 'seat')!.payload.role).toBe('follower');
  });
});

describe('reconnection', () => {
  test('P-80: a reconnection token copied from a player who is still connected does not take the seat over', async () => {
    const ts = await serve({ seed: 6 });
    const { leader, follower } = await startGame(ts.url);
    await expect(new Client(ts.url).reconnect(follower.room.reconnectionToken)).rejects.toThrow(/this seat's player is still connected/);
    // The follower keeps its seat and its connection, and the game goes on.
    leader.act({ type: 'instruction', text: 'still yours' });
    leader.act({ type: 'endTurn' });
    await waitFor(() => follower.view!.turn.role === 'follower' && follower.view!.instructions.length === 1, 'the follower turn');
    expect(leader.view!.partnerConnected).toBe(true);
    expect(leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'partnerDisconnected')).toBe(false);
  });

  test('P-57, P-24, P-27, P-28, P-29, P-52, P-21: a dropped player comes back to the same seat and state within the window', async () => {
    const ts = await serve({ seed: 6, reconnectSeconds: 5 });
    const { leader, follower } = await startGame(ts.url);
    leader.act({ type: 'instruction', text: 'still here?' });
    leader.act({ type: 'endTurn' });
    await waitFor(() => follower.view!.turn.role === 'follower', 'the follower turn');
    follower.room.reconnection.enabled = false;
    const token = follower.room.reconnectionToken;
    const dropped = Date.now();
    follower.room.connection.close(4999, 'test drop');
    await waitFor(() => leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'partnerDisconnected'), 'the leader to hear of the drop');
    expect(leader.messages.find((m) => m.type === 'notice' && m.payload.kind === 'partnerDisconnected')!.payload).toEqual({ kind: 'partnerDisconnected', seconds: 5 });
    await waitFor(() => leader.view!.partnerConnected === false, 'the follower to show as disconnected');

    const back = track(await new Client(ts.url).reconnect(token));
    await waitFor(() => back.phase === 'playing' && back.view!.instructions.length === 1, 'the view after reconnecting');
    await waitFor(() => leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'partnerReconnected'), 'the leader to hear of the return');
    await waitFor(() => leader.view!.partnerConnected === true, 'the follower to show as connected');
    expect(eventsLogged(ts)).toBe(2);
    const full = back.messages.find((m) => m.type === 'view')!.payload;
    expect(full.full).toBe(true);
    expect(full.serverNow).toBeGreaterThanOrEqual(dropped);
    expect(full.serverNow).toBeLessThanOrEqual(Date.now());
    back.act({ type: 'move', move: 'RL' });
    await waitFor(() => eventsLogged(ts) === 3, 'a move by the returned follower');
    await waitFor(() => leader.view!.follower.heading === 'NW', 'the leader to see the move');
    // Notices reach the returned connection.
    await leader.room.leave(true);
    await waitFor(() => back.messages.some((m) => m.type === 'notice' && m.payload.kind === 'partnerLeft'), 'the returned follower to hear the leader left');
  });

  test("P-90: the turn clock runs on while a player is away: the disconnected follower's turn times out as usual", async () => {
    const ts = await serve({ seed: 6, reconnectSeconds: 30, followerTurnSeconds: 0.5 });
    const { leader, follower } = await startGame(ts.url);
    leader.act({ type: 'instruction', text: 'are you there?' });
    leader.act({ type: 'endTurn' });
    await waitFor(() => follower.view!.turn.role === 'follower', 'the follower turn');
    follower.room.reconnection.enabled = false;
    follower.room.connection.close(4999, 'test drop');
    await waitFor(() => leader.view!.partnerConnected === false, 'the follower to show as disconnected');
    // The follower's 0.5 s run out although its seat is kept for 30 s: the leader plays again.
    await waitFor(() => leader.view!.turn.role === 'leader', "the leader's turn", 5000);
    expect(leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'timeout' && m.payload.role === 'follower')).toBe(true);
    expect(leader.phase).toBe('playing');
  });

  test('P-58, P-29: a player who does not come back in time abandons the game', async () => {
    const ts = await serve({ seed: 6, reconnectSeconds: 0.3 });
    const { leader, follower } = await startGame(ts.url);
    follower.room.reconnection.enabled = false;
    follower.room.connection.close(4999, 'test drop');
    await waitFor(() => leader.phase === 'ended', 'the game to be abandoned', 5000);
    expect(leader.view!.endReason).toBe('abandoned');
    expect(leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'partnerLeft')).toBe(true);
    expect(replay(ts.logText()).end?.reason).toBe('abandoned');
  });
});
