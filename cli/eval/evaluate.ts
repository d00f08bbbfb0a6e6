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
import { loadRecording, type Recording } from '../../shared/eval/recording';
import { episodeIdOf, runEpisode, type EpisodeResult, type EvalOptions } from '../../shared/eval/runner';
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

/** How an evaluation over logs is run in this thread. */
export interface EvalRun {
  /** Counts progress. */
  readonly onEpisode?: (result: EpisodeResult) => void;
  /** Episodes played at once, each slot with its own agent (for agents that wait on a server). */
  readonly concurrency?: number;
  /** Episodes already evaluated (a resumed run): not played again. */
  readonly done?: ReadonlySet<string>;
  /** Asked before each episode: true stops the slots from taking more (those under way end). */
  readonly stop?: () => boolean;
  /** Told as each episode begins. */
  readonly onStart?: (episodeId: string) => void;
}

/**
 * Runs every episode of `files` (but those `done`) in this thread, `concurrency` at once, each slot
 * with its own agent; returns them in file order, then instruction order. Logs are read one at a
 * time, as the slots reach them.
 */
export async function evaluateFiles(choice: AgentChoice, files: readonly string[], options: EvalOptions, run: EvalRun = {}): Promise<EvalBatchResult> {
  const skippedLogs: { file: string; error: string }[] = [];
  let instructionsCancelled = 0;
  const tasks = episodeTasks(files, run.done ?? new Set(), (file, error) => skippedLogs.push({ file, error }), (cancelled) => (instructionsCancelled += cancelled));
  const episodes: EpisodeResult[] = [];
  let stopped = false;
  const slot = async (): Promise<void> => {
    let agent = await startAgent(choice);
    try {
      for (let task = tasks.next(); !stopped && !run.stop?.() && !task.done; task = tasks.next()) {
        const { file, recording, index } = task.value;
        run.onStart?.(episodeIdOf(recording, index));
        let result: EpisodeResult;
        try {
          result = { ...(await runEpisode(agent, recording, index, options)), file } as EpisodeResult;
        } catch (error) {
          stopped = true; // the run stops (AgentRunStopped): no slot takes another episode
          throw error;
        }
        episodes.push(result);
        run.onEpisode?.(result);
        // A failed agent (crashed, hung, out of step) starts afresh for the next example; the LLM
        // agent keeps nothing between episodes and counts its calls over the run.
        if (result.error && !(agent instanceof LlmAgent)) {
          await agent.close?.();
          agent = await startAgent(choice);
        }
      }
    } finally {
      await agent.close?.();
    }
  };
  const outcomes = await Promise.allSettled(Array.from({ length: Math.max(1, run.concurrency ?? 1) }, slot));
  const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  return { episodes: inFileOrder(episodes, files), skippedLogs, instructionsCancelled };
}

/** The episodes of the logs, one log read at a time; a log that does not replay is reported and skipped. */
function* episodeTasks(
  files: readonly string[],
  done: ReadonlySet<string>,
  skip: (file: string, error: string) => void,
  cancelled: (count: number) => void,
): Generator<{ readonly file: string; readonly recording: Recording; readonly index: number }> {
  for (const file of files) {
    let recording: Recording;
    try {
      recording = loadRecording(readFileSync(file, 'utf8'));
    } catch (error) {
      if (!(error instanceof LogError) && (error as NodeJS.ErrnoException).code === undefined) throw error;
      skip(file, (error as Error).message);
      continue;
    }
    cancelled(recording.cancelledIds.length);
    for (let index = 0; index < recording.instructions.length; index++) {
      if (!done.has(episodeIdOf(recording, index))) yield { file, recording, index };
    }
  }
}

/** Episodes in the order of `files`, then of their instructions. */
export function inFileOrder(episodes: readonly EpisodeResult[], files: readonly string[]): EpisodeResult[] {
  const order = new Map(files.map((file, i) => [file, i]));
  const fileOf = (episode: EpisodeResult) => (episode as unknown as { file: string }).file;
  return [...episodes].sort((a, b) => order.get(fileOf(a))! - order.get(fileOf(b))! || a.index - b.index);
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

/** Splits the logs over `workers` threads, largest first, and merges what they return in file order; each episode is told to `run.onEpisode` as it ends. */
export async function evaluateInWorkers(choice: AgentChoice, files: readonly string[], options: EvalOptions, workers: number, run: EvalRun = {}): Promise<EvalBatchResult> {
  const shares: string[][] = Array.from({ length: Math.min(workers, files.length) }, () => []);
  const sizes = shares.map(() => 0);
  for (const file of [...files].sort((a, b) => statSync(b).size - statSync(a).size)) {
    const smallest = sizes.indexOf(Math.min(...sizes));
    shares[smallest].push(file);
    sizes[smallest] += statSync(file).size;
  }
  const results = await Promise.all(shares.map((share) => runWorker(choice, share, options, run)));
  return {
    episodes: inFileOrder(results.flatMap((r) => r.episodes), files),
    skippedLogs: results.flatMap((r) => r.skippedLogs),
    instructionsCancelled: results.reduce((sum, r) => sum + r.instructionsCancelled, 0),
  };
}

/** What a worker thread is given: the run's options but its callback. */
export interface WorkerData {
  readonly choice: AgentChoice;
  readonly files: readonly string[];
  readonly options: EvalOptions;
  readonly done: readonly string[];
}

/** What a worker thread posts: each episode as it ends, then its batch, or why it failed. */
export type WorkerMessage = { kind: 'episode'; result: EpisodeResult } | { kind: 'done'; result: EvalBatchResult } | { kind: 'failed'; error: string };

function runWorker(choice: AgentChoice, files: string[], options: EvalOptions, run: EvalRun): Promise<EvalBatchResult> {
  const script = join(__dirname, `worker${__filename.endsWith('.ts') ? '.ts' : '.js'}`);
  // Under tsx the worker must load TypeScript too.
  const execArgv = __filename.endsWith('.ts') ? ['--require', require.resolve('tsx/cjs')] : [];
  const workerData: WorkerData = { choice, files, options, done: [...(run.done ?? [])] };
  const worker = new Worker(script, { workerData, execArgv });
  // A run asked to stop (Ctrl-C) tells its workers, which end the episodes under way.
  const watch = setInterval(() => run.stop?.() && worker.postMessage('stop'), 200);
  worker.once('exit', () => clearInterval(watch));
  return new Promise((resolve, reject) => {
    worker.on('message', (message: WorkerMessage) => {
      if (message.kind === 'episode') run.onEpisode?.(message.result);
      else if (message.kind === 'done') resolve(message.result);
      else reject(new CliError(message.error));
    });
    worker.on('error', reject);
    worker.on('exit', (code) => code !== 0 && reject(new CliError(`an evaluation worker stopped with exit code ${code}`)));
  });
}
