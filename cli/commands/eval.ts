/**
 * `cerealbar eval`: an agent as the follower over logged games, single-instruction or cascaded;
 * or, with --leader/--follower or --pair, pairs of agents playing whole games on the same seeds
 * (agent-vs-agent evaluation, cli/eval/pairs.ts).
 */
import { availableParallelism } from 'node:os';
import { existsSync, rmSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { agentNames, LLM_AGENT } from '../../shared/agents/catalogue';
import { AgentRunStopped } from '../../shared/agents/types';
import { costPer, describeLlmSettings, summarizeLlm } from '../../shared/eval/llmSummary';
import { findRecordFile, removeRecords } from '../../shared/agents/node/llm/records';
import { closeSharedFrameRenderer } from '../../shared/agents/node/llm/images';
import { loggedGameIds } from '../../shared/agents/node/llm/fewShot';
import { CASCADE_CONVENTIONS, DEFAULT_EVAL_OPTIONS, type CascadeConvention, type EpisodeResult, type EvalMode, type EvalOptions } from '../../shared/eval/runner';
import { aggregate, countUndefined, formatTable, REPORT_VERSION, type EvalReport } from '../../shared/eval/report';
import { countEpisodes, evaluateFiles, evaluateInWorkers, findLogs, inFileOrder } from '../eval/evaluate';
import { finishedEpisodes, overLogsFiles } from '../eval/episodeProgress';
import { appendJsonLine } from '../durableFiles';
import { INTERRUPTED_EXIT, RunInterrupt } from '../interrupt';
import { endManifest, firstDifference, readManifest, startManifest, writeManifest, type RunManifest } from '../runManifest';
import { renderHtmlReport } from '../eval/html';
import { collect, evaluatePairs, makeDirectory, wantsPairs, writeOutput, type PairsCliOptions } from '../eval/pairs';
import { CliError } from '../errors';
import { progress } from '../progress';
import { addLlmOptions, addLlmRunOptions, checkLlmOptionsUsed, describeLlmStats, llmConfigFromOptions } from '../llmOptions';
import { readLlmSeat } from '../eval/llmRecords';
import { integerOption } from '../options';

interface EvalCliOptions extends PairsCliOptions {
  agent: string;
  logs: string[];
  mode: EvalMode;
  cascade: CascadeConvention;
  maxActions: number;
  successThreshold: number;
  html?: string;
  workers: number;
  viewerUrl: string;
  agentTimeout: number;
}

/** The options of the evaluation over logged games (refused in agent-vs-agent evaluation), by commander's key. */
const FOLLOWER_EVAL_OPTIONS = { agent: '--agent', logs: '--logs', mode: '--mode', cascade: '--cascade', maxActions: '--max-actions', successThreshold: '--success-threshold', html: '--html', workers: '--workers', viewerUrl: '--viewer-url' };
/** The options of agent-vs-agent evaluation (refused over logged games). */
const PAIRS_OPTIONS = { games: '--games', seed: '--seed', repeat: '--repeat', bootstrap: '--bootstrap', bootstrapSeed: '--bootstrap-seed' };

export function registerEvalCommand(program: Command): void {
  const command = program
    .command('eval')
    .description('evaluate a follower agent over logged games (appendix F of the CerealBar paper), or pairs of a leader and a follower agent in whole games on the same seeds (--leader/--follower, --pair)')
    .option('--agent <agent>', `a built-in agent (${agentNames('follower').join(', ')}) or a command that speaks the agent protocol, e.g. "python3 my_agent.py"`)
    .option('--logs <paths...>', 'game logs (.jsonl files or directories of them)')
    .option('--mode <mode>', 'single: each instruction alone; cascaded: each instruction and all later ones', 'single')
    .option(
      '--cascade <convention>',
      'cascaded mode: stop-at-first-failure (the paper\'s original code) or continue (play on after an instruction not followed, a departure from the paper)',
      DEFAULT_EVAL_OPTIONS.cascade,
    )
    .option('--max-actions <n>', 'most actions per instruction, DONE included', integerOption('--max-actions', 1, 1000), DEFAULT_EVAL_OPTIONS.maxActions)
    .option('--success-threshold <hexes>', 'success distance d_th of the path metrics, in hexes', integerOption('--success-threshold', 0, 50), DEFAULT_EVAL_OPTIONS.successThreshold)
    .option('--out <path>', 'over logs: write the full report as JSON to this file; agent-vs-agent: the directory for report.json, report.html, the logs and call records')
    .option('--html <file>', 'write a self-contained HTML report with plots')
    .option('--workers <n>', 'worker threads (default: one per core)', integerOption('--workers', 1, 256), availableParallelism())
    .option('--concurrency <k>', 'concurrent games (agent-vs-agent) or episodes (over logs), each with its own agent, in one thread: for agents that wait on a server, such as llm (the report is the same as with 1)', integerOption('--concurrency', 1, 256), 1)
    .option('--agent-timeout <ms>', 'how long a command-line agent may take to answer one observation', integerOption('--agent-timeout', 10, 600_000), 5000)
    .option('--viewer-url <url>', "replay viewer links in the HTML report point here", 'http://localhost:2567/replay')
    .option(
      '--leader <agent>',
      `agent-vs-agent: a leader, built in (${agentNames('leader', 'game').join(', ')}) or a command that speaks the agent protocol (repeatable; every --leader plays with every --follower)`,
      collect,
    )
    .option('--follower <agent>', `agent-vs-agent: a follower, built in (${agentNames('follower', 'game').join(', ')}) or a command (repeatable)`, collect)
    .option('--pair <leader:follower>', 'agent-vs-agent: one pair, the leader and the follower split at the first colon (repeatable)', collect)
    .option('--games <n>', 'agent-vs-agent: games per pair', integerOption('--games', 1, 100_000), 10)
    .option('--seed <s>', 'agent-vs-agent: seed of the first game; game i of every pair uses seed + i', integerOption('--seed', 0, 2 ** 31 - 1), 1)
    .option('--repeat <r>', 'agent-vs-agent: games on each seed, for the sampling variance of agents that draw (ids eval-<seed>-r<k>)', integerOption('--repeat', 1, 1000), 1)
    .option('--bootstrap <n>', 'agent-vs-agent: bootstrap resamples for the 95% intervals', integerOption('--bootstrap', 100, 1_000_000), 10_000)
    .option('--resume', 'continue the run in --out (its run.json must have the same settings): its finished games or episodes are kept, the rest played')
    .option('--overwrite', 'replace the run in --out (agent-vs-agent: its logs, call records and reports; over logs: the report and what the run kept beside it)')
    .option('--bootstrap-seed <s>', 'agent-vs-agent: seed of the bootstrap resampling (default: --seed)', integerOption('--bootstrap-seed', 0, 2 ** 31 - 1))
    .action(async (cli: EvalCliOptions) => {
      const given = (key: string) => command.getOptionValueSource(key) === 'cli';
      if (wantsPairs(cli)) {
        const stray = Object.entries(FOLLOWER_EVAL_OPTIONS).find(([key]) => given(key));
        if (stray) throw new CliError(`${stray[1]} is for evaluating a follower over logged games, not for agent-vs-agent evaluation (--leader, --follower, --pair)`);
        await evaluatePairs(cli);
        return;
      }
      const stray = Object.entries(PAIRS_OPTIONS).find(([key]) => given(key));
      if (stray) throw new CliError(`${stray[1]} is for agent-vs-agent evaluation: give --leader and --follower, or --pair`);
      // Over logged games both stay required, with commander's own words as before.
      if (cli.agent === undefined) command.error("error: required option '--agent <agent>' not specified", { code: 'commander.missingMandatoryOptionValue' });
      if (cli.logs === undefined) command.error("error: required option '--logs <paths...>' not specified", { code: 'commander.missingMandatoryOptionValue' });
      checkLlmOptionsUsed(cli, { follower: [cli.agent] }, '--agent');
      const llm = cli.agent === LLM_AGENT;
      // One LLM agent counts the run's calls, spends its call budget and stops the run when its endpoint does.
      if (llm && given('workers') && cli.workers > 1) throw new CliError('--workers: the llm agent is evaluated in one thread; leave --workers out');
      if (cli.mode !== 'single' && cli.mode !== 'cascaded') throw new CliError(`--mode must be single or cascaded, got ${JSON.stringify(cli.mode)}`);
      if (!CASCADE_CONVENTIONS.includes(cli.cascade)) {
        throw new CliError(`--cascade must be ${CASCADE_CONVENTIONS.join(' or ')}, got ${JSON.stringify(cli.cascade)}`);
      }
      const options: EvalOptions = { mode: cli.mode, cascade: cli.cascade, maxActions: cli.maxActions, successThreshold: cli.successThreshold };
      if ((cli.resume || cli.overwrite) && !cli.out) throw new CliError(`${cli.resume ? '--resume' : '--overwrite'} needs --out FILE: the report, beside which the finished episodes are kept`);
      const files = findLogs(cli.logs);
      if (cli.workers > 1 && given('workers') && cli.concurrency > 1) throw new CliError('--workers and --concurrency: give one (threads for agents that compute, episodes at once in one thread for agents that wait on a server)');
      // The LLM agent's call records: --llm-records, else beside the report, else here.
      const recordDir = resolve(cli.llmRecords ?? (cli.out ? dirname(cli.out) : '.'));
      const settings = { kind: 'eval-logs', agent: cli.agent, logs: files.map((file) => resolve(file)), options, llm: llm ? llmConfigFromOptions(cli, { role: 'follower' }) : null, llmRecords: llm ? recordDir : null };
      const manifest = startManifest(settings);
      const kept = cli.out ? prepareReportOut(cli.out, manifest, cli) : new Map<string, EpisodeResult>();
      const saved = cli.out ? overLogsFiles(cli.out) : null;
      if (saved) {
        makeDirectory(dirname(resolve(saved.manifest)));
        writeManifest(saved.manifest, manifest);
      }
      if (kept.size > 0) process.stderr.write(`${kept.size} episodes kept from the run before\n`);
      const bar = progress(countEpisodes(files) - kept.size, 'episodes');
      // The games evaluated are never the LLM follower's worked examples (few-shot-k).
      const choice = { spec: cli.agent, stepTimeoutMs: cli.agentTimeout, ...(llm && { llm: { options: { ...cli, evaluatedGames: loggedGameIds(files) }, recordDir } }) };
      // Ctrl-C: the episodes under way end and are kept; a second Ctrl-C discards what they left (call records).
      const inFlight = new Set<string>();
      const interrupt = new RunInterrupt(
        () => inFlight.forEach((episodeId) => llm && removeRecords(recordDir, episodeId, 'follower')),
        saved ? 'The same command with --resume continues from the episodes finished.' : 'Nothing was kept: give --out to keep finished episodes for --resume.',
      );
      const run = {
        done: new Set(kept.keys()),
        concurrency: cli.concurrency,
        stop: () => interrupt.requested,
        onStart: (episodeId: string) => inFlight.add(episodeId),
        onEpisode: (episode: EpisodeResult) => {
          if (saved) appendJsonLine(saved.progress, episode);
          inFlight.delete(episode.episodeId);
          bar.tick();
        },
      };
      const stopListening = interrupt.listen();
      let result;
      try {
        result =
          cli.workers > 1 && files.length > 1 && !llm && cli.concurrency === 1
            ? await evaluateInWorkers(choice, files, options, cli.workers, run)
            : await evaluateFiles(choice, files, options, run);
      } catch (error) {
        // A run that stopped before any episode ended (its agent could not start) leaves nothing to resume.
        if (saved && kept.size === 0 && !existsSync(saved.progress)) rmSync(saved.manifest, { force: true });
        if (error instanceof AgentRunStopped) throw new CliError(`${error.message}${saved ? `; the episodes finished are kept: the same command with --resume continues` : ''}`, 1);
        throw error;
      } finally {
        stopListening();
        bar.end();
        await closeSharedFrameRenderer();
      }
      if (interrupt.requested) throw new CliError(`interrupted: ${saved ? `the episodes finished are kept beside ${cli.out}; the same command with --resume continues` : 'no report written'}`, INTERRUPTED_EXIT);
      result = { ...result, episodes: inFileOrder([...kept.values(), ...result.episodes], files) };
      const report: EvalReport = {
        version: REPORT_VERSION,
        agent: cli.agent,
        options,
        createdAt: new Date().toISOString(),
        logs: files,
        skippedLogs: result.skippedLogs,
        instructionsCancelled: result.instructionsCancelled,
        aggregates: aggregate(result.episodes),
        undefinedCounts: countUndefined(result.episodes),
        episodes: result.episodes,
        ...(llm && { llm: llmOverLogs(result.episodes, recordDir, cli.out) }),
      };
      process.stdout.write(`${formatTable(report)}\n`);
      if (report.llm) process.stdout.write(`${describeLlmStats('llm follower', report.llm)}\n${report.llm.settings ? `  ${describeLlmSettings(report.llm.settings)}\n` : ''}`);
      const errors = result.episodes.filter((e) => e.error);
      for (const e of errors.slice(0, 5)) process.stdout.write(`  agent error in ${e.episodeId}: ${e.error}\n`);
      if (errors.length > 5) process.stdout.write(`  ... and ${errors.length - 5} more agent errors (see the JSON report)\n`);
      if (cli.out) writeOutput(cli.out, JSON.stringify(report, null, 1));
      if (saved) {
        writeManifest(saved.manifest, endManifest(manifest, { episodes: report.episodes.length, keptFromBefore: kept.size, concurrency: cli.concurrency }));
        rmSync(saved.progress, { force: true });
      }
      if (cli.html) writeOutput(cli.html, renderHtmlReport(report, cli.viewerUrl));
    });
  addLlmRunOptions(addLlmOptions(command));
}

/** The LLM follower's figures for the report, from its call records (one file per episode); their folder relative to the report's. */
function llmOverLogs(episodes: readonly EpisodeResult[], recordDir: string, out: string | undefined): NonNullable<EvalReport['llm']> {
  const { counts, settings } = readLlmSeat(episodes.map((episode) => findRecordFile(recordDir, episode.episodeId, 'follower')));
  const records = relative(out ? dirname(resolve(out)) : resolve('.'), recordDir) || '.';
  return { ...summarizeLlm(counts, settings, records), tokensPerEpisode: episodes.length === 0 ? 0 : counts.tokens.total / episodes.length, costPerEpisode: costPer(counts.cost, episodes.length) };
}

/**
 * Readies the report's place. A report is one file, written whole: a finished run's is replaced,
 * as before. A run that did not finish (its kept episodes are there) stops the command unless
 * --resume (the manifest's settings must be the same; its finished episodes are returned, to be
 * kept) or --overwrite (they are removed). Returns the episodes kept.
 */
function prepareReportOut(out: string, manifest: RunManifest, cli: EvalCliOptions): Map<string, EpisodeResult> {
  if (cli.resume && cli.overwrite) throw new CliError('--resume and --overwrite cannot go together: continue the run in --out, or replace it');
  const { progress, manifest: manifestPath } = overLogsFiles(out);
  if (cli.overwrite || (!cli.resume && !existsSync(progress))) {
    for (const path of [out, progress, manifestPath]) rmSync(path, { force: true });
    return new Map();
  }
  if (!cli.resume) throw new CliError(`${progress}: a run of ${out} did not finish: give --resume to continue it, --overwrite to replace it, or another --out`);
  let before: RunManifest | null;
  try {
    before = readManifest(manifestPath);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  if (!before) throw new CliError(`--resume: there is no ${manifestPath}, so no run to continue`);
  const difference = firstDifference(before.settings, manifest.settings);
  if (difference) throw new CliError(`--resume: the run of ${out} had other settings (${difference} differs); give the same options, or --overwrite`);
  return finishedEpisodes(progress);
}
