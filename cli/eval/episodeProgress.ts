/**
 * An evaluation over logs written to `--out FILE` keeps its finished episodes, one JSON line each,
 * in `<FILE stem>.episodes.ndjson` beside it, appended and flushed as each ends: what `eval
 * --resume` keeps (a line cut short by a kill is not an episode; it is played again). The file is
 * removed once the report is written, which holds every episode. The run's manifest is
 * `<FILE stem>.run.json`, so that several reports may share a folder.
 */
import { basename, dirname, extname, join } from 'node:path';
import type { EpisodeResult } from '../../shared/eval/runner';
import { readJsonLines } from '../durableFiles';

/** The files of an evaluation over logs whose report is `out`. */
export function overLogsFiles(out: string): { readonly progress: string; readonly manifest: string } {
  const stem = join(dirname(out), basename(out, extname(out)));
  return { progress: `${stem}.episodes.ndjson`, manifest: `${stem}.run.json` };
}

/** The finished episodes on record (each with its log file), by episode id. */
export function finishedEpisodes(progress: string): Map<string, EpisodeResult> {
  return new Map(readJsonLines<EpisodeResult>(progress).map((episode) => [episode.episodeId, episode]));
}
