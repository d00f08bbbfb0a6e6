/**
 * Draws a WorldScene into a canvas from one of three cameras: the angled overhead view and the
 * top-down view of the whole map (the leader's, without perspective), and the follower's first-person view, whose
 * field of view and fog follow the engine's view cone. On a page it renders on demand: after a
 * change, and on every frame only while an animation runs; for frames for models (the frames page,
 * client/src/frames/) `drawFrame` draws at once at a given size, every animation finished.
 */
import { Box3, Fog, OrthographicCamera, PerspectiveCamera, Raycaster, Vector2, Vector3, WebGLRenderer, type Camera } from 'three';
import type { Pose } from '../../../shared/engine/hex';
import type { ViewConfig } from '../../../shared/engine/view';
import { cellPosition, headingRotation, mapBounds } from './layout';
import { SKY_COLOUR, type WorldScene } from './WorldScene';

export type CameraMode = 'overhead' | 'topdown' | 'firstPerson';

/** The follower's eye: above and a little behind its cell's centre, looking down a little. */
const EYE_HEIGHT = 0.95;
const EYE_BACK = 0.5;
const EYE_PITCH = (-32 * Math.PI) / 180;

/**
 * The leader's overviews are drawn without perspective, so that the far rows are as large as the
 * near ones, and the angled view is steep enough that cards are seen almost from above (at 58°
 * with perspective, the far cards' symbols were drawn a third smaller than the near ones').
 */
const ANGLED_ELEVATION = (70 * Math.PI) / 180;
/** How far from the board's middle the overview's camera stands (without perspective, only so that nothing is behind it). */
const OVERVIEW_DISTANCE = 100;
/** The highest ground a card stands on (a hill among hills), for fitting the board on screen. */
const HIGHEST_GROUND = 1.1;
/** The share of the view's half-width and half-height the board may fill. */
const BOARD_FILL = 0.99;

/** A rectangle in CSS pixels from the canvas's top left. */
export interface ScreenRect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** Where the leader's overview draws things, as last drawn (for checking that every card is legible and uncovered). */
export interface OverviewLayout {
  /** The canvas's size, and the band at its top kept free of the board. */
  readonly canvas: { readonly width: number; readonly height: number; readonly band: number };
  /** The board's hexes. */
  readonly board: ScreenRect;
  readonly cards: readonly {
    readonly id: number;
    readonly rect: ScreenRect;
    /** Each symbol's rectangle, and whether the symbol's middle is seen (nothing in front of it). */
    readonly symbols: readonly { readonly rect: ScreenRect; readonly seen: boolean }[];
  }[];
  /** The inset of the follower's view, if shown. */
  readonly inset: ScreenRect | null;
}

export const INSET_CORNERS = ['bottom-right', 'bottom-left', 'top-left', 'top-right'] as const;
export interface InsetLayout {
  readonly corner: (typeof INSET_CORNERS)[number];
  /** The inset's width as a share of the world's. */
  readonly share: number;
}
export const DEFAULT_INSET_LAYOUT: InsetLayout = { corner: 'bottom-right', share: 0.3 };

export class WorldRenderer {
  readonly canvas: HTMLCanvasElement;
  private readonly renderer: WebGLRenderer;
  private readonly camera = new PerspectiveCamera(40, 1, 0.05, 200);
  private readonly overviewCamera = new OrthographicCamera(-1, 1, 1, -1, 1, 2 * OVERVIEW_DISTANCE);
  private readonly insetCamera = new PerspectiveCamera(60, 1, 0.05, 200);
  private world: WorldScene | null = null;
  private view: ViewConfig = { fovDegrees: 120, range: 5 };
  private mode: CameraMode = 'overhead';
  private firstPersonPose: Pose | null = null;
  private showInset = false;
  private insetLayout: InsetLayout = DEFAULT_INSET_LAYOUT;
  private readonly insetCaption = document.createElement('span');
  private readonly fog = new Fog(SKY_COLOUR, 1, 2);
  /** Where the inset was last drawn, in CSS pixels from the canvas's top left (null when hidden). */
  private insetBox: ScreenRect | null = null;
  /** CSS pixels at the top of the canvas where the overviews draw no board (the buttons and notices are there). */
  private band = 0;
  private frame = 0;
  private readonly resizeObserver: ResizeObserver;
  /** Frames drawn so far (tests wait for the first). */
  rendered = 0;

  /**
   * `pixelRatio`: drawing-buffer pixels per CSS pixel, by default the screen's (at most 2); frames
   * for models use 1, so that a frame's size is its pixels on every screen. `antialias`: smoothed
   * edges (the game's pages); frames are drawn without, as software WebGL draws them far faster so.
   */
  constructor(
    private readonly container: HTMLElement,
    { pixelRatio = Math.min(window.devicePixelRatio, 2), antialias = true }: { pixelRatio?: number; antialias?: boolean } = {},
  ) {
    this.renderer = new WebGLRenderer({ antialias });
    this.renderer.setPixelRatio(pixelRatio);
    this.canvas = this.renderer.domElement;
    this.canvas.className = 'world-canvas';
    // The drawing buffer follows the container (setSize(..., false) leaves the CSS size alone).
    this.canvas.style.width = '100%';
    this.canvas.style.height = '100%';
    this.insetCaption.className = 'inset-caption';
    this.insetCaption.hidden = true;
    container.append(this.canvas, this.insetCaption);
    this.resizeObserver = new ResizeObserver(() => this.requestRender());
    this.resizeObserver.observe(container);
  }

  setWorld(world: WorldScene, view: ViewConfig): void {
    this.world = world;
    this.view = view;
    this.requestRender();
  }

  setMode(mode: CameraMode): void {
    this.mode = mode;
    this.requestRender();
  }

  get cameraMode(): CameraMode {
    return this.mode;
  }

  /** The follower's pose, for the first-person camera and the inset. */
  setFirstPersonPose(pose: Pose | null): void {
    this.firstPersonPose = pose;
    this.requestRender();
  }

  /** A small first-person view in a corner (the leader's window on what the follower sees), with a caption. */
  setInset(show: boolean, caption = "Follower's view"): void {
    this.showInset = show;
    this.insetCaption.textContent = caption;
    this.requestRender();
  }

  /** Where the inset sits and how big it is (a share of the world's width). */
  setInsetLayout(layout: InsetLayout): void {
    this.insetLayout = layout;
    this.requestRender();
  }

  /** Keeps a band of `pixels` at the top of the overviews free of the board, for what sits over the world there. */
  setOverviewBand(pixels: number): void {
    this.band = pixels;
    this.requestRender();
  }

  /** The card under a point of the page (clientX, clientY) in the main view, as last drawn. */
  cardAt(clientX: number, clientY: number): number | null {
    const box = this.canvas.getBoundingClientRect();
    const x = clientX - box.left;
    const y = clientY - box.top;
    const inset = this.insetBox;
    if (!this.world || box.width === 0 || (inset && x >= inset.x && x < inset.x + inset.width && y >= inset.y && y < inset.y + inset.height)) return null;
    const raycaster = new Raycaster();
    raycaster.setFromCamera(this.toView(x, y, box.height), this.mode === 'firstPerson' ? this.camera : this.overviewCamera);
    return this.world.cardOnRay(raycaster);
  }

  /** Where the overview, as last drawn, shows the board, each card and its symbols, and the inset (null in first person). */
  overviewLayout(): OverviewLayout | null {
    const world = this.world;
    if (!world || this.mode === 'firstPerson') return null;
    const { clientWidth: width, clientHeight: height } = this.canvas;
    world.scene.updateMatrixWorld();
    const { centre, width: boardWidth, depth } = mapBounds(world.map);
    const board = new Box3(new Vector3(centre.x - boardWidth / 2, 0, centre.z - depth / 2), new Vector3(centre.x + boardWidth / 2, 0, centre.z + depth / 2));
    const raycaster = new Raycaster();
    const cards = [...world.cardModels()].map((model) => ({
      id: model.card.id,
      rect: this.onScreen(new Box3().setFromObject(model.group), width, height),
      symbols: model.symbols.map((symbol) => {
        const rect = this.onScreen(new Box3().setFromObject(symbol), width, height);
        raycaster.setFromCamera(this.toView(rect.x + rect.width / 2, rect.y + rect.height / 2, height), this.overviewCamera);
        return { rect, seen: world.cardInFrontOnRay(raycaster) === model.card.id };
      }),
    }));
    return { canvas: { width, height, band: this.band }, board: this.onScreen(board, width, height), cards, inset: this.insetBox };
  }

  /** A point of the canvas (CSS pixels) in the main view's coordinates (-1 to 1 across; an overview's are below the band). */
  private toView(x: number, y: number, height: number): Vector2 {
    const band = this.mode === 'firstPerson' ? 0 : this.band;
    return new Vector2((x / this.canvas.clientWidth) * 2 - 1, 1 - ((y - band) / (height - band)) * 2);
  }

  /** The rectangle a box takes on the canvas through the overview's camera. */
  private onScreen(box: Box3, width: number, height: number): ScreenRect {
    const { x0, x1, y0, y1 } = projectedExtent(boxCorners(box), this.overviewCamera);
    const below = height - this.band;
    return { x: ((x0 + 1) / 2) * width, y: this.band + ((1 - y1) / 2) * below, width: ((x1 - x0) / 2) * width, height: ((y1 - y0) / 2) * below };
  }

  requestRender(): void {
    if (this.frame === 0) this.frame = requestAnimationFrame((now) => this.draw(now));
  }

  dispose(): void {
    cancelAnimationFrame(this.frame);
    this.resizeObserver.disconnect();
    this.renderer.dispose();
    this.canvas.remove();
    this.insetCaption.remove();
  }

  /**
   * Draws the world now at `width` x `height` CSS pixels, every animation finished: a frame that
   * depends on nothing but what was set (no clock). The pixels can be read back until the page
   * returns to its event loop (`context`).
   */
  drawFrame(width: number, height: number): void {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    if (!this.world) return;
    this.world.finishAnimations();
    this.drawAt(this.world, width, height);
  }

  /** The WebGL context the world is drawn with (to read a frame's pixels). */
  get context(): WebGLRenderingContext | WebGL2RenderingContext {
    return this.renderer.getContext();
  }

  private draw(now: number): void {
    this.frame = 0;
    const world = this.world;
    if (!world) return;
    const animating = world.tick(now);
    this.drawAt(world, Math.max(1, this.container.clientWidth), Math.max(1, this.container.clientHeight));
    if (animating) this.requestRender();
  }

  private drawAt(world: WorldScene, width: number, height: number): void {
    const size = this.renderer.getSize(new Vector2());
    if (size.x !== width || size.y !== height) this.renderer.setSize(width, height, false);

    this.renderer.setScissorTest(false);
    if (this.mode === 'firstPerson' && this.firstPersonPose) {
      this.renderer.setViewport(0, 0, width, height);
      this.drawFirstPerson(world, this.camera, width / height);
    } else {
      // The band keeps the sky's colour: the whole canvas is cleared, the board drawn below it.
      const below = Math.max(1, height - this.band);
      this.renderer.setViewport(0, 0, width, below);
      this.drawOverview(world, width / below);
    }

    const inset = this.showInset && this.mode !== 'firstPerson' && this.firstPersonPose !== null;
    this.insetCaption.hidden = !inset;
    this.insetBox = null;
    if (inset) {
      const { corner, share } = this.insetLayout;
      const insetWidth = Math.round(Math.min(width * share, 360 * (share / DEFAULT_INSET_LAYOUT.share)));
      const insetHeight = Math.round(insetWidth * 0.6);
      const margin = 12;
      // WebGL counts y from the bottom; the caption's CSS from the top.
      const x = corner.endsWith('left') ? margin : width - insetWidth - margin;
      const y = corner.startsWith('bottom') ? margin : height - insetHeight - margin - this.band;
      this.insetCaption.style.left = `${x + 6}px`;
      this.insetCaption.style.top = `${height - y - insetHeight + 6}px`;
      this.insetBox = { x, y: height - y - insetHeight, width: insetWidth, height: insetHeight };
      this.renderer.setScissorTest(true);
      this.renderer.setScissor(x, y, insetWidth, insetHeight);
      this.renderer.setViewport(x, y, insetWidth, insetHeight);
      this.renderer.clearDepth();
      this.drawFirstPerson(world, this.insetCamera, insetWidth / insetHeight);
      this.renderer.setScissorTest(false);
    }
    this.rendered++;
  }

  private drawOverview(world: WorldScene, aspect: number): void {
    const camera = this.overviewCamera;
    const { centre, width, depth } = mapBounds(world.map);
    const elevation = this.mode === 'topdown' ? Math.PI / 2 - 1e-4 : ANGLED_ELEVATION;
    camera.position.set(centre.x, Math.sin(elevation) * OVERVIEW_DISTANCE, centre.z + Math.cos(elevation) * OVERVIEW_DISTANCE);
    camera.up.set(0, 1, 0);
    camera.lookAt(centre);
    camera.updateMatrixWorld();
    // The board, up to its highest ground, in the camera's own coordinates: the view is fitted around it.
    const board = boxCorners(new Box3(new Vector3(centre.x - width / 2, 0, centre.z - depth / 2), new Vector3(centre.x + width / 2, HIGHEST_GROUND, centre.z + depth / 2)));
    const seen = board.map((corner) => corner.applyMatrix4(camera.matrixWorldInverse));
    const [x0, x1] = [Math.min(...seen.map((p) => p.x)), Math.max(...seen.map((p) => p.x))];
    const [y0, y1] = [Math.min(...seen.map((p) => p.y)), Math.max(...seen.map((p) => p.y))];
    const halfHeight = Math.max((y1 - y0) / 2, (x1 - x0) / 2 / aspect) / BOARD_FILL;
    camera.left = (x0 + x1) / 2 - halfHeight * aspect;
    camera.right = (x0 + x1) / 2 + halfHeight * aspect;
    camera.top = (y0 + y1) / 2 + halfHeight;
    camera.bottom = (y0 + y1) / 2 - halfHeight;
    camera.updateProjectionMatrix();
    world.scene.fog = null;
    this.renderer.render(world.scene, camera);
  }

  private drawFirstPerson(world: WorldScene, camera: PerspectiveCamera, aspect: number): void {
    const pose = this.firstPersonPose!;
    // The engine's cone is `fovDegrees` wide: make the camera's horizontal field of view match.
    const horizontal = (Math.min(this.view.fovDegrees, 150) * Math.PI) / 180;
    camera.aspect = aspect;
    camera.fov = (2 * Math.atan(Math.tan(horizontal / 2) / aspect) * 180) / Math.PI;
    camera.updateProjectionMatrix();
    const yaw = headingRotation(pose.heading);
    const eye = cellPosition(pose, world.groundAt(pose) + EYE_HEIGHT);
    eye.x += Math.sin(yaw) * EYE_BACK;
    eye.z += Math.cos(yaw) * EYE_BACK;
    camera.position.copy(eye);
    camera.rotation.set(EYE_PITCH, yaw, 0, 'YXZ');
    // Beyond the view's range the world fades out: the follower sees nothing there.
    this.fog.near = Math.max(1, this.view.range - 1);
    this.fog.far = this.view.range + 1.5;
    world.scene.fog = this.fog;
    world.setFirstPerson(true);
    this.renderer.render(world.scene, camera);
    world.setFirstPerson(false);
    world.scene.fog = null;
  }
}

function boxCorners(box: Box3): Vector3[] {
  return [0, 1, 2, 3, 4, 5, 6, 7].map((i) => new Vector3(i & 1 ? box.max.x : box.min.x, i & 2 ? box.max.y : box.min.y, i & 4 ? box.max.z : box.min.z));
}

/** The extent of points seen through a camera, in its view's coordinates (-1 to 1 across). */
function projectedExtent(points: readonly Vector3[], camera: Camera): { x0: number; x1: number; y0: number; y1: number } {
  const projected = points.map((point) => point.clone().project(camera));
  const xs = projected.map((point) => point.x);
  const ys = projected.map((point) => point.y);
  return { x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys) };
}
