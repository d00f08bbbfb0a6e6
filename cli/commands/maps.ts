/** `cerealbar maps`: generate map files and show maps as text. */
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { GameMap } from '../../shared/engine/map';
import { DEFAULT_MAP_SIZE, MAX_MAP_SIZE, MIN_MAP_SIZE, generateMap } from '../../shared/maps/generate';
import { MapFormatError, parseMapText } from '../../shared/maps/parse';
import { renderMap } from '../../shared/maps/render';
import { CliError } from '../errors';
import { integerOption, readTextFile } from '../options';

interface GenerateOptions {
  seed: number;
  out?: string;
  width: number;
  height: number;
}

interface ShowOptions {
  seed?: number;
  width: number;
  height: number;
}

// The same seed range as `selfplay`, whose game i on a generated map uses generateMap(seed + i).
const seedOption = () => integerOption('--seed', 0, 2 ** 31 - 1);
const sizeOption = (name: string) => integerOption(name, MIN_MAP_SIZE, MAX_MAP_SIZE);

export function registerMapsCommands(program: Command): void {
  const maps = program.command('maps').description('generate map files and show maps as text');

  maps
    .command('generate')
    .description('generate a map from a seed; prints its JSON, or writes it with --out')
    .requiredOption('--seed <s>', 'seed of the map', seedOption())
    .option('--out <file>', 'write the map to this file instead of printing it')
    .option('--width <w>', 'columns', sizeOption('--width'), DEFAULT_MAP_SIZE)
    .option('--height <h>', 'rows', sizeOption('--height'), DEFAULT_MAP_SIZE)
    .action((options: GenerateOptions) => {
      const map = generateMap(options.seed, { width: options.width, height: options.height });
      const json = formatMapJson(map);
      if (!options.out) {
        process.stdout.write(json);
        return;
      }
      try {
        writeFileSync(options.out, json);
      } catch (error) {
        throw new CliError(`${options.out}: cannot write: ${writeProblem(error as NodeJS.ErrnoException)}`);
      }
      process.stdout.write(`wrote ${map.name} (${map.width}x${map.height}, ${map.props.length} props) to ${options.out}\n`);
    });

  maps
    .command('show')
    .description('print a map as text: a map file, or the map generated from --seed')
    .argument('[file]', 'a map JSON file')
    .option('--seed <s>', 'show the map generated from this seed instead of a file', seedOption())
    .option('--width <w>', 'columns of the generated map', sizeOption('--width'), DEFAULT_MAP_SIZE)
    .option('--height <h>', 'rows of the generated map', sizeOption('--height'), DEFAULT_MAP_SIZE)
    .action((file: string | undefined, options: ShowOptions) => {
      const map = mapToShow(file, options);
      const cards = map.cards ? `, ${map.cards.length} fixed cards` : '';
      process.stdout.write(`${map.name || file}: ${map.width}x${map.height}, ${map.props.length} props${cards}\n`);
      process.stdout.write(`${renderMap(map, { ...map.spawn, cards: map.cards })}\n`);
    });
}

function mapToShow(file: string | undefined, options: ShowOptions): GameMap {
  if (file === undefined && options.seed === undefined) throw new CliError('maps show needs a FILE or --seed');
  if (file !== undefined && options.seed !== undefined) throw new CliError('maps show takes a FILE or --seed, not both');
  if (options.seed !== undefined) return generateMap(options.seed, { width: options.width, height: options.height });
  return readMapFile(file!);
}

function writeProblem(error: NodeJS.ErrnoException): string {
  if (error.code === 'ENOENT') return 'no such directory';
  if (error.code === 'EISDIR') return 'is a directory';
  if (error.code === 'EACCES') return 'permission denied';
  return error.message;
}

/** Reads and checks a map file; any problem becomes a one-line CliError. */
export function readMapFile(path: string): GameMap {
  try {
    return parseMapText(readTextFile(path), path);
  } catch (error) {
    if (error instanceof MapFormatError) throw new CliError(error.message);
    throw error;
  }
}

/**
 * Map JSON that stays readable and diffable: one line per field, terrain row, prop and card
 * (JSON.stringify's indentation would spread every prop over seven lines).
 */
export function formatMapJson(map: GameMap): string {
  const field = (value: unknown) =>
    Array.isArray(value) && value.length > 0
      ? `[\n${value.map((item) => `    ${JSON.stringify(item)}`).join(',\n')}\n  ]`
      : JSON.stringify(value);
  const fields = Object.entries(map)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `  ${JSON.stringify(key)}: ${field(value)}`);
  return `{\n${fields.join(',\n')}\n}\n`;
}
