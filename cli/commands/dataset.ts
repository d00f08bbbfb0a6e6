/** `cerealbar dataset export` and `dataset stats`: game logs as a dataset, and the paper's Table 3 statistics. */
import type { Command } from 'commander';
import { DEFAULT_PRUNING, PRUNING_RULES, type PruningRule } from '../../shared/dataset/pruning';
import { DEFAULT_SPLITS, SPLITS } from '../../shared/dataset/splits';
import { datasetStats, type DatasetStats, type Summary } from '../../shared/dataset/stats';
import type { DatasetFormat } from '../../shared/dataset/card';
import { datasetLogFiles, exportDataset, readGames } from '../dataset/export';
import { CliError } from '../errors';
import { integerOption } from '../options';
import { ROLES, type Role } from '../../shared/engine/state';
import { parseSizeOption, startRenderer } from '../render/frameOptions';

interface ExportCliOptions {
  data: string[];
  out: string;
  format: DatasetFormat;
  splits: readonly [number, number, number];
  seed: number;
  prune: PruningRule[] | false;
  minCompletionRate: number;
  maxActions: number;
  frames?: Role[];
  frameSize: string;
  framesEveryStep?: boolean;
  json?: boolean;
}

/** `--frames`: follower, leader or both, comma-separated. */
function framesOption(value: string): Role[] {
  const roles = value.split(',').map((role) => role.trim());
  const unknown = roles.find((role) => !(ROLES as readonly string[]).includes(role));
  if (unknown !== undefined || roles.length === 0) throw new CliError(`--frames is follower, leader or follower,leader, not "${value}"`);
  return [...new Set(roles as Role[])];
}

export function registerDatasetCommands(program: Command): void {
  const dataset = program.command('dataset').description('game logs as a dataset: export it with splits and pruning, or print its statistics');

  dataset
    .command('export')
    .description('write one record per instruction and per game (JSON Lines or Parquet), split by game with similar mean scores, pruned as in the CerealBar paper, with a dataset card (README.md)')
    .requiredOption('--data <paths...>', 'game logs: .jsonl files, folders of them, or data directories of `serve`')
    .requiredOption('--out <dir>', 'the dataset folder to write (new or empty)')
    .option('--format <format>', 'jsonl or parquet', formatOption, 'jsonl' as DatasetFormat)
    .option('--splits <fractions>', 'train,validation,test shares of the games', splitsOption, DEFAULT_SPLITS.fractions)
    .option('--seed <n>', 'orders games of equal score before splitting', integerOption('--seed', 0, 2 ** 32 - 1), DEFAULT_SPLITS.seed)
    .option('--prune <rules>', `pruning rules to apply, comma-separated (${PRUNING_RULES.join(', ')})`, pruneOption, [...DEFAULT_PRUNING.rules])
    .option('--no-prune', 'keep every game that replays')
    .option('--min-completion-rate <share>', 'low-completion-rate: the least share of instructions marked done', shareOption, DEFAULT_PRUNING.minCompletionRate)
    .option('--max-actions <n>', 'long-action-sequence: the most follower moves for one instruction', integerOption('--max-actions', 1, 1_000_000), DEFAULT_PRUNING.maxActionsPerInstruction)
    .option('--frames <roles>', "add each instruction's frame at its start from these players' own views: follower, leader or follower,leader (docs/rendering.md)", framesOption)
    .option('--frame-size <WxH>', 'the frames\' size in pixels', '320x240')
    .option('--frames-every-step', "with --frames, also a frame at each pose of the instruction's path")
    .option('--json', 'print the export summary as JSON')
    .action(async (options: ExportCliOptions) => {
      const size = parseSizeOption(options.frameSize, '--frame-size');
      if (options.framesEveryStep && !options.frames) throw new CliError('--frames-every-step needs --frames');
      const files = datasetLogFiles(options.data);
      const renderer = options.frames ? await startRenderer() : undefined;
      let summary;
      try {
        summary = await exportDataset(files, options.out, {
          format: options.format,
          pruning: { rules: options.prune === false ? [] : options.prune, minCompletionRate: options.minCompletionRate, maxActionsPerInstruction: options.maxActions },
          splits: { fractions: options.splits, seed: options.seed },
          frames: renderer && options.frames ? { option: { roles: options.frames, size, everyStep: options.framesEveryStep ?? false }, renderer } : undefined,
        });
      } finally {
        await renderer?.close();
      }
      for (const { file, error } of summary.unreadable) process.stderr.write(`cerealbar: skipped ${file}: ${error}\n`);
      if (options.json) {
        process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        return;
      }
      const removed = PRUNING_RULES.filter((rule) => summary.pruned[rule] > 0).map((rule) => `${summary.pruned[rule]} ${rule}`);
      process.stdout.write(
        `${summary.sources.length} games read (${summary.unreadable.length} logs skipped); removed ${removed.length > 0 ? removed.join(', ') : 'none'}\n` +
          SPLITS.map((split) => `  ${split.padEnd(10)} ${String(summary.splits[split].games).padStart(6)} games ${String(summary.splits[split].instructions).padStart(8)} instructions  mean score ${summary.splits[split].meanScore.toFixed(2)}`).join('\n') +
          `\nwrote ${options.out} (${options.format}; README.md is the dataset card)\n`,
      );
    });

  dataset
    .command('stats')
    .description("print the statistics of the CerealBar paper's Table 3 for a set of game logs")
    .requiredOption('--data <paths...>', 'game logs: .jsonl files, folders of them, or data directories of `serve`')
    .option('--json', 'print them as JSON')
    .action((options: { data: string[]; json?: boolean }) => {
      const { games, unreadable } = readGames(datasetLogFiles(options.data));
      for (const { file, error } of unreadable) process.stderr.write(`cerealbar: skipped ${file}: ${error}\n`);
      if (games.length === 0) throw new CliError('no log could be read');
      const stats = datasetStats(games.map(({ records }) => records));
      process.stdout.write(options.json ? `${JSON.stringify(stats, null, 2)}\n` : formatStats(stats));
    });
}

function formatStats(stats: DatasetStats): string {
  const row = (label: string, value: string) => `  ${label.padEnd(44)} ${value}`;
  const summary = (s: Summary) => `${s.mean.toFixed(1).padStart(7)} ${String(Number(s.median.toFixed(1))).padStart(7)} ${String(s.max).padStart(7)}`;
  return [
    `${''.padEnd(46)}   mean  median     max`,
    row('score per game', summary(stats.score)),
    row('instructions per game', summary(stats.instructions_per_game)),
    row('completed instructions per game', summary(stats.completed_instructions_per_game)),
    row('tokens per instruction', summary(stats.tokens_per_instruction)),
    row('follower actions per completed instruction', summary(stats.follower_actions_per_instruction)),
    row('games', String(stats.games)),
    row('instructions (completed)', `${stats.instructions} (${stats.completed_instructions})`),
    row('vocabulary size', String(stats.vocabulary_size)),
    row('games with a score above 0', `${(100 * stats.games_with_points).toFixed(1)}%`),
    row('rules profiles', Object.entries(stats.profiles).map(([profile, games]) => `${profile} ${games}`).join(', ')),
    '',
  ].join('\n');
}

function formatOption(value: string): DatasetFormat {
  if (value !== 'jsonl' && value !== 'parquet') throw new CliError(`--format must be jsonl or parquet, got ${JSON.stringify(value)}`);
  return value;
}

function splitsOption(value: string): readonly [number, number, number] {
  const parts = value.split(',').map((part) => Number(part.trim()));
  if (parts.length !== 3 || parts.some((part) => !Number.isFinite(part) || part < 0) || Math.abs(parts[0] + parts[1] + parts[2] - 1) > 1e-9) {
    throw new CliError(`--splits must be three shares that sum to 1, e.g. 0.8,0.1,0.1; got ${JSON.stringify(value)}`);
  }
  return [parts[0], parts[1], parts[2]];
}

function shareOption(value: string): number {
  const share = Number(value);
  if (value.trim() === '' || !(share >= 0 && share <= 1)) throw new CliError(`--min-completion-rate must be a number from 0 to 1, got ${JSON.stringify(value)}`);
  return share;
}

function pruneOption(value: string): PruningRule[] {
  const rules = value.split(',').map((rule) => rule.trim());
  const unknown = rules.filter((rule) => !(PRUNING_RULES as readonly string[]).includes(rule));
  if (unknown.length > 0) throw new CliError(`--prune: unknown rule ${unknown.join(', ')}; the rules are ${PRUNING_RULES.join(', ')}`);
  return rules as PruningRule[];
}
