/**
 * One frame: a player's view shown in the world (`showView`, as the game's pages show it), drawn at
 * once by the world's renderer at the asked size with one CSS pixel to a pixel, and read back as
 * RGB rows from the top, or encoded as PNG or JPEG by the browser.
 */
import type { FrameCamera, FrameRequest } from '../../../shared/frames/frame';
import type { KnownMap } from '../../../shared/engine/playerView';
import { showView } from '../world/showView';
import { WorldRenderer, type CameraMode } from '../world/WorldRenderer';
import { WorldScene } from '../world/WorldScene';

const CAMERA_MODES: Readonly<Record<FrameCamera, CameraMode>> = { 'first-person': 'firstPerson', overhead: 'topdown', angled: 'overhead' };
const JPEG_QUALITY = 0.9;

/** A world's scene, and the map last shown in it with its text: an equal map keeps the ground already built. */
interface Shown {
  readonly world: WorldScene;
  map: KnownMap;
  mapText: string;
}

/** Scenes kept by world key, the most recently used last: frames of a few games or seats in turn each keep theirs. */
const SCENES_KEPT = 8;
const scenes = new Map<string, Shown>();
let renderer: WorldRenderer | null = null;

export async function drawFrame(container: HTMLElement, request: FrameRequest): Promise<Uint8Array> {
  renderer ??= detached(new WorldRenderer(container, { pixelRatio: 1, antialias: false }));
  const shown = shownFor(renderer, request);
  const { width, height } = request.size;
  renderer.setMode(CAMERA_MODES[request.camera]);
  showView(shown.world, renderer, { ...request.view, map: mapFor(shown, request.view.map) });
  renderer.drawFrame(width, height);
  const rgba = readRows(renderer.context, width, height);
  if (request.format === 'rgb') return toRgb(rgba);
  return encode(rgba, width, height, request.format === 'png' ? 'image/png' : 'image/jpeg');
}

/** Frames are read back, never shown: a canvas off the page is not composited after each frame. */
function detached(worldRenderer: WorldRenderer): WorldRenderer {
  worldRenderer.canvas.remove();
  return worldRenderer;
}

/** The scene of the request's world, made if it is not kept (the least recently used one then goes). */
function shownFor(worldRenderer: WorldRenderer, request: FrameRequest): Shown {
  let shown = scenes.get(request.world);
  if (shown) {
    scenes.delete(request.world);
  } else {
    shown = { world: new WorldScene(request.view.map), map: request.view.map, mapText: JSON.stringify(request.view.map) };
    if (scenes.size >= SCENES_KEPT) {
      const [oldest, old] = scenes.entries().next().value!;
      scenes.delete(oldest);
      old.world.dispose();
    }
  }
  scenes.set(request.world, shown);
  worldRenderer.setWorld(shown.world, request.view.view);
  return shown;
}

function mapFor(shown: Shown, map: KnownMap): KnownMap {
  const text = JSON.stringify(map);
  if (shown.mapText !== text) Object.assign(shown, { map, mapText: text });
  return shown.map;
}

/** The drawing buffer's pixels as RGBA rows from the top (WebGL counts rows from the bottom). */
function readRows(gl: WebGLRenderingContext | WebGL2RenderingContext, width: number, height: number): Uint8ClampedArray<ArrayBuffer> {
  const bottomUp = new Uint8Array(width * height * 4);
  gl.readPixels(0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE, bottomUp);
  const rows = new Uint8ClampedArray(bottomUp.length);
  const stride = width * 4;
  for (let y = 0; y < height; y++) rows.set(bottomUp.subarray((height - 1 - y) * stride, (height - y) * stride), y * stride);
  return rows;
}

function toRgb(rgba: Uint8ClampedArray<ArrayBuffer>): Uint8Array {
  const rgb = new Uint8Array((rgba.length / 4) * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) {
    rgb[j] = rgba[i];
    rgb[j + 1] = rgba[i + 1];
    rgb[j + 2] = rgba[i + 2];
  }
  return rgb;
}

async function encode(rgba: Uint8ClampedArray<ArrayBuffer>, width: number, height: number, type: string): Promise<Uint8Array> {
  const canvas = new OffscreenCanvas(width, height);
  canvas.getContext('2d')!.putImageData(new ImageData(rgba, width, height), 0, 0);
  const blob = await canvas.convertToBlob({ type, quality: JPEG_QUALITY });
  return new Uint8Array(await blob.arrayBuffer());
}
