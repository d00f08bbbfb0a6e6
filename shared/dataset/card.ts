/**
 * The dataset card: the README.md at the top of an exported dataset. Its YAML header tells the
 * Hugging Face `datasets` library where each configuration's splits are (so `load_dataset(dir,
 * "instructions")` needs nothing else); the text gives the provenance, the pruning and the
 * statistics.
 */
import type { Role } from '../engine/state';
import type { PruningOptions, PruningRule } from './pruning';
import { PRUNING_RULES } from './pruning';
import type { Split, SplitOptions } from './splits';
import { SPLITS } from './splits';
import type { DatasetStats } from './stats';

export const DATASET_CONFIGS = ['instructions', 'games'] as const;
export type DatasetConfig = (typeof DATASET_CONFIGS)[number];
export type DatasetFormat = 'jsonl' | 'parquet';

export interface DatasetSummary {
  readonly format: DatasetFormat;
  readonly engineVersion: string;
  /** The logs read, each with its game id and the SHA-256 of its bytes. */
  readonly sources: readonly { readonly file: string; readonly gameId: string; readonly sha256: string }[];
  /** Logs that could not be read or replayed, with why: none is dropped in silence. */
  readonly unreadable: readonly { readonly file: string; readonly error: string }[];
  readonly pruning: PruningOptions;
  /** Games removed by each rule (the first rule that applies to a game counts it). */
  readonly pruned: Readonly<Record<PruningRule, number>>;
  readonly splitOptions: SplitOptions;
  readonly splits: Readonly<Record<Split, { readonly games: number; readonly instructions: number; readonly meanScore: number }>>;
  readonly stats: { readonly all: DatasetStats; readonly train: DatasetStats };
  /** The frames each instruction record has (`dataset export --frames`), or null. */
  readonly frames: { readonly roles: readonly Role[]; readonly size: { readonly width: number; readonly height: number }; readonly everyStep: boolean } | null;
}

/** Where a configuration's split lies in the dataset's folder. */
export function dataFile(config: DatasetConfig, split: Split, format: DatasetFormat): string {
  return `${config}/${split}.${format}`;
}

/** The splits that have games: only those get files (the `datasets` library refuses an empty one). */
export function filledSplits(summary: DatasetSummary): Split[] {
  return SPLITS.filter((split) => summary.splits[split].games > 0);
}

const number = (value: number, digits = 1) => (Number.isInteger(value) ? String(value) : value.toFixed(digits));

export function datasetCard(summary: DatasetSummary): string {
  const splits = filledSplits(summary);
  const yaml = [
    '---',
    'configs:',
    ...DATASET_CONFIGS.flatMap((config, i) => [
      `- config_name: ${config}`,
      ...(i === 0 ? ['  default: true'] : []),
      '  data_files:',
      ...splits.flatMap((split) => [`  - split: ${split}`, `    path: ${dataFile(config, split, summary.format)}`]),
    ]),
    '---',
  ];
  const { all, train } = summary.stats;
  const kept = SPLITS.reduce((sum, split) => sum + summary.splits[split].games, 0);
  const removed = PRUNING_RULES.reduce((sum, rule) => sum + summary.pruned[rule], 0);
  const profiles = Object.entries(all.profiles)
    .map(([profile, games]) => `${profile} (${games} games)`)
    .join(', ');
  const statsRow = (label: string, pick: (stats: DatasetStats) => string) => `| ${label} | ${pick(train)} | ${pick(all)} |`;
  const summaryCells = (s: { mean: number; median: number; max: number }) => `${number(s.mean)} / ${number(s.median)} / ${number(s.max)}`;
  const lines = [
    ...yaml,
    '',
    '# CerealBar games',
    '',
    'Games of CerealBar, the collaborative instruction-following game of Suhr et al. (2019), exported by',
    '`cerealbar dataset export` from game logs. Each game was replayed through the engine',
    `(version ${summary.engineVersion}) before export: every position, card, set and score below is the`,
    `engine's. Rules profiles: ${profiles || 'none'}.`,
    '',
    '## Loading',
    '',
    '```python',
    'from datasets import load_dataset',
    '',
    'instructions = load_dataset("path/to/this/folder", "instructions")  # one record per instruction',
    'games = load_dataset("path/to/this/folder", "games")                # one record per game',
    '```',
    '',
    summary.format === 'jsonl'
      ? `Without the library, each file is JSON Lines: \`[json.loads(line) for line in open("${dataFile('instructions', 'train', 'jsonl')}")]\`.`
      : 'The Parquet files load with pandas or pyarrow too; `path`, `state_before` and `map` hold JSON text.',
    '',
    '## Splits',
    '',
    `Splits are by game, with similar mean scores (as in the paper): fractions ${summary.splitOptions.fractions.join(' / ')},`,
    `seed ${summary.splitOptions.seed}.`,
    '',
    '| split | games | instructions | mean score |',
    '|---|---|---|---|',
    ...SPLITS.map((split) => {
      const s = summary.splits[split];
      return `| ${split} | ${s.games} | ${s.instructions} | ${number(s.meanScore, 2)} |`;
    }),
    '',
    '## Provenance and pruning',
    '',
    `${summary.sources.length + summary.unreadable.length} logs were read; ${summary.unreadable.length} could not be replayed and are left out` +
      (summary.unreadable.length > 0 ? ` (${summary.unreadable.map((entry) => `\`${entry.file}\`: ${entry.error}`).join('; ')})` : '') +
      `. Of ${summary.sources.length} games, ${removed} were removed by the paper's pruning rules and ${kept} kept:`,
    '',
    '| rule | games removed |',
    '|---|---|',
    ...PRUNING_RULES.map((rule) => `| ${rule}${summary.pruning.rules.includes(rule) ? '' : ' (not applied)'} | ${summary.pruned[rule]} |`),
    '',
    `A proportion of completed instructions is low under ${summary.pruning.minCompletionRate}; an action sequence is`,
    `very long beyond ${summary.pruning.maxActionsPerInstruction} follower moves for one instruction. \`export.json\` lists every source`,
    'log with its SHA-256 and the options of the export.',
    '',
    '## Statistics',
    '',
    "As in the paper's Table 3 (mean / median / max), for the training set and for all kept games.",
    '',
    '| | train | all |',
    '|---|---|---|',
    statsRow('games', (s) => String(s.games)),
    statsRow('instructions', (s) => String(s.instructions)),
    statsRow('score per game', (s) => summaryCells(s.score)),
    statsRow('instructions per game', (s) => summaryCells(s.instructions_per_game)),
    statsRow('completed instructions per game', (s) => summaryCells(s.completed_instructions_per_game)),
    statsRow('tokens per instruction', (s) => summaryCells(s.tokens_per_instruction)),
    statsRow('follower actions per completed instruction', (s) => summaryCells(s.follower_actions_per_instruction)),
    statsRow('vocabulary size', (s) => String(s.vocabulary_size)),
    statsRow('games with a score above 0', (s) => `${number(100 * s.games_with_points)}%`),
    '',
    '## Fields',
    '',
    '`instructions`: `id` (`<game_id>#<index>`), `game_id`, `index` (order written), `instruction_id` (the',
    "engine's), `text`, `completed` (the follower marked it DONE), `actions` (the follower's, DONE included),",
    '`num_actions` (its moves), `path` (its poses from the start of the instruction), `state_before` (both',
    'poses, every card, score, turns left and the queue just before its first action; null when it never',
    'acted on it), `changed_cards`, `points` (sets its actions made), `cancelled` (the leader cancelled it),',
    '`feedback_positive`, `feedback_negative` and `feedback` (the live-feedback signals while it was current, in',
    "order, each with `after_step`: the follower's steps in its turn before it), `split`.",
    '',
    "`games`: `game_id`, `source`, `profile` (the rules), `engine_version`, `started_at`, `score`, `end_reason`,",
    '`num_instructions`, `num_completed`, `num_cancelled`, `num_follower_actions`, `map` (the map format), `seed`,',
    '`split`.',
    '',
    ...framesSection(summary),
  ];
  return lines.join('\n');
}

/** What the frame columns hold, when the export has them. */
function framesSection(summary: DatasetSummary): string[] {
  const frames = summary.frames;
  if (!frames) return [];
  const size = `${frames.size.width}x${frames.size.height}`;
  const cell = summary.format === 'parquet' ? 'an image (the PNG, which `load_dataset` decodes to a PIL image)' : 'the path of a PNG file in this folder';
  const what: Record<Role, string> = {
    follower: "the follower's first-person view (its view cone and range, fog beyond)",
    leader: "the leader's whole map from above",
  };
  return [
    '### Frames',
    '',
    `Each instruction has frames of ${size} pixels, drawn headless by the game's own client from each player's own view (never from more than that player knew):`,
    '',
    ...frames.roles.flatMap((role) => [
      `- \`${role}_frame\`: ${what[role]} at the instruction's start (the state of \`state_before\`), ${cell}; null when the follower never acted on it.`,
      ...(frames.everyStep ? [`- \`${role}_step_frames\`: the same view at each pose of \`path\` (the start, then after each move), a list of ${summary.format === 'parquet' ? 'images' : 'paths'}.`] : []),
    ]),
    '',
  ];
}
