/**
 * `cerealbar serve --study` with a study that has arms, as a real process: each arm's agent is
 * started once before the server takes games (one that cannot play its seat stops serve, exit 2,
 * in one line), and --llm-records says where the LLM arms' call records go.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStubLlm, STUB_MODEL, type StubLlm } from '../helpers/stubLlm';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { serveToExit, startServeProcess, stopServeProcess, type ServeProcess } from './harness';

jest.setTimeout(60_000);

let dir = '';
let stub: StubLlm;
let serve: ServeProcess | null = null;

beforeAll(async () => {
  stub = await startStubLlm();
});
afterAll(() => stub.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-serve-arms-'));
});
afterEach(async () => {
  await stopServeProcess(serve);
  serve = null;
  rmSync(dir, { recursive: true, force: true });
});

/** A study whose participants lead, with these arms. */
function armsStudy(arms: unknown[]): string {
  const data = setPath(validStudy(), 'roles', { newWorkersStartAs: 'leader', promotion: 'manual' });
  data.arms = arms;
  return writeStudy(studyFolder(join(dir, 'study')), data);
}


test.each<[string, unknown, RegExp]>([
  ['an LLM endpoint that cannot be reached', { id: 'far', agent: 'llm', llm: { model: STUB_MODEL, 'base-url': 'http://127.0.0.1:9/v1' } }, /^cerealbar: study pilot-1: arm far \("llm"\) cannot play the follower's seat: cannot reach http:\/\/127\.0\.0\.1:9\/v1: .*\n$/],
  ['an agent that needs a recorded game', { id: 'o', agent: 'oracle' }, /arms\[1\]\.agent: the oracle agent needs a recorded game; it can only be evaluated over logs \(cerealbar eval --agent oracle --logs PATH\): the arms play the follower's seat/],
  ['a program that does not start', { id: 'p', agent: './no-such-agent-program' }, /^cerealbar: study pilot-1: arm p \("\.\/no-such-agent-program"\) cannot play the follower's seat: agent .* exited with code 127/],
])('serve stops before it takes games (exit 2, one line) for an arm with %s', async (_what, arm, message) => {
  const { code, stderr } = await serveToExit(join(dir, 'data'), ['--study', armsStudy([{ id: 'h', agent: 'heuristic' }, arm])]);
  expect(code).toBe(2);
  expect(stderr).toMatch(message);
});

test("serve runs a study with an LLM arm, --llm-records naming where its call records go, and says what the arms are", async () => {
  const study = armsStudy([
    { id: 'h', agent: 'heuristic', weight: 3 },
    { id: 'l', agent: 'llm', llm: { model: STUB_MODEL, 'base-url': stub.url } },
  ]);
  serve = await startServeProcess(join(dir, 'data'), ['--study', study, '--llm-records', join(dir, 'records')]);
  expect(serve.output()).toContain('  its arms, the follower of each game, drawn by weight: h ("heuristic", weight 3), l ("llm", weight 1)\n');
  // The arm's agent was started once, its endpoint checked.
  expect(stub.requests.some((request) => request.path === '/v1/models')).toBe(true);
});
