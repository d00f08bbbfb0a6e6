/** `cerealbar eval`: an agent as the follower over logged games, single-instruction or cascaded. */
import { availableParallelism } from 'node:os';
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { AGENT_NAMES } from '../../shared/agents/node/registry';
import { CASCADE_CONVENTIONS, DEFAULT_EVAL_OPTIONS, type CascadeConvention, type EvalMode, type EvalOptions } from '../../shared/eval/runner';
import { aggregate, countUndefined, formatTable, REPORT_VERSION, type EvalReport } from '../../shared/eval/report';
import { countEpisodes, evaluateFiles, evaluateInWorkers, findLogs } from '../eval/evaluate';
import { renderHtmlReport } from '../eval/html';
import { CliError } from '../errors';
import { integerOption } from '../options';

interface EvalCliOptions {
  agent: string;
  logs: string[];
  mode: EvalMode;
  cascade: CascadeConvention;
  maxActions: number;
  successThreshold: number;
  out?: string;
  html?: string;
  workers: number;
  viewerUrl: string;
  agentTimeout: number;
}

/** A progress line on stderr: redrawn in place on a terminal, every 10% otherwise. */
function progress(total: number): { tick: () => void; end: () => void } {
  const started = Date.now();
  const tty = process.stderr.isTTY;
  let done = 0;
  let lastDecile = -1;
  const draw = () => {
    const rate = done / Math.max(0.001, (Date.now() - started) / 1000);
    const filled = total === 0 ? 30 : Math.round((30 * done) / total);
    const line = `[${'='.repeat(filled)}${' '.repeat(30 - filled)}] ${done}/${total} episodes, ${rate.toFixed(0)}/s`;
    if (tty) process.stderr.write(`\r${line}`);
    else if (Math.floor((10 * done) / Math.max(1, total)) !== lastDecile) {
      lastDecile = Math.floor((10 * done) / Math.max(1, total));
      process.stderr.write(`${line}\n`);
    }
  };
  return {
    tick: () => {
      done++;
      if (tty ? done % 20 === 0 || done === total : true) draw();
    },
    end: () => {
      draw();
      if (tty) process.stderr.write('\n');
    },
  };
}

export function registerEvalCommand(program: Command): void {
  program
    .command('eval')
    .description('evaluate a follower agent over logged games (appendix F of the CerealBar paper)')
    .requiredOption('--agent <agent>', `a built-in agent (${AGENT_NAMES.join(', ')}) or a command that speaks the agent protocol, e.g. "python3 my_agent.py"`)
    .requiredOption('--logs <paths...>', 'game logs (.jsonl files or directories of them)')
    .option('--mode <mode>', 'single: each instruction alone; cascaded: each instruction and all later ones', 'single')
    .option(
      '--cascade <convention>',
      'cascaded mode: stop-at-first-failure (the paper\'s original code) or continue (play on after an instruction not followed, a departure from the paper)',
      DEFAULT_EVAL_OPTIONS.cascade,
    )
    .option('--max-actions <n>', 'most actions per instruction, DONE included', integerOption('--max-actions', 1, 1000), DEFAULT_EVAL_OPTIONS.maxActions)
    .option('--success-threshold <hexes>', 'success distance d_th of the path metrics, in hexes', integerOption('--success-threshold', 0, 50), DEFAULT_EVAL_OPTIONS.successThreshold)
    .option('--out <file>', 'write the full report as JSON')
    .option('--html <file>', 'write a self-contained HTML report with plots')
    .option('--workers <n>', 'worker threads (default: one per core)', integerOption('--workers', 1, 256), availableParallelism())
    .option('--agent-timeout <ms>', 'how long a command-line agent may take to answer one observation', integerOption('--agent-timeout', 10, 600_000), 5000)
    .option('--viewer-url <url>', "replay viewer links in the HTML report point here", 'http://localhost:2567/replay')
    .action(async (cli: EvalCliOptions) => {
      if (cli.mode !== 'single' && cli.mode !== 'cascaded') throw new CliError(`--mode must be single or cascaded, got ${JSON.stringify(cli.mode)}`);
      if (!CASCADE_CONVENTIONS.includes(cli.cascade)) {
        throw new CliError(`--cascade must be ${CASCADE_CONVENTIONS.join(' or ')}, got ${JSON.stringify(cli.cascade)}`);
      }
      const options: EvalOptions = { mode: cli.mode, cascade: cli.cascade, maxActions: cli.maxActions, successThreshold: cli.successThreshold };
      const files = findLogs(cli.logs);
      const bar = progress(countEpisodes(files));
      const choice = { spec: cli.agent, stepTimeoutMs: cli.agentTimeout };
      const result =
        cli.workers > 1 && files.length > 1
          ? await evaluateInWorkers(choice, files, options, cli.workers, bar.tick)
          : await evaluateFiles(choice, files, options, bar.tick);
      bar.end();
      const report: EvalReport = {
        version: REPORT_VERSION,
        agent: cli.agent,
        options,
        createdAt: new Date().toISOString(),
        logs: files,
        skippedLogs: result.skippedLogs,
        aggregates: aggregate(result.episodes),
        undefinedCounts: countUndefined(result.episodes),
        episodes: result.episodes,
      };
      process.stdout.write(`${formatTable(report)}\n`);
      const errors = result.episodes.filter((e) => e.error);
      for (const e of errors.slice(0, 5)) process.stdout.write(`  agent error in ${e.episodeId}: ${e.error}\n`);
      if (errors.length > 5) process.stdout.write(`  ... and ${errors.length - 5} more agent errors (see the JSON report)\n`);
      if (cli.out) write(cli.out, JSON.stringify(report, null, 1));
      if (cli.html) write(cli.html, renderHtmlReport(report, cli.viewerUrl));
    });
}

function write(file: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch (error) {
    throw new CliError(`${file}: cannot write: ${(error as Error).message}`);
  }
  process.stdout.write(`wrote ${file}\n`);
}
