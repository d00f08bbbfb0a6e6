/** A game server on a free port with logs kept in memory, and real websocket clients for it. */
import { Client, type Room } from '@colyseus/sdk';
import WebSocket from 'ws';
import type { PlayerAction } from '../../shared/engine/actions';
import type { LogLine } from '../../shared/log/format';
import { ACTION_MESSAGE, applyViewMessage, type ClientView, type ViewMessage } from '../../shared/protocol/messages';
import { serializeLine } from '../../shared/log/recorder';
import { startGameServer, type RunningGameServer } from '../../server/index';
import type { RoomSettings } from '../../server/rooms/GameRoom';
import type { SeatAgentStarter } from '../../server/rooms/seatAgents';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { mountApi } from '../../server/http/api';
import type { GameMetrics } from '../../server/metrics';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';

// Node 20 has no global WebSocket, and the SDK's reconnect() looks for one.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

export interface TestServer {
  readonly server: RunningGameServer;
  readonly url: string;
  /** Every log line written, per game, in order. */
  readonly logs: LogLine[][];
  logText(game?: number): string;
}

/** A function that starts test servers, each closed after the test that started it. */
export function serversForEachTest(): (roomSettings?: RoomSettings, now?: () => number, seatAgents?: SeatAgentStarter) => Promise<TestServer> {
  let started: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(started.map((s) => s.server.close()));
    started = [];
  });
  return async (roomSettings = {}, now, seatAgents) => {
    const server = await startTestServer(roomSettings, now, seatAgents);
    started.push(server);
    return server;
  };
}

/** A game server on a free port; `now` fixes the rooms' clock (deadlines, log times) for byte-level comparisons; `seatAgents` are its agent partners. */
export async function startTestServer(roomSettings: RoomSettings = {}, now?: () => number, seatAgents?: SeatAgentStarter): Promise<TestServer> {
  const logs: LogLine[][] = [];
  const server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    roomSettings: { patchRateMs: 10, ...roomSettings },
    services: {
      ...(now && { now }),
      ...(seatAgents && { seatAgents }),
      startLog: (header) => {
        const lines: LogLine[] = [header];
        logs.push(lines);
        return { append: (line) => lines.push(line), end: (line) => lines.push(line) };
      },
    },
  });
  return {
    server,
    url: `http://127.0.0.1:${server.port}`,
    logs,
    logText: (game = 0) => logs[game].map((line) => `${serializeLine(line)}\n`).join(''),
  };
}

/** A connected player: its room, and every message the server sent it. */
export interface Player {
  readonly room: Room;
  readonly messages: { type: string; payload: any }[];
  /** The view as the player holds it from the server's `view` messages (null before the game starts). */
  readonly view: ClientView | null;
  /** 'waiting' until the first view arrives, then the view's phase. */
  readonly phase: 'waiting' | 'playing' | 'ended';
  /** Sends one action. */
  act(action: PlayerAction): void;
  /** Calls `listener` after each view message is applied (the SDK allows one handler per type: use this). */
  onView(listener: (view: ClientView) => void): void;
  errors(): { code: string; message: string; refused: string }[];
}

export async function join(url: string, options: Record<string, unknown>): Promise<Player> {
  const room = await new Client(url).joinOrCreate('cerealbar', options);
  return track(room);
}

/** Creates a private game: its creator, seated, and the code the server drew for it. */
export async function createPrivate(url: string, options: Record<string, unknown> = {}): Promise<{ creator: Player; code: string }> {
  const creator = await join(url, { ...options, private: true });
  await waitFor(() => creator.messages.some((m) => m.type === 'seat'), 'the seat');
  return { creator, code: creator.messages.find((m) => m.type === 'seat')!.payload.code };
}

export function track(room: Room): Player {
  const messages: Player['messages'] = [];
  let view: ClientView | null = null;
  const viewListeners: ((view: ClientView) => void)[] = [];
  room.onMessage('*', (type, payload) => messages.push({ type: String(type), payload }));
  room.onMessage('view', (payload: ViewMessage) => {
    messages.push({ type: 'view', payload });
    view = applyViewMessage(view, payload);
    for (const listener of viewListeners) listener(view);
  });
  return {
    room,
    messages,
    get view() {
      return view;
    },
    get phase() {
      return view?.phase ?? 'waiting';
    },
    act: (action) => room.send(ACTION_MESSAGE, action),
    onView: (listener) => viewListeners.push(listener),
    errors: () => messages.filter((m) => m.type === 'error').map((m) => m.payload),
  };
}

/** Waits until `condition` holds, checking every few milliseconds; fails with `what` on timeout. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A leader and a follower in one game that has started. */
export async function startGame(url: string, options: Record<string, unknown> = {}): Promise<{ leader: Player; follower: Player }> {
  const leader = await join(url, { role: 'leader', ...options });
  const follower = await join(url, { role: 'follower', ...options });
  await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'both players to see the game start');
  return { leader, follower };
}

/** An HTTP answer with its JSON body (null when empty). */
export interface JsonAnswer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Headers;
}

/** One request to the server at `base`: `body` as JSON (or `raw` as it is), `token` as a bearer token. */
/** `headers`: more request headers (a proxy's X-Forwarded-For, as a study worker's own address). */
export async function callJson(base: string, method: string, path: string, body?: unknown, token?: string, raw?: string, more: Record<string, string> = {}): Promise<JsonAnswer> {
  const headers: Record<string, string> = { ...more };
  if (body !== undefined || raw !== undefined) headers['content-type'] = 'application/json';
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${base}${path}`, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : JSON.parse(text), headers: res.headers };
}

/** A game server on a real store in a fresh folder, with the HTTP API (and metrics when given); `close` removes it all. */
export async function startStoreServer(adminToken: string, metrics?: GameMetrics): Promise<{ server: RunningGameServer; store: SqliteGameStore; base: string; close(): Promise<void> }> {
  const dir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-store-server-'));
  const store = SqliteGameStore.open(joinPath(dir, 'data'));
  const server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    services: { startLog: (header, info) => store.startGame(header, info), ...(metrics && { metrics }) },
    routes: (app) => mountApi(app, { store, adminToken, ...(metrics && { metrics }) }),
  });
  return {
    server,
    store,
    base: `http://127.0.0.1:${server.port}`,
    close: async () => {
      await server.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const BIN = joinPath(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

/** The admin token the `cerealbar serve` processes of the tests run with. */
export const SERVE_ADMIN_TOKEN = 'a-test-token-of-enough-length';

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
}

/** Runs `cerealbar serve` with `options` to its exit (killed after 30 s): its exit code and what it wrote. */
export function serveToExit(dataDir: string, options: readonly string[]): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir, ...options], { env: { ...process.env, ADMIN_TOKEN: SERVE_ADMIN_TOKEN } });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    }),
  );
}

/** Stops a serve process started by startServeProcess (SIGINT) and waits for its exit; nothing if it has exited. */
export async function stopServeProcess(serve: ServeProcess | null): Promise<void> {
  if (!serve || serve.child.exitCode !== null) return;
  const exited = new Promise((resolve) => serve.child.once('exit', resolve));
  serve.child.kill('SIGINT');
  await exited;
}

/** Runs `cerealbar serve` as a process on 127.0.0.1 (a free port unless `options` name one) and waits until it listens and has said all it says at start. */
export async function startServeProcess(dataDir: string, options: readonly string[] = [], env: Record<string, string> = {}): Promise<ServeProcess> {
  const port = options.includes('--port') ? [] : ['--port', '0'];
  // A loaded test machine must not have the process turn joins away as busy (P-153), unless a test asks for it.
  const admission = options.includes('--max-event-loop-delay-ms') ? [] : ['--max-event-loop-delay-ms', '0'];
  const child = spawn(process.execPath, [BIN, 'serve', ...port, '--host', '127.0.0.1', '--data', dataDir, ...admission, ...options], {
    env: { ...process.env, ADMIN_TOKEN: SERVE_ADMIN_TOKEN, ...env },
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`serve exited with ${code} before it listened: ${output}`))));
  exited.catch(() => undefined); // its exit after it listened is the test's business
  // Up to its last line at start, the admin token's: stdout may arrive in several chunks.
  await Promise.race([waitFor(() => /listening on http:\/\/localhost:\d+/.test(output) && output.includes('Admin token'), 'the server to start', 30_000), exited]);
  const listening = /localhost:(\d+)/.exec(output)![1];
  return { child, url: `http://127.0.0.1:${listening}`, output: () => output };
}
