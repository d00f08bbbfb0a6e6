/**
 * Summarises a V8 .cpuprofile (node --cpu-prof): where the time went by kind of code (self time),
 * the functions with the most self time, and the functions with the most total time (self plus
 * callees, each sample counted once per function). Used by `npm run bench:server -- --profile`;
 * also runs alone: `node dist/bench/cpuprofile-summary.js FILE.cpuprofile [--top N]`.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Kinds of code, first match wins (on the script URL, or the function name for V8's own entries). */
const CATEGORIES: readonly [string, (url: string, name: string) => boolean][] = [
  ['idle', (_, name) => name === '(idle)'],
  ['garbage collection', (_, name) => name === '(garbage collector)'],
  ['V8/native (program)', (_, name) => name === '(program)'],
  ['@colyseus/schema (state encoding, views)', (url) => url.includes('/@colyseus/schema/')],
  ['@colyseus/core (rooms, matchmaking, patches)', (url) => url.includes('/@colyseus/core/')],
  ['@colyseus/ws-transport', (url) => url.includes('/@colyseus/ws-transport/')],
  ['ws (websocket frames)', (url) => url.includes('/node_modules/ws/')],
  ['msgpackr (message encoding)', (url) => url.includes('/msgpackr/')],
  ['zod (validation)', (url) => url.includes('/zod/')],
  ['better-sqlite3 (index)', (url) => url.includes('/better-sqlite3/')],
  ['Redis client (ioredis, @colyseus/redis-*)', (url) => /\/node_modules\/(ioredis|redis-parser|@colyseus\/redis-driver|@colyseus\/redis-presence)\//.test(url)],
  ['express / http routing', (url) => /\/node_modules\/(express|router|body-parser|finalhandler|send|serve-static)\//.test(url)],
  ['other node_modules', (url) => url.includes('/node_modules/')],
  ['shared/engine (rules)', (url) => url.includes('/shared/engine/')],
  ['shared/log (recorder)', (url) => url.includes('/shared/log/')],
  ['shared (other)', (url) => url.includes('/shared/')],
  ['server/rooms (room, sync)', (url) => url.includes('/server/rooms/')],
  ['server/store (log files, index)', (url) => url.includes('/server/store/')],
  ['server (other)', (url) => url.includes('/server/')],
  ['node: net/stream/timers internals', (url) => url.startsWith('node:')],
  ['V8 builtins / native (no script)', (url) => url === ''],
];

function categoryOf(url: string, name: string): string {
  for (const [category, matches] of CATEGORIES) if (matches(url, name)) return category;
  return 'other';
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) return url.slice(modules + '/node_modules/'.length);
  const dist = url.lastIndexOf('/dist/');
  if (dist >= 0) return url.slice(dist + '/dist/'.length);
  return url.replace(/^file:\/\//, '');
}

/**
 * A function to report the total time of (self + callees, each sample once): `name` is the
 * function's name ('*' for any), `url` a piece of its script's path. `label` may start with spaces
 * to show nesting.
 */
export interface FocusEntry {
  readonly label: string;
  readonly name: string;
  readonly url: string;
}

export interface SummaryOptions {
  readonly top?: number;
  readonly focus?: readonly FocusEntry[];
  /** Divides the focus times by a count of work units (e.g. actions) to give µs per unit. */
  readonly units?: { readonly count: number; readonly name: string };
}

export interface ProfileSummary {
  readonly totalMs: number;
  readonly busyMs: number;
  readonly categories: { name: string; selfMs: number }[];
  readonly selfTop: { name: string; selfMs: number }[];
  readonly totalTop: { name: string; totalMs: number }[];
  readonly focus: { label: string; totalMs: number }[];
  readonly units?: { readonly count: number; readonly name: string };
}

export function summarizeProfile(profile: CpuProfile, options: SummaryOptions = {}): ProfileSummary {
  const top = options.top ?? 25;
  const focus = options.focus ?? [];
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const keyOf = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    return url === '' ? functionName || '(anonymous)' : `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`;
  };
  const focusOf = new Map<number, number[]>();
  for (const node of profile.nodes) {
    const hits = focus.flatMap((entry, k) =>
      (entry.name === '*' || node.callFrame.functionName === entry.name) && node.callFrame.url.includes(entry.url) ? [k] : [],
    );
    if (hits.length > 0) focusOf.set(node.id, hits);
  }
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const categories = new Map<string, number>();
  const focusUs = new Array<number>(focus.length).fill(0);
  let totalUs = 0;
  let idleUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    // A sample's time is the delta to the next sample.
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (us <= 0) continue;
    totalUs += us;
    const leaf = byId.get(profile.samples[i])!;
    const name = leaf.callFrame.functionName;
    if (name === '(idle)') idleUs += us;
    const leafKey = keyOf(leaf);
    self.set(leafKey, (self.get(leafKey) ?? 0) + us);
    const category = categoryOf(leaf.callFrame.url, name);
    categories.set(category, (categories.get(category) ?? 0) + us);
    const seen = new Set<string>();
    const focused = new Set<number>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      for (const k of focusOf.get(id) ?? []) focused.add(k);
      const key = keyOf(byId.get(id)!);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + us);
    }
    for (const k of focused) focusUs[k] += us;
  }
  const ms = (us: number) => us / 1000;
  const sortDesc = <T extends [string, number]>(entries: Iterable<T>) => [...entries].sort((a, b) => b[1] - a[1]);
  const uninteresting = new Set(['(root)', '(program)', '(idle)', '(garbage collector)']);
  return {
    totalMs: ms(totalUs),
    busyMs: ms(totalUs - idleUs),
    categories: sortDesc(categories).map(([name, us]) => ({ name, selfMs: ms(us) })),
    selfTop: sortDesc(self)
      .filter(([name]) => !uninteresting.has(name))
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: ms(us) })),
    totalTop: sortDesc(total)
      .filter(([name]) => !uninteresting.has(name))
      .slice(0, top)
      .map(([name, us]) => ({ name, totalMs: ms(us) })),
    focus: focus.map((entry, k) => ({ label: entry.label, totalMs: ms(focusUs[k]) })),
    ...(options.units && { units: options.units }),
  };
}

export function formatSummary(summary: ProfileSummary): string {
  const pct = (ms: number) => `${((100 * ms) / summary.busyMs).toFixed(1).padStart(5)}%`;
  const row = (ms: number, name: string) => `  ${ms.toFixed(0).padStart(8)} ms ${pct(ms)}  ${name}`;
  const units = summary.units;
  const perUnit = (ms: number) => (units && units.count > 0 ? `  ${((ms * 1000) / units.count).toFixed(1).padStart(7)} µs/${units.name}` : '');
  const width = Math.max(0, ...summary.focus.map((f) => f.label.length));
  const lines = [
    `profile: ${(summary.totalMs / 1000).toFixed(1)} s sampled, ${(summary.busyMs / 1000).toFixed(1)} s busy (percentages are of busy time)` +
      (units ? `; ${units.count} ${units.name}s in the run, ${perUnit(summary.busyMs).trim()} busy` : ''),
    ...(summary.focus.length > 0
      ? ['where the time goes (total time: self + callees; nested lines are part of the line above):', ...summary.focus.map((f) => `  ${f.label.padEnd(width)} ${f.totalMs.toFixed(0).padStart(7)} ms ${pct(f.totalMs)}${perUnit(f.totalMs)}`)]
      : []),
    'self time by kind of code:',
    ...summary.categories.filter((c) => c.name !== 'idle').map((c) => row(c.selfMs, c.name)),
    'functions by self time:',
    ...summary.selfTop.map((f) => row(f.selfMs, f.name)),
    'functions by total time (self + callees):',
    ...summary.totalTop.map((f) => row(f.totalMs, f.name)),
  ];
  return lines.join('\n');
}

export function summarizeProfileFile(path: string, options: SummaryOptions = {}): string {
  return formatSummary(summarizeProfile(JSON.parse(readFileSync(path, 'utf8')) as CpuProfile, options));
}

if (require.main === module) {
  const [path, flag, value] = process.argv.slice(2);
  if (!path) {
    process.stderr.write('usage: node dist/bench/cpuprofile-summary.js FILE.cpuprofile [--top N]\n');
    process.exit(2);
  }
  process.stdout.write(`${summarizeProfileFile(path, { top: flag === '--top' ? Number(value) : 25 })}\n`);
}
