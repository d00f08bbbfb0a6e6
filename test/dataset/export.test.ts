/** `cerealbar dataset export` and `dataset stats` as a user runs them, on a generated corpus with bad logs in it. */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { loadRecording } from '../../shared/eval/recording';
import { recordsOf } from '../../shared/dataset/records';
import { SPLITS } from '../../shared/dataset/splits';
import { importCb2Game } from '../../shared/cb2/import';
import { feedbackAndCancelGame } from '../cb2/cb2Script';
import { cutLog, logText, selfPlayLines } from './corpus';

const BIN = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

function cerealbar(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The first cut of game `seed` with a DONE but fewer than half its instructions done. */
function lowCompletionLog(seed: number): string {
  for (let events = 1; ; events++) {
    const text = cutLog(seed, events);
    const { game } = recordsOf(loadRecording(text));
    if (game.num_completed > 0 && game.num_completed / game.num_instructions < 0.5) return text;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'cerealbar-dataset-'));
const logs = join(dir, 'logs');
mkdirSync(logs);
const WHOLE = 20;
for (let seed = 1; seed <= WHOLE; seed++) writeFileSync(join(logs, `game-${seed}.jsonl`), logText(selfPlayLines(seed)));
for (const seed of [101, 102, 103]) writeFileSync(join(logs, `cut-${seed}.jsonl`), cutLog(seed, 5));
writeFileSync(join(logs, 'low-104.jsonl'), lowCompletionLog(104));
writeFileSync(join(logs, 'garbage.jsonl'), 'this is not a log\n');
copyFileSync(join(logs, 'game-1.jsonl'), join(logs, 'game-1-copy.jsonl'));

describe('dataset export', () => {
  const out = join(dir, 'jsonl');
  const run = cerealbar('dataset', 'export', '--data', logs, '--out', out, '--json');
  const summary = JSON.parse(run.stdout);

  test('bad logs are named on stderr and in the summary; each pruning rule counts what it removed', () => {
    expect(run.status).toBe(0);
    expect(run.stderr).toContain(`skipped ${join(logs, 'garbage.jsonl')}: line 1:`);
    expect(run.stderr).toContain(`skipped ${join(logs, 'game-1.jsonl')}: game selfplay-1 is also in ${join(logs, 'game-1-copy.jsonl')}`);
    expect(summary.unreadable).toHaveLength(2);
    expect(summary.sources).toHaveLength(WHOLE + 4);
    expect(summary.pruned).toEqual({ 'no-completed-instruction': 3, 'low-completion-rate': 1, 'long-action-sequence': 0 });
    const kept = SPLITS.reduce((n, split) => n + summary.splits[split].games, 0);
    expect(kept).toBe(WHOLE);
    expect(summary.splits).toMatchObject({ train: { games: 16 }, validation: { games: 2 }, test: { games: 2 } });
  });

  test('the files: one record per instruction and per game, by split, readable with JSON alone', () => {
    expect(readdirSync(out).sort()).toEqual(['README.md', 'export.json', 'games', 'instructions']);
    const games = SPLITS.flatMap((split) => readFileSync(join(out, 'games', `${split}.jsonl`), 'utf8').trim().split('\n').map((line) => JSON.parse(line)));
    expect(games.map((game) => game.game_id).sort()).toEqual(Array.from({ length: WHOLE }, (_, i) => `selfplay-${i + 1}`).sort());
    const instructions = SPLITS.flatMap((split) => readFileSync(join(out, 'instructions', `${split}.jsonl`), 'utf8').trim().split('\n').map((line) => JSON.parse(line)));
    expect(instructions).toHaveLength(games.reduce((n, game) => n + game.num_instructions, 0));
    const splitOf = new Map(games.map((game) => [game.game_id, game.split]));
    expect(instructions.every((instruction) => instruction.split === splitOf.get(instruction.game_id))).toBe(true);
    const expected = recordsOf(loadRecording(readFileSync(join(logs, 'game-7.jsonl'), 'utf8')));
    expect(instructions.filter((instruction) => instruction.game_id === 'selfplay-7').map(({ split: _, ...rest }) => rest)).toEqual(JSON.parse(JSON.stringify(expected.instructions)));
  });

  test('the card: the YAML that tells `datasets` where each split is, the pruning counts and the statistics', () => {
    const card = readFileSync(join(out, 'README.md'), 'utf8');
    expect(card.startsWith('---\nconfigs:\n- config_name: instructions\n  default: true\n  data_files:\n  - split: train\n    path: instructions/train.jsonl\n')).toBe(true);
    expect(card).toContain('| no-completed-instruction | 3 |');
    expect(card).toContain('| low-completion-rate | 1 |');
    expect(card).toContain(`| train | 16 | ${summary.splits.train.instructions} |`);
    expect(card).toMatch(/\| vocabulary size \| \d+ \| \d+ \|/);
    expect(JSON.parse(readFileSync(join(out, 'export.json'), 'utf8'))).toEqual(summary);
  });

  test('the same logs and options give the same dataset, byte for byte', () => {
    const again = join(dir, 'again');
    expect(cerealbar('dataset', 'export', '--data', logs, '--out', again).status).toBe(0);
    for (const file of ['README.md', 'export.json', 'instructions/train.jsonl', 'games/test.jsonl']) {
      expect(readFileSync(join(again, file), 'utf8')).toBe(readFileSync(join(out, file), 'utf8'));
    }
  });

  test('Parquet holds the same records (nested values as JSON text)', async () => {
    const parquet = join(dir, 'parquet');
    expect(cerealbar('dataset', 'export', '--data', logs, '--out', parquet, '--format', 'parquet', '--no-prune').status).toBe(0);
    expect(readFileSync(join(parquet, 'README.md'), 'utf8')).toContain('path: instructions/train.parquet');
    const bytes = readFileSync(join(parquet, 'instructions', 'validation.parquet'));
    const rows = (await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) })) as Record<string, unknown>[];
    const jsonl = SPLITS.flatMap((split) => readFileSync(join(out, 'instructions', `${split}.jsonl`), 'utf8').trim().split('\n').map((line) => JSON.parse(line)));
    // --no-prune keeps the cut games, so the splits differ: compare the records of the first whole game in both.
    const game = rows.map((row) => row.game_id as string).find((id) => jsonl.some((row) => row.game_id === id));
    expect(game).toBeDefined();
    const normal = (row: Record<string, unknown>) => ({
      ...row,
      index: Number(row.index),
      instruction_id: Number(row.instruction_id),
      num_actions: Number(row.num_actions),
      points: Number(row.points),
      feedback_positive: Number(row.feedback_positive),
      feedback_negative: Number(row.feedback_negative),
      feedback: typeof row.feedback === 'string' ? JSON.parse(row.feedback) : row.feedback,
      changed_cards: (row.changed_cards as (bigint | number)[]).map(Number),
      path: typeof row.path === 'string' ? JSON.parse(row.path) : row.path,
      state_before: typeof row.state_before === 'string' ? JSON.parse(row.state_before) : row.state_before,
      split: 'any',
    });
    expect(rows.filter((row) => row.game_id === game).map(normal)).toEqual(jsonl.filter((row) => row.game_id === game).map(normal));
    const all = SPLITS.flatMap((split) => {
      const file = readFileSync(join(parquet, 'games', `${split}.parquet`));
      return parquetReadObjects({ file: file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) });
    });
    expect((await Promise.all(all)).flat()).toHaveLength(WHOLE + 4);
  });

  test('usage errors: a folder that is not empty, bad options, no logs', () => {
    expect(cerealbar('dataset', 'export', '--data', logs, '--out', out)).toMatchObject({ status: 2, stderr: `cerealbar: ${out} is not empty: export into a new folder\n` });
    expect(cerealbar('dataset', 'export', '--data', logs, '--out', join(dir, 'x'), '--splits', '0.5,0.5,0.5').stderr).toMatch(/--splits must be three shares that sum to 1/);
    expect(cerealbar('dataset', 'export', '--data', logs, '--out', join(dir, 'x'), '--prune', 'short-games').stderr).toMatch(/unknown rule short-games; the rules are no-completed-instruction/);
    expect(cerealbar('dataset', 'export', '--data', logs, '--out', join(dir, 'x'), '--format', 'csv').stderr).toMatch(/--format must be jsonl or parquet/);
    expect(cerealbar('dataset', 'stats', '--data', join(dir, 'nowhere')).stderr).toMatch(/no such file or directory/);
  });
});

describe('dataset export of a game with live feedback and a cancel', () => {
  test('JSON Lines and Parquet carry each instruction\'s feedback and whether it was cancelled, and the game\'s cancels', async () => {
    const data = join(dir, 'cb2');
    mkdirSync(data);
    writeFileSync(join(data, 'cb2.jsonl'), logText(importCb2Game(feedbackAndCancelGame()).lines));
    const exported: Record<string, Record<string, unknown>[]> = {};
    for (const format of ['jsonl', 'parquet']) {
      const folder = join(dir, `cb2-${format}`);
      expect(cerealbar('dataset', 'export', '--data', data, '--out', folder, '--format', format, '--no-prune', '--splits', '1,0,0').status).toBe(0);
      const file = join(folder, 'instructions', `train.${format}`);
      if (format === 'jsonl') exported[format] = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
      else {
        const bytes = readFileSync(file);
        exported[format] = (await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) })) as Record<string, unknown>[];
      }
    }
    const interjections = (row: Record<string, unknown>) => ({
      cancelled: row.cancelled,
      feedback_positive: Number(row.feedback_positive),
      feedback_negative: Number(row.feedback_negative),
      feedback: typeof row.feedback === 'string' ? JSON.parse(row.feedback) : row.feedback,
    });
    expect(exported.jsonl.map(interjections)).toEqual([
      { cancelled: false, feedback_positive: 0, feedback_negative: 0, feedback: [] },
      { cancelled: true, feedback_positive: 1, feedback_negative: 1, feedback: [{ signal: 'positive', after_step: 1 }, { signal: 'negative', after_step: 2 }] },
      { cancelled: true, feedback_positive: 0, feedback_negative: 0, feedback: [] },
      { cancelled: false, feedback_positive: 1, feedback_negative: 0, feedback: [{ signal: 'positive', after_step: 0 }] },
    ]);
    expect(exported.parquet.map(interjections)).toEqual(exported.jsonl.map(interjections));
    const games = readFileSync(join(dir, 'cb2-jsonl', 'games', 'train.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(games).toMatchObject([{ num_instructions: 4, num_completed: 2, num_cancelled: 2 }]);
  });
});

describe('dataset stats', () => {
  test("prints Table 3's statistics, and --json gives them as numbers", () => {
    const text = cerealbar('dataset', 'stats', '--data', logs);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/score per game\s+[\d.]+\s+[\d.]+\s+\d+/);
    expect(text.stdout).toMatch(/games\s+24\n/);
    const json = JSON.parse(cerealbar('dataset', 'stats', '--data', logs, '--json').stdout);
    expect(json.games).toBe(WHOLE + 4);
    expect(json.profiles).toEqual({ cerealbar: WHOLE + 4 });
  });
});
