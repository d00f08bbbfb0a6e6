/**
 * Whole live games over real WebSockets with the LLM agent through `cerealbar agent`, against the
 * stub server: as the follower with the server's scripted leader, and as the leader with the
 * server's heuristic follower. The server's logs replay, and the call records match the stub's
 * request log one to one.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRecords, type CallRecord, type RecordHeader } from '../../shared/agents/node/llm/records';
import { replay } from '../../shared/log/replay';
import { startTestServer, waitFor, type TestServer } from '../server/harness';
import { imagesOf, messageText, startStubLlm, STUB_MODEL, type ChatBody, type StubLlm, type StubReply } from '../helpers/stubLlm';

jest.setTimeout(120_000);

const BIN = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');
const KEY = 'sk-test-LIVE-never-written-5544';

let server: TestServer | null = null;
let stub: StubLlm | null = null;
let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'llm-live-'))));
afterEach(async () => {
  await server?.server.close();
  await stub?.close();
  server = null;
  stub = null;
  rmSync(dir, { recursive: true, force: true });
});

const observationText = (body: ChatBody) => messageText(body.messages.find((m) => m.role === 'user')!.content);

/** One step (forward if it can, else a turn) and DONE; its second reply is not JSON. */
function followerModel(body: ChatBody, n: number): StubReply {
  if (n === 1) return 'Going forward.';
  const legal = /Actions allowed now: (.*)\.$/m.exec(observationText(body))![1].split(', ');
  return JSON.stringify({ thought: 'one step', actions: [['MF', 'RL', 'RR'].find((code) => legal.includes(code)), 'DONE'] });
}

/** The card nearest to the leader, asked for, then END; its first reply names an action a leader does not have. */
function leaderModel(body: ChatBody, n: number): StubReply {
  if (n === 0) return '{"actions": ["DONE"]}';
  const text = observationText(body);
  const card = /^- [^:]+: a card with ([^;,]+)/m.exec(text)?.[1];
  const canInstruct = text.includes('an instruction to the follower');
  return JSON.stringify({ actions: canInstruct && card ? [{ instruction: `pick up the ${card}` }, 'END'] : ['END'] });
}

/** `cerealbar agent` in `role` with the llm agent and the server's agent as its partner, run to the game's end. */
async function playLive(role: 'follower' | 'leader', options: readonly string[] = []): Promise<{ output: string; roomId: string; code: number | null }> {
  const records = join(dir, 'records');
  const args = [BIN, 'agent', '--role', role, '--server', server!.url, '--agent', 'llm', '--bot-partner',
    '--llm-base-url', stub!.url, '--llm-model', STUB_MODEL, '--llm-api-key-env', 'CEREALBAR_LIVE_KEY', '--llm-records', records, '--llm-max-retries', '0', ...options];
  const child = spawn(process.execPath, args, { env: { ...process.env, CEREALBAR_LIVE_KEY: KEY } });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const roomId = /joined (\S+) as the/.exec(output)?.[1];
  if (!roomId) throw new Error(`the agent did not join; it printed:\n${output}`);
  return { output, roomId, code };
}

function expectRecordsMatchStub(calls: readonly CallRecord[]): void {
  const received = stub!.chatRequests();
  expect(calls.flatMap((call) => call.attempts.map(() => call.request))).toEqual(received.map((request) => request.body));
  expect(calls.map((call) => call.requestId)).toEqual(received.map((request) => request.requestId));
}

async function liveGame(role: 'follower' | 'leader', respond: (body: ChatBody, n: number) => StubReply) {
  stub = await startStubLlm({ respond, key: KEY });
  server = await startTestServer({ seed: 11, botStepMs: 0, leaderTurnSeconds: 30, followerTurnSeconds: 30 });
  const { output, roomId, code } = await playLive(role);
  expect(code).toBe(0);
  expect(output).toMatch(/game over \(turns-exhausted\), score \d+/);
  expect(output).not.toContain(KEY);
  await waitFor(() => server!.logs[0]?.at(-1)?.kind === 'end', 'the log to end');
  const log = server!.logText(0);
  expect(replay(log).events).toBeGreaterThan(10);
  const files = readdirSync(join(dir, 'records'));
  expect(files).toEqual([`${roomId}.${role}.llm.ndjson`]);
  const text = readFileSync(join(dir, 'records', files[0]), 'utf8');
  expect(text).not.toContain(KEY);
  const [header, ...calls] = readRecords(join(dir, 'records', files[0])) as [RecordHeader, ...CallRecord[]];
  expect(header).toMatchObject({ episode: roomId, role, model: STUB_MODEL });
  expectRecordsMatchStub(calls);
  // The command's report ends with the agent's counts.
  expect(output).toMatch(new RegExp(`^llm ${role}: ${calls.length} calls \\(${calls.length - 1} ok, 1 format_error\\), 0 fallbacks`, 'm'));
  return { calls, log };
}

test('the LLM follower plays a whole live game with the server\'s scripted leader', async () => {
  const { calls, log } = await liveGame('follower', followerModel);
  expect(calls.slice(0, 3).map((call) => [call.observation, call.ask, call.status])).toEqual([[0, 1, 'ok'], [1, 1, 'format_error'], [1, 2, 'ok']]);
  expect(calls.every((call) => call.status === 'ok' || call.status === 'format_error')).toBe(true);
  expect(calls.every((call) => call.event === null)).toBe(true);
  // The follower's DONEs are in the server's log: one per instruction it was given.
  expect(log.split('\n').filter((line) => line.includes('"actor":"follower","type":"done"')).length).toBeGreaterThan(0);
});

test('the LLM leader plays a whole live game with the server\'s heuristic follower', async () => {
  const { calls, log } = await liveGame('leader', leaderModel);
  expect(calls.slice(0, 2).map((call) => [call.observation, call.ask, call.status])).toEqual([[0, 1, 'format_error'], [0, 2, 'ok']]);
  const instructions = log.split('\n').filter((line) => line.includes('"type":"instruction"'));
  expect(instructions.length).toBe(calls.filter((call) => call.status === 'ok' && typeof call.actions![0] === 'object').length);
});

test('the LLM follower with --llm-images plays a whole live game: each call sends the frame of its own view, kept beside the records', async () => {
  stub = await startStubLlm({ respond: followerModel, key: KEY });
  server = await startTestServer({ seed: 11, botStepMs: 0, leaderTurnSeconds: 30, followerTurnSeconds: 30 });
  const { output, roomId, code } = await playLive('follower', ['--llm-images', 'follower', '--llm-image-size', '96x72']);
  expect(code).toBe(0);
  expect(output).toMatch(/game over \(turns-exhausted\), score \d+/);
  const records = join(dir, 'records');
  expect(readdirSync(records).sort()).toEqual([`${roomId}.follower.llm.images`, `${roomId}.follower.llm.ndjson`]);
  const [header, ...calls] = readRecords(join(records, `${roomId}.follower.llm.ndjson`)) as [RecordHeader, ...CallRecord[]];
  expect(header.settings).toMatchObject({ images: true, imageSize: '96x72', imageCamera: 'first-person' });
  // Each request's one image (a re-ask sends the observation's again, before the correction).
  const sent = stub.chatRequests().map((request) => createHash('sha256').update(imagesOf(request.body)[0].png).digest('hex'));
  expect(calls.map((call) => call.images![0].sha256)).toEqual(sent);
  for (const call of calls) expect(existsSync(join(records, call.images![0].file))).toBe(true);
});
