/**
 * `cerealbar dataset export` and `dataset stats`: game logs read and replayed into dataset records
 * (shared/dataset), pruned, split, and written as JSON Lines or Parquet with a dataset card.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { SchemaElement } from 'hyparquet';
import { ENGINE_VERSION } from '../../shared/engine/version';
import { loadRecording } from '../../shared/eval/recording';
import { LogError } from '../../shared/log/replay';
import { dataFile, datasetCard, filledSplits, type DatasetConfig, type DatasetFormat, type DatasetSummary } from '../../shared/dataset/card';
import { PRUNING_RULES, prunedBy, type PruningOptions, type PruningRule } from '../../shared/dataset/pruning';
import { recordsOf, type GameRecords } from '../../shared/dataset/records';
import { assignSplits, SPLITS, type Split, type SplitOptions } from '../../shared/dataset/splits';
import { datasetStats } from '../../shared/dataset/stats';
import type { FrameRenderer } from '../../shared/frames/node/renderer';
import { findLogs } from '../eval/evaluate';
import { frameColumns, gameFrames, type FramesOption } from './frames';
import { CliError } from '../errors';

/** The logs among `paths`: log files, folders of them, or data directories of `serve` (their logs/ folder). */
export function datasetLogFiles(paths: readonly string[]): string[] {
  return findLogs(paths.map((path) => (existsSync(join(path, 'logs')) && statSync(join(path, 'logs')).isDirectory() ? join(path, 'logs') : path)));
}

export interface ReadGames {
  readonly games: { readonly file: string; readonly sha256: string; readonly records: GameRecords }[];
  readonly unreadable: { readonly file: string; readonly error: string }[];
}

/** Every log replayed into records; one that cannot be read or replayed, or repeats a game id, is listed with why. */
export function readGames(files: readonly string[]): ReadGames {
  const games: ReadGames['games'][number][] = [];
  const unreadable: { file: string; error: string }[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (error) {
      unreadable.push({ file, error: `cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` });
      continue;
    }
    let records: GameRecords;
    try {
      records = recordsOf(loadRecording(bytes.toString('utf8')));
    } catch (error) {
      if (!(error instanceof LogError)) throw error;
      unreadable.push({ file, error: error.message });
      continue;
    }
    const other = seen.get(records.game.game_id);
    if (other !== undefined) {
      unreadable.push({ file, error: `game ${records.game.game_id} is also in ${other}` });
      continue;
    }
    seen.set(records.game.game_id, file);
    games.push({ file, sha256: createHash('sha256').update(bytes).digest('hex'), records });
  }
  return { games, unreadable };
}

export interface ExportOptions {
  readonly format: DatasetFormat;
  readonly pruning: PruningOptions;
  readonly splits: SplitOptions;
  /** Frames of each instruction, drawn by `renderer`. */
  readonly frames?: { readonly option: FramesOption; readonly renderer: FrameRenderer };
}

/** Writes the dataset into `out` (which must not exist or be empty) and returns what it wrote. */
export async function exportDataset(files: readonly string[], out: string, options: ExportOptions): Promise<DatasetSummary> {
  if (existsSync(out) && readdirSync(out).length > 0) throw new CliError(`${out} is not empty: export into a new folder`);
  const { games, unreadable } = readGames(files);
  const pruned = Object.fromEntries(PRUNING_RULES.map((rule) => [rule, 0])) as Record<PruningRule, number>;
  const kept = games.filter(({ records }) => {
    const rule = prunedBy(records, options.pruning);
    if (rule) pruned[rule]++;
    return rule === null;
  });
  const splitOf = assignSplits(
    kept.map(({ records }) => records.game),
    options.splits,
  );
  const bySplit = (split: Split) => kept.map(({ records }) => records).filter((records) => splitOf.get(records.game.game_id) === split);
  const splits = Object.fromEntries(
    SPLITS.map((split) => {
      const inSplit = bySplit(split);
      const games = inSplit.length;
      return [split, { games, instructions: inSplit.reduce((n, { instructions }) => n + instructions.length, 0), meanScore: games === 0 ? 0 : inSplit.reduce((n, { game }) => n + game.score, 0) / games }];
    }),
  ) as DatasetSummary['splits'];
  const summary: DatasetSummary = {
    format: options.format,
    engineVersion: ENGINE_VERSION,
    sources: games.map(({ file, sha256, records }) => ({ file, gameId: records.game.game_id, sha256 })),
    unreadable,
    pruning: options.pruning,
    pruned,
    splitOptions: options.splits,
    splits,
    stats: { all: datasetStats(kept.map(({ records }) => records)), train: datasetStats(bySplit('train')) },
    frames: options.frames ? { roles: options.frames.option.roles, size: options.frames.option.size, everyStep: options.frames.option.everyStep } : null,
  };
  const fileOf = new Map(kept.map(({ file, records }) => [records.game.game_id, file]));
  mkdirSync(out, { recursive: true });
  for (const split of filledSplits(summary)) {
    const inSplit = bySplit(split).sort((a, b) => (a.game.game_id < b.game.game_id ? -1 : a.game.game_id > b.game.game_id ? 1 : 0));
    const frames = new Map<string, Record<string, unknown>>();
    if (options.frames) {
      for (const records of inSplit) {
        const recording = loadRecording(readFileSync(fileOf.get(records.game.game_id)!, 'utf8'));
        for (const [id, columns] of await gameFrames(recording, records, split, options.frames.option, options.format, out, options.frames.renderer)) frames.set(id, columns);
      }
    }
    const rows: Record<DatasetConfig, Record<string, unknown>[]> = {
      games: inSplit.map(({ game }) => ({ ...game, split })),
      instructions: inSplit.flatMap(({ instructions }) => instructions.map((instruction) => ({ ...instruction, ...frames.get(instruction.id), split }))),
    };
    for (const config of Object.keys(rows) as DatasetConfig[]) {
      const path = join(out, dataFile(config, split, options.format));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, options.format === 'jsonl' ? rows[config].map((row) => `${JSON.stringify(row)}\n`).join('') : parquetOf(config, rows[config], options.frames?.option));
    }
  }
  writeFileSync(join(out, 'README.md'), datasetCard(summary));
  writeFileSync(join(out, 'export.json'), `${JSON.stringify(summary, null, 2)}\n`);
  return summary;
}

type Column = { readonly name: string; readonly kind: 'string' | 'int' | 'double' | 'bool' | 'strings' | 'ints' | 'json' | 'image' | 'images' };

/** The Parquet columns of each configuration; nested values (poses, states, maps) are JSON text. */
const COLUMNS: Record<DatasetConfig, readonly Column[]> = {
  instructions: [
    { name: 'id', kind: 'string' },
    { name: 'game_id', kind: 'string' },
    { name: 'index', kind: 'int' },
    { name: 'instruction_id', kind: 'int' },
    { name: 'text', kind: 'string' },
    { name: 'completed', kind: 'bool' },
    { name: 'actions', kind: 'strings' },
    { name: 'num_actions', kind: 'int' },
    { name: 'path', kind: 'json' },
    { name: 'state_before', kind: 'json' },
    { name: 'changed_cards', kind: 'ints' },
    { name: 'points', kind: 'int' },
    { name: 'cancelled', kind: 'bool' },
    { name: 'feedback_positive', kind: 'int' },
    { name: 'feedback_negative', kind: 'int' },
    { name: 'feedback', kind: 'json' },
    { name: 'split', kind: 'string' },
  ],
  games: [
    { name: 'game_id', kind: 'string' },
    { name: 'source', kind: 'string' },
    { name: 'profile', kind: 'string' },
    { name: 'engine_version', kind: 'string' },
    { name: 'started_at', kind: 'string' },
    { name: 'score', kind: 'int' },
    { name: 'end_reason', kind: 'string' },
    { name: 'num_instructions', kind: 'int' },
    { name: 'num_completed', kind: 'int' },
    { name: 'num_cancelled', kind: 'int' },
    { name: 'num_follower_actions', kind: 'int' },
    { name: 'map', kind: 'json' },
    { name: 'seed', kind: 'int' },
    { name: 'split', kind: 'string' },
  ],
};

function schemaOf(column: Column): SchemaElement[] {
  const required = { repetition_type: 'REQUIRED' } as const;
  const utf8 = { type: 'BYTE_ARRAY', converted_type: 'UTF8' } as const;
  switch (column.kind) {
    case 'string':
      return [{ name: column.name, ...utf8, ...required }];
    case 'json':
      return [{ name: column.name, ...utf8, repetition_type: 'OPTIONAL' }];
    case 'int':
      return [{ name: column.name, type: 'INT64', ...required }];
    case 'double':
      return [{ name: column.name, type: 'DOUBLE', ...required }];
    case 'bool':
      return [{ name: column.name, type: 'BOOLEAN', ...required }];
    case 'image':
      return [{ name: column.name, repetition_type: 'OPTIONAL', num_children: 2 }, ...IMAGE_FIELDS];
    case 'images':
      return [
        { name: column.name, converted_type: 'LIST', num_children: 1, ...required },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', num_children: 2, ...required },
        ...IMAGE_FIELDS,
      ];
    case 'strings':
    case 'ints':
      return [
        { name: column.name, converted_type: 'LIST', num_children: 1, ...required },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', ...(column.kind === 'strings' ? utf8 : { type: 'INT64' }), ...required },
      ];
  }
}

/** An image as the `datasets` library stores one (its Image feature): the file's bytes and its name. */
const IMAGE_FIELDS: SchemaElement[] = [
  { name: 'bytes', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
  { name: 'path', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
];

/** The instruction columns frames add, before `split`. */
function withFrames(columns: readonly Column[], frames: FramesOption | undefined): readonly Column[] {
  if (!frames) return columns;
  const added = frameColumns(frames).map((name): Column => ({ name, kind: name.endsWith('_step_frames') ? 'images' : 'image' }));
  return [...columns.slice(0, -1), ...added, columns[columns.length - 1]];
}

/**
 * The `datasets` library's features of the columns, which it reads from a Parquet file's
 * `huggingface` metadata: written with frames, so that `load_dataset` decodes the image columns
 * to images (without it they would load as plain structs of bytes and a name).
 */
function huggingFaceFeatures(columns: readonly Column[]): string {
  const value = (dtype: string) => ({ dtype, _type: 'Value' });
  const feature = (kind: Column['kind']): unknown => {
    switch (kind) {
      case 'string':
      case 'json':
        return value('string');
      case 'int':
        return value('int64');
      case 'double':
        return value('float64');
      case 'bool':
        return value('bool');
      case 'strings':
        return { feature: value('string'), _type: 'Sequence' };
      case 'ints':
        return { feature: value('int64'), _type: 'Sequence' };
      case 'image':
        return { _type: 'Image' };
      case 'images':
        return { feature: { _type: 'Image' }, _type: 'Sequence' };
    }
  };
  return JSON.stringify({ info: { features: Object.fromEntries(columns.map((column) => [column.name, feature(column.kind)])) } });
}

function parquetOf(config: DatasetConfig, rows: readonly Record<string, unknown>[], frames?: FramesOption): Uint8Array {
  const columns = config === 'instructions' ? withFrames(COLUMNS[config], frames) : COLUMNS[config];
  const data = (column: Column) =>
    rows.map((row) => {
      const value = row[column.name];
      if (column.kind === 'json') return value === null ? null : JSON.stringify(value);
      if (column.kind === 'int') return BigInt(value as number);
      if (column.kind === 'ints') return (value as number[]).map(BigInt);
      return value;
    });
  return new Uint8Array(
    parquetWriteBuffer({
      columnData: columns.map((column) => ({ name: column.name, data: data(column) as never })),
      schema: [{ name: 'root', num_children: columns.length }, ...columns.flatMap(schemaOf)],
      createdBy: `cerealbar ${ENGINE_VERSION}`,
      kvMetadata: [{ key: 'cerealbar.config', value: config }, ...(frames && config === 'instructions' ? [{ key: 'huggingface', value: huggingFaceFeatures(columns) }] : [])],
    }),
  );
}
