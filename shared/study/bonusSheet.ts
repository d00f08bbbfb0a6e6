/**
 * The bonus sheets a researcher uploads to pay a study's bonuses, computed from the game logs
 * alone: each game's final score counts for each worker seated in it (the log's header names the
 * study and the seats' workers), so every amount is traceable to the games it was paid for.
 *
 * Prolific's bulk bonus takes "participant id,amount" lines, one per participant. MTurk pays a
 * bonus per assignment (SendBonus: WorkerId, AssignmentId, BonusAmount, Reason, UniqueRequestToken),
 * so its sheet has a row per assignment, holding the games played in it.
 */
import type { LogEnd, LogHeader } from '../log/format';
import { bonusFor } from './bonus';
import { csvField, csvLine } from './csv';
import type { StudyFile } from './studyFile';

/** Amounts to the cent, as formatAmount writes them. */
const AMOUNT_DECIMALS = 2;

/** A logged game, as the sheets need it: its header and its end (null for a game still being played). */
export interface LoggedGame {
  readonly header: LogHeader;
  readonly end: LogEnd | null;
}

export const BONUS_FORMATS = ['prolific', 'mturk'] as const;
export type BonusFormat = (typeof BONUS_FORMATS)[number];

/** One payment: a participant (and, on MTurk, an assignment), the games it is for and the amount. */
export interface BonusRow {
  readonly participantId: string;
  /** MTurk's assignment the games were played in; null on Prolific's sheet. */
  readonly assignmentId: string | null;
  readonly games: readonly { readonly gameId: string; readonly score: number }[];
  readonly points: number;
  /** In the study's currency, to the cent. */
  readonly amount: number;
}

export interface BonusSheet {
  readonly study: string;
  readonly currency: string;
  readonly rows: readonly BonusRow[];
  /** The study's games not counted because they have not ended. */
  readonly unfinished: readonly string[];
}

interface Seated {
  readonly workerId?: unknown;
  readonly assignmentId?: unknown;
  readonly kind?: unknown;
}

/** The workers seated in a game: humans with a worker id, from the header's `meta.players`. */
function workersOf(header: LogHeader): { workerId: string; assignmentId: string | null }[] {
  const players = Array.isArray(header.meta.players) ? (header.meta.players as Seated[]) : [];
  return players.flatMap((seat) =>
    seat.kind === 'human' && typeof seat.workerId === 'string' ? [{ workerId: seat.workerId, assignmentId: typeof seat.assignmentId === 'string' ? seat.assignmentId : null }] : [],
  );
}

/**
 * The study's sheet in `format`. Rows come in the order of each payee's first game. A worker's
 * amounts add up to bonusFor(all its points), maxBonus included: on MTurk each assignment is paid
 * the increase its games bring, so the cap and the rounding apply once, to the whole.
 */
export function bonusSheet(study: StudyFile, games: readonly LoggedGame[], format: BonusFormat): BonusSheet {
  const ofStudy = games.filter((game) => game.header.meta.study === study.id).sort((a, b) => a.header.startedAt.localeCompare(b.header.startedAt) || a.header.gameId.localeCompare(b.header.gameId));
  const unfinished = ofStudy.filter((game) => game.end === null).map((game) => game.header.gameId);
  const payees = new Map<string, { participantId: string; assignmentId: string | null; games: { gameId: string; score: number }[] }>();
  for (const game of ofStudy) {
    if (game.end === null) continue;
    for (const seat of workersOf(game.header)) {
      const assignmentId = format === 'mturk' ? seat.assignmentId : null;
      const key = JSON.stringify([seat.workerId, assignmentId]);
      let payee = payees.get(key);
      if (!payee) payees.set(key, (payee = { participantId: seat.workerId, assignmentId, games: [] }));
      payee.games.push({ gameId: game.header.gameId, score: game.end.score });
    }
  }
  const pointsSoFar = new Map<string, number>();
  const rows: BonusRow[] = [...payees.values()].map((payee) => {
    const points = payee.games.reduce((sum, game) => sum + game.score, 0);
    const before = pointsSoFar.get(payee.participantId) ?? 0;
    pointsSoFar.set(payee.participantId, before + points);
    const amount = Math.round((bonusFor(study.pay, before + points) - bonusFor(study.pay, before)) * 100) / 100;
    return { ...payee, points, amount };
  });
  return { study: study.id, currency: study.pay.currency, rows, unfinished };
}

/**
 * The sheet as the site takes it; rows with nothing to pay are left out. Prolific: no header,
 * "id,amount" lines. MTurk: a header, then one row per assignment with the reason naming the
 * games, and a request token that makes paying the same row twice harmless.
 */
export function bonusCsv(sheet: BonusSheet, format: BonusFormat, title: string): string {
  const paid = sheet.rows.filter((row) => row.amount > 0);
  // Ids and the reason are text, neutralised against formulas (a lab's ids are typed by participants); amounts are numbers (csv.ts).
  if (format === 'prolific') return paid.map((row) => csvLine([csvField(row.participantId), csvField(row.amount, AMOUNT_DECIMALS)])).join('');
  const lines = ['workerId,assignmentId,bonusAmount,reason,uniqueRequestToken'];
  for (const row of paid) {
    const reason = `${title}: ${row.points} point${row.points === 1 ? '' : 's'} in ${row.games.length} game${row.games.length === 1 ? '' : 's'} (${row.games.map((game) => game.gameId).join(' ')})`;
    lines.push([csvField(row.participantId), csvField(row.assignmentId), csvField(row.amount, AMOUNT_DECIMALS), csvField(reason), csvField(`${sheet.study}-${row.assignmentId ?? row.participantId}`)].join(','));
  }
  return `${lines.join('\n')}\n`;
}
