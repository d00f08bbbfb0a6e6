/**
 * `cerealbar render LOG... --role follower|leader --out DIR`: what a player saw, drawn headless by the
 * game's own scene from that player's view alone (docs/rendering.md).
 */
import type { Command } from 'commander';
import { ROLES, type Role } from '../../shared/engine/state';
import { defaultCamera, FRAME_CAMERAS, type FrameCamera } from '../../shared/frames/frame';
import type { FramePoints } from '../../shared/frames/views';
import { findLogs } from '../eval/evaluate';
import { CliError } from '../errors';
import { integerOption } from '../options';
import { progress } from '../progress';
import { FrameRendererError } from '../../shared/frames/node/renderer';
import { parseSizeOption, startRenderer } from '../render/frameOptions';
import { logsToDraw, renderLogs } from '../render/renderLogs';
import { ffmpegProblem } from '../render/video';

interface RenderCli {
  role: string;
  camera?: string;
  at: string;
  size: string;
  format: string;
  out: string;
  video?: boolean;
  fps: number;
}

/** `--at`: a named set of points, or seqs separated by commas. */
export function parseAt(text: string): FramePoints {
  if (text === 'start' || text === 'instructions' || text === 'steps') return text;
  const seqs = text.split(',').map((part) => part.trim());
  if (seqs.some((seq) => !/^\d+$/.test(seq))) throw new CliError(`--at is start, instructions, steps or event seqs separated by commas (e.g. 0,12,40), not "${text}"`);
  return seqs.map(Number);
}

function choice<T extends string>(option: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new CliError(`${option} is ${allowed.join(', ')}, not "${value}"`);
  return value as T;
}

export function registerRenderCommand(program: Command): void {
  program
    .command('render')
    .description("draw what a player saw in logged games: frames from that player's own view, as the game's pages draw it")
    .argument('<logs...>', 'game logs (.jsonl), or folders of them')
    .requiredOption('--role <role>', 'whose view: follower or leader')
    .option('--camera <camera>', "first-person, overhead (the whole map from above) or angled (the leader's game view); default: first-person for the follower, overhead for the leader")
    .option('--at <points>', 'start, instructions (where the follower is first shown each instruction), steps (every event), or event seqs such as 0,12,40 (0 is the start)', 'instructions')
    .option('--size <WxH>', 'frame size in pixels', '640x480')
    .option('--format <format>', 'png or jpeg', 'png')
    .requiredOption('--out <dir>', 'folder for the frames (made if missing)')
    .option('--video', 'write one MP4 per log and role instead of images (needs ffmpeg)')
    .option('--fps <n>', 'frames a second of --video', integerOption('--fps', 1, 60), 4)
    .action(async (logs: string[], cli: RenderCli) => {
      const role = choice<Role>('--role', cli.role, ROLES);
      const camera = cli.camera === undefined ? defaultCamera(role) : choice<FrameCamera>('--camera', cli.camera, FRAME_CAMERAS);
      const format = choice('--format', cli.format, ['png', 'jpeg'] as const);
      const size = parseSizeOption(cli.size);
      const at = parseAt(cli.at);
      if (cli.video) {
        const problem = ffmpegProblem();
        if (problem) throw new CliError(problem);
      }
      const toDraw = logsToDraw(findLogs(logs), at);
      const total = toDraw.reduce((sum, log) => sum + log.points.length, 0);
      const renderer = await startRenderer();
      const bar = progress(total, 'frames');
      try {
        const written = await renderLogs(toDraw, { role, camera, at, size, format, out: cli.out, videoFps: cli.video ? cli.fps : undefined }, renderer, bar.tick);
        bar.end();
        process.stdout.write(`${written.length} ${cli.video ? 'videos' : 'frames'} of ${toDraw.length} ${toDraw.length === 1 ? 'game' : 'games'} in ${cli.out}\n`);
      } catch (error) {
        throw error instanceof FrameRendererError ? new CliError(error.message, 1) : error;
      } finally {
        await renderer.close();
      }
    });
}
