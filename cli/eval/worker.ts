/** An evaluation worker thread: evaluates its share of the logs, posting each episode as it ends and then the batch; told `stop`, it ends the episode under way and stops. */
import { parentPort, workerData } from 'node:worker_threads';
import { evaluateFiles, type WorkerData, type WorkerMessage } from './evaluate';

const { choice, files, options, done } = workerData as WorkerData;
const post = (message: WorkerMessage) => parentPort!.postMessage(message);
let stopped = false;
parentPort!.on('message', (message: unknown) => (stopped ||= message === 'stop'));
// Listening must not keep the thread alive once its share is done.
parentPort!.unref();

evaluateFiles(choice, files, options, { done: new Set(done), stop: () => stopped, onEpisode: (result) => post({ kind: 'episode', result }) })
  .then((result) => post({ kind: 'done', result }))
  .catch((error: Error) => post({ kind: 'failed', error: error.message }));
