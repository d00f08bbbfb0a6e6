/**
 * The arms report with the rigour of a trial's: draws never started beside games (intention to
 * treat and per protocol; the draws from the worker store's counts when it is given), participants
 * met, minutes and the bonus a minute, the agent seat's timed-out turns, the failures its seat
 * recorded and the agent's versions, intervals over participants beside those over games, warnings
 * instead of a bare "0 to 0", permutation p-values with Holm's adjustment across three arms, the
 * study file's SHA-256, and the games per arm a study needs. The games are self-play games given a
 * study, an arm and a participant in their headers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatStudyReport, studyReport, type ArmGame, type StudyReport } from '../../cli/study/report';
import { studyReportHtml } from '../../cli/study/reportHtml';
import { gamesPerArm, pilotVariance } from '../../cli/study/sampleSize';
import { DEFAULT_BOOTSTRAP } from '../../shared/eval/bootstrap';
import { clusterBootstrapInterval, clusterDifferenceInterval } from '../../shared/eval/clusterBootstrap';
import { holmAdjusted, permutationPValue } from '../../shared/eval/multipleComparisons';
import type { AgentSeatFact, LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { parseLog } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import type { ArmTotals } from '../../shared/study/overview';
import type { Study } from '../../shared/study/studyFile';
import { armOfDraw } from '../../server/study/arms';
import type { LogFile } from '../../server/study/gameLogs';
import { loadStudyFile } from '../../server/study/loadStudy';
import { setPath, studyFolder, validStudy, writeStudy } from './fixtures';

const BOOTSTRAP = { ...DEFAULT_BOOTSTRAP, resamples: 2000 };
const HASH = 'a'.repeat(64);
const WORKERS = ['W1', 'W2', 'W3', 'W4', 'W5'];
/** Draws 0 to 15: 4 and 9 never started, 12's arm is one the file no longer names. */
const NEVER_STARTED = [4, 9];
const RETIRED_DRAW = 12;

let dir: string;
let study: Study;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-validity-'));
  const data = setPath(validStudy(), 'roles', { newWorkersStartAs: 'leader', promotion: 'manual' });
  data.arms = [
    { id: 'a', agent: 'heuristic', weight: 1 },
    { id: 'b', agent: 'random', weight: 1 },
    { id: 'c', agent: 'heuristic', weight: 1 },
  ];
  // As a study is given to the report without its file's SHA-256: each test adds it when it wants one.
  const { fileSha256: _hash, ...loaded } = loadStudyFile(writeStudy(studyFolder(join(dir, 'study')), data)) as Study & { fileSha256?: string };
  study = loaded;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Draw `draw`'s game: a self-play game (on seed draw + 1 unless given), its header naming the
 * study, the arm (the file's draw, unless `armId` names another), the participant and the agent,
 * with `meta` over it.
 */
function armGame(draw: number, { armId, ...meta }: Record<string, unknown> = {}, seed = draw + 1): LogFile {
  const arm = armId === undefined ? armOfDraw(study.id, study.arms!, draw) : { id: armId as string, agent: 'heuristic', weight: 1 };
  const lines: LogLine[] = [];
  playSelfPlayGame(
    {
      seed,
      map: generateMap(seed),
      gameId: `g${draw}`,
      meta: {
        source: 'server',
        study: study.id,
        studyFileSha256: HASH,
        players: [
          { role: 'leader', playerId: 'p', kind: 'human', workerId: WORKERS[draw % WORKERS.length] },
          { role: 'follower', playerId: 'q', kind: 'bot' },
        ],
        // Arm a's agent was updated after draw 7.
        agents: { follower: { name: arm.agent, version: arm.id === 'a' && draw > 7 ? '1.1' : '1.0', spec: arm.agent } },
        arm: { id: arm.id, agent: arm.agent, weight: arm.weight, draw },
        ...meta,
      },
    },
    (line) => lines.push(line),
  );
  const text = lines.map((line) => `${serializeLine(line)}\n`).join('');
  const log = parseLog(text);
  return { header: log.header, end: log.end?.end ?? null, name: log.header.gameId, text };
}

/** The log with agent seat lines after its header (at time 0, before any event). */
function withSeatLines(log: LogFile, facts: readonly AgentSeatFact[]): LogFile {
  const [header, ...rest] = log.text.trim().split('\n');
  const text = `${[header, ...facts.map((fact) => JSON.stringify({ kind: 'agentSeat', t: 0, ...fact })), ...rest].join('\n')}\n`;
  return { ...log, text };
}

const draws = Array.from({ length: 16 }, (_, draw) => draw).filter((draw) => !NEVER_STARTED.includes(draw));
const logs = () => draws.map((draw) => (draw === RETIRED_DRAW ? armGame(draw, { armId: 'retired' }) : armGame(draw)));
const linesOf = (log: LogFile) => log.text.trim().split('\n').map((line) => JSON.parse(line));
const ended = (arm: StudyReport['arms'][number]) => arm.gameList.filter((game) => game.endReason !== null);
/** The games' scores by participant, in the participants' order. */
const byWorker = (games: readonly ArmGame[]) => new Map(WORKERS.map((worker) => [worker, games.filter((game) => game.workerId === worker).map((game) => game.score)]).filter(([, scores]) => scores.length > 0) as [string, number[]][]);

describe('the arms report, with the rigour of a trial', () => {
  let all: LogFile[];
  let report: StudyReport;
  beforeAll(() => {
    all = logs();
    report = studyReport({ ...study, fileSha256: HASH }, all, join(dir, 'llm'), BOOTSTRAP);
  });

  test('draws never started count in their arm: intention to treat beside per protocol; the game list names the participant, and each arm its participants met', () => {
    const counted = all.filter((log) => log.header.gameId !== `g${RETIRED_DRAW}`);
    for (const arm of report.arms) {
      const own = counted.filter((log) => (log.header.meta as any).arm.id === arm.id);
      const neverStarted = NEVER_STARTED.filter((draw) => armOfDraw(study.id, study.arms!, draw).id === arm.id);
      expect(arm.neverStarted).toEqual(neverStarted);
      expect(arm.draws).toBe(own.length + neverStarted.length);
      expect(arm.games).toBe(own.length);
      expect(arm.playedToEndShare).toEqual({ ofDraws: arm.playedToEnd / arm.draws, ofGames: arm.playedToEnd / arm.games });
      expect(arm.gameList.map((game) => game.workerId)).toEqual(own.map((log) => WORKERS[(log.header.meta as any).arm.draw % WORKERS.length]));
      expect(arm.participants).toBe(new Set(arm.gameList.map((game) => game.workerId)).size);
    }
    expect(report.arms.flatMap((arm) => arm.neverStarted).sort()).toEqual(NEVER_STARTED);
    // The retired arm's game keeps its draw: it is no draw never started.
    expect(report.otherGames).toEqual([{ gameId: `g${RETIRED_DRAW}`, arm: 'retired' }]);
    expect(report.arms.some((arm) => arm.neverStarted.length > 0 && arm.playedToEndShare.ofDraws! < arm.playedToEndShare.ofGames!)).toBe(true);
  });

  test("P-148: given the worker store's draws, each arm's draws are its count, and draws after the last logged one never started", () => {
    // The store made 20 draws: 16 to 19 after the last logged one, and 12 of the retired arm.
    const armOf = (draw: number) => (draw === RETIRED_DRAW ? 'retired' : armOfDraw(study.id, study.arms!, draw).id);
    const drawTotals: ArmTotals[] = ['a', 'b', 'c', 'retired'].map((arm) => {
      const drawn = Array.from({ length: 20 }, (_, draw) => draw).filter((draw) => armOf(draw) === arm);
      const games = drawn.filter((draw) => draws.includes(draw)).length;
      return { arm, drawn: drawn.length, games, live: 0, ended: games, abandoned: 0 };
    });
    const stored = studyReport(study, all, dir, BOOTSTRAP, { drawTotals });
    expect(stored.drawSource).toBe('worker store');
    for (const arm of stored.arms) {
      const totals = drawTotals.find((candidate) => candidate.arm === arm.id)!;
      expect(arm.draws).toBe(totals.drawn);
      expect(arm.neverStarted).toEqual([...NEVER_STARTED, 16, 17, 18, 19].filter((draw) => armOf(draw) === arm.id));
      expect(arm.draws).toBe(arm.games + arm.neverStarted.length);
      expect(arm.playedToEndShare.ofDraws).toBe(arm.playedToEnd / totals.drawn);
    }
    expect(formatStudyReport(stored)).toContain("draws from the worker store's counts");
    expect(studyReportHtml(stored)).toContain("draws from the worker store's counts");
    // From the logs alone, draws after the last logged one are not known.
    expect(report.drawSource).toBe('logs');
    expect(report.arms.flatMap((arm) => arm.neverStarted).sort()).toEqual(NEVER_STARTED);
    expect(formatStudyReport(report)).toContain('draws known from the logs, up to the last logged draw');
  });

  test("P-147: the failures the agent's seat recorded in each game's log, counted for the arm's seat alone", () => {
    const [first, second] = [0, 1].map((draw) => all.find((log) => log.header.gameId === `g${draw}`)!);
    const failed = (reason: 'error' | 'late' | 'refused', role: 'leader' | 'follower' = 'follower') => ({ role, type: 'failed', reason }) as const;
    const logs = [
      withSeatLines(first, [failed('error'), failed('error'), { role: 'follower', type: 'markedDone', instruction: 0 }, failed('late'), failed('error', 'leader')]),
      withSeatLines(second, [failed('refused'), failed('late')]),
    ];
    const seated = studyReport(study, logs, dir, BOOTSTRAP);
    const game = (id: string) => seated.arms.flatMap((arm) => arm.gameList).find((candidate) => candidate.gameId === id)!;
    expect(game('g0').agentFailures).toEqual({ error: 2, refused: 0, late: 1, markedDone: 1 });
    expect(game('g1').agentFailures).toEqual({ error: 0, refused: 1, late: 1, markedDone: 0 });
    for (const arm of seated.arms) {
      const own = arm.gameList.map((candidate) => candidate.agentFailures);
      expect(arm.agentFailures).toEqual({
        error: own.reduce((sum, counts) => sum + counts.error, 0),
        refused: own.reduce((sum, counts) => sum + counts.refused, 0),
        late: own.reduce((sum, counts) => sum + counts.late, 0),
        markedDone: own.reduce((sum, counts) => sum + counts.markedDone, 0),
      });
    }
    const withFailures = seated.arms.find((arm) => arm.gameList.some((candidate) => candidate.gameId === 'g0'))!;
    const { error, refused, late, markedDone } = withFailures.agentFailures;
    expect(formatStudyReport(seated)).toContain(`its seat's failures: errors ${error}, refused ${refused}, late ${late}, instructions marked done ${markedDone}`);
    expect(studyReportHtml(seated)).toContain(`<td>errors ${error}, refused ${refused}, late ${late}, instructions marked done ${markedDone}</td>`);
    // Logs without such lines (older ones, or agents that never failed) count none.
    expect(report.arms.every((arm) => Object.values(arm.agentFailures).every((count) => count === 0))).toBe(true);
  });

  test("minutes played and the bonus a minute; the agent seat's turns that timed out; the agents' versions", () => {
    let followerTimeouts = 0;
    let leaderTimeouts = 0;
    for (const arm of report.arms) {
      const own = all.filter((log) => (log.header.meta as any).arm.id === arm.id).map(linesOf);
      const minutes = own.reduce((sum, lines) => sum + lines.at(-1).t / 60_000, 0);
      const points = own.reduce((sum, lines) => sum + lines.at(-1).score, 0);
      expect(arm.minutesPlayed).toBeCloseTo(minutes, 9);
      expect(arm.bonusPerMinute).toBeCloseTo((study.pay.bonusPerPoint * points) / minutes, 9);
      const timeouts = (role: string) => own.reduce((sum, lines) => sum + lines.filter((line) => line.type === 'timeout' && line.payload.role === role).length, 0);
      expect(arm.agentTimeouts).toBe(timeouts('follower'));
      followerTimeouts += timeouts('follower');
      leaderTimeouts += timeouts('leader');
    }
    // The games have timed-out turns of both seats: only the arm's seat's are counted.
    expect(followerTimeouts).toBeGreaterThan(0);
    expect(leaderTimeouts).toBeGreaterThan(0);
    const a = report.arms.find((arm) => arm.id === 'a')!;
    const versions = (version: string) => a.gameList.filter((game) => (version === '1.1') === game.draw > 7).length;
    expect(a.agents).toEqual([
      { name: 'heuristic', version: '1.0', spec: 'heuristic', games: versions('1.0') },
      { name: 'heuristic', version: '1.1', spec: 'heuristic', games: versions('1.1') },
    ]);
    expect(versions('1.0')).toBeGreaterThan(0);
    expect(versions('1.1')).toBeGreaterThan(0);
    expect(formatStudyReport(report)).toMatch(/agent heuristic 1\.0 \(\d+ games\), heuristic 1\.1 \(\d+ games\), \d+ of its turns timed out/);
  });

  test("each arm's interval over participants (a cluster bootstrap) beside the one over games, each with its warning", () => {
    for (const arm of report.arms) {
      expect(arm.scoreIntervalByParticipant).toEqual(clusterBootstrapInterval([...byWorker(ended(arm)).values()], BOOTSTRAP));
      expect(arm.scoreIntervalWarning).toMatch(/^fewer than 10 games/);
      expect(arm.scoreIntervalByParticipantWarning).toMatch(/^fewer than 10 participants/);
    }
    const text = formatStudyReport(report);
    expect(text).toMatch(/over games \[fewer than 10 games\], .* over participants \[fewer than 10 participants\]/);
    expect(studyReportHtml(report)).toContain('<span class="warn">fewer than 10 participants</span>');
  });

  test("every pair of three arms: its interval over participants, its permutation p-value and Holm's adjustment over the three", () => {
    const [a, b, c] = report.arms;
    const pairs = [[a, b], [a, c], [b, c]] as const;
    expect(report.differences.map((d) => [d.arm, d.minus])).toEqual([['b', 'a'], ['c', 'a'], ['c', 'b']]);
    const pValues = pairs.map(([first, second]) => permutationPValue(first.scores, second.scores, BOOTSTRAP)!);
    expect(report.comparisons.map((comparison) => comparison.pValue)).toEqual(pValues);
    expect(report.comparisons.map((comparison) => comparison.holmPValue)).toEqual(holmAdjusted(pValues));
    expect(holmAdjusted(pValues)).not.toEqual(pValues);
    pairs.forEach(([first, second], i) => {
      const ofFirst = byWorker(ended(first));
      const ofSecond = byWorker(ended(second));
      const clusters = WORKERS.filter((worker) => ofFirst.has(worker) || ofSecond.has(worker)).map((worker) => ({ first: ofFirst.get(worker) ?? [], second: ofSecond.get(worker) ?? [] }));
      expect(report.comparisons[i]).toMatchObject({ arm: second.id, minus: first.id, intervalByParticipant: clusterDifferenceInterval(clusters, BOOTSTRAP) });
      expect(report.comparisons[i]).toMatchObject({
        warning: `${first.id}: fewer than 10 games; ${second.id}: fewer than 10 games`,
        warningByParticipant: `${first.id}: fewer than 10 participants; ${second.id}: fewer than 10 participants`,
      });
    });
    expect(formatStudyReport(report)).toMatch(/b - a: [+-]\d+\.\d\d points a game \(.* over games \[a: fewer than 10 games; b: fewer than 10 games\], .* over participants \[.*\]\); permutation p \d\.\d{4}, Holm \d\.\d{4}/);
  });

  test('the games per arm a study needs, from these games as a pilot: alpha split over the three pairs', () => {
    const pilot = pilotVariance(report.arms.map((arm) => [...byWorker(ended(arm)).values()]));
    const plan = report.sampleSize;
    expect(plan).toMatchObject({ ...pilot, power: 0.8 });
    expect(plan.alpha).toBeCloseTo(0.05 / 3, 12);
    expect(pilot.sd).toBeGreaterThan(0);
    expect(pilot.designEffect).not.toBeNull();
    expect(plan.forDifferences).toEqual(
      report.differences.map((d) => ({ arm: d.arm, minus: d.minus, difference: d.meanDifference, gamesPerArm: gamesPerArm(d.meanDifference, pilot.sd!, pilot.designEffect!, plan.alpha) })),
    );
    expect(formatStudyReport(report)).toMatch(/sample size \(80% power, two-sided alpha 0\.0167 = 0\.05 over 3 pairs\): score SD \d+\.\d\d, .*; \d+ games per arm find a difference of \d+\.\d\d; games per arm: b - a's/);
  });

  test("the study file's SHA-256: from the headers, else the study file given's, else unknown; a change of file is said", () => {
    expect(report.studyFile).toEqual({ sha256: HASH, source: 'log headers', inHeaders: [{ sha256: HASH, games: all.length }], ofFileGiven: HASH });
    const withoutHashes = all.map((log) => armGame(Number(log.header.gameId.slice(1)), { studyFileSha256: undefined }));
    const given = 'b'.repeat(64);
    expect(studyReport({ ...study, fileSha256: given }, withoutHashes, dir, BOOTSTRAP).studyFile).toEqual({ sha256: given, source: 'study file', inHeaders: [], ofFileGiven: given });
    const unknown = studyReport(study, withoutHashes, dir, BOOTSTRAP);
    expect(unknown.studyFile).toMatchObject({ sha256: null, source: 'unknown' });
    expect(formatStudyReport(unknown)).toContain('study file sha256 n/a (not known');
    const changed = studyReport({ ...study, fileSha256: given }, [...all.slice(0, 3), armGame(15, { studyFileSha256: given })], dir, BOOTSTRAP);
    expect(changed.studyFile.inHeaders).toEqual([{ sha256: HASH, games: 3 }, { sha256: given, games: 1 }]);
    expect(formatStudyReport(changed)).toMatch(new RegExp(`study file sha256 ${HASH} \\(from the log headers\\); the headers hold 2 versions: .*; the study file given is another \\(bbbbbbbbbbbb\\)`));
  });

  test("a game whose arm is not the file's draw for its number is named: the arms changed", () => {
    const first = armOfDraw(study.id, study.arms!, 0).id;
    const other = study.arms!.find((arm) => arm.id !== first)!.id;
    const mixed = studyReport(study, [armGame(0, { armId: other }), armGame(1)], dir, BOOTSTRAP);
    expect(mixed.mismatchedDraws).toEqual(['g0']);
    expect(formatStudyReport(mixed)).toContain("1 game(s) whose arm is not the study file's draw for their number (the arms changed?): g0");
  });

  test('constant scores: the interval says so, in the JSON, the table and the page, instead of a bare interval of no width', () => {
    // Every game of every arm is played on one seed: one score.
    const flat = studyReport(study, [0, 1, 2, 3, 5, 6].map((draw) => armGame(draw, {}, 1)), dir, BOOTSTRAP);
    for (const arm of flat.arms.filter((candidate) => candidate.ended > 0)) {
      expect(arm.scoreInterval!.low).toBe(arm.scoreInterval!.high);
      expect(arm.scoreIntervalWarning).toBe('fewer than 10 games; constant scores: no spread to resample');
      expect(arm.scoreIntervalByParticipantWarning).toBe('fewer than 10 participants; constant scores: no spread to resample');
    }
    const text = formatStudyReport(flat);
    // Every interval of no width in the table is followed by its warning.
    for (const match of text.matchAll(/(\d+\.\d\d) to (\d+\.\d\d) over (games|participants)(.?)/g)) if (match[1] === match[2]) expect(match[4]).toBe(' ');
    expect(text).toContain('constant scores: no spread to resample]');
    expect(studyReportHtml(flat)).toContain('constant scores: no spread to resample');
    expect(flat.sampleSize.detectableDifference).toBeNull();
  });
});
