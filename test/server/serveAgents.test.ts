/**
 * `cerealbar serve --bot-leader A --bot-follower B` as a real process: the agents are checked
 * when serve starts (one that cannot play a live seat stops it, exit 2, with one line), and a
 * program agent is started for each game and stopped at its end.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { readRecords, type CallRecord, type RecordHeader } from '../../shared/agents/node/llm/records';
import { replay } from '../../shared/log/replay';
import { failedInstructionNote } from '../../server/rooms/botSeat';
import { alive, writeAgentProgram } from '../helpers/agentPrograms';
import { imagesOf, startStubLlm, STUB_MODEL, type ChatBody, type StubLlm } from '../helpers/stubLlm';
import { join, SERVE_ADMIN_TOKEN, serveToExit, startServeProcess, stopServeProcess, waitFor, type ServeProcess } from './harness';

jest.setTimeout(60_000);

let dir = '';
let serve: ServeProcess | null = null;
beforeEach(() => {
  dir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-serve-agents-'));
});
afterEach(async () => {
  await stopServeProcess(serve);
  serve = null;
  rmSync(dir, { recursive: true, force: true });
});


test.each([
  [['--bot-leader', 'heuristic'], 'cerealbar: --bot-leader "heuristic": "heuristic" is a built-in follower, not a leader; the built-in leaders are scripted, llm'],
  [['--bot-follower', 'scripted'], 'cerealbar: --bot-follower "scripted": "scripted" is a built-in leader, not a follower; the built-in followers are random, heuristic, llm'],
  [['--bot-follower', 'oracle'], 'cerealbar: --bot-follower "oracle": the oracle agent needs a recorded game; it can only be evaluated over logs (cerealbar eval --agent oracle --logs PATH)'],
  [['--llm-model', STUB_MODEL], 'cerealbar: the --llm-* options are for the llm agent: give --bot-leader or --bot-follower llm'],
  [['--bot-follower', 'llm', '--llm-model', STUB_MODEL, '--llm-images', 'leader'], 'cerealbar: --llm-images leader: the llm agent does not play the leader here (it plays the follower); give --llm-images follower, both or none'],
  [['--bot-leader', 'llm'], /^cerealbar: --bot-leader "llm": .*--llm-model/],
  [['--bot-leader', 'no-such-agent-program'], /^cerealbar: --bot-leader "no-such-agent-program": agent "no-such-agent-program" exited with code 127 before sending its answer to hello; its last stderr lines: .*not found$/],
])('P-118: serve %j stops before it starts (exit 2), in one line, with nothing made', async (options, message) => {
  const dataDir = joinPath(dir, 'data');
  const { code, stderr, stdout } = await serveToExit(dataDir, options);
  expect(code).toBe(2);
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(stderr.trimEnd()).toMatch(message);
  expect(stdout).toBe('');
  expect(existsSync(dataDir)).toBe(false);
});

test('P-118: a program leader is started once to check it, then once per game, and stopped when its game ends', async () => {
  // A leader that instructs once, then ends its turns.
  const { command, pids } = writeAgentProgram(dir, 'leader', 'message.observation.instructions.length === 0 ? [{ instruction: "turn left" }, "END"] : []');
  serve = await startServeProcess(joinPath(dir, 'data'), ['--bot-leader', command]);
  expect(serve.output()).toContain(`Agent partners, for players who ask for one: leader ${JSON.stringify(command)}, follower "heuristic"`);
  expect(pids()).toHaveLength(1);
  await waitFor(() => !alive(pids()[0]), 'the checked program to be stopped');
  const follower = await join(serve.url, { role: 'follower', botLeader: true });
  await waitFor(() => follower.view?.instructions.some((i) => i.status === 'current' && i.text === 'turn left') ?? false, "the program leader's instruction", 10_000);
  expect(pids()).toHaveLength(2);
  expect(alive(pids()[1])).toBe(true);
  await follower.room.leave(true);
  await waitFor(() => !alive(pids()[1]), "the game's program to be stopped when the game ends", 10_000);
});

/** A loaded test machine's late event loop must not turn joins away as busy (P-153): only the limits tested do. */
const ON_TIME = ['--max-event-loop-delay-ms', '0'];

describe('serve --bot-follower llm', () => {
  const KEY = 'sk-test-SERVE-never-written-7781';
  let stub: StubLlm | null = null;
  afterEach(async () => {
    await stub?.close();
    stub = null;
  });

  test("P-118, P-119: seats the LLM follower for each game, its call records beside the data directory's logs, each with the event it preceded", async () => {
    // One step (a turn, always allowed), then DONE.
    stub = await startStubLlm({ key: KEY, respond: (_body: ChatBody) => JSON.stringify({ thought: 'a look around', actions: ['RR', 'DONE'] }) });
    const dataDir = joinPath(dir, 'data');
    serve = await startServeProcess(
      dataDir,
      ['--bot-follower', 'llm', '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-api-key-env', 'CEREALBAR_SERVE_KEY', '--llm-max-retries', '0'],
      { CEREALBAR_SERVE_KEY: KEY },
    );
    const leader = await join(serve.url, { role: 'leader', botFollower: true });
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    leader.act({ type: 'instruction', text: 'look around' });
    leader.act({ type: 'endTurn' });
    await waitFor(() => leader.view!.instructions.some((i) => i.status === 'done'), 'the LLM follower to finish', 20_000);
    await leader.room.leave(true);
    const log = () => readFileSync(joinPath(dataDir, 'logs', readdirSync(joinPath(dataDir, 'logs'))[0]), 'utf8');
    await waitFor(() => log().includes('"kind":"end"'), 'the log to end');
    const game = replay(log());
    const gameId = game.header.gameId;
    expect((game.header.meta as any).agents.follower).toMatchObject({ name: expect.stringContaining('llm') });
    const file = joinPath(dataDir, 'llm', `${gameId}.follower.llm.ndjson`);
    expect(readFileSync(file, 'utf8')).not.toContain(KEY);
    const [header, ...calls] = readRecords(file) as [RecordHeader, ...CallRecord[]];
    expect(header).toMatchObject({ episode: gameId, role: 'follower', model: STUB_MODEL });
    expect(calls.map((call) => call.requestId)).toEqual(stub.chatRequests().map((request) => request.requestId));
    // The game's events so far when it was asked: the leader's instruction and End Turn.
    expect(calls[0]).toMatchObject({ status: 'ok', event: 2 });
  });

  test("P-150: --llm-max-calls-total bounds the LLM agent's calls over every game: the operator is warned once at 80%, the game in play goes on without its calls (the leader told), and new games with it are refused 403", async () => {
    stub = await startStubLlm({ respond: () => JSON.stringify({ actions: ['RR', 'DONE'] }) });
    const dataDir = joinPath(dir, 'data');
    serve = await startServeProcess(dataDir, ['--bot-follower', 'llm', '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-max-retries', '0', '--llm-max-calls-total', '5', ...ON_TIME]);
    expect(serve.output()).toContain("  at most 2 games with them at once per player, 16 in all; the LLM agent's budget: 5 calls".replace('16', String(8 * availableParallelism())));
    const leader = await join(serve.url, { role: 'leader', botFollower: true });
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    // One call for each of the first five instructions; the sixth finds the budget spent.
    for (let i = 1; i <= 6; i++) leader.act({ type: 'instruction', text: `turn around ${i}` });
    leader.act({ type: 'endTurn' });
    const notices = (kind: string) => leader.messages.filter((m) => m.type === 'notice' && m.payload.kind === kind).map((m) => m.payload.message);
    // The seat tells the leader once it has marked the sixth done.
    await waitFor(() => notices('followerGaveUp').length === 1, 'the sixth instruction to be marked done', 30_000);
    expect(leader.view!.instructions.filter((i) => i.status === 'done')).toHaveLength(6);
    expect(stub.chatRequests()).toHaveLength(5);
    expect(notices('agentStopped')).toEqual(['The agent follower has stopped playing for the rest of this game: the server cannot run it any more. The game goes on without it (each of your instructions is marked done for it); you may leave the game.']);
    expect(notices('followerGaveUp')).toEqual([failedInstructionNote('turn around 6')]);
    const warnings = serve.output().split('\n').filter((line) => line.startsWith('cerealbar: warning:'));
    expect(warnings).toEqual([
      "cerealbar: warning: the LLM agents have used 80% of the server's LLM budget: 4 of 5 calls (--llm-max-calls-total); at the limit new games with them are refused and games in play go on without their calls",
    ]);
    await expect(join(serve.url, { role: 'leader', botFollower: true })).rejects.toMatchObject({
      code: 403,
      message: "the server's budget for its LLM agent is spent, so it starts no new games with its agent follower: play with a person",
    });
    // The agent leader calls no LLM: its games are not refused.
    const follower = await join(serve.url, { role: 'follower', botLeader: true });
    await waitFor(() => follower.phase === 'playing', 'a game with the agent leader');
    const records = joinPath(dataDir, 'llm');
    const [, ...calls] = readRecords(joinPath(records, readdirSync(records)[0])) as [RecordHeader, ...CallRecord[]];
    expect(calls.at(-1)).toMatchObject({ status: 'cost_limit', request: null, error: "the server's LLM calls number 5, which reaches its max of 5 calls" });
  });

  test('P-150: --llm-max-cost bounds what the calls cost together, by the prices, which it needs', async () => {
    const noPrices = await serveToExit(joinPath(dir, 'none'), ['--bot-follower', 'llm', '--llm-model', STUB_MODEL, '--llm-max-cost', '1']);
    expect(noPrices.code).toBe(2);
    expect(noPrices.stderr).toMatch(/^cerealbar: --bot-follower "llm": --llm-max-cost needs the prices of every llm seat, and the follower has none/);
    // 1,000 prompt tokens at $1 a million: $0.001 a call; the third reaches $0.003.
    stub = await startStubLlm({ respond: () => ({ content: JSON.stringify({ actions: ['RR', 'DONE'] }), promptTokens: 1000, completionTokens: 0 }) });
    const prices = ['--llm-price-per-million-input', '1', '--llm-price-per-million-output', '1'];
    serve = await startServeProcess(joinPath(dir, 'data'), ['--bot-follower', 'llm', '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-max-retries', '0', ...prices, '--llm-max-cost', '0.003', ...ON_TIME]);
    const leader = await join(serve.url, { role: 'leader', botFollower: true });
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    for (let i = 1; i <= 4; i++) leader.act({ type: 'instruction', text: `turn around ${i}` });
    leader.act({ type: 'endTurn' });
    await waitFor(() => leader.view!.instructions.filter((i) => i.status === 'done').length === 4, 'the four instructions to be done', 30_000);
    expect(stub.chatRequests()).toHaveLength(3);
    expect(leader.messages.filter((m) => m.type === 'notice' && m.payload.kind === 'agentStopped')).toHaveLength(1);
    expect(serve.output()).toContain("cerealbar: warning: the LLM agents have used 80% of the server's LLM budget: $0.0030 of $0.003 (--llm-max-cost); at the limit");
    await expect(join(serve.url, { role: 'leader', botFollower: true })).rejects.toMatchObject({ code: 403 });
    const metrics = await (await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/^cerealbar_agent_games_refused_total\{reason="llm-budget"\} 1$/m);
  });

  test('P-119: with --llm-images follower each call of the seated LLM follower sends the frame of its seat\'s view, kept beside its call records', async () => {
    stub = await startStubLlm({ respond: () => JSON.stringify({ actions: ['RR', 'DONE'] }) });
    const dataDir = joinPath(dir, 'data');
    serve = await startServeProcess(dataDir, ['--bot-follower', 'llm', '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-images', 'follower', '--llm-image-size', '96x72']);
    const leader = await join(serve.url, { role: 'leader', botFollower: true });
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    leader.act({ type: 'instruction', text: 'look around' });
    leader.act({ type: 'endTurn' });
    await waitFor(() => leader.view!.instructions.some((i) => i.status === 'done'), 'the LLM follower to finish', 30_000);
    await leader.room.leave(true);
    const records = joinPath(dataDir, 'llm');
    const file = readdirSync(records).find((name) => name.endsWith('.follower.llm.ndjson'))!;
    const [header, ...calls] = readRecords(joinPath(records, file)) as [RecordHeader, ...CallRecord[]];
    expect(header.settings).toMatchObject({ images: true, imageSize: '96x72', imageCamera: 'first-person' });
    expect(calls[0].images).toEqual([expect.objectContaining({ width: 96, height: 72 })]);
    const image = readFileSync(joinPath(records, calls[0].images![0].file));
    expect(createHash('sha256').update(image).digest('hex')).toBe(calls[0].images![0].sha256);
    expect(imagesOf(stub.chatRequests()[0].body).map((sent) => sent.png)).toEqual([image]);
  });
});
