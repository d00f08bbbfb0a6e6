/**
 * Images for LLM seats through the commands, against the stub server: `selfplay`, agent-vs-agent
 * `eval` and `eval --logs` with `--llm-images` send each call its frame and keep every image beside
 * the call records, listed by sha256 on the call lines (matching what was sent) and named in the
 * records' header, run.json and the reports; a seat that is not an llm seat, and a frame renderer
 * that cannot start, stop the command before any game.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRecords, type CallRecord, type RecordHeader } from '../../shared/agents/node/llm/records';
import { cerealbar } from '../cli/run';
import { signalled } from '../cli/signalled';
import { followerByContent, imagesOf, startStubLlm, STUB_MODEL, type StubLlm } from '../helpers/stubLlm';

jest.setTimeout(180_000);

const BIN = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');
const FIXTURES = join(__dirname, '..', 'fixtures', 'cb2-logs');

let dir: string;
let stub: StubLlm | null = null;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'llm-image-commands-'))));
afterEach(async () => {
  await stub?.close();
  stub = null;
  rmSync(dir, { recursive: true, force: true });
});

const llmArgs = (url: string) => ['--llm-base-url', url, '--llm-model', STUB_MODEL, '--llm-max-retries', '0'];
const SMALL = ['--llm-images', 'follower', '--llm-image-size', '96x72', '--llm-image-detail', 'low'];

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The PNG each chat request the stub got carried, in order (one each, at low detail). */
function sentImages(): Buffer[] {
  return stub!.chatRequests().map((request) => {
    const images = imagesOf(request.body);
    expect(images.map((image) => image.detail)).toEqual(['low']);
    return images[0].png;
  });
}

/**
 * The record files' calls, each sent with its one image: a file beside them, its bytes' sha256 the
 * one on the line and the one of the image the stub got for that call; no base64 in any record.
 */
function expectImagesOnRecord(files: readonly string[]): CallRecord[] {
  const calls: CallRecord[] = [];
  for (const file of files) {
    const [header, ...lines] = readRecords(file) as [RecordHeader, ...CallRecord[]];
    expect(header.settings).toMatchObject({ images: true, imageSize: '96x72', imageDetail: 'low', imageCamera: 'first-person', imageFormat: 'png' });
    expect(readFileSync(file, 'utf8')).not.toContain('base64');
    for (const call of lines.filter((line) => line.request)) {
      expect(call.images).toEqual([expect.objectContaining({ width: 96, height: 72, camera: 'first-person' })]);
      const image = call.images![0];
      expect(image.file).toBe(`${file.replace(/^.*\//, '').replace(/\.ndjson$/, '')}.images/${image.sha256}.png`);
      expect(sha256(readFileSync(join(file, '..', image.file)))).toBe(image.sha256);
      calls.push(call);
    }
  }
  expect(calls.map((call) => call.images![0].sha256)).toEqual(sentImages().map(sha256));
  return calls;
}

test('selfplay --follower llm --llm-images follower: each call sends its frame, kept beside the records; run.json names the settings', async () => {
  stub = await startStubLlm({ respond: followerByContent });
  const out = join(dir, 'runs');
  const run = await cerealbar('selfplay', '--leader', 'scripted', '--follower', 'llm', '--seed', '4', '--out', out, ...llmArgs(stub.url), ...SMALL);
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  expect(readdirSync(out).sort()).toEqual(['run.json', 'selfplay-4.follower.llm.images', 'selfplay-4.follower.llm.ndjson', 'selfplay-4.jsonl']);
  expect(expectImagesOnRecord([join(out, 'selfplay-4.follower.llm.ndjson')]).length).toBeGreaterThan(3);
  const manifest = JSON.parse(readFileSync(join(out, 'run.json'), 'utf8'));
  expect(manifest.settings.llm.follower).toMatchObject({ images: true, imageSize: { width: 96, height: 72 }, imageDetail: 'low' });
  // The folder is still a folder of logs.
  expect((await cerealbar('eval', '--agent', 'heuristic', '--logs', out, '--workers', '1')).status).toBe(0);
});

test('E-64: eval --pair scripted:llm --llm-images follower: the report, its page and the terminal name the image settings; the images are beside the pair\'s records; --resume compares them', async () => {
  stub = await startStubLlm({ respond: followerByContent });
  const out = join(dir, 'eval');
  const args = ['eval', '--pair', 'scripted:llm', '--games', '2', '--seed', '3', '--out', out, ...llmArgs(stub.url)];
  const run = await cerealbar(...args, ...SMALL);
  expect(run.status).toBe(0);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  const settings = report.pairs[0].llm.follower.settings.settings;
  expect(settings).toMatchObject({ images: true, imageSize: '96x72', imageDetail: 'low', imageCamera: 'first-person', imageFormat: 'png' });
  const described = 'images true, imageSize 96x72, imageDetail low, imageCamera first-person, imageFormat png';
  expect(run.stdout).toContain(described);
  expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain(described);
  expect(readdirSync(join(out, 'pair-1')).filter((name) => name.endsWith('.llm.images')).sort()).toEqual(['eval-3.follower.llm.images', 'eval-4.follower.llm.images']);
  expectImagesOnRecord(['eval-3', 'eval-4'].map((game) => join(out, 'pair-1', `${game}.follower.llm.ndjson`)));
  const other = await cerealbar(...args, '--llm-images', 'follower', '--llm-image-size', '64x48', '--llm-image-detail', 'low', '--resume');
  expect({ status: other.status, stderr: other.stderr }).toEqual({ status: 2, stderr: `cerealbar: --resume: the run in ${out} had other settings (llm.scripted:llm.follower.imageSize.height differs); give the same options, or --overwrite\n` });
});

test('E-64: eval --agent llm --logs --llm-images follower: each episode\'s calls send the follower\'s frame, and the report names the settings', async () => {
  const logs = join(dir, 'logs');
  expect((await cerealbar('import', 'cb2', FIXTURES, '--out', logs)).status).toBe(0);
  // A short game: two or three instructions, an episode each at most.
  const instructions = (file: string) => readFileSync(file, 'utf8').split('\n').filter((line) => line.includes('"type":"instruction"')).length;
  const log = readdirSync(logs)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .map((name) => join(logs, name))
    .find((file) => instructions(file) >= 2 && instructions(file) <= 3)!;
  stub = await startStubLlm({ respond: followerByContent });
  const out = join(dir, 'run', 'report.json');
  const run = await cerealbar('eval', '--agent', 'llm', '--logs', log, '--max-actions', '4', '--out', out, ...llmArgs(stub.url), ...SMALL);
  expect(run.status).toBe(0);
  const report = JSON.parse(readFileSync(out, 'utf8'));
  expect(report.episodes.length).toBeGreaterThan(0);
  expect(report.llm.settings.settings).toMatchObject({ images: true, imageSize: '96x72' });
  expect(run.stdout).toContain('images true, imageSize 96x72, imageDetail low');
  expectImagesOnRecord(report.episodes.map((episode: { episodeId: string }) => join(dir, 'run', `${episode.episodeId.replace(/[^A-Za-z0-9._#-]/g, '_')}.follower.llm.ndjson`)));
});

test.each([
  [['selfplay', '--leader', 'llm', '--follower', 'heuristic', '--out', 'OUT'], 'follower', '--llm-images follower: the llm agent does not play the follower here (it plays the leader); give --llm-images leader, both or none'],
  [['eval', '--agent', 'llm', '--logs', 'OUT'], 'leader', '--llm-images leader: the llm agent does not play the leader here (it plays the follower); give --llm-images follower, both or none'],
  [['eval', '--pair', 'scripted:llm', '--out', 'OUT'], 'leader', '--llm-images leader: the llm agent does not play the leader here (it plays the follower); give --llm-images follower, both or none'],
  [['agent', '--role', 'leader', '--server', 'http://127.0.0.1:9', '--agent', 'llm'], 'follower', '--llm-images follower: the llm agent does not play the follower here (it plays the leader); give --llm-images leader, both or none'],
])('%j with --llm-images %s, a seat the llm agent does not play, stops with one line and exit 2', async (args, seat, message) => {
  const run = await cerealbar(...args.map((arg) => (arg === 'OUT' ? join(dir, 'out') : arg)), '--llm-model', STUB_MODEL, '--llm-images', seat);
  expect(run).toEqual({ status: 2, stdout: '', stderr: `cerealbar: ${message}\n` });
});

test('a frame renderer that cannot start stops the command before any game, with its reason in one line (exit 2)', async () => {
  stub = await startStubLlm({ respond: followerByContent });
  const out = join(dir, 'runs');
  const empty = join(dir, 'no-client');
  // Its own process: the built client's place is read when the renderer's module loads. The stub answers meanwhile.
  const child = spawn(process.execPath, [BIN, 'selfplay', '--leader', 'scripted', '--follower', 'llm', '--out', out, ...llmArgs(stub.url), '--llm-images', 'follower'], {
    env: { ...process.env, CEREALBAR_CLIENT_DIST: empty },
  });
  const run = { stdout: '', stderr: '', status: null as number | null };
  child.stdout.on('data', (chunk) => (run.stdout += chunk));
  child.stderr.on('data', (chunk) => (run.stderr += chunk));
  run.status = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect({ status: run.status, stdout: run.stdout }).toEqual({ status: 2, stdout: '' });
  expect(run.stderr).toBe(`cerealbar: cannot start the follower "llm": cannot start the frame renderer: ${join(empty, 'frames', 'index.html')} is missing; run \`npm run build:client\`\n`);
  expect(stub.chatRequests()).toEqual([]);
  expect(existsSync(join(out, 'selfplay-1.jsonl'))).toBe(false);
});

test('E-63: with images, Ctrl-C still ends the game under way and keeps it whole, its images with it; a second Ctrl-C discards it, images and all', async () => {
  stub = await startStubLlm({ respond: followerByContent });
  const args = (out: string) => ['selfplay', '--leader', 'scripted', '--follower', 'llm', '--games', '6', '--out', out, ...llmArgs(stub!.url), ...SMALL];
  /** The games whose log is written: each has its call records and its images, and nothing else is there. */
  const whole = (out: string) => {
    const games = readdirSync(out).filter((name) => name.endsWith('.jsonl')).map((name) => name.replace(/\.jsonl$/, ''));
    expect(readdirSync(out).filter((name) => name !== 'run.json').sort()).toEqual(games.flatMap((game) => [`${game}.follower.llm.images`, `${game}.follower.llm.ndjson`, `${game}.jsonl`]).sort());
    return games.length;
  };
  const once = join(dir, 'once');
  const first = await signalled(args(once), () => existsSync(join(once, 'selfplay-1.jsonl')), ['SIGINT']);
  expect(first.code).toBe(130);
  expect(first.stderr).toMatch(/cerealbar: interrupted: the logs of the games finished are in .*, whole\n$/);
  expect(whole(once)).toBeGreaterThanOrEqual(2);
  const twice = join(dir, 'twice');
  const second = await signalled(args(twice), () => existsSync(join(twice, 'selfplay-1.jsonl')), ['SIGINT', 'SIGINT']);
  expect(second.code).toBe(130);
  expect(second.stderr).toContain('stopped at once; what was under way is discarded.');
  whole(twice);
});
