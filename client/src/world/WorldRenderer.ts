/**
 * Draws a WorldScene into a canvas from one of three cameras: the angled overhead view and the
 * top-down view of the whole map (the leader's), and the follower's first-person view, whose
 * field of view and fog follow the engine's view cone. It renders on demand: after a change, and
 * on every frame only while an animation runs.
 */
import { Fog, PerspectiveCamera, Raycaster, Vector2, Vector3, WebGLRenderer } from 'three';
import type { Pose } from '../../../shared/engine/hex';
import type { ViewConfig } from '../../../shared/engine/view';
import { cellPosition, headingRotation, mapBounds } from './layout';
import { SKY_COLOUR, type WorldScene } from './WorldScene';

export type CameraMode = 'overhead' | 'topdown' | 'firstPerson';

/** The follower's eye: above and a little behind its cell's centre, looking down a little. */
const EYE_HEIGHT = 0.95;
const EYE_BACK = 0.5;
const EYE_PITCH = (-32 * Math.PI) / 180;

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
  private insetBox: { x: number; y: number; width: number; height: number } | null = null;
  private frame = 0;
  private readonly resizeObserver: ResizeObserver;
  /** Frames drawn so far (tests wait for the first). */
  rendered = 0;

  constructor(private readonly container: HTMLElement) {
    this.renderer = new WebGLRenderer({ antialias: true });
    this.renderer.setPixelRatio(Math.min(window.devicePixelRatio, 2));
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

  /** The card under a point of the page (clientX, clientY) in the main view, as last drawn. */
  cardAt(clientX: number, clientY: number): number | null {
    const box = this.canvas.getBoundingClientRect();
    const x = clientX - box.left;
    const y = clientY - box.top;
    const inset = this.insetBox;
    if (!this.world || box.width === 0 || (inset && x >= inset.x && x < inset.x + inset.width && y >= inset.y && y < inset.y + inset.height)) return null;
    const raycaster = new Raycaster();
    raycaster.setFromCamera(new Vector2((x / box.width) * 2 - 1, 1 - (y / box.height) * 2), this.camera);
    return this.world.cardOnRay(raycaster);
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

  private draw(now: number): void {
    this.frame = 0;
    const world = this.world;
    if (!world) return;
    const animating = world.tick(now);
    const width = Math.max(1, this.container.clientWidth);
    const height = Math.max(1, this.container.clientHeight);
    const size = this.renderer.getSize(new Vector2());
    if (size.x !== width || size.y !== height) this.renderer.setSize(width, height, false);

    this.renderer.setScissorTest(false);
    this.renderer.setViewport(0, 0, width, height);
    if (this.mode === 'firstPerson' && this.firstPersonPose) this.drawFirstPerson(world, this.camera, width / height);
    else this.drawOverview(world, width / height);

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
      const y = corner.startsWith('bottom') ? margin : height - insetHeight - margin;
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
    if (animating) this.requestRender();
  }

  private drawOverview(world: WorldScene, aspect: number): void {
    const camera = this.camera;
    camera.fov = 40;
    camera.aspect = aspect;
    const { centre, width, depth } = mapBounds(world.map);
    const elevation = this.mode === 'topdown' ? Math.PI / 2 - 1e-4 : (58 * Math.PI) / 180;
    const direction = new Vector3(0, Math.sin(elevation), Math.cos(elevation));
    camera.up.set(0, 1, 0);
    camera.updateProjectionMatrix();
    const corners = [
      new Vector3(centre.x - width / 2, 0, centre.z - depth / 2),
      new Vector3(centre.x + width / 2, 0, centre.z - depth / 2),
      new Vector3(centre.x - width / 2, 0.8, centre.z + depth / 2),
      new Vector3(centre.x + width / 2, 0.8, centre.z + depth / 2),
    ];
    // The nearest distance at which the whole map fits on screen.
    let low = 1;
    let high = 400;
    for (let i = 0; i < 30; i++) {
      const distance = (low + high) / 2;
      camera.position.copy(centre).addScaledVector(direction, distance);
      camera.lookAt(centre);
      camera.updateMatrixWorld();
      const fits = corners.every((corner) => {
        const p = corner.clone().project(camera);
        return Math.abs(p.x) <= 0.96 && Math.abs(p.y) <= 0.96;
      });
      if (fits) high = distance;
      else low = distance;
    }
    camera.position.copy(centre).addScaledVector(direction, high);
    camera.lookAt(centre);
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
