/**
 * `cerealbar eval --leader A --follower B` (or `--pair A:B`): agent-vs-agent evaluation. Every
 * pair plays the same seeds; the logs, the LLM agents' call records, report.json and report.html
 * go to --out DIR. Everything that can be wrong with the pairs (an agent of the other seat, an
 * agent that does not start, an oracle that needs a recording) stops the command before any game.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { LLM_AGENT, seatProblem } from '../../shared/agents/catalogue';
import { findRecordFile, removeRecords } from '../../shared/agents/node/llm/records';
import { closeSharedFrameRenderer } from '../../shared/agents/node/llm/images';
import { SeatStartError, startPair, type AgentContext, type AgentPair } from '../../shared/agents/node/registry';
import type { Role } from '../../shared/engine/state';
import type { BootstrapOptions } from '../../shared/eval/bootstrap';
import {
  compareWithFirst,
  formatPairsTable,
  PAIRS_REPORT_VERSION,
  plannedGames,
  playPairGames,
  summarizePair,
  type PairGame,
  type PairResult,
  type PairsReport,
} from '../../shared/eval/pairs';
import { costPer, summarizeLlm } from '../../shared/eval/llmSummary';
import { writeFileAtomically } from '../durableFiles';
import { CliError } from '../errors';
import { checkLlmOptionsUsed, llmSeatConfigs, llmStarter, runSpend, seatFiles, seatLabel, seatSpec, type LlmCliOptions, type SeatSpec } from '../llmOptions';
import type { RunSpend } from '../../shared/agents/node/llm/agent';
import { endManifest, firstDifference, readManifest, RUN_MANIFEST, startManifest, writeManifest, type RunManifest } from '../runManifest';
import { readLlmSeat } from './llmRecords';
import { finishedGames, recordFinishedGame } from './pairProgress';
import { renderPairsHtml } from './pairsHtml';
import { INTERRUPTED_EXIT, RunInterrupt } from '../interrupt';

export interface PairsCliOptions extends LlmCliOptions {
  leader?: string[];
  follower?: string[];
  pair?: string[];
  games: number;
  seed: number;
  out?: string;
  bootstrap: number;
  bootstrapSeed?: number;
  agentTimeout: number;
  /** Games each pair plays at once, each with its own agents. */
  concurrency: number;
  /** Times each seed is played (sampling variance). */
  repeat: number;
  /** Continue the run in --out: its finished games are kept, the rest played. */
  resume?: boolean;
  /** Replace the run in --out. */
  overwrite?: boolean;
}

/** A pair's seats as given: an agent each, and an llm seat's own config file (`llm@FILE`). */
export interface PairSpec {
  readonly leader: SeatSpec;
  readonly follower: SeatSpec;
}

/** The 95% of every interval. */
export const INTERVAL_LEVEL = 0.95;

/** commander's collector for a repeatable option. */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** Whether the options ask for agent-vs-agent evaluation. */
export const wantsPairs = (options: Pick<PairsCliOptions, 'leader' | 'follower' | 'pair'>): boolean =>
  options.leader !== undefined || options.follower !== undefined || options.pair !== undefined;

/**
 * The pairs, in order: every --pair, then every --leader with every --follower. A pair given
 * twice, one seat without the other, or a built-in agent in the other seat is a CliError.
 */
export function pairSpecs(options: Pick<PairsCliOptions, 'leader' | 'follower' | 'pair'>): PairSpec[] {
  const pairs: PairSpec[] = (options.pair ?? []).map((value) => {
    const colon = value.indexOf(':');
    if (colon <= 0 || colon === value.length - 1) throw new CliError(`--pair must be LEADER:FOLLOWER, got ${JSON.stringify(value)}`);
    return { leader: seatSpec(value.slice(0, colon).trim()), follower: seatSpec(value.slice(colon + 1).trim()) };
  });
  if ((options.leader === undefined) !== (options.follower === undefined)) {
    throw new CliError(options.leader ? '--leader needs --follower (or give whole pairs with --pair LEADER:FOLLOWER)' : '--follower needs --leader (or give whole pairs with --pair LEADER:FOLLOWER)');
  }
  for (const leader of options.leader ?? []) for (const follower of options.follower ?? []) pairs.push({ leader: seatSpec(leader), follower: seatSpec(follower) });
  const seen = new Set<string>();
  for (const pair of pairs) {
    checkSeat(pair.leader.agent, 'leader');
    checkSeat(pair.follower.agent, 'follower');
    const label = pairLabel(pair);
    if (seen.has(label)) throw new CliError(`the pair ${label} is given twice`);
    seen.add(label);
  }
  return pairs;
}

/** The pair as given, each llm seat's config file included: two configurations of one model are two pairs. */
export const pairLabel = (pair: PairSpec) => `${seatLabel(pair.leader)}:${seatLabel(pair.follower)}`;

/** An agent that cannot play the seat in a new game (a built-in of the other seat, an oracle). */
function checkSeat(spec: string, role: Role): void {
  const problem = seatProblem(spec, role, 'game');
  if (problem) throw new CliError(problem);
}

interface StartedPair {
  readonly spec: PairSpec;
  readonly index: number;
  readonly dir: string;
  /** The pair's agents once per game played at once (--concurrency): agents keep a game's state. */
  readonly slots: readonly AgentPair[];
  /** What the run's LLM calls have cost, shared by all its pairs' agents (--llm-max-cost); null: no limit. */
  readonly spend: RunSpend | null;
}

const pairDir = (index: number) => `pair-${index}`;

/** Plays every pair and writes the report; returns it. */
export async function evaluatePairs(options: PairsCliOptions): Promise<PairsReport> {
  const specs = pairSpecs(options);
  if (specs.length === 0) throw new CliError('no pair to play: give --leader and --follower, or --pair LEADER:FOLLOWER');
  if (!options.out) throw new CliError('agent-vs-agent evaluation needs --out DIR (for report.json, report.html and the game logs)');
  const out = options.out;
  // A relative --llm-records is the working directory's: resolved now, so that the report links it from DIR.
  if (options.llmRecords !== undefined) options = { ...options, llmRecords: resolve(options.llmRecords) };
  checkLlmOptionsUsed(options, { leader: specs.map((pair) => pair.leader.agent), follower: specs.map((pair) => pair.follower.agent) }, '--leader, --follower or --pair');
  const bootstrap: BootstrapOptions = { resamples: options.bootstrap, seed: options.bootstrapSeed ?? options.seed, level: INTERVAL_LEVEL };
  const manifest = startManifest(runSettings(specs, options));
  const resumed = prepareOut(out, manifest, options);
  const started: StartedPair[] = [];
  // Ctrl-C: the games under way end and are kept; a second Ctrl-C discards what they left.
  const inFlight = new Map<string, () => void>();
  const interrupt = new RunInterrupt(() => inFlight.forEach((discard) => discard()), `The same command with --resume continues from the games finished in ${out}.`);
  const stopListening = interrupt.listen();
  try {
    const spend = runSpend(options);
    for (const [i, spec] of specs.entries()) started.push(await startPairOf(spec, i + 1, out, options, spend));
    for (const pair of started) makeDirectory(join(out, pair.dir));
    writeManifest(join(out, RUN_MANIFEST), manifest);
    const played: { result: PairResult; resumed: number }[] = [];
    for (const pair of started) if (!interrupt.requested) played.push(await playPair(pair, options, bootstrap, out, resumed, interrupt, inFlight));
    if (interrupt.requested) throw new CliError(`interrupted: the games finished are kept in ${out}; the same command with --resume continues`, INTERRUPTED_EXIT);
    const pairs = played.map((pair) => pair.result);
    const report: PairsReport = {
      kind: 'agent-pairs',
      version: PAIRS_REPORT_VERSION,
      createdAt: new Date().toISOString(),
      games: options.games,
      seed: options.seed,
      repeat: options.repeat,
      bootstrap: { ...bootstrap, method: 'percentile' },
      pairs,
      differences: compareWithFirst(pairs, bootstrap),
    };
    process.stdout.write(`${formatPairsTable(report)}\n`);
    writeOutput(join(out, 'report.json'), JSON.stringify(report, null, 1));
    writeOutput(join(out, 'report.html'), renderPairsHtml(report));
    writeManifest(join(out, RUN_MANIFEST), endManifest(manifest, { concurrency: options.concurrency, pairs: played.map(({ result, resumed }) => ({ label: result.label, games: result.games.length, keptFromBefore: resumed })) }));
    return report;
  } finally {
    stopListening();
    for (const pair of started) await closeSlots(pair.slots);
    await closeSharedFrameRenderer();
  }
}

/**
 * What decides a run's results, for run.json and for `--resume` to check: the pairs, the seeds, each
 * llm seat's settings by pair (its own config file's included, never a key). Not --llm-max-cost: a
 * run it stopped goes on with a larger one.
 */
function runSettings(specs: readonly PairSpec[], options: PairsCliOptions): Record<string, unknown> {
  const llmPairs = specs.filter((pair) => llmRoles(pair).length > 0);
  const llm = llmPairs.length === 0 ? null : Object.fromEntries(llmPairs.map((pair) => [pairLabel(pair), llmSeatConfigs(options, pair)]));
  return {
    kind: 'agent-pairs',
    pairs: specs.map(pairLabel),
    games: options.games,
    seed: options.seed,
    repeat: options.repeat,
    bootstrap: { resamples: options.bootstrap, seed: options.bootstrapSeed ?? options.seed },
    agentTimeoutMs: options.agentTimeout,
    llm,
    llmRecords: options.llmRecords ?? null,
  };
}

/**
 * Readies --out for the run: a new or empty folder as it is; a used one only with --overwrite (the
 * outputs of the run before are removed, nothing else) or --resume (its run.json must have the same
 * settings). Returns whether the run resumes.
 */
function prepareOut(out: string, manifest: RunManifest, options: PairsCliOptions): boolean {
  if (options.resume && options.overwrite) throw new CliError('--resume and --overwrite cannot go together: continue the run in --out, or replace it');
  const entries = existsSync(out) ? readdirSync(out) : [];
  if (entries.length === 0) return false;
  if (options.overwrite) {
    for (const name of entries) if (RUN_OUTPUT.test(name)) rmSync(join(out, name), { recursive: true, force: true });
    return false;
  }
  let before: RunManifest | null;
  try {
    before = readManifest(join(out, RUN_MANIFEST));
  } catch (error) {
    throw new CliError(`${out}: ${(error as Error).message}`);
  }
  if (!options.resume) {
    throw new CliError(`${out} is not empty (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', ...' : ''}): give --resume to continue the run in it, --overwrite to replace it, or another --out`);
  }
  if (!before) throw new CliError(`--resume: ${out} has no ${RUN_MANIFEST}, so it holds no run to continue`);
  const difference = firstDifference(before.settings, manifest.settings);
  if (difference) throw new CliError(`--resume: the run in ${out} had other settings (${difference} differs); give the same options, or --overwrite`);
  return true;
}

/** The files and folders an agent-vs-agent run writes into --out (and --overwrite removes). */
const RUN_OUTPUT = /^(pair-\d+|report\.json|report\.html|run\.json)$/;

async function playPair(
  pair: StartedPair,
  options: PairsCliOptions,
  bootstrap: BootstrapOptions,
  out: string,
  resume: boolean,
  interrupt: RunInterrupt,
  inFlight: Map<string, () => void>,
): Promise<{ result: PairResult; resumed: number }> {
  const label = pairLabel(pair.spec);
  const planned = plannedGames(options.seed, options.games, options.repeat);
  const kept = resume ? finishedGames(out, pair.dir) : new Map<string, PairGame>();
  const records = recordDir(options, pair.dir, out);
  const toPlay = planned.filter((game) => !kept.has(game.gameId));
  // A game not finished before is played again from its start: what it left (its log, call records) goes first.
  for (const game of toPlay) removeGameFiles(out, pair.dir, records, game.gameId);
  // The games kept count towards --llm-max-cost: a resumed run stops where an uninterrupted one would.
  for (const role of llmRoles(pair.spec)) pair.spend?.add(seatRecords(records, [...kept.values()], role).counts.cost);
  if (kept.size > 0) process.stderr.write(`pair ${pair.index} (${label}): ${kept.size} games kept from the run before, ${toPlay.length} to play\n`);
  let played;
  try {
    played = await playPairGames(
      pair.slots,
      {
        toPlay,
        stop: () => interrupt.requested,
        onStart: (gameId) => inFlight.set(`${pair.dir}/${gameId}`, () => removeGameFiles(out, pair.dir, records, gameId)),
      },
      (gameId, text) => {
        const log = join(pair.dir, `${gameId}.jsonl`);
        writeFileAtomically(join(out, log), text);
        return log;
      },
      (game) => {
        recordFinishedGame(out, pair.dir, game);
        inFlight.delete(`${pair.dir}/${game.gameId}`);
      },
    );
  } catch (error) {
    throw new CliError(`pair ${pair.index} (${label}), ${oneLine((error as Error).message)}`, 1);
  }
  const byGame = new Map([...kept.values(), ...played].map((game) => [game.gameId, game]));
  const games = planned.flatMap((game) => byGame.get(game.gameId) ?? []);
  if (games.length === 0) throw new CliError(`interrupted before pair ${pair.index} finished a game; the same command with --resume continues`, INTERRUPTED_EXIT);
  const summary = summarizePair(games, bootstrap);
  process.stderr.write(`pair ${pair.index} (${label}): ${games.length} games, mean score ${summary.meanScore.toFixed(2)}\n`);
  const llm: PairResult['llm'] = {};
  for (const role of llmRoles(pair.spec)) {
    const { counts, settings } = seatRecords(records, games, role);
    llm[role] = { ...summarizeLlm(counts, settings, relative(out, records) || '.'), tokensPerGame: counts.tokens.total / games.length, costPerGame: costPer(counts.cost, games.length) };
  }
  const { agents } = pair.slots[0];
  return { result: { index: pair.index, label, leader: agents.leader, follower: agents.follower, configs: seatFiles(pair.spec), dir: pair.dir, summary, llm, games }, resumed: kept.size };
}

/** The seats an llm agent plays. */
const llmRoles = (spec: PairSpec): Role[] => (['leader', 'follower'] as const).filter((role) => spec[role].agent === LLM_AGENT);

/** An llm seat's counts and settings over `games`, from their call records in `records`. */
const seatRecords = (records: string, games: readonly PairGame[], role: Role) => readLlmSeat(games.map((game) => findRecordFile(records, game.gameId, role)));

/** A game's log and call records, left by a run that did not finish it. */
function removeGameFiles(out: string, dir: string, records: string, gameId: string): void {
  rmSync(join(out, dir, `${gameId}.jsonl`), { force: true });
  for (const role of ['leader', 'follower'] as const) removeRecords(records, gameId, role);
}

/** Where a pair's call records go: its own directory (under `out`), or its own under --llm-records. */
function recordDir(options: PairsCliOptions, dir: string, out: string): string {
  return options.llmRecords ? join(options.llmRecords, dir) : join(out, dir);
}

/** Both agents of a pair, once per game played at once, started (a program's handshake done, an LLM endpoint checked). */
async function startPairOf(spec: PairSpec, index: number, out: string, options: PairsCliOptions, spend: RunSpend | null): Promise<StartedPair> {
  const dir = pairDir(index);
  const llmOptions = { ...options, llmRecords: options.llmRecords ? recordDir(options, dir, out) : undefined };
  const startLlm = llmStarter(llmOptions, join(out, dir), { spend, files: seatFiles(spec) });
  const context: AgentContext = { setting: 'game', process: { stepTimeoutMs: options.agentTimeout }, startLlm };
  const slots: AgentPair[] = [];
  try {
    for (let slot = 0; slot < Math.min(options.concurrency, options.games * options.repeat); slot++) slots.push(await startPair({ leader: spec.leader.agent, follower: spec.follower.agent }, context));
    return { spec, index, dir, slots, spend };
  } catch (error) {
    await closeSlots(slots);
    if (!(error instanceof SeatStartError)) throw error;
    if (error.cause instanceof CliError) throw error.cause;
    throw new CliError(`cannot start the ${error.role} ${JSON.stringify(error.spec)} of pair ${index}: ${oneLine((error.cause as Error).message)}`);
  }
}

async function closeSlots(slots: readonly AgentPair[]): Promise<void> {
  await Promise.all(slots.flatMap((slot) => [slot.leader.close?.(), slot.follower.close?.()]));
}

/** An error's message on one line: a program's last stderr lines, if any, follow its reason. */
function oneLine(message: string): string {
  return message
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ');
}

export function makeDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw new CliError(`${dir}: cannot create the directory: ${(error as Error).message}`);
  }
}

/** Writes an output file and says so; a file that cannot be written stops the command with the reason. */
export function writeOutput(file: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch (error) {
    throw new CliError(`${file}: cannot write: ${(error as Error).message}`);
  }
  process.stdout.write(`wrote ${file}\n`);
}
