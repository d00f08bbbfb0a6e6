/** `cerealbar selfplay`: complete games between the scripted leader and follower, one log each. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_CONFIG } from '../../shared/engine/config';
import type { GameMap } from '../../shared/engine/map';
import { serializeLine } from '../../shared/log/recorder';
import type { LogLine } from '../../shared/log/format';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { CliError } from '../errors';
import { integerOption } from '../options';
import { readMapFile } from './maps';

interface SelfPlayOptions {
  games: number;
  seed: number;
  out: string;
  map?: string;
}

export function registerSelfPlayCommand(program: Command): void {
  program
    .command('selfplay')
    .description('play complete games headless with the scripted leader and follower; one log per game')
    .requiredOption('--out <dir>', 'directory for the logs (created if missing)')
    .option('--games <n>', 'number of games', integerOption('--games', 1, 1_000_000), 1)
    .option('--seed <s>', 'seed of the first game; game i uses seed + i', integerOption('--seed', 0, 2 ** 31 - 1), 1)
    .option('--map <file>', 'play every game on this map file instead of a generated map')
    .action((options: SelfPlayOptions) => {
      const fixedMap: GameMap | undefined = options.map ? readMapFile(options.map) : undefined;
      try {
        mkdirSync(options.out, { recursive: true });
      } catch (error) {
        throw new CliError(`${options.out}: cannot create the directory: ${(error as Error).message}`);
      }
      const started = performance.now();
      let totalScore = 0;
      for (let i = 0; i < options.games; i++) {
        const seed = options.seed + i;
        const lines: LogLine[] = [];
        const { state } = playSelfPlayGame(
          { seed, map: fixedMap ?? generateMap(seed), config: DEFAULT_CONFIG, gameId: `selfplay-${seed}` },
          (line) => lines.push(line),
        );
        totalScore += state.score;
        const file = join(options.out, `selfplay-${seed}.jsonl`);
        writeFileSync(file, lines.map((line) => `${serializeLine(line)}\n`).join(''));
      }
      const seconds = (performance.now() - started) / 1000;
      process.stdout.write(
        `${options.games} games written to ${options.out} in ${seconds.toFixed(2)} s; mean score ${(totalScore / options.games).toFixed(2)}\n` +
          `check them with: npx cerealbar replay ${join(options.out, '*.jsonl')}\n`,
      );
    });
}
