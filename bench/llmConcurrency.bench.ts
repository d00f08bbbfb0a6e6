/**
 * LLM evaluation at once (`npm run bench:llm`): the wall time of 100 agent-vs-agent games of the
 * scripted leader and an LLM follower against a stub OpenAI-compatible endpoint that answers each
 * call after 200 ms (a remote model's latency), at `--concurrency` 1, 4 and 16. Each game's
 * follower makes at most `--calls` calls (default 5), so a game waits about a second on the model
 * at K = 1. It prints each figure beside the one last recorded in docs/benchmarks.md ("LLM
 * evaluation at once"). `-- --games N --calls N --latency MS` change the run's size.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../cli/main';
import { startStubLlm, STUB_MODEL, type ChatBody } from '../test/helpers/stubLlm';

/** The figures last recorded in docs/benchmarks.md, which a run is compared with. */
const RECORDED: { readonly date: string; readonly seconds: Readonly<Record<number, number>> } | null = { date: '2026-11-27', seconds: { 1: 103.6, 4: 26.0, 16: 7.5 } };

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

const GAMES = argument('games', 100);
const CALLS = argument('calls', 5);
const LATENCY_MS = argument('latency', 200);
const CONCURRENCY = [1, 4, 16];

/** One legal action a call: the first move allowed, else DONE. */
function reply(body: ChatBody): string {
  const legal = /Actions allowed now: (.*)\.$/m.exec(body.messages.find((m) => m.role === 'user')!.content)![1].split(', ');
  return JSON.stringify({ actions: [legal.find((action) => action !== 'DONE') ?? 'DONE'] });
}

async function main(): Promise<void> {
  const stub = await startStubLlm({ respond: reply, delayMs: LATENCY_MS });
  const dir = mkdtempSync(join(tmpdir(), 'bench-llm-'));
  // The runs' own output is not the benchmark's.
  const write = process.stdout.write.bind(process.stdout);
  const writeErr = process.stderr.write.bind(process.stderr);
  try {
    process.stdout.write(`llm evaluation at once: ${GAMES} games, at most ${CALLS} follower calls a game, ${LATENCY_MS} ms a call\n`);
    for (const k of CONCURRENCY) {
      const started = performance.now();
      process.stdout.write = (() => true) as typeof process.stdout.write;
      process.stderr.write = (() => true) as typeof process.stderr.write;
      let status: number;
      try {
        status = await runCli(['eval', '--leader', 'scripted', '--follower', 'llm', '--games', String(GAMES), '--out', join(dir, `k${k}`), '--concurrency', String(k),
          '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-max-calls', String(CALLS), '--bootstrap', '1000']);
      } finally {
        process.stdout.write = write;
        process.stderr.write = writeErr;
      }
      if (status !== 0) throw new Error(`the run at --concurrency ${k} exited with ${status}`);
      const seconds = (performance.now() - started) / 1000;
      const before = RECORDED?.seconds[k];
      process.stdout.write(`llm eval: ${GAMES} games at --concurrency ${k}: ${seconds.toFixed(1)} s wall${before === undefined ? '' : ` (recorded ${RECORDED!.date}: ${before.toFixed(1)} s, ${(seconds / before).toFixed(2)}x)`}\n`);
    }
    process.stdout.write(`chat calls answered: ${stub.chatRequests().length}\n`);
  } finally {
    await stub.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main().catch((error: unknown) => {
  process.stderr.write(`bench:llm: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
