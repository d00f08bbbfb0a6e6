/**
 * `cerealbar eval --leader A --follower B` (or `--pair A:B`): agent-vs-agent evaluation. Every
 * pair plays the same seeds; the logs, the LLM agents' call records, report.json and report.html
 * go to --out DIR. Everything that can be wrong with the pairs (an agent of the other seat, an
 * agent that does not start, an oracle that needs a recording) stops the command before any game.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { AGENT_NAMES_BY_ROLE, createAgent, createLeaderAgent } from '../../shared/agents/node/registry';
import { LlmAgent } from '../../shared/agents/node/llm/agent';
import type { FollowerAgent, LeaderAgent } from '../../shared/agents/types';
import type { Role } from '../../shared/engine/state';
import type { BootstrapOptions } from '../../shared/eval/bootstrap';
import {
  compareWithFirst,
  formatPairsTable,
  PAIRS_REPORT_VERSION,
  playPairGames,
  summarizeLlm,
  summarizePair,
  type PairResult,
  type PairsReport,
  type PairToPlay,
} from '../../shared/eval/pairs';
import { CliError } from '../errors';
import { checkLlmOptionsUsed, LLM_AGENT_SPEC, seatIdentity, startSeatAgent, type LlmCliOptions } from '../llmOptions';
import { renderPairsHtml } from './pairsHtml';

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
}

export interface PairSpec {
  readonly leader: string;
  readonly follower: string;
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
    return { leader: value.slice(0, colon).trim(), follower: value.slice(colon + 1).trim() };
  });
  if ((options.leader === undefined) !== (options.follower === undefined)) {
    throw new CliError(options.leader ? '--leader needs --follower (or give whole pairs with --pair LEADER:FOLLOWER)' : '--follower needs --leader (or give whole pairs with --pair LEADER:FOLLOWER)');
  }
  for (const leader of options.leader ?? []) for (const follower of options.follower ?? []) pairs.push({ leader, follower });
  const seen = new Set<string>();
  for (const pair of pairs) {
    checkSeat(pair.leader, 'leader');
    checkSeat(pair.follower, 'follower');
    const label = pairLabel(pair);
    if (seen.has(label)) throw new CliError(`the pair ${label} is given twice`);
    seen.add(label);
  }
  return pairs;
}

export const pairLabel = (pair: PairSpec) => `${pair.leader}:${pair.follower}`;

/** A built-in agent named for the seat it does not play. */
function checkSeat(spec: string, role: Role): void {
  if (spec === '') throw new CliError(`an empty ${role} agent`);
  const other: Role = role === 'leader' ? 'follower' : 'leader';
  if (AGENT_NAMES_BY_ROLE[other].includes(spec)) {
    throw new CliError(`${JSON.stringify(spec)} is a built-in ${other}, not a ${role}; the built-in ${role}s are ${[...AGENT_NAMES_BY_ROLE[role], LLM_AGENT_SPEC].join(', ')}`);
  }
}

interface StartedPair extends PairToPlay {
  readonly spec: PairSpec;
  readonly index: number;
  readonly dir: string;
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
  checkLlmOptionsUsed(options, specs.flatMap((pair) => [pair.leader, pair.follower]), '--leader, --follower or --pair');
  const bootstrap: BootstrapOptions = { resamples: options.bootstrap, seed: options.bootstrapSeed ?? options.seed, level: INTERVAL_LEVEL };
  const started: StartedPair[] = [];
  try {
    for (const [i, spec] of specs.entries()) started.push(await startPair(spec, i + 1, out, options));
    for (const pair of started) makeDirectory(join(out, pair.dir));
    const pairs: PairResult[] = [];
    for (const pair of started) pairs.push(await playPair(pair, options, bootstrap, out));
    const report: PairsReport = {
      kind: 'agent-pairs',
      version: PAIRS_REPORT_VERSION,
      createdAt: new Date().toISOString(),
      games: options.games,
      seed: options.seed,
      bootstrap: { ...bootstrap, method: 'percentile' },
      pairs,
      differences: compareWithFirst(pairs, bootstrap),
    };
    process.stdout.write(`${formatPairsTable(report)}\n`);
    writeOutput(join(out, 'report.json'), JSON.stringify(report, null, 1));
    writeOutput(join(out, 'report.html'), renderPairsHtml(report));
    return report;
  } finally {
    for (const pair of started) await Promise.all([pair.leader.close?.(), pair.follower.close?.()]);
  }
}

async function playPair(pair: StartedPair, options: PairsCliOptions, bootstrap: BootstrapOptions, out: string): Promise<PairResult> {
  const label = pairLabel(pair.spec);
  let games;
  try {
    games = await playPairGames(pair, { games: options.games, seed: options.seed }, (gameId, text) => {
      const log = join(pair.dir, `${gameId}.jsonl`);
      writeFileSync(join(out, log), text);
      return log;
    });
  } catch (error) {
    throw new CliError(`pair ${pair.index} (${label}), ${oneLine((error as Error).message)}`, 1);
  }
  const summary = summarizePair(games, bootstrap);
  process.stderr.write(`pair ${pair.index} (${label}): ${games.length} games, mean score ${summary.meanScore.toFixed(2)}\n`);
  const llm: PairResult['llm'] = {};
  for (const role of ['leader', 'follower'] as const) {
    const agent = pair[role];
    if (agent instanceof LlmAgent) llm[role] = summarizeLlm(agent.stats(), games.length, relative(out, recordDir(options, pair.dir, out)) || '.');
  }
  return { index: pair.index, label, leader: pair.agents.leader, follower: pair.agents.follower, dir: pair.dir, summary, llm, games };
}

/** Where a pair's call records go: its own directory (under `out`), or its own under --llm-records. */
function recordDir(options: PairsCliOptions, dir: string, out: string): string {
  return options.llmRecords ? join(options.llmRecords, dir) : join(out, dir);
}

/** Both agents of a pair, started (a program's handshake done, an LLM endpoint checked). */
async function startPair(spec: PairSpec, index: number, out: string, options: PairsCliOptions): Promise<StartedPair> {
  const dir = pairDir(index);
  const processOptions = { stepTimeoutMs: options.agentTimeout };
  const llmOptions = { ...options, llmRecords: options.llmRecords ? recordDir(options, dir, out) : undefined };
  const what = (role: Role) => `the ${role} ${JSON.stringify(spec[role])} of pair ${index}`;
  const leader = await starting(what('leader'), startSeatAgent('leader', spec.leader, llmOptions, join(out, dir), (s) => createLeaderAgent(s, processOptions)));
  let follower: FollowerAgent;
  try {
    follower = await starting(what('follower'), startSeatAgent('follower', spec.follower, llmOptions, join(out, dir), (s) => createAgent(s, processOptions)));
  } catch (error) {
    await leader.close?.();
    throw error;
  }
  if (follower.needsRecording) {
    await Promise.all([leader.close?.(), follower.close?.()]);
    throw new CliError(`the follower ${JSON.stringify(spec.follower)} of pair ${index} needs a recorded game; evaluate it over logs instead (--agent ${spec.follower} --logs PATH)`);
  }
  const agents = { leader: seatIdentity(leader, spec.leader), follower: seatIdentity(follower, spec.follower) };
  return { spec, index, dir, leader: leader as LeaderAgent, follower, agents };
}

async function starting<A>(what: string, agent: Promise<A>): Promise<A> {
  try {
    return await agent;
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot start ${what}: ${oneLine((error as Error).message)}`);
  }
}

/** An error's message on one line: a program's last stderr lines, if any, follow its reason. */
function oneLine(message: string): string {
  return message
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ');
}

function makeDirectory(dir: string): void {
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
