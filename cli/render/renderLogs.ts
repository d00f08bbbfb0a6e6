/**
 * `cerealbar render`: frames of logged games, each drawn from one role's view at chosen points
 * (shared/frames/views.ts) by a `FrameRenderer`, written as image files `<game>-<seq>-<role>.<ext>`
 * or, with a video, one MP4 per log and role.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Role } from '../../shared/engine/state';
import { frameView, type FrameCamera, type FrameSize } from '../../shared/frames/frame';
import type { FrameRenderer } from '../../shared/frames/node/renderer';
import { framePoints, playerViews, type FramePoints } from '../../shared/frames/views';
import { loadRecording } from '../../shared/eval/recording';
import { LogError } from '../../shared/log/replay';
import { CliError } from '../errors';
import { readTextFile } from '../options';
import { writeVideo } from './video';

export interface RenderOptions {
  readonly role: Role;
  readonly camera: FrameCamera;
  readonly at: FramePoints;
  readonly size: FrameSize;
  readonly format: 'png' | 'jpeg';
  readonly out: string;
  /** One MP4 per log at this many frames a second, instead of image files. */
  readonly videoFps?: number;
}

/** A log replayed, and the states of it to draw. */
interface LogToDraw {
  readonly file: string;
  readonly gameId: string;
  readonly states: Parameters<typeof playerViews>[0];
  readonly points: readonly number[];
}

/** Replays every log and chooses its points first, so that a bad log or seq is refused before anything is drawn. */
export function logsToDraw(files: readonly string[], at: FramePoints): LogToDraw[] {
  return files.map((file) => {
    let recording;
    try {
      recording = loadRecording(readTextFile(file));
    } catch (error) {
      if (error instanceof LogError) throw new CliError(`${file}: ${error.message}`);
      throw error;
    }
    const points = framePoints(recording.states, at);
    if ('problem' in points) throw new CliError(`${file}: ${points.problem}`);
    return { file, gameId: recording.header.gameId, states: recording.states, points };
  });
}

/** A file name's part from a game id: letters, digits, `.`, `_` and `-` kept, anything else `_`. */
export function fileNamePart(gameId: string): string {
  return gameId.replace(/[^\w.-]/g, '_');
}

/** Draws every point of every log; `tick` after each frame. Returns the files written. */
export async function renderLogs(logs: readonly LogToDraw[], options: RenderOptions, renderer: FrameRenderer, tick: () => void): Promise<string[]> {
  mkdirSync(options.out, { recursive: true });
  const written: string[] = [];
  for (const log of logs) {
    const wanted = new Set(log.points);
    const views = playerViews(log.states, options.role, (i) => wanted.has(i));
    const base = `${fileNamePart(log.gameId)}-${options.role}`;
    const video = options.videoFps === undefined ? null : writeVideo(join(options.out, `${base}.mp4`), options.size, options.videoFps);
    try {
      for (const seq of log.points) {
        const request = { world: `${log.file}#${options.role}`, view: frameView(views[seq]!), camera: options.camera, size: options.size };
        if (video) {
          await video.write(await renderer.render({ ...request, format: 'rgb' }));
        } else {
          const path = join(options.out, `${fileNamePart(log.gameId)}-${seq}-${options.role}.${options.format === 'jpeg' ? 'jpg' : 'png'}`);
          writeFileSync(path, await renderer.render({ ...request, format: options.format }));
          written.push(path);
        }
        tick();
      }
    } finally {
      if (video) await video.close().catch((error: Error) => { throw new CliError(error.message, 1); });
    }
    if (video) written.push(join(options.out, `${base}.mp4`));
  }
  return written;
}
