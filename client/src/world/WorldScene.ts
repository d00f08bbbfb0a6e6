/**
 * Everything in one game's world: terrain and props, the cards and the two avatars. It only draws
 * what it is given, as the player knows it (a KnownMap: for the follower, the cells it has seen,
 * which `reveal` extends); what a screen may show is decided by the server's playerView.
 */
import { AmbientLight, Color, DirectionalLight, Group, HemisphereLight, Scene, type Mesh, type Object3D, type Raycaster } from 'three';
import type { Card } from '../../../shared/engine/cards';
import { stepFrom, type Cell, type Pose } from '../../../shared/engine/hex';
import { inBounds } from '../../../shared/engine/map';
import type { KnownMap } from '../../../shared/engine/playerView';
import type { Role } from '../../../shared/engine/state';
import { buildAvatar, buildFooting } from './avatars';
import { CardModel, type CardMark } from './cards';
import { cellPosition, headingRotation } from './layout';
import { buildProps } from './props';
import { buildTerrain, cellHeights } from './terrain';

export const SKY_COLOUR = '#bfe3f5';

/** How long a set's cards flash before they vanish, and how long new cards take to grow in. */
const FLASH_MS = 700;
const GROW_MS = 350;
/** The footing's hexes lie this far above the ground (over the walkable cells' outlines). */
const FOOTING_LIFT = 0.012;

interface Animation {
  readonly start: number;
  readonly duration: number;
  /** t runs from 0 to 1. */
  readonly frame: (t: number) => void;
  readonly done?: () => void;
}

export interface CardUpdate {
  readonly cards: readonly Card[];
  /** Selected cards that cannot make a set (shown to the leader only). */
  readonly invalid?: ReadonlySet<number>;
  /** Cards that left were taken by a set: flash them first, and grow the new ones in. */
  readonly setMade?: boolean;
}

export class WorldScene {
  readonly scene = new Scene();
  private readonly cards = new Map<number, CardModel>();
  private readonly cardLayer = new Group();
  private readonly avatars: Record<Role, Group>;
  private readonly footing = buildFooting();
  private animations: Animation[] = [];

  private heights: Float32Array;
  private ground = new Group();

  constructor(public map: KnownMap) {
    this.scene.background = new Color(SKY_COLOUR);
    this.heights = cellHeights(map);
    this.scene.add(new HemisphereLight('#eaf6ff', '#5a6b3a', 1.6), new AmbientLight('#ffffff', 0.35));
    const sun = new DirectionalLight('#fff4e0', 1.8);
    sun.position.set(10, 20, 8);
    this.scene.add(sun);
    this.cardLayer.name = 'cards';
    this.avatars = { leader: buildAvatar('leader'), follower: buildAvatar('follower') };
    this.footing.group.visible = false;
    this.scene.add(this.ground, this.cardLayer, this.avatars.leader, this.avatars.follower, this.footing.group);
    this.buildGround();
  }

  /** The player now knows more of the map: the ground is drawn again from it. */
  reveal(map: KnownMap): void {
    if (map === this.map) return;
    this.map = map;
    this.heights = cellHeights(map);
    // Its materials are shared (terrain.ts, props.ts) and stay: only the old ground's geometry goes.
    disposeTree(this.ground, { materials: false });
    this.ground.clear();
    this.buildGround();
  }

  private buildGround(): void {
    const props = buildProps(this.map.props.map((prop) => ({ prop, groundHeight: this.groundAt(prop) })));
    this.ground.add(buildTerrain(this.map, this.heights), props);
  }

  groundAt(cell: Cell): number {
    return this.heights[cell.y * this.map.width + cell.x];
  }

  /** Places an avatar, or hides it (null). */
  setAvatar(role: Role, pose: Pose | null): void {
    const avatar = this.avatars[role];
    avatar.visible = pose !== null;
    if (role === 'follower') this.placeFooting(pose);
    if (!pose) return;
    avatar.position.copy(cellPosition(pose, this.groundAt(pose)));
    avatar.rotation.y = headingRotation(pose.heading);
  }

  /**
   * Draws the follower as seen from its own eyes (true): its avatar hidden, as the camera is inside
   * it, and its footing shown instead (the hex it stands on and the one in front); or as others
   * see it (false): its avatar, if placed, and no footing.
   */
  setFirstPerson(firstPerson: boolean): void {
    // The footing marks a cell exactly when the follower is placed.
    this.avatars.follower.visible = !firstPerson && this.footing.here.visible;
    this.footing.group.visible = firstPerson;
  }

  /** The footing's hexes follow the follower: its cell, and the one in front when that is on the map. */
  private placeFooting(pose: Pose | null): void {
    const { here, ahead } = this.footing;
    here.visible = pose !== null;
    ahead.visible = false;
    if (!pose) return;
    // Just above the ground and its outlines.
    here.position.copy(cellPosition(pose, this.groundAt(pose) + FOOTING_LIFT));
    const front = stepFrom(pose, pose.heading);
    if (!inBounds(this.map, front)) return;
    ahead.visible = true;
    ahead.position.copy(cellPosition(front, this.groundAt(front) + FOOTING_LIFT));
  }

  /** The id of the nearest card the ray meets, if it is one of the cards shown (not one vanishing). */
  cardOnRay(raycaster: Raycaster): number | null {
    for (const hit of raycaster.intersectObjects(this.cardLayer.children, true)) {
      const card = cardOf(hit.object);
      if (card !== null && this.cards.has(card)) return card;
    }
    return null;
  }

  /** The card the ray meets first, if no surface shown (ground, a prop, an avatar) is in front of it. */
  cardInFrontOnRay(raycaster: Raycaster): number | null {
    for (const hit of raycaster.intersectObjects(this.scene.children, true)) {
      // Lines (the hexes' outlines) are met anywhere near the ray: only surfaces hide a card.
      if (!(hit.object as Mesh).isMesh || !shownInScene(hit.object)) continue;
      const card = cardOf(hit.object);
      return card !== null && this.cards.has(card) ? card : null;
    }
    return null;
  }

  /** The cards shown, each with its symbols' meshes (to measure them on screen). */
  cardModels(): IterableIterator<CardModel> {
    return this.cards.values();
  }

  /** Shows exactly these cards, with their marks. */
  setCards(update: CardUpdate, now = performance.now()): void {
    const next = new Map(update.cards.map((card) => [card.id, card]));
    const delay = update.setMade ? FLASH_MS : 0;
    for (const [id, model] of this.cards) {
      if (next.has(id)) continue;
      this.cards.delete(id);
      if (!update.setMade) {
        this.removeCard(model);
        continue;
      }
      model.setMark('flash');
      this.animate({
        start: now,
        duration: FLASH_MS,
        frame: (t) => model.group.scale.setScalar(1 + 0.25 * Math.sin(t * Math.PI * 3)),
        done: () => this.removeCard(model),
      });
    }
    for (const card of update.cards) {
      let model = this.cards.get(card.id);
      // A card is the same card while its id is: a model is only redrawn when what it shows changed
      // (a frame of another state, or the ground under it better known), so that a view draws the same whatever came before.
      if (model && !model.draws(card, this.groundAt(card))) {
        this.cards.delete(card.id);
        this.removeCard(model);
        model = undefined;
      }
      if (!model) {
        model = new CardModel(card, this.groundAt(card));
        this.cards.set(card.id, model);
        this.cardLayer.add(model.group);
        if (update.setMade) {
          const grown = model;
          grown.group.scale.setScalar(0);
          this.animate({ start: now + delay, duration: GROW_MS, frame: (t) => grown.group.scale.setScalar(t) });
        }
      }
      model.setMark(cardMark(card, update.invalid));
    }
  }

  /** Advances the running animations; true while any is left. */
  tick(now: number): boolean {
    this.animations = this.animations.filter((animation) => {
      const t = Math.min(1, Math.max(0, (now - animation.start) / animation.duration));
      animation.frame(t);
      if (t < 1) return true;
      animation.done?.();
      return false;
    });
    return this.animations.length > 0;
  }

  get animating(): boolean {
    return this.animations.length > 0;
  }

  /** Ends every animation at once (scrubbing a replay). */
  finishAnimations(): void {
    this.tick(Number.POSITIVE_INFINITY);
  }

  /** Frees the GPU copies of everything in the scene (three re-uploads shared ones if used again). */
  dispose(): void {
    disposeTree(this.scene);
    for (const model of this.cards.values()) model.dispose();
  }

  private animate(animation: Animation): void {
    this.animations.push(animation);
  }

  private removeCard(model: CardModel): void {
    this.cardLayer.remove(model.group);
    model.dispose();
  }
}

/** The id of the card an object belongs to, if it is part of one. */
function cardOf(object: Object3D): number | null {
  for (let at: Object3D | null = object; at; at = at.parent) if (at.name.startsWith('card:')) return Number(at.name.slice('card:'.length));
  return null;
}

/** Whether an object is drawn: it and every parent visible (a ray meets hidden ones too). */
function shownInScene(object: Object3D): boolean {
  for (let at: Object3D | null = object; at; at = at.parent) if (!at.visible) return false;
  return true;
}

function cardMark(card: Card, invalid: ReadonlySet<number> | undefined): CardMark {
  if (!card.selected) return 'none';
  return invalid?.has(card.id) ? 'invalid' : 'selected';
}

/** Frees the GPU copies of the geometries under `root`, and of their materials unless told not to. */
function disposeTree(root: Object3D, { materials = true } = {}): void {
  root.traverse((object) => {
    const mesh = object as { geometry?: { dispose(): void }; material?: { dispose(): void } | { dispose(): void }[] };
    mesh.geometry?.dispose();
    if (materials) for (const material of [mesh.material ?? []].flat()) material.dispose();
  });
}
