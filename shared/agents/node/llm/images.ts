/**
 * Images for the LLM agent. With `images` on, each observation's message carries the seat's current
 * frame beside its text: the seat's own view (`ActContext.frame`, the drawn part of its playerView,
 * the follower's memory included; never the whole state) drawn by the game's own scene, headless
 * (shared/frames), from the role's camera. The frame is a PNG sent as a base64 data URL in the
 * OpenAI chat format; the call records keep it as a file named by its sha256 (records.ts), never
 * the data URL.
 *
 * One frame renderer serves every seat of the process. It is started when the first agent with
 * images starts (that agent's preflight: a renderer that cannot start stops the command before any
 * game, with its one-line reason) and closed when the run ends (`closeSharedFrameRenderer`).
 */
import { createHash } from 'node:crypto';
import { defaultCamera, type FrameCamera, type FrameSize, type FrameView } from '../../../frames/frame';
import { FrameRenderer } from '../../../frames/node/renderer';
import type { ImagePart, RequestMessage } from './chat';
import type { ImageDetail, LlmConfig } from './config';
import type { RecordHeader } from './records';
import type { ChatMessage, LlmRole } from './templates';

/** 4:3, inside the 512 x 512 a low-detail image is scaled into, and quick to draw (some 50 to 150 ms in software). */
export const DEFAULT_IMAGE_SIZE: FrameSize = { width: 512, height: 384 };
/** The chat format's own default: the endpoint decides. */
export const DEFAULT_IMAGE_DETAIL: ImageDetail = 'auto';
/**
 * PNG rather than JPEG: lossless, so the cards' small shapes keep their edges, and no larger for
 * these flat-shaded scenes (a follower's 512 x 384 frame is some 20 kB either way).
 */
export const IMAGE_FORMAT = 'png';

/** How a seat's images are drawn and sent. */
export interface ImageSettings {
  readonly size: FrameSize;
  readonly detail: ImageDetail;
  /** The role's own camera: the follower's eyes, the leader's map from above. */
  readonly camera: FrameCamera;
}

/** A seat's image settings; null when images are off. */
export function imageSettings(config: Pick<LlmConfig, 'images' | 'imageSize' | 'imageDetail'>, role: LlmRole): ImageSettings | null {
  if (!config.images) return null;
  return { size: config.imageSize ?? DEFAULT_IMAGE_SIZE, detail: config.imageDetail ?? DEFAULT_IMAGE_DETAIL, camera: defaultCamera(role) };
}

type ImageHeaderSettings = Pick<RecordHeader['settings'], 'images' | 'imageSize' | 'imageDetail' | 'imageCamera' | 'imageFormat'>;

/** What the records' header says of a seat's images: nothing when off; flat, so that a report's line of settings names each. */
export function imageHeaderSettings(settings: ImageSettings | null): ImageHeaderSettings {
  if (!settings) return {};
  const { size, detail, camera } = settings;
  return { images: true, imageSize: `${size.width}x${size.height}`, imageDetail: detail, imageCamera: camera, imageFormat: IMAGE_FORMAT };
}

/** A frame drawn for an observation: the PNG, its sha256, and the image part that sends it. */
export interface SeatImage {
  readonly png: Buffer;
  readonly sha256: string;
  readonly size: FrameSize;
  readonly camera: FrameCamera;
  /** Sent as it is in the observation's message; the records find it there by identity. */
  readonly part: ImagePart;
}

/**
 * The frame of `view` as its seat's settings draw it. `world` names the scene the renderer keeps
 * between frames: one agent's one episode, since a scene only ever adds the cells it is shown.
 */
export async function drawImage(view: FrameView, world: string, settings: ImageSettings): Promise<SeatImage> {
  const { size, camera, detail } = settings;
  const png = await (await sharedFrameRenderer()).render({ world, view, camera, size, format: IMAGE_FORMAT });
  const part: ImagePart = { type: 'image_url', image_url: { url: `data:image/${IMAGE_FORMAT};base64,${png.toString('base64')}`, detail } };
  return { png, sha256: createHash('sha256').update(png).digest('hex'), size, camera, part };
}

/** The messages with the image after the last one's text: the observation's message, which the model answers. */
export function withImage(messages: readonly ChatMessage[], image: SeatImage): RequestMessage[] {
  const last = messages[messages.length - 1];
  return [...messages.slice(0, -1), { role: last.role, content: [{ type: 'text', text: last.content }, image.part] }];
}

/** A message's text alone, its image left out. */
export function textOf(message: RequestMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/** `messages` with `image`'s part, wherever it is, replaced by `replacement` (the records put its file there). */
export function replaceImage(messages: readonly RequestMessage[], image: SeatImage, replacement: ImagePart): RequestMessage[] {
  return messages.map((message) =>
    typeof message.content === 'string' ? message : { ...message, content: message.content.map((part) => (part === image.part ? replacement : part)) },
  );
}

let renderer: Promise<FrameRenderer> | null = null;

/** The process's frame renderer, started at the first ask; one that could not start is tried again at the next. */
export function sharedFrameRenderer(): Promise<FrameRenderer> {
  renderer ??= FrameRenderer.start().catch((error: unknown) => {
    renderer = null;
    throw error;
  });
  return renderer;
}

/** Closes the process's frame renderer, if one was started: the run is over (a later ask starts another). */
export async function closeSharedFrameRenderer(): Promise<void> {
  const started = renderer;
  renderer = null;
  await (await started?.catch(() => null))?.close();
}
