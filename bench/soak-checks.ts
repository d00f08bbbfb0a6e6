/**
 * The chaos soak's end checks (bench/soak.ts), over what the run left: the logs on each machine's
 * disk, the database's copy of every game, the seats the clients played (with the actions each
 * saw acknowledged) and the study's worker records.
 */
import { withoutActor, type PlayerAction } from '../shared/engine/actions';
import { eventAction, type LogEvent } from '../shared/log/format';
import { parseLog, replay } from '../shared/log/replay';
import type { WorkerGame, WorkerRecord } from '../shared/study/worker';
import type { GameRecord } from '../server/store/types';
import type { PlayedSeat } from './soak-load';

export interface SoakInput {
  /** Every log file on the machines' disks, by game id. */
  readonly disk: ReadonlyMap<string, string>;
  /** Every game in the database: its record and its log's lines. */
  readonly database: ReadonlyMap<string, { readonly record: GameRecord; readonly log: string }>;
  readonly seats: readonly PlayedSeat[];
  /** The study's workers with their games, when a study ran. */
  readonly workers: readonly { readonly worker: WorkerRecord; readonly games: readonly WorkerGame[] }[];
}

export interface SoakReport {
  readonly games: number;
  readonly acknowledged: number;
  /** Acknowledged actions missing from the log on disk or in the database. */
  readonly lost: number;
  readonly unreplayable: number;
  /** Games without an end, on disk or in the database. */
  readonly open: number;
  /** Games closed by recovery without a note, or whose database record disagrees with its log. */
  readonly unexplained: number;
  /** Study workers whose record disagrees with the games' logs. */
  readonly workersDisagreeing: number;
  /** One line per problem (the first ones). */
  readonly problems: readonly string[];
}

const MAX_PROBLEMS = 40;

export function checkSoak(input: SoakInput): SoakReport {
  const problems: string[] = [];
  const problem = (line: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(line);
  };
  let unreplayable = 0;
  let open = 0;
  let unexplained = 0;

  const gameIds = new Set([...input.disk.keys(), ...input.database.keys()]);
  for (const gameId of gameIds) {
    const local = input.disk.get(gameId);
    const copy = input.database.get(gameId);
    if (local === undefined) {
      unexplained++;
      problem(`${gameId}: in the database but on no machine's disk`);
    }
    if (copy === undefined) {
      unexplained++;
      problem(`${gameId}: on disk but not in the database`);
    }
    for (const [where, text] of [['disk', local], ['database', copy?.log]] as const) {
      if (text === undefined) continue;
      try {
        if (replay(text, { allowOpen: true }).end === null) {
          open++;
          problem(`${gameId}: the log in the ${where} has no end line`);
        }
      } catch (error) {
        unreplayable++;
        problem(`${gameId}: the log in the ${where} does not replay: ${(error as Error).message}`);
      }
    }
    if (local !== undefined && copy !== undefined && eventsOf(local) !== eventsOf(copy.log)) {
      unexplained++;
      problem(`${gameId}: the database's events differ from the disk's`);
    }
    if (copy) {
      const { record } = copy;
      if (record.endedAt === null || record.endReason === null) {
        open++;
        problem(`${gameId}: the database lists it as still being played`);
      } else if (record.endReason === 'interrupted' && !record.note) {
        unexplained++;
        problem(`${gameId}: closed as interrupted with no note saying why`);
      }
    }
  }

  let acknowledged = 0;
  let lost = 0;
  const games = new Set<string>();
  for (const seat of input.seats) {
    acknowledged += seat.acknowledged.length;
    const gameId = [...gameIds].find((id) => id.endsWith(`-${seat.roomId}`));
    if (gameId === undefined) {
      if (seat.acknowledged.length > 0) {
        lost += seat.acknowledged.length;
        problem(`room ${seat.roomId}: ${seat.acknowledged.length} acknowledged actions of the ${seat.role}, and no log of its game`);
      }
      continue;
    }
    games.add(gameId);
    for (const [where, text] of [['disk', input.disk.get(gameId)], ['database', input.database.get(gameId)?.log]] as const) {
      const missing = seat.acknowledged.length - (text === undefined ? 0 : keptPrefix(seat.acknowledged, actionsOf(text, seat.role)));
      if (missing > 0) {
        lost += missing;
        problem(`${gameId}: ${missing} of the ${seat.role}'s ${seat.acknowledged.length} acknowledged actions are not in the log in the ${where}`);
      }
    }
  }

  // Each game a worker sat in, by the logs, is among the worker's games, and the reverse.
  const seatedIn = new Map<string, Set<string>>();
  for (const [gameId, { record }] of input.database) {
    for (const seat of record.seats) if (seat.workerId !== undefined) seatedIn.set(seat.workerId, (seatedIn.get(seat.workerId) ?? new Set()).add(gameId));
  }
  let workersDisagreeing = 0;
  for (const { worker, games: played } of input.workers) {
    const listed = new Set(played.map((game) => game.gameId));
    const missing = [...(seatedIn.get(worker.participantId) ?? [])].filter((gameId) => !listed.has(gameId));
    const why = missing.length > 0 ? `it played ${missing.join(', ')} by the logs, which its record lacks` : workerDisagreement(worker, played, input.database);
    if (why) {
      workersDisagreeing++;
      problem(`worker ${worker.participantId}: ${why}`);
    }
  }
  return { games: games.size, acknowledged, lost, unreplayable, open, unexplained, workersDisagreeing, problems };
}

/** The log's header and events, without its end line (two stores may close one game at different times). */
function eventsOf(text: string): string {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('{"kind":"end"'))
    .join('\n');
}

/** What `role` did in the log, in order (the server's timeouts left out). */
function actionsOf(text: string, role: string): PlayerAction[] {
  let events: readonly { event: LogEvent }[];
  try {
    events = parseLog(text).events;
  } catch {
    return [];
  }
  return events.flatMap(({ event }) => {
    const action = eventAction(event);
    return action.type !== 'timeout' && action.actor === role ? [withoutActor(action)] : [];
  });
}

/** How many of `acknowledged` the log holds, from the first on, in order. */
function keptPrefix(acknowledged: readonly PlayerAction[], logged: readonly PlayerAction[]): number {
  let i = 0;
  while (i < acknowledged.length && i < logged.length && JSON.stringify(acknowledged[i]) === JSON.stringify(logged[i])) i++;
  return i;
}

/** Why the worker's record disagrees with the games in the database, or null. */
function workerDisagreement(worker: WorkerRecord, played: readonly WorkerGame[], database: SoakInput['database']): string | null {
  if (worker.games.inProgress !== 0) return `${worker.games.inProgress} game(s) still in progress`;
  let points = 0;
  for (const game of played) {
    const copy = database.get(game.gameId);
    if (!copy) return `its game ${game.gameId} is not in the database`;
    if (game.endedAt === null) return `its game ${game.gameId} has not ended in its record`;
    if (copy.record.endedAt === null) return `its game ${game.gameId} has ended in its record but not in the database`;
    points += copy.record.score;
  }
  if (worker.games.played !== played.length) return `${worker.games.played} games played in its record, ${played.length} games listed`;
  if (worker.games.points !== points) return `${worker.games.points} points in its record, ${points} in its games' logs`;
  return null;
}
