/** The CLI in a process of its own, sent signals once it is ready: how a run's Ctrl-C and kills are tested. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const BIN = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

/** Runs `cerealbar args`; once `ready()` holds, sends it `signals` in turn. How it exited, and its standard error. */
export async function signalled(args: string[], ready: () => boolean, signals: NodeJS.Signals[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 25));
  for (const signal of signals) {
    child.kill(signal);
    // Signals are not queued: a second sent at once may arrive as one.
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
  return { ...(await exited), stderr };
}
