/**
 * Frames for models (docs/rendering.md): drawn by the game's own world from one role's view,
 * headless, the same bytes for the same view, and nothing the player does not know.
 */
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import type { Card } from '../../shared/engine/cards';
import type { PlayerView } from '../../shared/engine/playerView';
import { updateState, type GameState, type Role } from '../../shared/engine/state';
import { isVisible } from '../../shared/engine/view';
import { frameView, rgbBytes, type FrameCamera, type FrameFormat } from '../../shared/frames/frame';
import { FrameRenderer } from '../../shared/frames/node/renderer';
import { tutorialState, viewOf } from './tutorial';

const SIZE = { width: 160, height: 120 };
const GOLDEN = join(__dirname, 'golden');

let renderer: FrameRenderer;
beforeAll(async () => {
  renderer = await FrameRenderer.start();
}, 120_000);
afterAll(() => renderer?.close());

function frame(view: PlayerView, camera: FrameCamera = 'first-person', format: FrameFormat = 'rgb', world = 'tutorial'): Promise<Buffer> {
  return renderer.render({ world, view: frameView(view), camera, size: SIZE, format });
}

/** `state` with one card's face changed to another colour and shape. */
function withCardChanged(state: GameState, target: Card): GameState {
  const cards = state.cards.map((card) => (card.id === target.id ? { ...card, color: card.color === 'red' ? 'blue' : 'red', shape: card.shape === 'star' ? 'heart' : 'star' } : card)) as Card[];
  return updateState(state, { cards });
}

function cardSeen(state: GameState, seen: boolean): Card {
  const card = state.cards.find((candidate) => isVisible(state.world, state.follower, state.config.view, candidate) === seen);
  if (!card) throw new Error(`the tutorial start has no card ${seen ? 'in' : 'outside'} the follower's view`);
  return card;
}

test('the same view at the same size gives the same bytes, whatever was drawn before and in whichever scene', async () => {
  const state = tutorialState();
  const first = await frame(viewOf(state, 'follower'));
  await frame(viewOf(state, 'leader'), 'overhead', 'rgb', 'another');
  await frame(viewOf(withCardChanged(state, cardSeen(state, true)), 'follower'));
  expect((await frame(viewOf(state, 'follower'))).equals(first)).toBe(true);
  expect((await frame(viewOf(state, 'follower'), 'first-person', 'rgb', 'a new scene')).equals(first)).toBe(true);
}, 60_000);

test("two states that differ only in a card outside the follower's view give identical follower frames (and different leader frames)", async () => {
  const state = tutorialState();
  const changed = withCardChanged(state, cardSeen(state, false));
  expect((await frame(viewOf(changed, 'follower'))).equals(await frame(viewOf(state, 'follower')))).toBe(true);
  expect((await frame(viewOf(changed, 'leader'), 'overhead')).equals(await frame(viewOf(state, 'leader'), 'overhead'))).toBe(false);
}, 60_000);

test("a card in the follower's view changes its frame", async () => {
  const state = tutorialState();
  const changed = withCardChanged(state, cardSeen(state, true));
  expect((await frame(viewOf(changed, 'follower'))).equals(await frame(viewOf(state, 'follower')))).toBe(false);
}, 60_000);

test('frames come as raw RGB of the asked size, or as PNG and JPEG files', async () => {
  const view = viewOf(tutorialState(), 'follower');
  expect((await frame(view)).length).toBe(rgbBytes(SIZE));
  const png = PNG.sync.read(await frame(view, 'first-person', 'png'));
  expect([png.width, png.height]).toEqual([SIZE.width, SIZE.height]);
  const jpeg = await frame(view, 'first-person', 'jpeg');
  expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8]);
  // The PNG holds the raw frame's pixels exactly.
  const rgb = await frame(view);
  const fromPng = Buffer.alloc(rgb.length);
  for (let i = 0, j = 0; i < png.data.length; i += 4, j += 3) png.data.copy(fromPng, j, i, i + 3);
  expect(fromPng.equals(rgb)).toBe(true);
}, 60_000);

/**
 * Golden frames of the tutorial's start, compared with a tolerance (another machine's software
 * WebGL may differ in a few edge pixels): a change to the client that breaks drawing shows here.
 * UPDATE_GOLDEN_FRAMES=1 writes them anew; look at them before committing.
 */
describe('golden frames of the tutorial map', () => {
  const cases: readonly [Role, FrameCamera][] = [
    ['follower', 'first-person'],
    ['leader', 'overhead'],
    ['leader', 'angled'],
  ];
  test.each(cases)('%s %s', async (role, camera) => {
    const path = join(GOLDEN, `tutorial-${role}-${camera}.png`);
    const view = viewOf(tutorialState(), role);
    if (process.env.UPDATE_GOLDEN_FRAMES) writeFileSync(path, await frame(view, camera, 'png'));
    const golden = PNG.sync.read(readFileSync(path));
    const drawn = await frame(view, camera);
    let total = 0;
    let far = 0;
    for (let p = 0; p < SIZE.width * SIZE.height; p++) {
      const diffs = [0, 1, 2].map((c) => Math.abs(drawn[p * 3 + c] - golden.data[p * 4 + c]));
      total += diffs[0] + diffs[1] + diffs[2];
      if (Math.max(...diffs) > 48) far++;
    }
    expect(total / (SIZE.width * SIZE.height * 3)).toBeLessThan(2);
    expect(far / (SIZE.width * SIZE.height)).toBeLessThan(0.01);
  }, 60_000);
});

test('a frame whose browser dies is drawn again in a new one, once', async () => {
  // A large frame, so that the browser surely dies while drawing it.
  const request = { world: 'tutorial', view: frameView(viewOf(tutorialState(), 'follower')), camera: 'first-person', size: { width: 1200, height: 900 }, format: 'rgb' } as const;
  const before = await renderer.render(request);
  const pid = renderer.browserPid!;
  expect(pid).toBeGreaterThan(0);
  const again = renderer.render(request);
  await new Promise((resolve) => setTimeout(resolve, 20));
  process.kill(pid, 'SIGKILL');
  expect((await again).equals(before)).toBe(true);
  expect(renderer.restarts).toBe(1);
  expect(renderer.browserPid).not.toBe(pid);
}, 120_000);

test('a renderer without the built frames page says in one line how to build it', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'frames-'));
  const error = await FrameRenderer.start({ clientDir: empty }).catch((reason: Error) => reason);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toMatch(/frames\/index\.html is missing; run `npm run build:client`$/);
  expect((error as Error).message).not.toContain('\n');
  expect(existsSync(join(empty, 'frames'))).toBe(false);
});

test('a closed renderer and an unknown format are refused', async () => {
  const view = viewOf(tutorialState(), 'follower');
  await expect(renderer.render({ world: 'w', view: frameView(view), camera: 'first-person', size: SIZE, format: 'gif' as FrameFormat })).rejects.toThrow('unknown frame format "gif"');
  const other = await FrameRenderer.start();
  await other.close();
  await expect(other.render({ world: 'w', view: frameView(view), camera: 'first-person', size: SIZE, format: 'rgb' })).rejects.toThrow('the frame renderer is closed');
}, 60_000);
