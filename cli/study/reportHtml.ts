/**
 * A study's arms report as a self-contained HTML page: the per-arm table, each arm's score
 * distribution (a bar per score, the mean and its interval drawn over it, on one scale for every
 * arm), the pairs' differences and the LLM arms' calls. Inline SVG; nothing loaded from
 * elsewhere; every text from the study file or the logs escaped.
 */
import { escape, fmt } from '../eval/html';
import type { ArmSummary, StudyReport } from './report';

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

function armRows(report: StudyReport): string {
  return report.arms
    .map((arm, i) => {
      const ci = arm.scoreInterval ? `${fmt(arm.scoreInterval.low)} to ${fmt(arm.scoreInterval.high)}` : 'n/a';
      const failures = arm.llm ? Object.entries(arm.llm.failures).map(([status, n]) => `${n} ${status}`).join(', ') || 'none' : '';
      return (
        `<tr><td style="color:${hue(i)}"><b>${escape(arm.id)}</b></td><td><code>${escape(arm.agent)}</code></td><td>${arm.weight}</td><td>${arm.games}</td><td>${arm.playedToEnd}</td><td>${arm.abandoned}</td><td>${arm.otherEnds}</td><td>${arm.notEnded}</td>` +
        `<td><b>${fmt(arm.meanScore)}</b></td><td>${ci}</td><td>${fmt(arm.instructionsPerGame)}</td><td>${share(arm.followedShare)}</td><td>${share(arm.cancellationRate)}</td>` +
        `<td>${arm.feedback.negative} / ${arm.feedback.positive} = ${fmt(arm.feedback.negativePerPositive)}</td>` +
        `<td>${arm.llm ? `${escape(failures)} of ${arm.llm.records} (${share(arm.llm.failureRate)}); ${arm.llm.fallbacks} fallbacks` : ''}</td></tr>`
      );
    })
    .join('\n');
}

function differenceRows(report: StudyReport): string {
  return report.differences
    .map((d) => `<tr><td>${escape(d.arm)} − ${escape(d.minus)}</td><td><b>${d.meanDifference >= 0 ? '+' : ''}${fmt(d.meanDifference)}</b></td><td>${fmt(d.interval.low)} to ${fmt(d.interval.high)}</td></tr>`)
    .join('\n');
}

export function studyReportHtml(report: StudyReport): string {
  const level = Math.round(report.bootstrap.level * 100);
  const b = report.bootstrap;
  const without = report.arms.flatMap((arm) => arm.llm?.gamesWithoutRecords ?? []);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Study ${escape(report.study)}: arms</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,th:first-child,td:nth-child(2){text-align:left}th{background:#f3f3f3}figcaption,.note{color:#555;font-size:12px}</style></head>
<body>
<h1>Study ${escape(report.study)}: its arms compared</h1>
<p>The arms play the ${report.armSeat}'s seat. Written ${escape(report.createdAt)}. Figures over each arm's ended games (however they ended); score intervals: percentile bootstrap, ${b.resamples} resamples, seed ${b.seed}, ${level}%. The definitions are in docs/study-arms.md ("The figures").</p>
<table><thead><tr><th>arm</th><th>agent</th><th>weight</th><th>games</th><th>played to the end</th><th>abandoned</th><th>other ends</th><th>not ended</th><th>mean score</th><th>${level}% interval</th><th>instructions a game</th><th>followed</th><th>cancelled</th><th>negative / positive feedback</th><th>LLM call failures</th></tr></thead>
<tbody>
${armRows(report)}
</tbody></table>
${distributions(report.arms, level)}
<h2>Differences in mean score</h2>
${report.differences.length === 0 ? '<p>Fewer than two arms with ended games.</p>' : `<table><thead><tr><th>arms</th><th>difference</th><th>${level}% interval</th></tr></thead><tbody>\n${differenceRows(report)}\n</tbody></table>`}
<p class="note">Each difference is the second arm's mean score minus the first's; its interval resamples both arms' games independently (the arms' games are different games).</p>
${without.length > 0 ? `<p class="note">LLM games whose call records were not found (not counted in the failures): ${without.map(escape).join(', ')}</p>` : ''}
${report.otherGames.length > 0 ? `<p class="note">Games of the study with no arm of the study file, not counted: ${report.otherGames.map((game) => escape(game.gameId)).join(', ')}</p>` : ''}
</body></html>
`;
}
