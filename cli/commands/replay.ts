/** `cerealbar replay FILE... [--json]`: re-simulates logs and checks every recorded outcome. */
import type { Command } from 'commander';
import { snapshot } from '../../shared/engine/snapshot';
import { replay, LogError } from '../../shared/log/replay';
import { CliError } from '../errors';
import { readTextFile } from '../options';

interface FileReport {
  file: string;
  ok: boolean;
  [key: string]: unknown;
}

function replayFile(file: string): FileReport {
  let text: string;
  try {
    text = readTextFile(file);
  } catch (error) {
    return { file, ok: false, error: (error as CliError).message };
  }
  try {
    const result = replay(text);
    return {
      file,
      ok: true,
      summary: {
        gameId: result.header.gameId,
        engineVersion: result.header.engineVersion,
        usedRecordedCards: result.usedRecordedCards,
        events: result.events,
        score: result.final.score,
        turnsLeft: result.final.turnsLeft,
        endReason: result.end?.reason ?? null,
      },
      final: snapshot(result.final),
    };
  } catch (error) {
    if (error instanceof LogError) return { file, ok: false, line: error.line, error: `${file}: ${error.message}` };
    throw error;
  }
}

export function registerReplayCommand(program: Command): void {
  program
    .command('replay')
    .description('re-simulate game logs through the engine and check every recorded outcome')
    .argument('<files...>', 'game logs (.jsonl)')
    .option('--json', 'print one JSON object per file: a summary and the final snapshot')
    .action((files: string[], options: { json?: boolean }) => {
      let failed = 0;
      for (const file of files) {
        const report = replayFile(file);
        if (!report.ok) failed += 1;
        if (options.json) {
          process.stdout.write(`${JSON.stringify(report)}\n`);
        } else if (report.ok) {
          const s = report.summary as { events: number; score: number; endReason: string | null };
          process.stdout.write(`${file}: ok: ${s.events} events, score ${s.score}, ended: ${s.endReason}\n`);
        } else {
          process.stderr.write(`${report.error}\n`);
        }
      }
      if (failed > 0) throw new CliError(`${failed} of ${files.length} logs failed to replay`, 1);
    });
}
