/** What the commands that draw frames (`render`, `frames`, `dataset export --frames`) share: a frame size option, and starting a renderer. */
import { parseFrameSize, type FrameSize } from '../../shared/frames/frame';
import { FrameRenderer, FrameRendererError } from '../../shared/frames/node/renderer';
import { CliError } from '../errors';

/** A frame size option (`--size`, `--frame-size`): WIDTHxHEIGHT, or the CLI's error. */
export function parseSizeOption(text: string, option = '--size'): FrameSize {
  const size = parseFrameSize(text);
  if ('problem' in size) throw new CliError(`${option}: ${size.problem}`);
  return size;
}

/** A frame renderer, or the CLI's one-line error (exit 1) saying why it cannot start. */
export function startRenderer(): Promise<FrameRenderer> {
  return FrameRenderer.start().catch((error: unknown) => {
    throw error instanceof FrameRendererError ? new CliError(error.message, 1) : error;
  });
}
