/** `cerealbar import cb2 PATH... --out DIR`: real games from other platforms as our logs. */
import type { Command } from 'commander';
import { findCb2Games, importCb2 } from '../import/cb2';
import { CliError } from '../errors';

export function registerImportCommands(program: Command): void {
  const importer = program.command('import').description('convert games played on another platform into game logs that replay exactly');
  importer
    .command('cb2')
    .description('CB2 game folders (game_info and messages_from_server logs, plain or .gz) into logs under the cb2 rules profile; each game is replayed through the engine and checked against every state CB2 sent')
    .argument('<paths...>', 'CB2 game folders, or folders above them')
    .requiredOption('--out <dir>', 'where to write the logs (<gameId>.jsonl)')
    .option('--json', 'print the report as JSON')
    .action((paths: string[], options: { out: string; json?: boolean }) => {
      const report = importCb2(findCb2Games(paths), options.out, paths.length === 1 ? paths[0] : '.');
      for (const { folder, error } of report.failed) process.stderr.write(`cerealbar: not imported: ${folder}: ${error}\n`);
      for (const { folder, droppedFeedback } of report.imported) {
        for (const { line, reason } of droppedFeedback) process.stderr.write(`cerealbar: feedback left out: ${folder}: line ${line}: ${reason}\n`);
      }
      if (options.json) {
        const games = report.imported.map(({ folder, file, gameId, score, events, gameOver, droppedFeedback }) => ({ folder, file, gameId, score, events, gameOver, droppedFeedback }));
        process.stdout.write(`${JSON.stringify({ imported: games, failed: report.failed }, null, 2)}\n`);
      } else {
        for (const game of report.imported) process.stdout.write(`${game.file}: ${game.events} events, score ${game.score}, ${game.gameOver ? 'played to the end' : 'abandoned'}\n`);
        process.stdout.write(`${report.imported.length} games imported to ${options.out}, ${report.failed.length} not imported\n`);
      }
      if (report.failed.length > 0) throw new CliError(`${report.failed.length} of ${report.failed.length + report.imported.length} games not imported`, 1);
    });
}
