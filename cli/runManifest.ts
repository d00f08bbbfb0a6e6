/**
 * run.json, written beside a run's outputs (`eval`, `selfplay`, `study report`): what was run
 * (the command line, the seeds, every seat's agent and LLM settings, never a key), with what (the
 * project's version and git commit, Node's and the packages' versions), when, and what it
 * covered. It is written when the run starts and again when it ends, so that a run killed on the
 * way still says what it was; `--resume` compares a new run's settings with it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENGINE_VERSION } from '../shared/engine/version';
import { writeFileAtomically } from './durableFiles';

export const RUN_MANIFEST = 'run.json';
export const RUN_MANIFEST_VERSION = 1;

const PACKAGE_ROOT = join(__dirname, __filename.endsWith('.ts') ? '..' : '../..');

export interface RunSoftware {
  readonly cerealbar: string;
  readonly engine: string;
  /** The checkout's commit, with `+changes` when its files differ from it; null outside a git checkout. */
  readonly gitCommit: string | null;
  readonly node: string;
  /** The installed version of each of the project's dependencies. */
  readonly packages: Readonly<Record<string, string>>;
}

export interface RunManifest {
  readonly kind: 'cerealbar-run';
  readonly v: typeof RUN_MANIFEST_VERSION;
  /** The command and its arguments as given (`cerealbar eval ...`). */
  readonly command: readonly string[];
  readonly software: RunSoftware;
  /** What decides the run's results: agents, LLM settings per seat, seeds, options. `--resume` needs these equal. */
  readonly settings: unknown;
  readonly startedAt: string;
  /** Null while the run is under way, or when it was killed. */
  readonly endedAt: string | null;
  /** What the run covered (games, episodes, resumed ones); null until it ends. */
  readonly covered: unknown;
}

let software: RunSoftware | null = null;

/** The software a run used (read once per process). */
export function runSoftware(): RunSoftware {
  software ??= {
    cerealbar: (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    engine: ENGINE_VERSION,
    gitCommit: gitCommit(),
    node: process.version,
    packages: installedPackages(),
  };
  return software;
}

function gitCommit(): string | null {
  const git = (...args: string[]) => spawnSync('git', ['-C', PACKAGE_ROOT, ...args], { encoding: 'utf8', timeout: 5000 });
  const head = git('rev-parse', 'HEAD');
  if (head.status !== 0) return null;
  const changed = git('status', '--porcelain', '--untracked-files=no').stdout.trim() !== '';
  return `${head.stdout.trim()}${changed ? '+changes' : ''}`;
}

function installedPackages(): Record<string, string> {
  const declared = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
  const installed: Record<string, string> = {};
  for (const name of Object.keys(declared).sort()) {
    try {
      installed[name] = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      installed[name] = `not installed (declared ${declared[name]})`;
    }
  }
  return installed;
}

/** The arguments of the command being run (runCli notes them: tests run many commands in one process). */
let commandArgs: readonly string[] = process.argv.slice(2);
export function noteCommandLine(args: readonly string[]): void {
  commandArgs = [...args];
}

/** A run's manifest as it starts. */
export function startManifest(settings: unknown, command: readonly string[] = ['cerealbar', ...commandArgs]): RunManifest {
  return { kind: 'cerealbar-run', v: RUN_MANIFEST_VERSION, command, software: runSoftware(), settings, startedAt: new Date().toISOString(), endedAt: null, covered: null };
}

/** Writes the manifest to `path` (whole or not at all): `<outputs>/run.json`, or `<report>.run.json` beside a report over logs. */
export function writeManifest(path: string, manifest: RunManifest): void {
  writeFileAtomically(path, `${JSON.stringify(manifest, null, 1)}\n`);
}

/** The manifest with the run's end and what it covered. */
export function endManifest(manifest: RunManifest, covered: unknown): RunManifest {
  return { ...manifest, endedAt: new Date().toISOString(), covered };
}

/** The manifest at `path`, or null when there is none; one that does not parse is an Error naming the file. */
export function readManifest(path: string): RunManifest | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let manifest: RunManifest;
  try {
    manifest = JSON.parse(text) as RunManifest;
  } catch {
    throw new Error(`${path}: not a run manifest (not JSON)`);
  }
  if (manifest?.kind !== 'cerealbar-run') throw new Error(`${path}: not a run manifest`);
  return manifest;
}

/** The first setting (a dotted path) in which `a` and `b` differ, or null when they are equal. */
export function firstDifference(a: unknown, b: unknown, path = ''): string | null {
  if (Object.is(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return path || '(the whole)';
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  for (const key of keys) {
    const difference = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], path ? `${path}.${key}` : key);
    if (difference) return difference;
  }
  return null;
}
