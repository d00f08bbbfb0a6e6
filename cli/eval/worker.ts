/** An evaluation worker thread: evaluates its share of the logs and posts the results. */
import { parentPort, workerData } from 'node:worker_threads';
import type { EvalOptions } from '../../shared/eval/runner';
import { evaluateFiles, type AgentChoice } from './evaluate';

const { choice, files, options } = workerData as { choice: AgentChoice; files: string[]; options: EvalOptions };

evaluateFiles(choice, files, options, () => parentPort!.postMessage({ kind: 'episode' }))
  .then((result) => parentPort!.postMessage({ kind: 'done', result }))
  .catch((error: Error) => parentPort!.postMessage({ kind: 'failed', error: error.message }));
