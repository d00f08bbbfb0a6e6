/**
 * The bonus sheets, from logged games: each game's final score counts for each worker seated in
 * it; Prolific's sheet has a line per participant, MTurk's a row per assignment, and a worker's
 * amounts add up to the bonus of all its points (cap and rounding applied once).
 */
import type { LogEnd, LogHeader } from '../../shared/log/format';
import { bonusCsv, bonusSheet, type LoggedGame } from '../../shared/study/bonusSheet';
import { validStudy } from './fixtures';
import { studyFileSchema } from '../../shared/study/studyFile';

const study = studyFileSchema.parse({ ...validStudy(), pay: { base: 1, bonusPerPoint: 0.25, maxBonus: 2, currency: 'USD' }, platform: { kind: 'mturk' } });

function game(gameId: string, startedAt: string, score: number | null, seats: { workerId?: string; assignmentId?: string; kind?: string }[], studyId = study.id): LoggedGame {
  const players = seats.map((seat) => ({ role: 'leader', playerId: 'p', kind: 'human', ...seat }));
  return {
    header: { gameId, startedAt, meta: { source: 'server', study: studyId, players } } as unknown as LogHeader,
    end: score === null ? null : ({ kind: 'end', score } as unknown as LogEnd),
  };
}

const games = [
  game('g2', '2026-03-01T10:05:00.000Z', 3, [{ workerId: 'A', assignmentId: 'A-1' }, { workerId: 'B', assignmentId: 'B-1' }]),
  game('g1', '2026-03-01T10:00:00.000Z', 2, [{ workerId: 'A', assignmentId: 'A-1' }, { workerId: 'C', assignmentId: 'C-1' }]),
  game('g3', '2026-03-01T11:00:00.000Z', 4, [{ workerId: 'A', assignmentId: 'A-2' }, { kind: 'bot' }]),
  game('g4', '2026-03-01T12:00:00.000Z', null, [{ workerId: 'B', assignmentId: 'B-2' }]),
  game('x1', '2026-03-01T12:00:00.000Z', 9, [{ workerId: 'A', assignmentId: 'A-3' }], 'other-study'),
  game('z0', '2026-03-01T09:00:00.000Z', 0, [{ workerId: 'D', assignmentId: 'D-1' }]),
];

test("P-102: MTurk's sheet pays each assignment the increase its games bring, up to the cap", () => {
  const sheet = bonusSheet(study, games, 'mturk');
  expect(sheet.unfinished).toEqual(['g4']);
  expect(sheet.rows.map((row) => [row.participantId, row.assignmentId, row.games.map((g) => g.gameId), row.points, row.amount])).toEqual([
    ['D', 'D-1', ['z0'], 0, 0],
    ['A', 'A-1', ['g1', 'g2'], 5, 1.25],
    ['C', 'C-1', ['g1'], 2, 0.5],
    ['B', 'B-1', ['g2'], 3, 0.75],
    // 9 points would be 2.25: the cap of 2 leaves 0.75 for this assignment.
    ['A', 'A-2', ['g3'], 4, 0.75],
  ]);
  expect(bonusCsv(sheet, 'mturk', 'A game, with cards').split('\n')).toEqual([
    'workerId,assignmentId,bonusAmount,reason,uniqueRequestToken',
    'A,A-1,1.25,"A game, with cards: 5 points in 2 games (g1 g2)",pilot-1-A-1',
    'C,C-1,0.50,"A game, with cards: 2 points in 1 game (g1)",pilot-1-C-1',
    'B,B-1,0.75,"A game, with cards: 3 points in 1 game (g2)",pilot-1-B-1',
    'A,A-2,0.75,"A game, with cards: 4 points in 1 game (g3)",pilot-1-A-2',
    '',
  ]);
});

test("P-102: Prolific's sheet has one line per participant, no header, nothing for a zero bonus", () => {
  const sheet = bonusSheet(study, games, 'prolific');
  expect(sheet.rows.map((row) => [row.participantId, row.assignmentId, row.points, row.amount])).toEqual([
    ['D', null, 0, 0],
    ['A', null, 9, 2],
    ['C', null, 2, 0.5],
    ['B', null, 3, 0.75],
  ]);
  expect(bonusCsv(sheet, 'prolific', study.title)).toBe('A,2.00\nC,0.50\nB,0.75\n');
});
