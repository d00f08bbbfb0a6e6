/**
 * Evaluating an agent over log files, in this thread or spread over worker threads (one agent
 * per worker; each worker takes whole logs).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { LlmAgent } from '../../shared/agents/node/llm/agent';
import { startFollower } from '../../shared/agents/node/registry';
import type { FollowerAgent } from '../../shared/agents/types';
import { isRecordFileName } from '../../shared/agents/node/llm/records';
import { LogError } from '../../shared/log/replay';
import { loadRecording } from '../../shared/eval/recording';
import { runEpisode, type EpisodeResult, type EvalOptions } from '../../shared/eval/runner';
import { CliError } from '../errors';
import { llmStarter, type LlmCliOptions } from '../llmOptions';

/** What one thread reports back. */
export interface EvalBatchResult {
  readonly episodes: EpisodeResult[];
  readonly skippedLogs: { file: string; error: string }[];
  /** Instructions the recorded leaders cancelled in the logs evaluated (not examples). */
  readonly instructionsCancelled: number;
}

/**
 * The .jsonl files among `paths` (files, or directories searched one level deep), sorted; in a
 * directory, the LLM agents' call records (older runs wrote them as `.llm.jsonl` beside the logs) are not logs.
 */
export function findLogs(paths: readonly string[]): string[] {
  const files: string[] = [];
  for (const path of paths) {
    let isDirectory: boolean;
    try {
      isDirectory = statSync(path).isDirectory();
    } catch {
      throw new CliError(`${path}: no such file or directory`);
    }
    if (!isDirectory) files.push(path);
    else files.push(...readdirSync(path).filter((name) => name.endsWith('.jsonl') && !isRecordFileName(name)).sort().map((name) => join(path, name)));
  }
  if (files.length === 0) throw new CliError(`no .jsonl logs in ${paths.join(', ')}`);
  return files;
}

/** Which agent to run: a built-in name or a command line, the step timeout for a command, the LLM agent's options and where its call records go. */
export interface AgentChoice {
  readonly spec: string;
  readonly stepTimeoutMs?: number;
  readonly llm?: { readonly options: LlmCliOptions; readonly recordDir: string };
}

/** Runs every episode of `files` with a fresh agent, in this thread. `onEpisode` counts progress. */

export async function evaluateFiles(
  choice: AgentChoice,
  files: readonly string[],
  options: EvalOptions,
  onEpisode: () => void = () => {},
): Promise<EvalBatchResult> {
  let agent = await startAgent(choice);
  const episodes: EpisodeResult[] = [];
  const skippedLogs: { file: string; error: string }[] = [];
  let instructionsCancelled = 0;
  try {
    for (const file of files) {
      let recording;
      try {
        recording = loadRecording(readFileSync(file, 'utf8'));
      } catch (error) {
        if (!(error instanceof LogError) && (error as NodeJS.ErrnoException).code === undefined) throw error;
        skippedLogs.push({ file, error: (error as Error).message });
        continue;
      }
      instructionsCancelled += recording.cancelledIds.length;
      for (let index = 0; index < recording.instructions.length; index++) {
        const result = await runEpisode(agent, recording, index, options);
        episodes.push({ ...result, file } as EpisodeResult);
        onEpisode();
        // A failed agent (crashed, hung, out of step) starts afresh for the next example; the LLM
        // agent keeps nothing between episodes and counts its calls over the run.
        if (result.error && !(agent instanceof LlmAgent)) {
          await agent.close?.();
          agent = await startAgent(choice);
        }
      }
    }
  } finally {
    await agent.close?.();
  }
  return { episodes, skippedLogs, instructionsCancelled };
}

async function startAgent(choice: AgentChoice): Promise<FollowerAgent> {
  const startLlm = choice.llm && llmStarter(choice.llm.options, choice.llm.recordDir);
  try {
    return await startFollower(choice.spec, { setting: 'logs', process: { stepTimeoutMs: choice.stepTimeoutMs }, startLlm });
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot start the agent ${JSON.stringify(choice.spec)}: ${(error as Error).message}`);
  }
}

/** Counts the episodes of each log without running them (for the progress bar). */
export function countEpisodes(files: readonly string[]): number {
  let total = 0;
  for (const file of files) {
    try {
      total += loadRecording(readFileSync(file, 'utf8')).instructions.length;
    } catch {
      // Reported when the log is evaluated.
    }
  }
  return total;
}

/** Splits the logs over `workers` threads, largest first, and merges what they return in file order. */
export async function evaluateInWorkers(
  choice: AgentChoice,
  files: readonly string[],
  options: EvalOptions,
  workers: number,
  onEpisode: () => void,
): Promise<EvalBatchResult> {
  const shares: string[][] = Array.from({ length: Math.min(workers, files.length) }, () => []);
  const sizes = shares.map(() => 0);
  for (const file of [...files].sort((a, b) => statSync(b).size - statSync(a).size)) {
    const smallest = sizes.indexOf(Math.min(...sizes));
    shares[smallest].push(file);
    sizes[smallest] += statSync(file).size;
  }
  const results = await Promise.all(shares.map((share) => runWorker(choice, share, options, onEpisode)));
  const order = new Map(files.map((file, i) => [file, i]));
  const episodes = results
    .flatMap((r) => r.episodes)
    .sort((a, b) => order.get((a as unknown as { file: string }).file)! - order.get((b as unknown as { file: string }).file)! || a.index - b.index);
  return { episodes, skippedLogs: results.flatMap((r) => r.skippedLogs), instructionsCancelled: results.reduce((sum, r) => sum + r.instructionsCancelled, 0) };
}

function runWorker(choice: AgentChoice, files: string[], options: EvalOptions, onEpisode: () => void): Promise<EvalBatchResult> {
  const script = join(__dirname, `worker${__filename.endsWith('.ts') ? '.ts' : '.js'}`);
  // Under tsx the worker must load TypeScript too.
  const execArgv = __filename.endsWith('.ts') ? ['--require', require.resolve('tsx/cjs')] : [];
  const worker = new Worker(script, { workerData: { choice, files, options }, execArgv });
  return new Promise((resolve, reject) => {
    worker.on('message', (message: { kind: 'episode' } | { kind: 'done'; result: EvalBatchResult } | { kind: 'failed'; error: string }) => {
      if (message.kind === 'episode') onEpisode();
      else if (message.kind === 'done') resolve(message.result);
      else reject(new CliError(message.error));
    });
    worker.on('error', reject);
    worker.on('exit', (code) => code !== 0 && reject(new CliError(`an evaluation worker stopped with exit code ${code}`)));
  });
}
