/** `cerealbar import cb2`: CB2 game folders (plain or gzipped files) converted into our logs. */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CB2_FILES, Cb2ImportError, importCb2Game, type Cb2Import } from '../../shared/cb2/import';
import { serializeLine } from '../../shared/log/recorder';
import { CliError } from '../errors';

/** The CB2 game folders at or under `paths`: folders holding a messages_from_server log. */
export function findCb2Games(paths: readonly string[]): string[] {
  const games: string[] = [];
  const visit = (path: string) => {
    if (fileOf(path, CB2_FILES.messagesFromServer)) {
      games.push(path);
      return;
    }
    for (const entry of readdirSync(path).sort()) {
      const child = join(path, entry);
      if (statSync(child).isDirectory()) visit(child);
    }
  };
  for (const path of paths) {
    if (!existsSync(path) || !statSync(path).isDirectory()) throw new CliError(`${path}: not a folder`);
    visit(path);
  }
  if (games.length === 0) throw new CliError(`no CB2 game folders (with ${CB2_FILES.messagesFromServer}) in ${paths.join(', ')}`);
  return games;
}

/** The path of `name` in `folder`, plain or gzipped, or null. */
function fileOf(folder: string, name: string): string | null {
  for (const candidate of [join(folder, name), join(folder, `${name}.gz`)]) if (existsSync(candidate)) return candidate;
  return null;
}

function readGameFile(folder: string, name: string): string {
  const path = fileOf(folder, name);
  if (!path) throw new Cb2ImportError(`${basename(folder)}/${name}`, 0, 'missing');
  const bytes = readFileSync(path);
  if (!path.endsWith('.gz')) return bytes.toString('utf8');
  try {
    return gunzipSync(bytes).toString('utf8');
  } catch (error) {
    throw new Cb2ImportError(`${basename(folder)}/${name}.gz`, 0, `cannot unpack: ${(error as Error).message}`);
  }
}

export interface ImportedGame extends Cb2Import {
  readonly folder: string;
  readonly file: string;
}

export interface ImportReport {
  readonly imported: ImportedGame[];
  readonly failed: { readonly folder: string; readonly error: string }[];
}

/** Imports every game folder into `out` (one `<gameId>.jsonl` each); a game that fails is listed, the others go on. */
export function importCb2(folders: readonly string[], out: string, root: string): ImportReport {
  mkdirSync(out, { recursive: true });
  const imported: ImportedGame[] = [];
  const failed: { folder: string; error: string }[] = [];
  for (const folder of folders) {
    try {
      const game = importCb2Game({
        name: basename(folder),
        origin: relative(root, dirname(folder)) || '.',
        gameInfo: readGameFile(folder, CB2_FILES.gameInfo),
        messagesFromServer: readGameFile(folder, CB2_FILES.messagesFromServer),
      });
      const file = join(out, `${game.gameId}.jsonl`);
      if (existsSync(file)) throw new Cb2ImportError(basename(folder), 0, `${file} exists already (the same game imported twice?)`);
      writeFileSync(file, game.lines.map((line) => `${serializeLine(line)}\n`).join(''));
      imported.push({ ...game, folder, file });
    } catch (error) {
      if (!(error instanceof Cb2ImportError)) throw error;
      failed.push({ folder, error: error.message });
    }
  }
  return { imported, failed };
}
