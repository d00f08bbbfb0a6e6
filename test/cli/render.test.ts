/** `cerealbar render` and `cerealbar frames` as their users run them (docs/rendering.md). */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { generateMap } from '../../shared/maps/generate';
import { frameView } from '../../shared/frames/frame';
import { instructionStarts } from '../../shared/frames/views';
import type { LogLine } from '../../shared/log/format';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { selfPlayStates } from '../fixtures';
import { tutorialState, viewOf } from '../frames/tutorial';
import { cerealbar } from './run';

const BIN = join(__dirname, '../../bin/cerealbar.cjs');
const dir = mkdtempSync(join(tmpdir(), 'render-'));
const log = join(dir, 'game.jsonl');
const lines: LogLine[] = [];
playSelfPlayGame({ seed: 3, map: generateMap(3) }, (line) => lines.push(line));
writeFileSync(log, lines.map((line) => JSON.stringify(line)).join('\n') + '\n');
const gameId = (lines[0] as { gameId: string }).gameId;

test("by default: a PNG of the follower's first-person view wherever it is first shown an instruction, named <game>-<seq>-<role>", async () => {
  const out = join(dir, 'instructions');
  const { status, stdout, stderr } = await cerealbar('render', log, '--role', 'follower', '--size', '64x48', '--out', out);
  expect(stderr).toContain('frames');
  expect(status).toBe(0);
  const starts = instructionStarts(selfPlayStates(3));
  expect(readdirSync(out).sort()).toEqual(starts.map((seq) => `${gameId}-${seq}-follower.png`).sort());
  expect(stdout).toBe(`${starts.length} frames of 1 game in ${out}\n`);
  const png = PNG.sync.read(readFileSync(join(out, `${gameId}-${starts[0]}-follower.png`)));
  expect([png.width, png.height]).toEqual([64, 48]);
}, 120_000);

test('--at seqs, --camera and --format jpeg', async () => {
  const out = join(dir, 'seqs');
  const { status } = await cerealbar('render', log, '--role', 'leader', '--camera', 'angled', '--at', '5,0', '--format', 'jpeg', '--size', '40x30', '--out', out);
  expect(status).toBe(0);
  expect(readdirSync(out).sort()).toEqual([`${gameId}-0-leader.jpg`, `${gameId}-5-leader.jpg`]);
  expect(readFileSync(join(out, `${gameId}-0-leader.jpg`)).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
}, 120_000);

describe('bad input is refused in one line before anything is drawn or written', () => {
  test.each([
    [['--role', 'referee'], '--role is leader, follower, not "referee"'],
    [['--role', 'follower', '--camera', 'fisheye'], '--camera is first-person, overhead, angled, not "fisheye"'],
    [['--role', 'follower', '--size', '0x10'], "--size: a frame's sides are 1 to 4096 pixels, not 0x10"],
    [['--role', 'follower', '--format', 'gif'], '--format is png, jpeg, not "gif"'],
    [['--role', 'follower', '--at', '1,two'], '--at is start, instructions, steps or event seqs separated by commas (e.g. 0,12,40), not "1,two"'],
    [['--role', 'follower', '--at', '100000'], `${log}: seq 100000 is not an event of this game`],
  ])('%j', async (args, message) => {
    const out = join(dir, `bad-${Math.random()}`);
    const { status, stderr } = await cerealbar('render', log, ...args, '--out', out);
    expect(status).toBe(2);
    expect(stderr).toContain(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });

  test('a log that does not exist', async () => {
    const { status, stderr } = await cerealbar('render', join(dir, 'missing.jsonl'), '--role', 'follower', '--out', join(dir, 'never'));
    expect(status).toBe(2);
    expect(stderr).toContain('missing.jsonl: no such file or directory');
  });

  test('a log that does not replay', async () => {
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, `${JSON.stringify(lines[0])}\n{"kind":"event"}\n`);
    const { status, stderr } = await cerealbar('render', broken, '--role', 'follower', '--out', join(dir, 'never'));
    expect(status).toBe(2);
    expect(stderr).toMatch(/^.*broken\.jsonl: line 2/);
  });
});

describe('--video', () => {
  test('without ffmpeg, says so and what to do', async () => {
    const previous = process.env.FFMPEG;
    process.env.FFMPEG = join(dir, 'no-ffmpeg-here');
    try {
      const { status, stderr } = await cerealbar('render', log, '--role', 'follower', '--video', '--out', join(dir, 'no-video'));
      expect(status).toBe(2);
      expect(stderr).toContain('--video needs ffmpeg, which is not installed');
      expect(stderr).toContain('leave out --video to write images');
    } finally {
      if (previous === undefined) delete process.env.FFMPEG;
      else process.env.FFMPEG = previous;
    }
  });

  test("pipes each frame's raw RGB to ffmpeg, one MP4 per log and role", async () => {
    // A stand-in ffmpeg: it writes its arguments and the bytes it was given into the output file.
    const fake = join(dir, 'fake-ffmpeg');
    writeFileSync(fake, '#!/bin/sh\nfor last; do :; done\nif [ "$2" = "-version" ]; then exit 0; fi\nbytes=$(wc -c)\necho "$* bytes=$bytes" > "$last"\n');
    chmodSync(fake, 0o755);
    const previous = process.env.FFMPEG;
    process.env.FFMPEG = fake;
    try {
      const out = join(dir, 'video');
      const { status } = await cerealbar('render', log, '--role', 'follower', '--video', '--fps', '2', '--at', '0,1,2', '--size', '32x24', '--out', out);
      expect(status).toBe(0);
      expect(readdirSync(out)).toEqual([`${gameId}-follower.mp4`]);
      const made = readFileSync(join(out, `${gameId}-follower.mp4`), 'utf8');
      expect(made).toContain('-f rawvideo -pix_fmt rgb24 -s 32x24 -r 2 -i -');
      expect(made).toContain(`bytes=${3 * 32 * 24 * 3}`);
    } finally {
      if (previous === undefined) delete process.env.FFMPEG;
      else process.env.FFMPEG = previous;
    }
  }, 120_000);
});

test('a renderer that cannot start says why in one line, and what to install', () => {
  const result = spawnSync(process.execPath, [BIN, 'render', log, '--role', 'follower', '--out', join(dir, 'no-chromium')], {
    env: { ...process.env, CHROMIUM_PATH: join(dir, 'no-chromium-here') },
    encoding: 'utf8',
  });
  expect(result.status).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/cannot start the frame renderer: Chromium did not start \(.*\); run `npm ci` .*install Chromium .*or set CHROMIUM_PATH/);
}, 60_000);

test('cerealbar frames answers frame requests on stdin with length-prefixed frames, and refuses bad ones in one line', async () => {
  const child = spawn(process.execPath, [BIN, 'frames'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const request = { world: 'w', view: frameView(viewOf(tutorialState(), 'follower')), camera: 'first-person', size: { width: 16, height: 12 }, format: 'rgb' };
  child.stdin.write(`${JSON.stringify(request)}\nnot json\n${JSON.stringify({ ...request, camera: 'fisheye' })}\n`);
  child.stdin.end();
  const chunks: Buffer[] = [];
  for await (const chunk of child.stdout) chunks.push(chunk as Buffer);
  const out = Buffer.concat(chunks);
  expect(out.readUInt32LE(0)).toBe(16 * 12 * 3);
  let at = 4 + 16 * 12 * 3;
  const refusals: string[] = [];
  while (at < out.length) {
    expect(out.readUInt32LE(at)).toBe(0xffffffff);
    const length = out.readUInt32LE(at + 4);
    refusals.push(out.subarray(at + 8, at + 8 + length).toString('utf8'));
    at += 8 + length;
  }
  expect(refusals).toHaveLength(2);
  expect(refusals[0]).toMatch(/^not JSON: /);
  expect(refusals[1]).toMatch(/^not a frame request: camera: /);
}, 60_000);
