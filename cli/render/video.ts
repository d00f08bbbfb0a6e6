/**
 * MP4 files made by ffmpeg from raw RGB frames piped to it, for `render --video`. ffmpeg is not a
 * dependency: `ffmpegProblem` says so in one line when it is missing.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { FrameSize } from '../../shared/frames/frame';

/** Why ffmpeg cannot be used (null when it can). */
export function ffmpegProblem(command = process.env.FFMPEG ?? 'ffmpeg'): string | null {
  const probe = spawnSync(command, ['-hide_banner', '-version'], { stdio: 'ignore' });
  if (probe.error) return `--video needs ffmpeg, which is not installed (${command} was not found): install it (Debian: apt-get install ffmpeg; macOS: brew install ffmpeg), set FFMPEG to its path, or leave out --video to write images`;
  return probe.status === 0 ? null : `--video needs ffmpeg: \`${command} -version\` exited with ${probe.status}`;
}

export interface VideoWriter {
  write(rgb: Buffer): Promise<void>;
  /** Ends the file; rejects with ffmpeg's last line if it failed. */
  close(): Promise<void>;
}

/** H.264 in an MP4 at `fps` frames a second; odd sides are padded by a pixel (H.264's 4:2:0 needs even ones). */
export function writeVideo(path: string, size: FrameSize, fps: number, command = process.env.FFMPEG ?? 'ffmpeg'): VideoWriter {
  const ffmpeg = spawn(
    command,
    ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${size.width}x${size.height}`, '-r', String(fps), '-i', '-', '-vf', 'pad=ceil(iw/2)*2:ceil(ih/2)*2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', path],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let stderr = '';
  ffmpeg.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
  const exited = new Promise<void>((done, fail) => {
    ffmpeg.on('error', (error) => fail(new Error(`ffmpeg did not start: ${error.message}`)));
    ffmpeg.on('close', (code) => (code === 0 ? done() : fail(new Error(`ffmpeg failed on ${path} (exit ${code}): ${stderr.trim().split('\n').pop() ?? ''}`))));
  });
  // A failed ffmpeg closes its stdin: the error is the exit's, reported by close().
  ffmpeg.stdin.on('error', () => undefined);
  return {
    write: (rgb) => new Promise<void>((done) => (ffmpeg.stdin.write(rgb) ? done() : ffmpeg.stdin.once('drain', done))),
    close: () => {
      ffmpeg.stdin.end();
      return exited;
    },
  };
}
