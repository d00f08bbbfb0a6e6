/**
 * The agent-vs-agent report as a self-contained HTML page: the pairs with their figures, each
 * pair's mean score and interval drawn on one axis with every game's score, the scores seed by
 * seed (the pairs share seeds), the differences from the first pair, the LLM seats' counts, and
 * every game linked to its log. Inline SVG; nothing loaded from elsewhere; all text escaped.
 */
import { describeCost, describeLlmSettings } from '../../shared/eval/llmSummary';
import { comparedUnit, describeGames, seatName, type PairResult, type PairsReport } from '../../shared/eval/pairs';
import { escape, fmt } from './html';

const hue = (index: number) => `hsl(${((index - 1) * 137) % 360} 60% 42%)`;

/** One row per pair: a dot per game, the mean as a bar and its interval as a line. */
function intervalPlot(pairs: readonly PairResult[], level: number): string {
  const scores = pairs.flatMap((p) => p.games.map((g) => g.score));
  const top = Math.max(1, ...scores, ...pairs.map((p) => p.summary.scoreInterval.high));
  const x = (score: number) => 120 + (score / top) * 460;
  const rows = pairs
    .map((p, row) => {
      const y = 25 + row * 34;
      const { low, high } = p.summary.scoreInterval;
      // Scores are whole points: games spread over four lines below the interval, so equal scores stay visible.
      const dots = p.games.map((g, i) => `<circle cx="${x(g.score)}" cy="${y + 7 + (i % 4) * 2}" r="2" fill="${hue(p.index)}" opacity="0.5"><title>seed ${g.seed}: ${g.score}</title></circle>`).join('');
      return (
        `<text x="5" y="${y + 4}" font-size="11">${escape(`${p.index}. ${p.leader.name} : ${p.follower.name}`)}</text>${dots}` +
        `<line x1="${x(low)}" y1="${y}" x2="${x(high)}" y2="${y}" stroke="${hue(p.index)}" stroke-width="2"><title>${Math.round(level * 100)}% interval ${fmt(low)} to ${fmt(high)}</title></line>` +
        `<line x1="${x(p.summary.meanScore)}" y1="${y - 6}" x2="${x(p.summary.meanScore)}" y2="${y + 6}" stroke="#000" stroke-width="2"><title>mean ${fmt(p.summary.meanScore)}</title></line>`
      );
    })
    .join('');
  const height = 40 + pairs.length * 34;
  return (
    `<figure><svg viewBox="0 0 600 ${height}" width="600" height="${height}">${rows}` +
    `<line x1="120" y1="${height - 12}" x2="580" y2="${height - 12}" stroke="#333"/><text x="120" y="${height - 1}" font-size="9">0</text><text x="560" y="${height - 1}" font-size="9">${fmt(top)}</text></svg>` +
    `<figcaption>Score per game (dots), the mean (black bar) and its ${Math.round(level * 100)}% bootstrap interval (line), one row per pair</figcaption></figure>`
  );
}

/** The scores seed by seed, one line per pair: the same seeds, the same maps. */
function bySeedPlot(pairs: readonly PairResult[]): string {
  const seeds = [...new Set(pairs.flatMap((p) => p.games.map((g) => g.seed)))].sort((a, b) => a - b);
  const top = Math.max(1, ...pairs.flatMap((p) => p.games.map((g) => g.score)));
  const x = (seed: number) => 20 + (seeds.indexOf(seed) / Math.max(1, seeds.length - 1)) * 560;
  const lines = pairs
    .map((p) => {
      const points = p.games.map((g) => `${x(g.seed)},${200 - (g.score / top) * 180}`).join(' ');
      return `<polyline points="${points}" fill="none" stroke="${hue(p.index)}" stroke-width="1.5"><title>${escape(p.label)}</title></polyline>`;
    })
    .join('');
  return (
    `<figure><svg viewBox="0 0 600 220" width="600" height="220"><line x1="20" y1="200" x2="580" y2="200" stroke="#333"/><line x1="20" y1="20" x2="20" y2="200" stroke="#333"/>` +
    `<text x="22" y="215" font-size="9">seed ${seeds[0]}</text><text x="530" y="215" font-size="9">seed ${seeds[seeds.length - 1]}</text><text x="24" y="28" font-size="9">${top}</text>${lines}</svg>` +
    `<figcaption>Score by seed, one line per pair (colours as in the table)</figcaption></figure>`
  );
}

function pairRows(pairs: readonly PairResult[]): string {
  return pairs
    .map((p) => {
      const s = p.summary;
      return (
        `<tr><td style="color:${hue(p.index)}">${p.index}</td><td>${escape(seatName(p, 'leader'))}<br><small>${escape(p.leader.spec)}</small></td><td>${escape(seatName(p, 'follower'))}<br><small>${escape(p.follower.spec)}</small></td>` +
        `<td>${s.games}</td><td><b>${fmt(s.meanScore)}</b></td><td>${fmt(s.scoreInterval.low)} to ${fmt(s.scoreInterval.high)}${warning(s.intervalWarning)}</td><td>${fmt(s.minScore)} to ${fmt(s.maxScore)}</td>` +
        `<td>${fmt(s.instructionsPerGame)}</td><td>${fmt(s.doneShare)}</td><td>${fmt(s.stepsPerInstruction)}</td><td>${s.refused.leader} / ${s.refused.follower}</td></tr>`
      );
    })
    .join('\n');
}

/** An interval's warning under it, marked so that no one reads a bare interval as certain. */
const warning = (text: string | null) => (text ? `<br><small class="warning">⚠ ${escape(text)}</small>` : '');

function llmRows(pairs: readonly PairResult[]): string {
  return pairs
    .flatMap((p) =>
      (['leader', 'follower'] as const).flatMap((role) => {
        const llm = p.llm[role];
        if (!llm) return [];
        const failures = Object.entries(llm.failures).map(([status, n]) => `${n} ${status}`).join(', ') || 'none';
        const fallbacks = Object.entries(llm.fallbacksBy).map(([status, n]) => `${n} after ${status}`).join(', ');
        return [
          `<tr><td>${p.index}</td><td>${role}</td><td>${llm.calls}</td><td class="failures">${escape(failures)}</td><td>${llm.fallbacks}${fallbacks ? ` (${escape(fallbacks)})` : ''}</td><td>${llm.httpRetries}</td>` +
            `<td>${llm.tokens.prompt} + ${llm.tokens.completion}</td><td>${fmt(llm.tokensPerGame)}</td><td class="cost">${describeCost(llm.cost, llm.costPerGame, 'a game')}</td><td>${fmt(llm.latencyMs.mean)} / ${fmt(llm.latencyMs.max)}</td><td><a href="${escape(llm.records)}/">${escape(llm.records)}</a></td><td><small>${llm.settings ? escape(describeLlmSettings(llm.settings)) : 'no call made'}</small></td></tr>`,
        ];
      }),
    )
    .join('\n');
}

export function renderPairsHtml(report: PairsReport): string {
  const b = report.bootstrap;
  const level = Math.round(b.level * 100);
  const differences = report.differences
    .map((d) => `<tr><td>${d.pair} − ${d.against}</td><td><b>${fmt(d.meanDifference)}</b></td><td>${fmt(d.interval.low)} to ${fmt(d.interval.high)}${warning(d.intervalWarning)}</td><td>${d.wins} / ${d.ties} / ${d.losses}</td></tr>`)
    .join('');
  const llm = llmRows(report.pairs);
  const games = report.pairs
    .map(
      (p) =>
        `<h3>Pair ${p.index}: ${escape(p.label)}</h3><table><tr><th>seed</th><th>log</th><th>score</th><th>instructions</th><th>done</th><th>steps on done</th><th>refused (leader / follower)</th></tr>` +
        p.games.map((g) => `<tr><td>${g.seed}</td><td><a href="${escape(g.log)}">${escape(g.gameId)}</a></td><td>${g.score}</td><td>${g.instructions}</td><td>${g.done}</td><td>${g.stepsOnDone}</td><td>${g.refused.leader} / ${g.refused.follower}</td></tr>`).join('') +
        `</table>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>CerealBar agent-vs-agent evaluation</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 1em; } td, th { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
.warning { color: #a40; }
figure { display: inline-block; margin: 0 1em 1em 0; } figcaption { font-size: 12px; } small { color: #666; }
</style></head><body>
<h1>Agent-vs-agent evaluation</h1>
<p>${report.pairs.length} pairs, ${describeGames(report)} (every pair plays the same seeds, so the same maps); ${escape(report.createdAt)}.
Score intervals: ${level}% percentile bootstrap over the games, ${b.resamples} resamples, seed ${b.seed}.</p>
<h2>Pairs</h2>
<table><tr><th>pair</th><th>leader</th><th>follower</th><th>games</th><th>mean score</th><th>${level}% interval</th><th>min to max</th><th>instructions per game</th><th>DONE share</th><th>steps per instruction</th><th>refused (leader / follower)</th></tr>
${pairRows(report.pairs)}
</table>
${intervalPlot(report.pairs, b.level)}
${bySeedPlot(report.pairs)}
${differences ? `<h2>Against pair 1, seed by seed</h2><table><tr><th>pairs</th><th>mean difference</th><th>${level}% interval</th><th>${comparedUnit(report)} more / same / less</th></tr>${differences}</table>` : ''}
${llm ? `<h2>LLM seats</h2><table><tr><th>pair</th><th>seat</th><th>calls</th><th>failures by status</th><th>fallbacks</th><th>HTTP retries</th><th>tokens (prompt + completion)</th><th>tokens per game</th><th>cost</th><th>latency ms (mean / max)</th><th>call records</th><th>settings</th></tr>${llm}</table>` : ''}
<h2>Games</h2>
${games}
</body></html>
`;
}
