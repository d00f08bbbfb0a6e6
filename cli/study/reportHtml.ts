/**
 * A study's arms report as a self-contained HTML page: the per-arm tables (scores; draws,
 * participants and time), each arm's score distribution (a bar per score, the mean and its
 * interval drawn over it, on one scale for every arm), the pairs' differences with their tests,
 * the sample size a study needs and the LLM arms' calls. Inline SVG; nothing loaded from
 * elsewhere; every text from the study file or the logs escaped.
 */
import type { Interval } from '../../shared/eval/bootstrap';
import { escape, fmt } from '../eval/html';
import { agentFailuresText, drawSourceText, type ArmSummary, type StudyReport } from './report';

const hue = (index: number) => `hsl(${(index * 137) % 360} 60% 42%)`;

/** One row per arm: how many ended games scored each score, with the mean (black) and its interval (line) above. */
function distributions(arms: readonly ArmSummary[], level: number): string {
  const top = Math.max(1, ...arms.flatMap((arm) => arm.scores));
  const width = 560 / (top + 1);
  const x = (score: number) => 130 + score * width;
  const rowHeight = 90;
  const rows = arms
    .map((arm, row) => {
      const y0 = 20 + row * rowHeight;
      const base = y0 + 60;
      const counts = Array.from({ length: top + 1 }, (_, score) => arm.scores.filter((s) => s === score).length);
      const most = Math.max(1, ...counts);
      const bars = counts
        .map((count, score) => (count === 0 ? '' : `<rect x="${x(score) + 1}" y="${base - (count / most) * 50}" width="${width - 2}" height="${(count / most) * 50}" fill="${hue(row)}" opacity="0.7"><title>score ${score}: ${count} game(s)</title></rect>`))
        .join('');
      const mid = (score: number) => x(score) + width / 2;
      const summary =
        arm.meanScore === null || arm.scoreInterval === null
          ? ''
          : `<line x1="${mid(arm.scoreInterval.low)}" y1="${y0 + 2}" x2="${mid(arm.scoreInterval.high)}" y2="${y0 + 2}" stroke="#000" stroke-width="2"><title>${level}% interval ${fmt(arm.scoreInterval.low)} to ${fmt(arm.scoreInterval.high)}</title></line>` +
            `<line x1="${mid(arm.meanScore)}" y1="${y0 - 4}" x2="${mid(arm.meanScore)}" y2="${y0 + 8}" stroke="#000" stroke-width="3"><title>mean ${fmt(arm.meanScore)}</title></line>`;
      return (
        `<text x="5" y="${y0 + 30}" font-size="12">${escape(arm.id)}</text><text x="5" y="${y0 + 45}" font-size="10">${arm.scores.length} ended game(s)</text>` +
        `<line x1="130" y1="${base}" x2="${x(top + 1)}" y2="${base}" stroke="#999"/>${bars}${summary}`
      );
    })
    .join('');
  const height = 40 + arms.length * rowHeight;
  const ticks = Array.from({ length: top + 1 }, (_, score) => score)
    .filter((score) => top <= 20 || score % Math.ceil(top / 20) === 0)
    .map((score) => `<text x="${x(score) + width / 2 - 3}" y="${height - 4}" font-size="9">${score}</text>`)
    .join('');
  return (
    `<figure><svg viewBox="0 0 700 ${height}" width="700" height="${height}" role="img" aria-label="Score distribution per arm">${rows}${ticks}</svg>` +
    `<figcaption>Final scores of each arm's ended games: a bar per score (its height the share of the arm's most frequent score), the mean (black mark) and its ${level}% bootstrap interval (black line) above; one scale for every arm</figcaption></figure>`
  );
}

const share = (value: number | null) => (value === null ? 'n/a' : `${(value * 100).toFixed(1)}%`);

/** An interval's cell: its ends, and the warning that goes with it (intervalWarning) under them. */
const intervalCell = (interval: Interval | null, warning: string | null) =>
  `<td>${interval ? `${fmt(interval.low)} to ${fmt(interval.high)}` : 'n/a'}${warning ? `<br><span class="warn">${escape(warning)}</span>` : ''}</td>`;

function armRows(report: StudyReport): string {
  return report.arms
    .map((arm, i) => {
      const failures = arm.llm ? Object.entries(arm.llm.failures).map(([status, n]) => `${n} ${status}`).join(', ') || 'none' : '';
      return (
        `<tr><td style="color:${hue(i)}"><b>${escape(arm.id)}</b></td><td><code>${escape(arm.agent)}</code></td><td>${arm.weight}</td><td>${arm.games}</td><td>${arm.playedToEnd}</td><td>${arm.abandoned}</td><td>${arm.otherEnds}</td><td>${arm.notEnded}</td>` +
        `<td><b>${fmt(arm.meanScore)}</b></td>${intervalCell(arm.scoreInterval, arm.scoreIntervalWarning)}${intervalCell(arm.scoreIntervalByParticipant, arm.scoreIntervalByParticipantWarning)}<td>${fmt(arm.instructionsPerGame)}</td><td>${share(arm.followedShare)}</td><td>${share(arm.cancellationRate)}</td>` +
        `<td>${arm.feedback.negative} / ${arm.feedback.positive} = ${fmt(arm.feedback.negativePerPositive)}</td>` +
        `<td>${arm.llm ? `${escape(failures)} of ${arm.llm.records} (${share(arm.llm.failureRate)}); ${arm.llm.fallbacks} fallbacks` : ''}</td></tr>`
      );
    })
    .join('\n');
}

/** Each arm's draws (intention to treat) beside its games (per protocol), its participants, time and pay, and its agent. */
function takeUpRows(report: StudyReport): string {
  return report.arms
    .map((arm, i) => {
      const agents = arm.agents.map((agent) => `${escape(agent.name)}${agent.version ? ` ${escape(agent.version)}` : ''}: ${agent.games}`).join('<br>') || 'not recorded';
      return (
        `<tr><td style="color:${hue(i)}"><b>${escape(arm.id)}</b></td><td>${arm.draws}</td><td title="${escape(arm.neverStarted.join(' '))}">${arm.neverStarted.length}</td><td>${arm.games}</td>` +
        `<td>${share(arm.playedToEndShare.ofDraws)}</td><td>${share(arm.playedToEndShare.ofGames)}</td><td>${arm.participants}</td><td>${fmt(arm.minutesPlayed)}</td><td>${fmt(arm.bonusPerMinute)}</td>` +
        `<td>${arm.agentTimeouts}</td><td>${agentFailuresText(arm.agentFailures)}</td><td>${agents}</td></tr>`
      );
    })
    .join('\n');
}

function differenceRows(report: StudyReport): string {
  return report.differences
    .map((d, i) => {
      const c = report.comparisons[i];
      return (
        `<tr><td>${escape(d.arm)} − ${escape(d.minus)}</td><td><b>${d.meanDifference >= 0 ? '+' : ''}${fmt(d.meanDifference)}</b></td>${intervalCell(d.interval, c.warning)}${intervalCell(c.intervalByParticipant, c.warningByParticipant)}` +
        `<td>${fmt(c.pValue)}</td><td>${fmt(c.holmPValue)}</td></tr>`
      );
    })
    .join('\n');
}

function studyFileNote(report: StudyReport): string {
  const file = report.studyFile;
  const from = { 'log headers': 'as the games\' log headers record it', 'study file': 'of the study file given (no log header records one)', unknown: 'not known (no log header records it)' }[file.source];
  const versions = file.inHeaders.length > 1 ? ` The headers hold ${file.inHeaders.length} versions: ${file.inHeaders.map((v) => `<code>${escape(v.sha256)}</code> (${v.games} games)`).join(', ')}.` : '';
  const given = file.source === 'log headers' && file.ofFileGiven !== null && file.ofFileGiven !== file.sha256 ? ` <span class="warn">The study file given is another: <code>${escape(file.ofFileGiven)}</code>.</span>` : '';
  return `<p>Study file SHA-256: <code>${escape(file.sha256 ?? 'n/a')}</code>, ${from}.${versions}${given}</p>`;
}

function sampleSizeSection(report: StudyReport): string {
  const plan = report.sampleSize;
  const needs = plan.forDifferences.map((d) => `<li>${escape(d.arm)} − ${escape(d.minus)}: ${d.difference >= 0 ? '+' : ''}${fmt(d.difference)} needs ${d.gamesPerArm ?? 'n/a'} games per arm</li>`).join('');
  return (
    `<h2>How many games</h2><p>At ${Math.round(plan.power * 100)}% power, two-sided alpha ${fmt(plan.alpha)}${report.differences.length > 1 ? ` (${fmt(1 - report.bootstrap.level)} over ${report.differences.length} pairs)` : ''}, ` +
    `from these games: score SD ${fmt(plan.sd)}, intraclass correlation ${fmt(plan.icc)} over ${fmt(plan.gamesPerParticipant)} games a participant, design effect ${fmt(plan.designEffect)}. ` +
    `The smallest arm's ended games find a difference of ${fmt(plan.detectableDifference)} points.</p>${needs ? `<ul>${needs}</ul>` : ''}` +
    '<p class="note">n = 2 (z<sub>1−α/2</sub> + z<sub>power</sub>)² SD² × design effect / difference², docs/study-arms.md ("How many games").</p>'
  );
}

export function studyReportHtml(report: StudyReport): string {
  const level = Math.round(report.bootstrap.level * 100);
  const b = report.bootstrap;
  const without = report.arms.flatMap((arm) => arm.llm?.gamesWithoutRecords ?? []);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Study ${escape(report.study)}: arms</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,th:first-child,td:nth-child(2){text-align:left}th{background:#f3f3f3}figcaption,.note{color:#555;font-size:12px}.warn{color:#a33;font-size:12px}</style></head>
<body>
<h1>Study ${escape(report.study)}: its arms compared</h1>
<p>The arms play the ${report.armSeat}'s seat. Written ${escape(report.createdAt)}. Figures over each arm's ended games (however they ended); score intervals: percentile bootstrap over games and over participants (each with all its games), ${b.resamples} resamples, seed ${b.seed}, ${level}%. The definitions are in docs/study-arms.md ("The figures").</p>
${studyFileNote(report)}
<table><thead><tr><th>arm</th><th>agent</th><th>weight</th><th>games</th><th>played to the end</th><th>abandoned</th><th>other ends</th><th>not ended</th><th>mean score</th><th>${level}% interval over games</th><th>${level}% interval over participants</th><th>instructions a game</th><th>followed</th><th>cancelled</th><th>negative / positive feedback</th><th>LLM call failures</th></tr></thead>
<tbody>
${armRows(report)}
</tbody></table>
<h2>Draws, participants and time</h2>
<table><thead><tr><th>arm</th><th>draws</th><th>never started</th><th>games</th><th>played to the end, of draws</th><th>played to the end, of games</th><th>participants</th><th>minutes played</th><th>bonus a minute (${escape(report.currency)})</th><th>agent's turns timed out</th><th>agent's failures, as its seat recorded them</th><th>agent: games</th></tr></thead>
<tbody>
${takeUpRows(report)}
</tbody></table>
<p class="note">Draws are the intention-to-treat denominator (a draw whose game never started counts in its arm), games the per-protocol one: ${drawSourceText(report.drawSource)}.</p>
${distributions(report.arms, level)}
<h2>Differences in mean score</h2>
${report.differences.length === 0 ? '<p>Fewer than two arms with ended games.</p>' : `<table><thead><tr><th>arms</th><th>difference</th><th>${level}% interval over games</th><th>${level}% interval over participants</th><th>permutation p</th><th>Holm's p</th></tr></thead><tbody>\n${differenceRows(report)}\n</tbody></table>`}
<p class="note">Each difference is the second arm's mean score minus the first's. Over games, its interval resamples both arms' games independently; over participants, it resamples the participants of either arm, each with its games in both. The p-value is a two-sided permutation test of the arms' labels; Holm's adjusts it over every pair of arms.</p>
${sampleSizeSection(report)}
${without.length > 0 ? `<p class="note">LLM games whose call records were not found (not counted in the failures): ${without.map(escape).join(', ')}</p>` : ''}
${report.mismatchedDraws.length > 0 ? `<p class="warn">Games whose arm is not the study file's draw for their number (the arms changed during the study?): ${report.mismatchedDraws.map(escape).join(', ')}</p>` : ''}
${report.otherGames.length > 0 ? `<p class="note">Games of the study with no arm of the study file, not counted: ${report.otherGames.map((game) => escape(game.gameId)).join(', ')}</p>` : ''}
</body></html>
`;
}
