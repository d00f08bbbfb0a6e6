/**
 * The arms report's figures on games with scores (self-play games between the scripted leader and
 * the heuristic follower, given a study and an arm in their headers): the mean and its interval,
 * how games ended, the differences between arms, and the logs it leaves out.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { armsCsv, studyReport, type StudyReport } from '../../cli/study/report';
import { playAgentGame } from '../../shared/agents/agentGame';
import { startFollower, startLeader } from '../../shared/agents/node/registry';
import { bootstrapInterval, DEFAULT_BOOTSTRAP } from '../../shared/eval/bootstrap';
import type { LogLine } from '../../shared/log/format';
import { parseLog } from '../../shared/log/replay';
import { serializeLine } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import { loadStudyFile } from '../../server/study/loadStudy';
import type { LogFile } from '../../server/study/gameLogs';
import type { Study } from '../../shared/study/studyFile';
import { setPath, studyFolder, validStudy, writeStudy } from './fixtures';

jest.setTimeout(60_000);

const BOOTSTRAP = { ...DEFAULT_BOOTSTRAP, resamples: 2000 };
let dir: string;
let study: Study;
/** Six games' logs (seeds 1 to 6) as texts, each to be given an arm. */
const texts: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-report-'));
  const data = setPath(validStudy(), 'roles', { newWorkersStartAs: 'leader', promotion: 'manual' });
  data.arms = [
    { id: 'b', agent: 'heuristic', weight: 1 },
    { id: 'a', agent: 'llm', weight: 1, llm: { model: 'm' } },
  ];
  study = loadStudyFile(writeStudy(studyFolder(join(dir, 'study')), data));
  const leader = await startLeader('scripted', { setting: 'game' });
  const follower = await startFollower('heuristic', { setting: 'game' });
  for (let seed = 1; seed <= 6; seed++) {
    const lines: LogLine[] = [];
    await playAgentGame({ seed, map: generateMap(seed), gameId: `g${seed}`, leader, follower, agents: { leader: { name: 'scripted', spec: 'scripted' }, follower: { name: 'heuristic', spec: 'heuristic' } } }, (line) => lines.push(line));
    texts.push(lines.map((line) => `${serializeLine(line)}\n`).join(''));
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The log `text` with `meta` added to its header (and its end line left out when `open`). */
function logOf(text: string, meta: Record<string, unknown>, open = false): LogFile {
  const [header, ...rest] = text.trim().split('\n');
  const parsed = JSON.parse(header);
  const lines = [JSON.stringify({ ...parsed, meta: { ...parsed.meta, ...meta } }), ...(open ? rest.slice(0, -1) : rest)];
  const withMeta = `${lines.join('\n')}\n`;
  const log = parseLog(withMeta);
  return { header: log.header, end: log.end?.end ?? null, name: log.header.gameId, text: withMeta };
}

const armMeta = (id: string, draw: number) => ({ study: study.id, arm: { id, agent: id === 'a' ? 'llm' : 'heuristic', weight: 1, draw } });
const scoreOf = (text: string) => JSON.parse(text.trim().split('\n').at(-1)!).score as number;
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

describe('the arms report', () => {
  let report: StudyReport;
  beforeAll(() => {
    // Arm a: games 1, 3, 5; arm b: 2, 4, 6 (game 6 still open); a game of another study, and one of an arm the file does not name.
    const logs = [
      ...texts.map((text, i) => logOf(text, armMeta(i % 2 === 0 ? 'a' : 'b', i), i === 5)),
      logOf(texts[0], { study: 'other-study', arm: armMeta('a', 0).arm }),
      logOf(texts[1].replace('"gameId":"g2"', '"gameId":"gone"'), armMeta('retired', 9)),
    ];
    writeCallRecords();
    report = studyReport(study, logs, join(dir, 'llm'), BOOTSTRAP);
  });

  /** Call records for games 1 and 3 of arm a (game 5's are missing): one ok and one failed call, one fallback. Game 3's under the name older runs gave them. */
  function writeCallRecords(): void {
    mkdirSync(join(dir, 'llm'), { recursive: true });
    for (const [game, suffix] of [['g1', 'llm.ndjson'], ['g3', 'llm.jsonl']]) {
      writeFileSync(
        join(dir, 'llm', `${game}.follower.${suffix}`),
        [{ kind: 'llm-header' }, { kind: 'llm-call', status: 'ok', fallback: null }, { kind: 'llm-call', status: 'timeout', fallback: { actions: [] } }].map((line) => JSON.stringify(line)).join('\n') + '\n',
      );
    }
  }

  test("each arm's games, their ends, and the mean score with its bootstrap interval over the ended ones", () => {
    const scores = texts.map(scoreOf);
    expect(new Set(scores).size).toBeGreaterThan(1); // the games differ
    expect(report.arms.map((arm) => arm.id)).toEqual(['b', 'a']); // the study file's order
    const [b, a] = report.arms;
    expect(a).toMatchObject({ games: 3, ended: 3, playedToEnd: 3, abandoned: 0, notEnded: 0, scores: [scores[0], scores[2], scores[4]] });
    expect(b).toMatchObject({ games: 3, ended: 2, playedToEnd: 2, notEnded: 1, scores: [scores[1], scores[3]] });
    expect(a.meanScore).toBeCloseTo(mean([scores[0], scores[2], scores[4]]), 12);
    expect(a.scoreInterval).toEqual(bootstrapInterval(a.scores, BOOTSTRAP));
    expect(a.instructionsPerGame! * 3).toBe(a.gameList.reduce((sum, game) => sum + game.instructions, 0));
    expect(a.followedShare).toBeGreaterThan(0.5);
    expect(a.cancellationRate).toBe(0);
    expect(a.feedback).toEqual({ positive: 0, negative: 0, negativePerPositive: null });
    // The LLM arm's call records: two games found, one missing.
    expect(a.llm).toEqual({ records: 4, byStatus: { ok: 2, timeout: 2 }, failures: { timeout: 2 }, failureRate: 0.5, fallbacks: 2, gamesWithoutRecords: ['g5'] });
    expect(b.llm).toBeNull();
    expect(report.otherGames).toEqual([{ gameId: 'gone', arm: 'retired' }]);
  });

  test("each pair's difference in mean score, with an interval that holds it", () => {
    const [b, a] = report.arms;
    expect(report.differences).toHaveLength(1);
    const [difference] = report.differences;
    expect(difference).toMatchObject({ arm: 'a', minus: 'b' });
    expect(difference.meanDifference).toBeCloseTo(a.meanScore! - b.meanScore!, 12);
    const { low, high } = difference.interval;
    expect(low).toBeLessThanOrEqual(difference.meanDifference);
    expect(high).toBeGreaterThanOrEqual(difference.meanDifference);
    expect(high - low).toBeGreaterThan(0);
    // No resample can lie outside the extremes.
    expect(low).toBeGreaterThanOrEqual(Math.min(...a.scores) - Math.max(...b.scores));
    expect(high).toBeLessThanOrEqual(Math.max(...a.scores) - Math.min(...b.scores));
  });

  test('an arm with no ended game has no mean, no interval and no difference; the CSV leaves its cells empty', () => {
    const onlyA = studyReport(study, [logOf(texts[0], armMeta('a', 0))], join(dir, 'llm'), BOOTSTRAP);
    expect(onlyA.arms[0]).toMatchObject({ id: 'b', games: 0, meanScore: null, scoreInterval: null, followedShare: null });
    expect(onlyA.differences).toEqual([]);
    expect(armsCsv(onlyA).split('\n')[1]).toBe('b,heuristic,1,0,0,0,0,0,0,,,,,,,0,0,,,,,');
  });
});
