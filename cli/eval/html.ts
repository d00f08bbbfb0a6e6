/**
 * A self-contained HTML evaluation report: the aggregates, histograms of each score, per-game
 * curves over the instructions, and every episode with a link to its place in the replay viewer.
 * Plots are inline SVG; nothing is loaded from elsewhere. All text from logs is escaped.
 */
import { describeCost, describeLlmSettings } from '../../shared/eval/llmSummary';
import { describeCancelled, describeMode, describePointsPossible, describeProfiles, type EvalReport } from '../../shared/eval/report';
import type { EpisodeResult } from '../../shared/eval/runner';

export const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const fmt = (value: number | null | undefined) => (value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : Number.isInteger(value) ? String(value) : value.toFixed(3));

/** The per-episode scores to plot, by name; null (or a non-finite number) where a score is undefined. */
function scores(episode: EpisodeResult): Record<string, number | null> {
  if (episode.single) {
    const { metrics, ...rest } = episode.single;
    return { ...rest, ...metrics };
  }
  const c = episode.cascaded!;
  return { proportionFollowed: c.proportionFollowed, proportionPoints: c.proportionPoints };
}

const isDefined = (value: number | null | undefined): value is number => typeof value === 'number' && Number.isFinite(value);

/** A histogram of the defined values; the caption gives their mean and how many were undefined. */
function histogram(name: string, values: (number | null)[]): string {
  const finite = values.filter(isDefined);
  const undefinedCount = values.length - finite.length;
  const note = `${undefinedCount} undefined`;
  if (finite.length === 0) return `<p>${escape(name)}: no defined value (${note})</p>`;
  const min = Math.min(0, ...finite);
  const max = Math.max(1, ...finite);
  const bins = new Array(10).fill(0);
  for (const v of finite) bins[Math.min(9, Math.floor(((v - min) / (max - min || 1)) * 10))]++;
  const top = Math.max(...bins);
  const bars = bins
    .map((count, i) => {
      const h = (count / top) * 80;
      return `<rect x="${10 + i * 22}" y="${90 - h}" width="20" height="${h}" fill="#4a7bd0"><title>${count}</title></rect>`;
    })
    .join('');
  return `<figure><svg viewBox="0 0 240 110" width="240" height="110">${bars}<line x1="10" y1="90" x2="230" y2="90" stroke="#333"/><text x="10" y="105" font-size="9">${fmt(min)}</text><text x="200" y="105" font-size="9">${fmt(max)}</text></svg><figcaption>${escape(name)} (mean ${fmt(finite.reduce((a, b) => a + b, 0) / finite.length)} over ${finite.length}; ${note})</figcaption></figure>`;
}

/** The LLM follower's settings, counts and call records. */
function llmSection(llm: NonNullable<EvalReport['llm']>): string {
  const failures = Object.entries(llm.failures).map(([status, n]) => `${n} ${status}`).join(', ') || 'none';
  return (
    `<h2>LLM follower</h2><p class="llm-settings">${llm.settings ? escape(describeLlmSettings(llm.settings)) : 'no call made'}</p>` +
    `<table><tr><th>calls</th><th>failures by status</th><th>fallbacks</th><th>HTTP retries</th><th>tokens (prompt + completion)</th><th>tokens per episode</th><th>cost</th><th>latency ms (mean / max)</th><th>call records</th></tr>` +
    `<tr><td>${llm.calls}</td><td>${escape(failures)}</td><td>${llm.fallbacks}</td><td>${llm.httpRetries}</td><td>${llm.tokens.prompt} + ${llm.tokens.completion}</td><td>${fmt(llm.tokensPerEpisode)}</td><td class="cost">${describeCost(llm.cost, llm.costPerEpisode, 'an episode')}</td>` +
    `<td>${fmt(llm.latencyMs.mean)} / ${fmt(llm.latencyMs.max)}</td><td><a href="${escape(llm.records)}/">${llm.records === '.' ? 'beside this report' : escape(llm.records)}</a></td></tr></table>`
  );
}

/** One line per game: the headline score over the game's instructions. */
function perGameCurves(episodes: readonly EpisodeResult[], score: string): string {
  const games = new Map<string, EpisodeResult[]>();
  for (const e of episodes) games.set(e.gameId, [...(games.get(e.gameId) ?? []), e]);
  const longest = Math.max(1, ...[...games.values()].map((g) => g.length));
  const lines = [...games.entries()]
    .map(([gameId, list], n) => {
      const points = list.map((e, i) => `${20 + (i / Math.max(1, longest - 1)) * 560},${200 - (scores(e)[score] ?? 0) * 180}`).join(' ');
      return `<polyline points="${points}" fill="none" stroke="hsl(${(n * 67) % 360} 60% 45%)" stroke-width="1.5"><title>${escape(gameId)}</title></polyline>`;
    })
    .join('');
  return `<figure><svg viewBox="0 0 600 220" width="600" height="220"><line x1="20" y1="200" x2="580" y2="200" stroke="#333"/><line x1="20" y1="20" x2="20" y2="200" stroke="#333"/>${lines}</svg><figcaption>${escape(score)} by instruction, one line per game</figcaption></figure>`;
}

export function renderHtmlReport(report: EvalReport, viewerUrl: string): string {
  const headline = report.options.mode === 'single' ? 'cardAccuracy' : 'proportionFollowed';
  const names = [...new Set(report.episodes.flatMap((e) => Object.keys(scores(e))))];
  // Every mean shows how many episodes had no defined value for it (left out of the mean).
  const undefinedCounts = report.undefinedCounts ?? {};
  const aggregates = Object.entries(report.aggregates)
    .map(([name, value]) => {
      const count = undefinedCounts[name];
      return `<tr><th>${escape(name)}</th><td>${fmt(value)}</td><td class="undefined">${count === undefined ? '' : String(count)}</td></tr>`;
    })
    .join('');
  const rows = report.episodes
    .map((e) => {
      const link = `${viewerUrl}?game=${encodeURIComponent(e.gameId)}&event=${e.startEvent}`;
      return `<tr${e.error ? ' class="error"' : ''}><td><a href="${escape(link)}">${escape(e.episodeId)}</a></td><td>${escape(e.text)}</td><td>${escape(e.actions.join(' '))}</td><td>${fmt(scores(e)[headline])}</td><td>${escape(e.error ?? '')}</td></tr>`;
    })
    .join('\n');
  const skipped = report.skippedLogs.map((s) => `<li>${escape(s.file)}: ${escape(s.error)}</li>`).join('');
  const points = describePointsPossible(report.episodes);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>CerealBar evaluation: ${escape(report.agent)}</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: left; vertical-align: top; }
figure { display: inline-block; margin: 0 1em 1em 0; } figcaption { font-size: 12px; }
tr.error td { background: #fde8e8; }
</style></head><body>
<h1>Evaluation of ${escape(report.agent)}</h1>
<p>${escape(describeMode(report.options))}, at most ${report.options.maxActions} actions per instruction, d<sub>th</sub> = ${report.options.successThreshold}; ${report.episodes.length} episodes from ${report.logs.length} logs; rules: ${escape(describeProfiles(report.episodes))}; ${escape(report.createdAt)}.</p>
<h2>Aggregates</h2><table><tr><th>score</th><th>mean</th><th>undefined (episodes not in the mean)</th></tr>${aggregates}</table>
${points ? `<p class="points">${escape(points)}</p>` : ''}
${report.instructionsCancelled > 0 ? `<p class="cancelled">${escape(describeCancelled(report.instructionsCancelled))}</p>` : ''}
${report.llm ? llmSection(report.llm) : ''}
${skipped ? `<h2>Skipped logs</h2><ul>${skipped}</ul>` : ''}
<h2>Distributions</h2>
${names.map((name) => histogram(name, report.episodes.flatMap((e) => (name in scores(e) ? [scores(e)[name]] : [])))).join('\n')}
<h2>Per game</h2>
${perGameCurves(report.episodes, headline)}
<h2>Episodes</h2>
<table><tr><th>episode</th><th>instruction</th><th>agent actions</th><th>${escape(headline)}</th><th>error</th></tr>
${rows}
</table>
</body></html>
`;
}
