/**
 * A frame for a model: one player's view drawn by the client's own scene (client/src/world/) from
 * one camera at one size. This module says what a frame request is; the frames page
 * (client/src/frames/) draws it, and `FrameRenderer` (./node/renderer.ts) runs that page headless.
 *
 * A request holds only `frameView(view)`, the drawn part of one role's playerView, so a frame can
 * show nothing its player does not know.
 */
import { z } from 'zod';
import { COLORS, COUNTS, SHAPES } from '../engine/cards';
import { HEADINGS } from '../engine/hex';
import { poseSchema, PROP_TYPES } from '../engine/map';
import type { PlayerView } from '../engine/playerView';
import { ROLES, type Role } from '../engine/state';
import type { ViewConfig } from '../engine/view';

/**
 * The cameras: the follower's own eyes (its view cone and range, with fog beyond), the leader's
 * top-down view of the whole map, and the leader's angled view (the game page's default).
 */
export const FRAME_CAMERAS = ['first-person', 'overhead', 'angled'] as const;
export type FrameCamera = (typeof FRAME_CAMERAS)[number];

/** Raw RGB (rows top to bottom, 3 bytes a pixel), or an image file's bytes. */
export const FRAME_FORMATS = ['rgb', 'png', 'jpeg'] as const;
export type FrameFormat = (typeof FRAME_FORMATS)[number];

export interface FrameSize {
  readonly width: number;
  readonly height: number;
}

/** The largest side a frame may have (WebGL's drawing buffers are limited, and so is memory). */
export const MAX_FRAME_SIDE = 4096;

/** The drawn part of a player's view: what the world shows, and the follower's view cone. */
export interface FrameView {
  readonly role: Role;
  readonly view: ViewConfig;
  readonly map: PlayerView['map'];
  readonly cards: PlayerView['cards'];
  readonly rememberedCards: PlayerView['rememberedCards'];
  readonly invalidCards: PlayerView['invalidCards'];
  readonly leader: PlayerView['leader'];
  readonly follower: PlayerView['follower'];
}

export interface FrameRequest {
  /**
   * Frames with the same `world` reuse the page's scene (its ground is rebuilt only when the map
   * known changes): one game and role. A new value starts a new scene.
   */
  readonly world: string;
  readonly view: FrameView;
  readonly camera: FrameCamera;
  readonly size: FrameSize;
  readonly format: FrameFormat;
}

const cell = { x: z.int().min(0).max(99), y: z.int().min(0).max(99) };
const cardSchema = z.object({ id: z.int().min(0), ...cell, color: z.enum(COLORS), shape: z.enum(SHAPES), count: z.union(COUNTS.map((count) => z.literal(count))), selected: z.boolean() });

/** A frame request from another program (`cerealbar frames`): checked whole before the page sees it. */
export const frameRequestSchema = z.object({
  world: z.string().max(200),
  view: z.object({
    role: z.enum(ROLES),
    view: z.object({ fovDegrees: z.number().min(1).max(360), range: z.int().min(0).max(50) }),
    map: z
      .object({
        width: z.int().min(1).max(100),
        height: z.int().min(1).max(100),
        terrain: z.array(z.string().regex(/^[GPWDH?]*$/, 'terrain rows use only the letters G P W D H and ? (unseen)')),
        props: z.array(z.object({ ...cell, type: z.enum(PROP_TYPES), variant: z.string().max(40), rotation: z.enum(HEADINGS) })),
        walls: z.array(z.object({ ...cell, side: z.enum(HEADINGS) })).optional(),
      })
      .refine((map) => map.terrain.length === map.height && map.terrain.every((row) => row.length === map.width), 'the terrain has one row of `width` letters for each of `height` rows'),
    cards: z.array(cardSchema),
    rememberedCards: z.array(cardSchema.extend({ seenAgo: z.int().min(0) })),
    invalidCards: z.array(z.int().min(0)),
    leader: poseSchema.nullable(),
    follower: poseSchema,
  }),
  camera: z.enum(FRAME_CAMERAS),
  size: z.object({ width: z.int().min(1).max(MAX_FRAME_SIDE), height: z.int().min(1).max(MAX_FRAME_SIDE) }),
  format: z.enum(FRAME_FORMATS),
});

/** The drawn part of a player's view, and nothing else of it. */
export function frameView(view: PlayerView): FrameView {
  const { role, map, cards, rememberedCards, invalidCards, leader, follower } = view;
  return { role, view: view.config.view, map, cards, rememberedCards, invalidCards, leader, follower };
}

/** Each role's camera unless another is asked for: the follower's eyes, the leader's map from above. */
export function defaultCamera(role: Role): FrameCamera {
  return role === 'follower' ? 'first-person' : 'overhead';
}

/** `WxH` (e.g. `320x240`) as a size, or a message saying what is wrong. */
export function parseFrameSize(text: string): FrameSize | { readonly problem: string } {
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(text.trim());
  if (!match) return { problem: `a frame size is WIDTHxHEIGHT in pixels, e.g. 320x240, not "${text}"` };
  const [width, height] = [Number(match[1]), Number(match[2])];
  if (width < 1 || height < 1 || width > MAX_FRAME_SIDE || height > MAX_FRAME_SIDE) {
    return { problem: `a frame's sides are 1 to ${MAX_FRAME_SIDE} pixels, not ${width}x${height}` };
  }
  return { width, height };
}

/** The bytes of a raw RGB frame of this size. */
export function rgbBytes(size: FrameSize): number {
  return size.width * size.height * 3;
}
