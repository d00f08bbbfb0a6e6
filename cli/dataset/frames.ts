/**
 * `dataset export --frames`: per instruction, each chosen role's frame at the instruction's start
 * (the state of `state_before`, before the follower's first action for it) and, with every step,
 * at each state of its `path`. Each frame is drawn from that role's own view by the frame renderer
 * (docs/rendering.md): the follower's first-person, the leader's map from above. JSON Lines
 * records name PNG files under frames/; Parquet rows hold the PNG bytes in an image column.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Role } from '../../shared/engine/state';
import type { Recording } from '../../shared/eval/recording';
import { defaultCamera, frameView, type FrameSize } from '../../shared/frames/frame';
import type { FrameRenderer } from '../../shared/frames/node/renderer';
import { playerViews } from '../../shared/frames/views';
import { followedInstructions, instructionPathStates, type GameRecords } from '../../shared/dataset/records';
import type { DatasetFormat } from '../../shared/dataset/card';
import { fileNamePart } from '../render/renderLogs';

export interface FramesOption {
  readonly roles: readonly Role[];
  readonly size: FrameSize;
  readonly everyStep: boolean;
}

/** A frame in a record: its file's path in the dataset (JSON Lines), or the file itself with it (Parquet's image column). */
export type FrameCell = string | { readonly bytes: Uint8Array; readonly path: string };

/** The columns frames add to an instruction record: `<role>_frame`, and with every step `<role>_step_frames`. */
export function frameColumns(option: FramesOption): string[] {
  return option.roles.flatMap((role) => [`${role}_frame`, ...(option.everyStep ? [`${role}_step_frames`] : [])]);
}

/**
 * Draws the frames of one game's instructions and returns, by record id, the frame columns' values
 * (null and [] for an instruction the follower never acted on). JSON Lines gets the files written
 * under `out`; Parquet gets their bytes.
 */
export async function gameFrames(recording: Recording, records: GameRecords, split: string, option: FramesOption, format: DatasetFormat, out: string, renderer: FrameRenderer): Promise<Map<string, Record<string, FrameCell | FrameCell[] | null>>> {
  const followed = followedInstructions(recording);
  const pathStates = new Map(records.instructions.map((record) => {
    const instruction = followed.get(record.instruction_id);
    return [record.id, instruction ? instructionPathStates(recording, instruction) : []] as const;
  }));
  const wanted = new Set([...pathStates.values()].flatMap((states) => (option.everyStep ? states : states.slice(0, 1))));
  const folder = join('frames', split);
  if (format === 'jsonl') mkdirSync(join(out, folder), { recursive: true });
  const columns = new Map<string, Record<string, FrameCell | FrameCell[] | null>>();
  for (const role of option.roles) {
    const views = playerViews(recording.states, role, (i) => wanted.has(i));
    const draw = async (state: number, name: string): Promise<FrameCell> => {
      const png = await renderer.render({ world: `${records.game.game_id}#${role}`, view: frameView(views[state]!), camera: defaultCamera(role), size: option.size, format: 'png' });
      const path = `${folder}/${name}.png`;
      if (format === 'parquet') return { bytes: png, path };
      writeFileSync(join(out, path), png);
      return path;
    };
    for (const record of records.instructions) {
      const states = pathStates.get(record.id)!;
      const base = `${fileNamePart(record.game_id)}-${record.index}-${role}`;
      const row = columns.get(record.id) ?? {};
      if (option.everyStep) {
        const steps: FrameCell[] = [];
        for (const [k, state] of states.entries()) steps.push(await draw(state, `${base}-${k}`));
        // The start is the path's first state: its frame is the first step's.
        row[`${role}_frame`] = steps[0] ?? null;
        row[`${role}_step_frames`] = steps;
      } else {
        row[`${role}_frame`] = states.length === 0 ? null : await draw(states[0], base);
      }
      columns.set(record.id, row);
    }
  }
  return columns;
}
