/**
 * The game room through real websocket clients (@colyseus/sdk) on a real server: whole games,
 * timers, reconnection, hidden information and every kind of bad message.
 */
import { makeConfig } from '../../shared/engine/config';
import type { GameState } from '../../shared/engine/state';
import { isVisible, visibleCells } from '../../shared/engine/view';
import type { LogEvent, LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { Client } from '@colyseus/sdk';
import { join, sleep, startGame, startTestServer, track, waitFor, type Player, type TestServer } from './harness';

jest.setTimeout(60_000);

const config = makeConfig();
let servers: TestServer[] = [];

async function serve(settings: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const server = await startTestServer(settings);
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.map((s) => s.server.close()));
  servers = [];
});

/**
 * Collects everything in the follower's decoded state that the follower may not see. Given the
 * true state after each event (`truth[seq]`), it also checks the leader's avatar: a client keeps
 * an object's last values when it leaves the view, so the follower may hold any pose in which it
 * saw the leader, and no other.
 */
function watchFollowerSecrets(follower: Player, truth?: GameState[]): { patches: number; leaderInView: number; violations: string[] } {
  const report = { patches: 0, leaderInView: 0, violations: [] as string[] };
  follower.room.onStateChange((state: any) => {
    report.patches += 1;
    if (!state.follower || state.phase !== 'playing') return;
    const pose = { x: state.follower.x, y: state.follower.y, heading: state.follower.heading };
    const visible = new Set(visibleCells({ width: 25, height: 25 }, pose, config.view));
    state.cards?.forEach((card: any) => {
      if (!visible.has(card.y * 25 + card.x)) report.violations.push(`card ${card.id} at (${card.x}, ${card.y}) outside the view`);
    });
    if (truth) {
      const now = truth[state.seq];
      const inView = isVisible({ width: 25, height: 25 }, now.follower, config.view, now.leader);
      if (state.leaderInView !== inView) report.violations.push(`leaderInView is ${state.leaderInView}, the leader is ${inView ? 'in' : 'out of'} view (seq ${state.seq})`);
      if (state.leaderInView) report.leaderInView += 1;
    }
    if (truth && state.leader?.x !== undefined) {
      const seenPoses = truth.slice(0, state.seq + 1).filter((s) => isVisible({ width: 25, height: 25 }, s.follower, config.view, s.leader));
      const held = { x: state.leader.x, y: state.leader.y, heading: state.leader.heading };
      if (!seenPoses.some((s) => s.leader.x === held.x && s.leader.y === held.y && s.leader.heading === held.heading)) {
        report.violations.push(`the leader at ${JSON.stringify(held)}, never seen there (seq ${state.seq})`);
      }
    }
    const instructions = [...(state.instructions?.values() ?? [])] as any[];
    for (const instruction of instructions) {
      if (instruction.status === 'queued') report.violations.push(`queued instruction ${instruction.id}`);
      if (instruction.status === 'current' && !instruction.sent) report.violations.push(`unsent instruction ${instruction.id}`);
    }
    if (instructions.length > 2) report.violations.push(`${instructions.length} instructions`);
    if ((state.leaderOnly?.invalidCards?.length ?? 0) > 0) report.violations.push('invalid-selection marks');
  });
  return report;
}

/** A self-play game with few timeouts, to replay over the network, and its true state after each event. */
function pickSelfPlayGame(): { seed: number; events: LogEvent[]; truth: GameState[] } {
  for (let seed = 1; ; seed++) {
    const lines: LogLine[] = [];
    playSelfPlayGame({ seed, map: generateMap(seed), config }, (line) => lines.push(line));
    const events = lines.filter((l): l is LogEvent => l.kind === 'event');
    const timeouts = events.filter((e) => e.type === 'timeout').length;
    const skipped = events.some((e) => e.outcome.turnEnded?.followerSkipped);
    if (timeouts >= 1 && timeouts <= 3 && skipped && events[events.length - 1].outcome.score >= 3) {
      const truth: GameState[] = [];
      replay(lines.map((l) => `${serializeLine(l)}\n`).join(''), { onState: (state) => truth.push(state) });
      return { seed, events, truth };
    }
  }
}

function send(player: Player, event: LogEvent): void {
  const payload = event.payload as Record<string, unknown>;
  if (event.type === 'move') player.room.send('move', { action: payload.move });
  else if (event.type === 'instruction') player.room.send('instruction', { text: payload.text });
  else player.room.send(event.type, {});
}

const withoutTime = (e: LogEvent) => ({ ...e, t: 0 });

describe('a whole game over the network', () => {
  test('two clients replay a self-play game action by action: the server logs exactly the same game', async () => {
    const { seed, events, truth } = pickSelfPlayGame();
    const ts = await serve({ seed, leaderTurnSeconds: 2, followerTurnSeconds: 2 });
    const { leader, follower } = await startGame(ts.url);
    const secrets = watchFollowerSecrets(follower, truth);
    for (const event of events) {
      if (event.actor !== 'server') send(event.actor === 'leader' ? leader : follower, event);
      await waitFor(() => leader.state.seq >= event.seq, `event ${event.seq} (${event.type} by ${event.actor})`);
      expect(leader.errors().concat(follower.errors())).toEqual([]);
    }
    await waitFor(() => leader.state.phase === 'ended' && follower.state.phase === 'ended', 'the game to end');

    const logged = ts.logs[0].filter((l): l is LogEvent => l.kind === 'event');
    expect(logged.map(withoutTime)).toEqual(events.map(withoutTime));
    const result = replay(ts.logText());
    expect(result.final.gameOver).toBe(true);
    expect(result.end?.reason).toBe('turns-exhausted');
    expect(result.final.score).toBeGreaterThanOrEqual(3);
    expect(leader.state.score).toBe(result.final.score);
    expect(follower.state.endReason).toBe('turns-exhausted');
    expect(leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'gameOver')).toBe(true);
    expect(follower.messages.some((m) => m.type === 'notice' && m.payload.kind === 'turnSkipped')).toBe(true);

    expect(secrets.patches).toBeGreaterThan(100);
    expect(secrets.leaderInView).toBeGreaterThan(0);
    expect(secrets.violations).toEqual([]);
  });
});

describe('hidden information', () => {
  test('an instruction reaches the follower only when its turn begins, and queued ones never', async () => {
    const ts = await serve({ seed: 3 });
    const { leader, follower } = await startGame(ts.url);
    leader.room.send('instruction', { text: 'first' });
    leader.room.send('instruction', { text: 'second' });
    await waitFor(() => leader.state.instructions.size === 2, 'the leader to see both instructions');
    await sleep(50);
    expect([...leader.state.instructions.values()].map((i: any) => [i.text, i.status, i.sent])).toEqual([
      ['first', 'current', false],
      ['second', 'queued', false],
    ]);
    expect(follower.state.instructions?.size ?? 0).toBe(0);

    leader.room.send('endTurn', {});
    await waitFor(() => follower.state.instructions?.size === 1, 'the follower to see the current instruction');
    expect([...follower.state.instructions.values()].map((i: any) => i.text)).toEqual(['first']);
    follower.room.send('done', {});
    await waitFor(() => follower.state.instructions.size === 2, 'the follower to see previous and current');
    expect([...follower.state.instructions.values()].map((i: any) => [i.text, i.status]).sort()).toEqual([
      ['first', 'done'],
      ['second', 'current'],
    ]);
  });

  test('the follower receives only the cards inside its view; the leader receives all of them', async () => {
    const ts = await serve({ seed: 7 });
    const { leader, follower } = await startGame(ts.url);
    await sleep(50);
    expect(leader.state.cards.size).toBe(21);
    const pose = { x: follower.state.follower.x, y: follower.state.follower.y, heading: follower.state.follower.heading };
    const visible = new Set(visibleCells({ width: 25, height: 25 }, pose, config.view));
    const expected = [...leader.state.cards.values()].filter((c: any) => visible.has(c.y * 25 + c.x)).map((c: any) => c.id);
    expect([...(follower.state.cards?.values() ?? [])].map((c: any) => c.id).sort()).toEqual(expected.sort());
  });
});

describe('turn timers', () => {
  test('the deadline is in the state; a leader timeout with an empty queue skips the follower turn', async () => {
    const ts = await serve({ seed: 2, leaderTurnSeconds: 0.4 });
    const before = Date.now();
    const { leader, follower } = await startGame(ts.url);
    expect(leader.state.turnDeadline).toBeGreaterThanOrEqual(before + 300);
    expect(leader.state.turnDeadline).toBeLessThanOrEqual(Date.now() + 400);
    await waitFor(() => leader.state.turnsLeft === 5, 'the leader turn to time out');
    expect(leader.state.turnRole).toBe('leader');
    expect(follower.messages.some((m) => m.type === 'notice' && m.payload.kind === 'turnSkipped')).toBe(true);
    const timeout = ts.logs[0].find((l): l is LogEvent => l.kind === 'event' && l.type === 'timeout')!;
    expect(timeout.outcome.turnEnded).toEqual({ reason: 'timeout', followerSkipped: true });
  });

  test("the map message carries the server's clock, to count down to the deadline on a skewed clock", async () => {
    const ts = await serve({ seed: 2 });
    const before = Date.now();
    const { leader, follower } = await startGame(ts.url);
    for (const player of [leader, follower]) {
      await waitFor(() => player.messages.some((m) => m.type === 'map'), 'the map');
      const { map, config: sent, serverNow } = player.messages.find((m) => m.type === 'map')!.payload;
      expect(map.width).toBe(25);
      expect(sent).toEqual(config);
      expect(serverNow).toBeGreaterThanOrEqual(before);
      expect(serverNow).toBeLessThanOrEqual(Date.now());
      // The first turn's clock starts just after the map is sent.
      expect(player.state.turnDeadline - serverNow).toBeGreaterThanOrEqual(45_000);
      expect(player.state.turnDeadline - serverNow).toBeLessThan(46_000);
    }
  });

  test('a follower timeout hands control back to the leader', async () => {
    const ts = await serve({ seed: 2, followerTurnSeconds: 0.3 });
    const { leader, follower } = await startGame(ts.url);
    leader.room.send('instruction', { text: 'go' });
    leader.room.send('endTurn', {});
    await waitFor(() => follower.state.turnRole === 'follower', 'the follower turn');
    follower.room.send('move', { action: 'RL' });
    await waitFor(() => leader.state.turnRole === 'leader', 'the follower turn to time out', 3000);
    expect(leader.state.turnsLeft).toBe(5);
    expect(leader.state.stepsLeft).toBe(5);
    expect(leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'timeout' && m.payload.role === 'follower')).toBe(true);
  });
});

describe('bad messages get a specific error and change nothing', () => {
  test('each kind of bad message', async () => {
    const ts = await serve({ seed: 4, leaderSteps: undefined } as never);
    const { leader, follower } = await startGame(ts.url);
    const cases: [Player, string, unknown, string][] = [
      [leader, 'fly', {}, 'UNKNOWN_MESSAGE'],
      [leader, 'move', { action: 'JUMP' }, 'BAD_MESSAGE'],
      [leader, 'move', 'MF', 'BAD_MESSAGE'],
      [leader, 'move', { action: 'MF', extra: 1 }, 'BAD_MESSAGE'],
      [leader, 'instruction', { text: 42 }, 'BAD_MESSAGE'],
      [leader, 'instruction', { text: 'x'.repeat(301) }, 'INSTRUCTION_TOO_LONG'],
      [leader, 'instruction', { text: ' \u0000\u0007 \n ' }, 'EMPTY_INSTRUCTION'],
      [leader, 'endTurn', {}, 'EMPTY_QUEUE'],
      [leader, 'done', {}, 'LEADER_CANNOT_MARK_DONE'],
      [follower, 'instruction', { text: 'hi' }, 'FOLLOWER_CANNOT_INSTRUCT'],
      [follower, 'endTurn', {}, 'FOLLOWER_CANNOT_END_TURN'],
      [follower, 'move', { action: 'MF' }, 'NOT_YOUR_TURN'],
      [follower, 'done', {}, 'NOT_YOUR_TURN'],
    ];
    for (const [player, type, payload, code] of cases) {
      const errors = player.errors().length;
      player.room.send(type, payload as never);
      await waitFor(() => player.errors().length > errors, `an error for ${type} ${JSON.stringify(payload)}`);
      expect(player.errors()[errors]).toMatchObject({ code, refused: type });
      expect(player.errors()[errors].message.length).toBeGreaterThan(10);
    }
    expect(leader.state.seq).toBe(0);
    expect(ts.logs[0]).toHaveLength(1);

    // The room still runs: the leader can play, and runs out of steps.
    for (let i = 0; i < 5; i++) leader.room.send('move', { action: 'RL' });
    await waitFor(() => leader.state.stepsLeft === 0, 'five leader steps');
    leader.room.send('move', { action: 'RL' });
    await waitFor(() => leader.errors().some((e) => e.code === 'NO_STEPS_LEFT'), 'NO_STEPS_LEFT');
    expect(leader.state.seq).toBe(5);
  });

  test('before the partner joins, and after the game ended', async () => {
    const ts = await serve({ seed: 4 });
    const leader = await join(ts.url, { role: 'leader' });
    leader.room.send('move', { action: 'MF' });
    await waitFor(() => leader.errors().length === 1, 'an error');
    expect(leader.errors()[0].code).toBe('GAME_NOT_STARTED');

    const follower = await join(ts.url, { role: 'follower' });
    await waitFor(() => leader.state.phase === 'playing', 'the game to start');
    follower.room.reconnection.enabled = false;
    await follower.room.leave(true);
    await waitFor(() => leader.state.phase === 'ended', 'the game to end');
    expect(leader.state.endReason).toBe('abandoned');
    leader.room.send('move', { action: 'MF' });
    await waitFor(() => leader.errors().length === 2, 'an error');
    expect(leader.errors()[1].code).toBe('GAME_ENDED');
    const end = ts.logs[0][ts.logs[0].length - 1];
    expect(end).toMatchObject({ kind: 'end', reason: 'abandoned' });
    expect(replay(ts.logText()).end?.reason).toBe('abandoned');
  });

  test('bad join options, and a taken seat asked for by room id, are refused', async () => {
    const ts = await serve();
    await expect(join(ts.url, { role: 'captain' })).rejects.toThrow(/bad join option role/);
    await expect(join(ts.url, { pool: 'has spaces' })).rejects.toThrow(/bad join option pool/);
    const first = await join(ts.url, { role: 'leader', code: 'lab1' });
    await expect(new Client(ts.url).joinById(first.room.roomId, { role: 'leader' })).rejects.toThrow(/the leader seat is taken/);
    const second = await join(ts.url, { role: 'any', code: 'lab1' });
    await waitFor(() => second.messages.some((m) => m.type === 'seat'), 'a seat');
    expect(second.messages.find((m) => m.type === 'seat')!.payload.role).toBe('follower');
  });
});

describe('reconnection', () => {
  test('a dropped player comes back to the same seat and state within the window', async () => {
    const ts = await serve({ seed: 6, reconnectSeconds: 5 });
    const { leader, follower } = await startGame(ts.url);
    leader.room.send('instruction', { text: 'still here?' });
    leader.room.send('endTurn', {});
    await waitFor(() => follower.state.turnRole === 'follower', 'the follower turn');
    follower.room.reconnection.enabled = false;
    const token = follower.room.reconnectionToken;
    const dropped = Date.now();
    follower.room.connection.close(4999, 'test drop');
    await waitFor(() => leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'partnerDisconnected'), 'the leader to hear of the drop');
    await waitFor(() => leader.state.follower.connected === false, 'the follower to show as disconnected');

    const back = track(await new Client(ts.url).reconnect(token));
    await waitFor(() => back.state.phase === 'playing' && back.state.instructions?.size === 1, 'the state after reconnecting');
    await waitFor(() => leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'partnerReconnected'), 'the leader to hear of the return');
    await waitFor(() => leader.state.follower.connected === true, 'the follower to show as connected');
    expect(back.state.seq).toBe(2);
    const map = back.messages.find((m) => m.type === 'map')!.payload;
    expect(map.serverNow).toBeGreaterThanOrEqual(dropped);
    expect(map.serverNow).toBeLessThanOrEqual(Date.now());
    back.room.send('move', { action: 'RL' });
    await waitFor(() => leader.state.seq === 3, 'a move by the returned follower');
    expect(leader.state.follower.heading).toBe('NW');
    // Notices reach the returned connection.
    await leader.room.leave(true);
    await waitFor(() => back.messages.some((m) => m.type === 'notice' && m.payload.kind === 'partnerLeft'), 'the returned follower to hear the leader left');
  });

  test('a player who does not come back in time abandons the game', async () => {
    const ts = await serve({ seed: 6, reconnectSeconds: 0.3 });
    const { leader, follower } = await startGame(ts.url);
    follower.room.reconnection.enabled = false;
    follower.room.connection.close(4999, 'test drop');
    await waitFor(() => leader.state.phase === 'ended', 'the game to be abandoned', 5000);
    expect(leader.state.endReason).toBe('abandoned');
    expect(leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'partnerLeft')).toBe(true);
    expect(replay(ts.logText()).end?.reason).toBe('abandoned');
  });
});
