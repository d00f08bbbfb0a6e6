/** The real CB2 games of test/fixtures/cb2-logs, read as the importer takes them. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CB2_FILES, type Cb2Game } from '../../shared/cb2/import';

/** The fixtures' folder, from the sources (tests) or from dist/test/cb2 (the compiled benchmarks). */
export const CB2_FIXTURES = [join(__dirname, '..', 'fixtures', 'cb2-logs'), join(__dirname, '..', '..', '..', 'test', 'fixtures', 'cb2-logs')].find((folder) => existsSync(folder)) ?? join(__dirname, '..', 'fixtures', 'cb2-logs');

const unzip = (path: string) => gunzipSync(readFileSync(path)).toString('utf8');

/** The game in `folder` (relative to the fixtures, as the fixtures' README names it). */
export function cb2FixtureGame(folder: string): Cb2Game {
  const path = join(CB2_FIXTURES, folder);
  return {
    name: basename(path),
    origin: folder.split('/').slice(0, -1).join('/'),
    gameInfo: unzip(join(path, `${CB2_FILES.gameInfo}.gz`)),
    messagesFromServer: unzip(join(path, `${CB2_FILES.messagesFromServer}.gz`)),
  };
}

/** Every game folder of the fixtures (model / server / game), in a fixed order. */
export function cb2FixtureFolders(): string[] {
  const below = (folder: string) => readdirSync(join(CB2_FIXTURES, folder), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => `${folder}/${entry.name}`).sort();
  return readdirSync(CB2_FIXTURES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .flatMap(below)
    .flatMap(below);
}
