/**
 * Games with the server's agent partner are a resource, bounded at matchmaking (P-149): a client's
 * agent games at once (by its address, as the server's trusted proxies name it, and by its worker
 * id) and the whole server's, each refused at once in words and counted in the metrics. An agent
 * game whose player is gone ends, and its agent program with it, within the reconnection window
 * (P-152). The agents here are programs that write down their process ids as they start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { Client } from '@colyseus/sdk';
import { CLIENT_TAG_HEADER } from '../../server/http/matchmakingClient';
import { startGameServer, type RunningGameServer } from '../../server/index';
import { GameMetrics } from '../../server/metrics';
import type { AgentGameLimits } from '../../server/rooms/agentGames';
import type { RoomSettings } from '../../server/rooms/GameRoom';
import { seatAgentsFrom } from '../../server/rooms/seatAgents';
import { alive, writeAgentProgram, type AgentProgram } from '../helpers/agentPrograms';
import { callJson, track, waitFor, type Player } from './harness';

jest.setTimeout(60_000);

let dir = '';
let server: RunningGameServer | null = null;
let metrics: GameMetrics;
let url = '';
beforeEach(() => {
  dir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-agent-limits-'));
});
afterEach(async () => {
  await server?.close();
  server = null;
  rmSync(dir, { recursive: true, force: true });
});

/** A server whose agent follower is a program that marks each instruction done and writes down its process id. */
async function serveAgents(limits: AgentGameLimits = {}, roomSettings: RoomSettings = {}): Promise<AgentProgram> {
  const program = writeAgentProgram(dir, 'follower', '["DONE"]');
  metrics = new GameMetrics();
  server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    roomSettings: { patchRateMs: 10, botStepMs: 20, ...roomSettings },
    agentGames: limits,
    // A loaded test machine's late event loop must not turn joins away as busy (P-153): only these limits do.
    admission: { maxEventLoopDelayMs: 0 },
    services: { seatAgents: seatAgentsFrom({ follower: program.command }), metrics, startLog: () => ({ append: () => undefined, end: () => undefined }) },
  });
  url = `http://127.0.0.1:${server.port}`;
  return program;
}

/** A leader asking for the agent follower from `address` (a trusted proxy's X-Forwarded-For: the server is reached from loopback), seated. */
async function leaderFrom(address: string, options: Record<string, unknown> = {}): Promise<Player> {
  const headers = { 'x-forwarded-for': address, [CLIENT_TAG_HEADER]: `made-up-${Math.random()}` };
  const answer = await callJson(url, 'POST', '/matchmake/joinOrCreate/cerealbar', { role: 'leader', botFollower: true, ...options }, undefined, undefined, headers);
  if (answer.status !== 200) throw Object.assign(new Error(answer.body.error), { code: answer.status });
  const player = track(await new Client(url).consumeSeatReservation(answer.body));
  await waitFor(() => player.phase === 'playing', 'the game with the agent to start');
  return player;
}

const refusedTimes = async (reason: string) => Number(new RegExp(`^cerealbar_agent_games_refused_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(await metrics.text())?.[1] ?? 0);

describe('P-149: the agent games one client may have at once', () => {
  test('60 joins from one client at once start at most 2 agent programs; the other 58 are refused 429 in words, and counted', async () => {
    const { pids } = await serveAgents();
    const joins = await Promise.allSettled(Array.from({ length: 60 }, () => new Client(url).joinOrCreate('cerealbar', { role: 'leader', botFollower: true }).then(track)));
    const seated = joins.flatMap((join) => (join.status === 'fulfilled' ? [join.value] : []));
    const refused = joins.flatMap((join) => (join.status === 'rejected' ? [join.reason as { code: number; message: string }] : []));
    expect(seated).toHaveLength(2);
    expect(refused).toHaveLength(58);
    for (const refusal of refused) {
      expect(refusal.code).toBe(429);
      expect(refusal.message).toBe(
        "you already have 2 games with the server's agent going, the most one player (one address, or one worker id) may have at once: finish or leave one, then start another",
      );
    }
    await waitFor(() => seated.every((player) => player.phase === 'playing'), 'the two games to start');
    expect(pids()).toHaveLength(2);
    expect(await refusedTimes('per-client')).toBe(58);

    // The limit is on games at once: once one ends, the client may start another.
    await seated[0].room.leave(true);
    await waitFor(() => pids().filter(alive).length === 1, "the ended game's program to stop", 10_000);
    const again = track(await new Client(url).joinOrCreate('cerealbar', { role: 'leader', botFollower: true }));
    await waitFor(() => again.phase === 'playing', 'a new game with the agent');
    expect(pids()).toHaveLength(3);
  });

  test('another address has its own games; a worker id counts as a client too, whatever its address', async () => {
    await serveAgents({ perClient: 1 });
    await leaderFrom('203.0.113.7');
    await expect(leaderFrom('203.0.113.7')).rejects.toMatchObject({ code: 429 });
    await leaderFrom('198.51.100.20', { workerId: 'W1' });
    // The same worker id from a third address: the worker's own limit.
    await expect(leaderFrom('192.0.2.30', { workerId: 'W1' })).rejects.toMatchObject({ code: 429 });
    await leaderFrom('192.0.2.30');
    // The server's own header naming the client is the server's to set: one a client sends changes nothing.
    await expect(leaderFrom('203.0.113.7')).rejects.toMatchObject({ code: 429 });
    expect(await refusedTimes('per-client')).toBe(3);
  });

  test("the whole server's agent games: beyond --max-agent-games a join is refused 503 in words, whoever asks", async () => {
    const { pids } = await serveAgents({ total: 2 });
    await leaderFrom('203.0.113.1');
    await leaderFrom('203.0.113.2');
    await expect(leaderFrom('203.0.113.3')).rejects.toMatchObject({
      code: 503,
      message: 'the server is running as many games with its agents as it can (2): play with a person, or try again in a few minutes',
    });
    expect(pids()).toHaveLength(2);
    expect(await refusedTimes('server')).toBe(1);
    // A game of two people is not an agent game: it is not refused.
    const leader = track(await new Client(url).joinOrCreate('cerealbar', { role: 'leader' }));
    const follower = track(await new Client(url).joinOrCreate('cerealbar', { role: 'follower' }));
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'a game of two people to start');
  });
});

describe('P-152: an agent game whose player is gone', () => {
  test('ends, and its agent program stops, within the reconnection window, also while the server drains (no wait for the drain)', async () => {
    const reconnectSeconds = 1;
    const { pids } = await serveAgents({}, { reconnectSeconds });
    for (const draining of [false, true]) {
      const leader = await leaderFrom('203.0.113.9');
      const pid = pids().at(-1)!;
      expect(alive(pid)).toBe(true);
      if (draining) expect(await server!.drain()).toBe(1);
      // The page is gone for good: its connection drops, and it never comes back.
      leader.room.reconnection.enabled = false;
      leader.room.connection.close(4999, 'the tab was closed');
      const dropped = Date.now();
      await waitFor(() => !alive(pid), 'the agent program to stop', 10_000);
      // The window, then the program's second to exit by itself before it is killed, and a margin.
      expect(Date.now() - dropped).toBeLessThan((reconnectSeconds + 1 + 1) * 1000);
      expect(await server!.gamesInPlay()).toBe(0);
    }
  });
});
