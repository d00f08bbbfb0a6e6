/** `cerealbar study`: write an example study file, print the links a platform needs for one, and list its workers. */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { redactUrl } from '../../server/cluster';
import { PgGameReader } from '../../server/store/PgGameStore';
import { PgWorkerStore } from '../../server/store/PgWorkerStore';
import { SqliteWorkerStore, WORKERS_FILE } from '../../server/store/SqliteWorkerStore';
import type { WorkerStore } from '../../server/store/types';
import { logFiles, poolLogs, readGameLogs, type ReadLogs } from '../../server/study/gameLogs';
import { isRecordFileName } from '../../shared/agents/node/llm/records';
import { loadStudyFile, type LoadedStudy } from '../../server/study/loadStudy';
import { bonusFor, formatAmount } from '../../shared/study/bonus';
import { BONUS_FORMATS, bonusCsv, bonusSheet, type BonusFormat, type BonusSheet } from '../../shared/study/bonusSheet';
import { checkBaseUrl, studyLinks, type StudyLinks } from '../../shared/study/links';
import { roleSettingNote } from '../../shared/study/roles';
import { StudyFileError } from '../../shared/study/parseStudy';
import { COMPLETION_OUTCOMES, studyIdSchema, type Study } from '../../shared/study/studyFile';
import { labIdWarning } from '../../shared/study/labIds';
import { completionWithoutPlay, workerStep, type WorkerGame, type WorkerRecord } from '../../shared/study/worker';
import { DEFAULT_BOOTSTRAP } from '../../shared/eval/bootstrap';
import { CliError } from '../errors';
import { checkStoreUrl, integerOption } from '../options';
import { armsCsv, differencesCsv, formatStudyReport, studyReport } from '../study/report';
import { studyReportHtml } from '../study/reportHtml';
import { endManifest, RUN_MANIFEST, startManifest, writeManifest } from '../runManifest';
import { EXAMPLE_CONSENT, EXAMPLE_CONSENT_FILE, EXAMPLE_ROLES, EXAMPLE_STUDY_FILE, exampleStudyYaml } from '../study/example';
import { humanPartnerWarnings } from '../study/partnerWording';

interface InitOptions {
  id: string;
  out?: string;
}

interface WorkersOptions {
  study: string;
  data: string;
  store?: string;
  json?: boolean;
}

interface BonusesOptions {
  study: string;
  data: string;
  store?: string;
  format: string;
  out: string;
  json?: boolean;
}

interface ReportOptions {
  study: string;
  data: string;
  store?: string;
  llmRecords?: string;
  out: string;
  bootstrap: number;
  bootstrapSeed: number;
  json?: boolean;
}

interface LinksOptions {
  study: string;
  baseUrl: string;
  json?: boolean;
}

/** A study file loaded for a command, or a CliError (exit 2) listing its problems. */
function loadStudyForCli(file: string): LoadedStudy {
  try {
    return loadStudyFile(file);
  } catch (error) {
    if (error instanceof StudyFileError) throw new CliError(error.message);
    throw error;
  }
}

function studyIdOption(value: string): string {
  const parsed = studyIdSchema.safeParse(value);
  if (!parsed.success) throw new CliError(`--id ${JSON.stringify(value)} ${parsed.error.issues[0].message}`);
  return value;
}

export function registerStudyCommands(program: Command): void {
  const study = program.command('study').description('set up a crowdsourced study: an example study file, the links for Prolific, MTurk or a lab');

  study
    .command('init')
    .description(`write an example study (DIR/${EXAMPLE_STUDY_FILE}, every field explained) and consent form (DIR/${EXAMPLE_CONSENT_FILE}); never overwrites`)
    .requiredOption('--id <id>', 'the study id: lowercase letters, digits and dashes (it is in the study URL)', studyIdOption)
    .option('--out <dir>', 'folder to write to (created if missing); default studies/<id>')
    .action((options: InitOptions) => initStudy(options.id, options.out ?? join('studies', options.id)));

  study
    .command('links')
    .description("print what the study's platform needs: Prolific's study URL and completion URLs, MTurk's ExternalQuestion, or a lab's URL")
    .requiredOption('--study <file>', 'the study file (YAML or JSON)')
    .requiredOption('--base-url <url>', "the server's public address, as in https://study.example.org")
    .option('--json', 'print the links as JSON')
    .action((options: LinksOptions) => {
      let checked: ReturnType<typeof checkBaseUrl>;
      try {
        checked = checkBaseUrl(options.baseUrl);
      } catch (error) {
        throw new CliError(`--base-url: ${(error as Error).message}`);
      }
      const loaded = loadStudyForCli(options.study);
      if (checked.warning) process.stderr.write(`cerealbar: warning: ${checked.warning}\n`);
      // A setting that pairs nobody by itself is a warning; one that does is said with the links.
      const roles = roleSettingNote(loaded.roles, loaded.arms !== undefined);
      if (!roles.pairsNewWorkers) process.stderr.write(`cerealbar: warning: roles: ${roles.text}\n`);
      const labIds = labIdWarning(loaded);
      if (labIds) process.stderr.write(`cerealbar: warning: ${labIds}\n`);
      for (const warning of humanPartnerWarnings(loaded)) process.stderr.write(`cerealbar: warning: ${warning}\n`);
      const links = studyLinks(loaded, checked.base);
      process.stdout.write(options.json ? `${JSON.stringify(links, null, 2)}\n` : `${formatLinks(links)}${roles.pairsNewWorkers ? `\nRoles: ${roles.text}\n` : ''}`);
    });

  study
    .command('workers')
    .description("print the study's workers from a data directory (opened read-only) or the database of serve --store: each one's step, role, quiz and completion code")
    .requiredOption('--study <file>', 'the study file (YAML or JSON)')
    .option('--data <dir>', 'the data directory serve uses', 'data')
    .option('--store <url>', 'read the workers from the PostgreSQL database serve --store uses instead; also STORE_URL', process.env.STORE_URL || undefined)
    .option('--json', 'print the workers as JSON')
    .action(async (options: WorkersOptions) => {
      const loaded = loadStudyForCli(options.study);
      const list = await readWorkers(loaded, resolve(options.data), checkStoreUrl(options.store));
      if (options.json) {
        // Each worker with its games (ids, role, end, score), so that every figure can be traced to a log.
        const workers = list.map(({ gameList, ...worker }) => ({ ...worker, step: workerStep(worker), withoutPlay: completionWithoutPlay(worker, gameList), gameList }));
        process.stdout.write(`${JSON.stringify({ study: loaded.id, workers }, null, 2)}\n`);
        return;
      }
      process.stdout.write(formatWorkers(loaded, list));
      const unplayed = list.filter((worker) => completionWithoutPlay(worker, worker.gameList) !== null).length;
      if (unplayed > 0) process.stdout.write(`${unplayed} completion code(s) were earned without a game played (the check column): see "Before approving" in the study guide\n`);
    });

  study
    .command('bonuses')
    .description("write the bulk-bonus sheet a platform takes (Prolific: participant id and amount; MTurk: one row per assignment), computed from the study's game logs")
    .requiredOption('--study <file>', 'the study file (YAML or JSON): its pay section sets the amounts')
    .option('--data <dir>', 'the data directory serve uses', 'data')
    .option('--store <url>', "read the games from the PostgreSQL database serve --store uses instead (those of the study's pool); also STORE_URL", process.env.STORE_URL || undefined)
    .requiredOption('--format <site>', `the sheet's site: ${BONUS_FORMATS.join(' or ')}`)
    .requiredOption('--out <file>', 'the CSV file to write (replaced if it exists)')
    .option('--json', 'print each payment with the games it is for as JSON, instead of the table')
    .action(async (options: BonusesOptions) => {
      if (!(BONUS_FORMATS as readonly string[]).includes(options.format)) throw new CliError(`--format must be ${BONUS_FORMATS.join(' or ')}, got ${JSON.stringify(options.format)}`);
      const format = options.format as BonusFormat;
      const loaded = loadStudyForCli(options.study);
      const store = checkStoreUrl(options.store);
      const { games, unreadable } = store === undefined ? await readDataDirLogs(resolve(options.data)) : await readDatabaseLogs(store, loaded.pool);
      const sheet = bonusSheet(loaded, games, format);
      try {
        writeFileSync(options.out, bonusCsv(sheet, format, loaded.title));
      } catch (error) {
        throw new CliError(`${options.out}: cannot write: ${(error as Error).message}`);
      }
      for (const problem of unreadable) process.stderr.write(`cerealbar: warning: ${problem} (not counted)\n`);
      if (sheet.unfinished.length > 0) process.stderr.write(`cerealbar: warning: ${sheet.unfinished.length} game(s) of the study have not ended and are not counted: ${sheet.unfinished.join(' ')}\n`);
      const unassigned = sheet.rows.filter((row) => format === 'mturk' && row.assignmentId === null);
      if (unassigned.length > 0) process.stderr.write(`cerealbar: warning: ${unassigned.map((row) => row.participantId).join(' ')} played without an MTurk assignment id: MTurk cannot pay those rows\n`);
      process.stdout.write(options.json ? `${JSON.stringify(sheet, null, 2)}\n` : formatBonuses(sheet, options.out));
      // The platform pays each code's base reward as well: the codes earned without a game are the researcher's to check.
      const unplayed = (await readWorkers(loaded, resolve(options.data), store)).filter((worker) => completionWithoutPlay(worker, worker.gameList) !== null);
      if (unplayed.length > 0) {
        process.stderr.write(`cerealbar: warning: ${unplayed.length} completion code(s) were earned without a game played, check them before approving: ${unplayed.map((worker) => worker.participantId).join(' ')} (cerealbar study workers shows why)\n`);
      }
    });

  study
    .command('report')
    .description("compare the study's arms from its game logs: a per-arm table (JSON, CSV) and an HTML page with each arm's score distribution, and each pair of arms' difference in mean score")
    .requiredOption('--study <file>', 'the study file (YAML or JSON), with its arms')
    .option('--data <dir>', 'the data directory serve uses', 'data')
    .option('--store <url>', "read the games from the PostgreSQL database serve --store uses instead (those of the study's pool); also STORE_URL", process.env.STORE_URL || undefined)
    .option('--llm-records <dir>', "where the LLM arms' call records are (serve's --llm-records; default: the data directory's llm/)")
    .requiredOption('--out <dir>', 'the folder to write report.json, arms.csv, differences.csv and report.html to (created if missing)')
    .option('--bootstrap <n>', 'bootstrap resamples of each 95% interval', integerOption('--bootstrap', 100, 1_000_000), DEFAULT_BOOTSTRAP.resamples)
    .option('--bootstrap-seed <n>', "seeds the bootstrap's resampling", integerOption('--bootstrap-seed', 0, 2 ** 31 - 1), DEFAULT_BOOTSTRAP.seed)
    .option('--json', 'print the report as JSON instead of the table')
    .action(async (options: ReportOptions) => {
      const loaded = loadStudyForCli(options.study);
      if (!loaded.arms) throw new CliError(`${options.study}: the study has no arms: its games are between participants, and there is nothing to compare`);
      const store = checkStoreUrl(options.store);
      const { games, unreadable } = store === undefined ? await readDataDirLogs(resolve(options.data)) : await readDatabaseLogs(store, loaded.pool);
      const bootstrap = { resamples: options.bootstrap, seed: options.bootstrapSeed, level: DEFAULT_BOOTSTRAP.level };
      // The worker store counts every draw, those after the last logged one too (P-148); without it the logs say what they can.
      const drawTotals = await withWorkerStore(resolve(options.data), store, (workers) => workers.armTotals(loaded.id));
      const report = studyReport(loaded, games, resolve(options.llmRecords ?? join(options.data, 'llm')), bootstrap, { drawTotals });
      const files: [string, string][] = [
        ['report.json', `${JSON.stringify(report, null, 2)}\n`],
        ['arms.csv', armsCsv(report)],
        ['differences.csv', differencesCsv(report)],
        ['report.html', studyReportHtml(report)],
      ];
      try {
        mkdirSync(options.out, { recursive: true });
        for (const [name, text] of files) writeFileSync(join(options.out, name), text);
        const settings = { kind: 'study-report', study: resolve(options.study), studyFileSha256: loaded.fileSha256, games: store === undefined ? resolve(options.data) : 'the database of --store', llmRecords: resolve(options.llmRecords ?? join(options.data, 'llm')), bootstrap };
        writeManifest(join(options.out, RUN_MANIFEST), endManifest(startManifest(settings), { games: games.length, unreadable: unreadable.length }));
      } catch (error) {
        throw new CliError(`${options.out}: cannot write the report: ${(error as Error).message}`);
      }
      for (const problem of unreadable) process.stderr.write(`cerealbar: warning: ${problem} (not counted)\n`);
      const without = report.arms.flatMap((arm) => arm.llm?.gamesWithoutRecords ?? []);
      if (without.length > 0) process.stderr.write(`cerealbar: warning: no LLM call records for ${without.length} game(s) (their failures are not counted): ${without.join(' ')}\n`);
      process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatStudyReport(report)}Wrote ${files.map(([name]) => join(options.out, name)).join(', ')}\n`);
    });
}

type ListedWorker = WorkerRecord & { gameList: WorkerGame[] };

/** The study's workers with their games, from the database at `storeUrl` or else the data directory (none when it has no worker store). */
async function readWorkers(study: Study, dataDir: string, storeUrl: string | undefined): Promise<ListedWorker[]> {
  const listed = await withWorkerStore(dataDir, storeUrl, async (store) => {
    const workers = await store.list(study.id);
    return Promise.all(workers.map(async (worker) => ({ ...worker, gameList: await store.games(study.id, worker.participantId) })));
  });
  return listed ?? [];
}

/** What `read` reads from the worker store of the database at `storeUrl`, or else of the data directory (opened read-only, then closed); null when the data directory has none. */
async function withWorkerStore<T>(dataDir: string, storeUrl: string | undefined, read: (store: WorkerStore) => Promise<T> | T): Promise<T | null> {
  let store: WorkerStore;
  try {
    if (storeUrl !== undefined) store = await PgWorkerStore.open(storeUrl, { readonly: true });
    else if (existsSync(join(dataDir, WORKERS_FILE))) store = SqliteWorkerStore.open(dataDir, { readonly: true });
    else return null;
  } catch (error) {
    throw new CliError(`${storeUrl === undefined ? dataDir : redactUrl(storeUrl)}: cannot open the worker store: ${(error as Error).message}`);
  }
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

/** The logs of the games in the study's pool, from the database of serve --store. */
async function readDatabaseLogs(url: string, pool: string): Promise<ReadLogs> {
  let reader: Awaited<ReturnType<typeof PgGameReader.open>>;
  try {
    reader = await PgGameReader.open(url);
  } catch (error) {
    throw new CliError(`${redactUrl(url)}: cannot read the games: ${(error as Error).message}`);
  }
  try {
    return await poolLogs(reader, pool);
  } finally {
    await reader.close();
  }
}

/** Every game log in the data directory (dataDir/logs/*.jsonl), with the ones that cannot be read named. */
function readDataDirLogs(dataDir: string): Promise<ReadLogs> {
  const logsDir = join(dataDir, 'logs');
  if (!existsSync(logsDir)) throw new CliError(`${dataDir}: no logs/ folder: is this the data directory serve uses (--data)?`);
  return readGameLogs(logFiles(readdirSync(logsDir).filter((file) => file.endsWith('.jsonl') && !isRecordFileName(file)).sort().map((name) => join(logsDir, name))));
}

function formatBonuses(sheet: BonusSheet, out: string): string {
  if (sheet.rows.length === 0) return `Study ${sheet.study}: no ended games, no bonuses. Wrote an empty sheet to ${out}\n`;
  const head = ['participant', 'assignment', 'games', 'points', `bonus (${sheet.currency})`];
  const rows = sheet.rows.map((row) => [row.participantId, row.assignmentId ?? '-', String(row.games.length), String(row.points), formatAmount(row.amount)]);
  const total = sheet.rows.reduce((sum, row) => sum + Math.round(row.amount * 100), 0) / 100;
  const paid = sheet.rows.filter((row) => row.amount > 0).length;
  return `${textTable(head, rows)}Total ${formatAmount(total)} ${sheet.currency} to ${paid} row(s); wrote ${out} (--json lists each row's games)\n`;
}

/** The workers as a table, one line each, oldest first. */
function formatWorkers(study: Study, workers: readonly ListedWorker[]): string {
  if (workers.length === 0) return `Study ${study.id}: no workers yet\n`;
  const head = ['participant', 'step', 'role', 'quiz', 'games', 'points', `bonus (${study.pay.currency})`, 'minutes', 'completion', 'created', 'blocked', 'check'];
  const rows = workers.map((worker) => [
    worker.participantId,
    workerStep(worker),
    worker.role + (worker.promotedAt !== null ? ' (promoted)' : ''),
    `${worker.quiz.attempts}/${study.quiz.attempts}${worker.quiz.lastScore !== null ? ` last ${worker.quiz.lastScore}/${study.quiz.questions.length}` : ''}`,
    `${worker.games.played}${worker.games.played > worker.games.completed ? ` (${worker.games.completed} to the end)` : ''}`,
    String(worker.games.points),
    formatAmount(bonusFor(study.pay, worker.games.points)),
    (worker.games.seconds / 60).toFixed(1),
    worker.completion ? `${worker.completion.outcome} ${worker.completion.code}` : '-',
    worker.createdAt,
    worker.blocked ? `yes${worker.blocked.reason ? `: ${worker.blocked.reason}` : ''}` : '-',
    completionWithoutPlay(worker, worker.gameList) ?? '-',
  ]);
  return `Study ${study.id}: ${workers.length} worker(s)\n${textTable(head, rows)}`;
}

/** Rows under a head, in columns two spaces apart; each line ends with a line break. */
function textTable(head: readonly string[], rows: readonly string[][]): string {
  const widths = head.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].length)));
  const line = (cells: readonly string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ').trimEnd();
  return [head, ...rows].map((cells) => `${line(cells)}\n`).join('');
}

function initStudy(id: string, dir: string): void {
  const files = [
    { path: join(dir, EXAMPLE_STUDY_FILE), text: exampleStudyYaml(id) },
    { path: join(dir, EXAMPLE_CONSENT_FILE), text: EXAMPLE_CONSENT },
  ];
  const existing = files.filter((file) => existsSync(file.path)).map((file) => file.path);
  if (existing.length > 0) {
    throw new CliError(`${existing.join(' and ')} already exist${existing.length === 1 ? 's' : ''}: init never overwrites (choose another --out, or move the file away)`);
  }
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new CliError(`${dir}: cannot create the folder: ${(error as Error).message}`);
  }
  const written: string[] = [];
  for (const file of files) {
    try {
      // 'wx' fails if the file exists, even if it appeared after any check made here.
      writeFileSync(file.path, file.text, { flag: 'wx' });
      written.push(file.path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'EEXIST' ? 'already exists; init never overwrites (choose another --out, or move the file away)' : `cannot write: ${(error as Error).message}`;
      const partial = written.length > 0 ? ` (${written.join(', ')} was written)` : '';
      throw new CliError(`${file.path}: ${why}${partial}`);
    }
  }
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`Wrote ${files[0].path} and ${files[1].path}.`);
  say(`Roles: ${roleSettingNote(EXAMPLE_ROLES).text} For the CerealBar paper's protocol (new participants follow experienced leaders, and are promoted to lead), see roles in the file.`);
  say(`Edit both (the consent form is a template; the completion codes were drawn at random for this study: create the same ones on the platform, or replace them with random codes of your own), then:`);
  say(`  cerealbar study links --study ${files[0].path} --base-url https://<your server>`);
  say(`  cerealbar serve --study ${files[0].path}`);
}

function formatLinks(links: StudyLinks): string {
  const lines: string[] = [];
  if (links.prolific) {
    lines.push(`Study ${links.study} on Prolific`, '', 'Study URL (on Prolific: "I\'ll use URL parameters"):', `  ${links.prolific.studyUrl}`, '');
    lines.push('Completion codes (create each on the study\'s page on Prolific) and where each ending is sent:');
    const width = Math.max(...COMPLETION_OUTCOMES.map((outcome) => outcome.length));
    for (const outcome of COMPLETION_OUTCOMES) {
      const { code, url } = links.prolific.completion[outcome];
      lines.push(`  ${outcome.padEnd(width)}  ${code}  ${url}`);
    }
  }
  if (links.mturk) {
    const { mturk } = links;
    lines.push(`Study ${links.study} on MTurk (${mturk.sandbox ? 'sandbox' : 'live marketplace'}: create the HIT on ${mturk.requesterSite})`, '');
    lines.push('ExternalQuestion (the Question of CreateHIT):', mturk.externalQuestion, '');
    lines.push('CreateHIT parameters from the study file:');
    lines.push(`  Title: ${mturk.createHit.Title}`);
    lines.push(`  Reward: ${mturk.createHit.Reward}`);
    lines.push(`  AssignmentDurationInSeconds: ${mturk.createHit.AssignmentDurationInSeconds}`);
    lines.push(`  Description: ${mturk.createHit.Description}`);
  }
  if (links.lab) {
    lines.push(`Study ${links.study} in the lab`, '', 'URL (participants type the id they are given):', `  ${links.lab.url}`);
  }
  return `${lines.join('\n')}\n`;
}
