/**
 * Frames for models (`npm run bench:render`): frames a second of one frame renderer (headless
 * Chromium, software WebGL) drawing the follower's first-person view at 320x240 and the leader's
 * overhead view at 640x640, for views of a self-play game in turn (each a new state, as an
 * environment or a dataset export asks for them); then as many renderers at once as the machine
 * has cores. It prints the renderer's memory (the resident size of its browser and that browser's
 * children) before and after the first run, and each figure beside the one last recorded in
 * docs/benchmarks.md ("Frames for models"). `-- --frames N` sets each run's frames (default 2000).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { frameView, type FrameCamera, type FrameRequest } from '../shared/frames/frame';
import { FrameRenderer } from '../shared/frames/node/renderer';
import { playerViews } from '../shared/frames/views';
import type { Role } from '../shared/engine/state';
import { selfPlayStates } from '../test/fixtures';

/** The figures last recorded in docs/benchmarks.md, which a run is compared with (null: none yet). */
const RECORDED: { readonly date: string; readonly fps: Readonly<Record<string, number>> } | null = {
  date: '2026-11-28',
  fps: { 'follower first-person 320x240': 16.4, 'leader overhead 640x640': 5.1, 'follower first-person 320x240, 2 renderers': 17.9, 'leader overhead 640x640, 2 renderers': 5.7 },
};

const at = process.argv.indexOf('--frames');
const FRAMES = at >= 0 ? Number(process.argv[at + 1]) : 2000;
/** Requests a caller keeps in flight (a renderer draws them in order). */
const IN_FLIGHT = 4;

const CASES: readonly { readonly role: Role; readonly camera: FrameCamera; readonly width: number; readonly height: number }[] = [
  { role: 'follower', camera: 'first-person', width: 320, height: 240 },
  { role: 'leader', camera: 'overhead', width: 640, height: 640 },
];

/** Resident memory in MB of a process and all its descendants (Linux /proc). */
function treeRssMb(root: number): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const parent = Number(fields[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
      rss.set(Number(entry), Number(fields[21]) * 4096);
    } catch {
      // The process ended while we looked.
    }
  }
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    total += rss.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total / 2 ** 20;
}

/** Draws `frames` frames of `requests` in turn, `IN_FLIGHT` at a time; frames a second. */
async function run(renderer: FrameRenderer, requests: readonly FrameRequest[], frames: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < frames; i += IN_FLIGHT) {
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, frames - i) }, (_, k) => renderer.render(requests[(i + k) % requests.length])));
  }
  return frames / ((performance.now() - started) / 1000);
}

function line(name: string, fps: number): string {
  const before = RECORDED?.fps[name];
  return `render: ${name}: ${fps.toFixed(1)} frames/s${before === undefined ? '' : ` (recorded ${RECORDED!.date}: ${before.toFixed(1)}, ${(fps / before).toFixed(2)}x)`}\n`;
}

async function main(): Promise<void> {
  const states = selfPlayStates(3);
  const requests = Object.fromEntries(
    CASES.map(({ role, camera, width, height }) => [
      `${role} ${camera} ${width}x${height}`,
      playerViews(states, role).map((view): FrameRequest => ({ world: `bench-${role}`, view: frameView(view!), camera, size: { width, height }, format: 'rgb' })),
    ]),
  );
  const cores = cpus().length;
  process.stdout.write(`frames for models: ${FRAMES} frames a run of ${states.length} states of a self-play game, ${IN_FLIGHT} requests in flight, ${cores} cores\n`);
  const renderer = await FrameRenderer.start();
  try {
    const pid = renderer.browserPid!;
    await run(renderer, Object.values(requests)[0], 50);
    const startRss = treeRssMb(pid);
    for (const [name, list] of Object.entries(requests)) process.stdout.write(line(name, await run(renderer, list, FRAMES)));
    process.stdout.write(`render: renderer memory (browser and its children): ${startRss.toFixed(0)} MB at the start, ${treeRssMb(pid).toFixed(0)} MB after ${2 * FRAMES} frames\n`);
  } finally {
    await renderer.close();
  }
  const renderers = await Promise.all(Array.from({ length: cores }, () => FrameRenderer.start()));
  try {
    for (const [name, list] of Object.entries(requests)) {
      const rates = await Promise.all(renderers.map((each) => run(each, list, Math.ceil(FRAMES / cores))));
      process.stdout.write(line(`${name}, ${cores} renderers`, rates.reduce((sum, rate) => sum + rate, 0)));
    }
  } finally {
    await Promise.all(renderers.map((each) => each.close()));
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
