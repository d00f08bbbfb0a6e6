/** `dataset export --frames` as a user runs it: frames beside JSON Lines records, an image column in Parquet. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { PNG } from 'pngjs';
import { frameView } from '../../shared/frames/frame';
import { FrameRenderer } from '../../shared/frames/node/renderer';
import { playerViews } from '../../shared/frames/views';
import { followedInstructions, instructionPathStates, recordsOf } from '../../shared/dataset/records';
import { loadRecording } from '../../shared/eval/recording';
import { cerealbar } from '../cli/run';
import { logText, selfPlayLines } from './corpus';

const dir = mkdtempSync(join(tmpdir(), 'dataset-frames-'));
const logs = join(dir, 'logs');
mkdirSync(logs);
for (const seed of [1, 2, 3]) writeFileSync(join(logs, `game-${seed}.jsonl`), logText(selfPlayLines(seed)));
/** One game, for a frame at every step. */
const oneLog = join(dir, 'one.jsonl');
writeFileSync(oneLog, logText(selfPlayLines(1)));

interface Row {
  id: string;
  split: string;
  instruction_id: number;
  game_id: string;
  follower_frame: string | null;
  leader_frame?: string | null;
  follower_step_frames?: string[];
  path: unknown[];
}

function jsonRows(out: string): Row[] {
  return readdirSync(join(out, 'instructions')).flatMap((file) =>
    readFileSync(join(out, 'instructions', file), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Row),
  );
}

test("JSON Lines: each instruction names PNG files of each chosen player's view at its start, drawn from that player's view", async () => {
  const out = join(dir, 'jsonl');
  const { status, stderr } = await cerealbar('dataset', 'export', '--data', logs, '--out', out, '--no-prune', '--frames', 'follower,leader', '--frame-size', '48x36');
  expect(stderr).toBe('');
  expect(status).toBe(0);
  const rows = jsonRows(out);
  const acted = rows.filter((row) => row.path.length > 0);
  expect(acted.length).toBeGreaterThan(3);
  for (const row of rows) {
    if (row.path.length === 0) {
      expect([row.follower_frame, row.leader_frame]).toEqual([null, null]);
      continue;
    }
    expect(row.follower_frame).toMatch(new RegExp(`^frames/${row.split}/.+-follower\\.png$`));
    const png = PNG.sync.read(readFileSync(join(out, row.follower_frame!)));
    expect([png.width, png.height]).toEqual([48, 36]);
    expect(existsSync(join(out, row.leader_frame!))).toBe(true);
  }
  // The follower's frame is its own view at the instruction's start, drawn as `render` draws it.
  const row = acted[0];
  const recording = loadRecording(readFileSync(join(logs, `${row.game_id.replace(/^selfplay-/, 'game-')}.jsonl`), 'utf8'));
  const start = instructionPathStates(recording, followedInstructions(recording).get(row.instruction_id)!)[0];
  const view = playerViews(recording.states, 'follower', (i) => i === start)[start]!;
  const renderer = await FrameRenderer.start();
  try {
    const drawn = await renderer.render({ world: 'check', view: frameView(view), camera: 'first-person', size: { width: 48, height: 36 }, format: 'png' });
    expect(drawn.equals(readFileSync(join(out, row.follower_frame!)))).toBe(true);
  } finally {
    await renderer.close();
  }
  const card = readFileSync(join(out, 'README.md'), 'utf8');
  expect(card).toContain('### Frames');
  expect(card).toContain("- `follower_frame`: the follower's first-person view");
  expect(card).toContain("- `leader_frame`: the leader's whole map from above");
  expect(JSON.parse(readFileSync(join(out, 'export.json'), 'utf8')).frames).toEqual({ roles: ['follower', 'leader'], size: { width: 48, height: 36 }, everyStep: false });
}, 300_000);

test('Parquet: an image column per role (and a list of them per step) that the datasets library decodes, declared in its metadata', async () => {
  const out = join(dir, 'parquet');
  const { status } = await cerealbar('dataset', 'export', '--data', oneLog, '--out', out, '--no-prune', '--format', 'parquet', '--splits', '1,0,0', '--frames', 'follower', '--frames-every-step', '--frame-size', '24x18');
  expect(status).toBe(0);
  expect(existsSync(join(out, 'frames'))).toBe(false);
  const bytes = readFileSync(join(out, 'instructions', 'train.parquet'));
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const features = JSON.parse(parquetMetadata(file).key_value_metadata!.find((entry) => entry.key === 'huggingface')!.value!).info.features;
  expect(features.follower_frame).toEqual({ _type: 'Image' });
  expect(features.follower_step_frames).toEqual({ feature: { _type: 'Image' }, _type: 'Sequence' });
  expect(features.text).toEqual({ dtype: 'string', _type: 'Value' });
  expect(features.actions).toEqual({ feature: { dtype: 'string', _type: 'Value' }, _type: 'Sequence' });
  const rows = (await parquetReadObjects({ file, utf8: false })) as { path: Uint8Array; follower_frame: { bytes: Uint8Array; path: Uint8Array } | null; follower_step_frames: { bytes: Uint8Array }[] }[];
  const acted = rows.filter((row) => row.follower_frame !== null && row.follower_frame !== undefined);
  expect(acted.length).toBeGreaterThan(0);
  for (const row of acted) {
    const png = PNG.sync.read(Buffer.from(row.follower_frame!.bytes));
    expect([png.width, png.height]).toEqual([24, 18]);
    const path = JSON.parse(Buffer.from(row.path).toString('utf8')) as unknown[];
    expect(row.follower_step_frames).toHaveLength(path.length);
    expect(Buffer.from(row.follower_step_frames[0].bytes).equals(Buffer.from(row.follower_frame!.bytes))).toBe(true);
  }
  // Games are untouched by frames.
  const records = recordsOf(loadRecording(readFileSync(join(logs, 'game-1.jsonl'), 'utf8')));
  expect(records.instructions.length).toBeGreaterThan(0);
}, 300_000);

test.each([
  [['--frames', 'referee'], '--frames is follower, leader or follower,leader, not "referee"'],
  [['--frames', 'follower', '--frame-size', '5'], '--frame-size: a frame size is WIDTHxHEIGHT in pixels, e.g. 320x240, not "5"'],
  [['--frames-every-step'], '--frames-every-step needs --frames'],
])('bad frame options are refused before anything is written: %j', async (args, message) => {
  const out = join(dir, `bad-${Math.random()}`);
  const { status, stderr } = await cerealbar('dataset', 'export', '--data', logs, '--out', out, ...args);
  expect(status).toBe(2);
  expect(stderr).toContain(message);
  expect(existsSync(out)).toBe(false);
});
