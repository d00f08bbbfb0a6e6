/** The report: undefined scores are left out of the means and counted, in JSON, terminal and HTML. */
import { HeuristicAgent, RandomAgent } from '../../shared/agents/builtin';
import { makeConfig } from '../../shared/engine/config';
import type { LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { loadRecording } from '../../shared/eval/recording';
import { METRIC_NAMES, type MetricName } from '../../shared/eval/metrics';
import { aggregate, countUndefined, formatTable, REPORT_VERSION, type EvalReport } from '../../shared/eval/report';
import { DEFAULT_EVAL_OPTIONS, runEpisode, type EpisodeResult, type EvalOptions } from '../../shared/eval/runner';
import { renderHtmlReport } from '../../cli/eval/html';

function singleEpisode(index: number, metrics: Partial<Record<MetricName, number>>): EpisodeResult {
  const all = Object.fromEntries(METRIC_NAMES.map((name) => [name, metrics[name] ?? 0])) as Record<MetricName, number>;
  return {
    episodeId: `g#${index}`,
    gameId: 'g',
    profile: 'cerealbar',
    index,
    instructionId: index,
    text: 'go',
    mode: 'single',
    startEvent: 0,
    error: null,
    actions: ['DONE'],
    limitReached: false,
    single: { cardAccuracy: 1, exactEnvAccuracy: 1, relaxedEnvAccuracy: 1, sequenceAccuracy: 1, metrics: all },
  };
}

function report(episodes: EpisodeResult[], options: EvalOptions = DEFAULT_EVAL_OPTIONS): EvalReport {
  return {
    version: REPORT_VERSION,
    agent: 'test',
    options,
    createdAt: '1970-01-01T00:00:00.000Z',
    logs: ['g.jsonl'],
    skippedLogs: [],
    instructionsCancelled: 0,
    aggregates: aggregate(episodes),
    undefinedCounts: countUndefined(episodes),
    episodes,
  };
}

// Three episodes: one whose follower left the reference's component (NE, ONE, AD, MD infinite), one with a NaN CLS.
const episodes = [
  singleEpisode(0, { NE: 2, AD: 1, CLS: 0.5 }),
  singleEpisode(1, { NE: Infinity, ONE: Infinity, AD: Infinity, MD: Infinity, CLS: 0.25 }),
  singleEpisode(2, { NE: 4, AD: 3, CLS: NaN }),
];

describe('undefined path metrics', () => {
  test('M-37, M-38: are left out of the means and counted, metric by metric', () => {
    const means = aggregate(episodes);
    expect(means.NE).toBe(3);
    expect(means.AD).toBe(2);
    expect(means.CLS).toBe(0.375);
    expect(means.MD).toBe(0);
    expect(means.SR).toBe(0);
    const counts = countUndefined(episodes);
    expect(counts).toMatchObject({ NE: 1, ONE: 1, AD: 1, MD: 1, CLS: 1, SR: 0, SPL: 0, nDTW: 0, cardAccuracy: 0, actionLimitReached: 0 });
    // Every mean has its count, and only means do.
    const averaged = Object.keys(means).filter((name) => !['episodes', 'agentErrors'].includes(name));
    expect(Object.keys(counts).sort()).toEqual(averaged.sort());
  });

  test('M-37: a metric undefined in every episode has no mean, and says so', () => {
    const lost = [singleEpisode(0, { NE: Infinity }), singleEpisode(1, { NE: Infinity })];
    expect(aggregate(lost).NE).toBeNull();
    expect(countUndefined(lost).NE).toBe(2);
  });

  test('M-38: the JSON report keeps the counts next to the means', () => {
    const json = JSON.parse(JSON.stringify(report(episodes)));
    expect(json.version).toBe(2);
    expect(json.aggregates.NE).toBe(3);
    expect(json.undefinedCounts.NE).toBe(1);
    expect(json.undefinedCounts.CLS).toBe(1);
    expect(json.options.cascade).toBe('stop-at-first-failure');
  });

  test('M-40: the terminal table notes every mean that left episodes out', () => {
    const table = formatTable(report(episodes));
    expect(table).toMatch(/^ {2}NE +3 {2}\(1 of 3 episodes undefined, not in the mean\)$/m);
    expect(table).toMatch(/^ {2}CLS +0\.3750 {2}\(1 of 3 episodes undefined, not in the mean\)$/m);
    expect(table).toMatch(/^ {2}SR +0$/m);
  });

  test('M-39: the HTML report shows the count next to each mean and in the histograms', () => {
    const page = renderHtmlReport(report(episodes), 'http://viewer');
    expect(page).toContain('<tr><th>NE</th><td>3</td><td class="undefined">1</td></tr>');
    expect(page).toContain('<tr><th>SR</th><td>0</td><td class="undefined">0</td></tr>');
    expect(page).toContain('<tr><th>episodes</th><td>3</td><td class="undefined"></td></tr>');
    expect(page).toMatch(/NE \(mean 3 over 2; 1 undefined\)/);
  });

  test('M-41: Infinity and NaN are written as null, and a report read back counts the same episodes', () => {
    const written = report(episodes);
    const read: EvalReport = JSON.parse(JSON.stringify(written));
    expect(read.episodes[1].single!.metrics.NE).toBeNull();
    expect(read.episodes[2].single!.metrics.CLS).toBeNull();
    expect(countUndefined(read.episodes)).toEqual(written.undefinedCounts);
    expect(aggregate(read.episodes)).toEqual(written.aggregates);
    expect(formatTable(read)).toBe(formatTable(written));
  });

  test('M-43: the proportion of points is undefined when the recorded game scored nothing: left out and counted', () => {
    const withPoints = (index: number, proportionPoints: number | null): EpisodeResult => ({
      ...singleEpisode(index, {}),
      mode: 'cascaded',
      single: undefined,
      cascaded: {
        cascade: 'stop-at-first-failure',
        instructionsFollowed: 1,
        instructionsPossible: 2,
        proportionFollowed: 0.5,
        pointsScored: proportionPoints === null ? 0 : 2 * proportionPoints,
        pointsPossible: proportionPoints === null ? 0 : 2,
        proportionPoints,
        instructionsCancelled: 0,
        played: [],
      },
    });
    const cascaded = [withPoints(0, 0.5), withPoints(1, null), withPoints(2, 1)];
    const options: EvalOptions = { ...DEFAULT_EVAL_OPTIONS, mode: 'cascaded' };
    expect(aggregate(cascaded)).toMatchObject({ proportionPoints: 0.75, proportionFollowed: 0.5, episodesWithPoints: 2 });
    expect(countUndefined(cascaded)).toMatchObject({ proportionPoints: 1, proportionFollowed: 0 });
    expect(formatTable(report(cascaded, options))).toMatch(/^ {2}proportionPoints +0\.7500 {2}\(1 of 3 episodes undefined, not in the mean\)$/m);
  });
});

describe('evaluating agents on a recorded game', () => {
  test('M-42: no path metric is ever undefined: the agent never leaves the component of the human path', async () => {
    const lines: LogLine[] = [];
    playSelfPlayGame({ seed: 5, map: generateMap(5), config: makeConfig() }, (line) => lines.push(line));
    const recording = loadRecording(lines.map((line) => `${serializeLine(line)}\n`).join(''));
    const results: EpisodeResult[] = [];
    for (const agent of [new RandomAgent(), new HeuristicAgent()]) {
      for (let i = 0; i < recording.instructions.length; i++) results.push(await runEpisode(agent, recording, i, DEFAULT_EVAL_OPTIONS));
    }
    expect(results.length).toBeGreaterThan(20);
    // The agents did wander off the human's path, so this is not trivially true.
    expect(results.some((result) => result.single!.metrics.MD > 0)).toBe(true);
    const counts = countUndefined(results);
    for (const name of METRIC_NAMES) expect([name, counts[name]]).toEqual([name, 0]);
  });
});

describe('the convention is recorded', () => {
  test('the terminal title and the HTML page say which cascade convention was used', () => {
    const cascadedEpisode: EpisodeResult = {
      ...singleEpisode(0, {}),
      mode: 'cascaded',
      single: undefined,
      cascaded: {
        cascade: 'continue',
        instructionsFollowed: 1,
        instructionsPossible: 2,
        proportionFollowed: 0.5,
        pointsScored: 3,
        pointsPossible: 2,
        proportionPoints: 1.5,
        instructionsCancelled: 0,
        played: [],
      },
    };
    const options: EvalOptions = { ...DEFAULT_EVAL_OPTIONS, mode: 'cascaded', cascade: 'continue' };
    const r = report([cascadedEpisode], options);
    expect(formatTable(r)).toMatch(/^test, cascaded evaluation \(continue after failures, not the paper\), 1 episodes/);
    expect(formatTable(r)).toMatch(/proportionPoints +1\.5000$/m);
    expect(renderHtmlReport(r, 'http://viewer')).toContain('cascaded evaluation (continue after failures, not the paper)');
    expect(formatTable(report([cascadedEpisode], { ...options, cascade: 'stop-at-first-failure' }))).toMatch(/cascaded evaluation \(stop at first failure\)/);
  });
});
