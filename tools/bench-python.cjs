#!/usr/bin/env node
/**
 * `npm run bench:python`: the Python package's benchmark (`python -m cerealbar.bench`, steps per
 * second of the environments) with this clone's package and a freshly built engine bundle, and
 * this `node` as the engine's. Arguments are passed on to the benchmark.
 */
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const { delimiter, join } = require('node:path');
const { buildPythonBundle } = require('./build-python.cjs');
const { findPython } = require('./python.cjs');

const ROOT = join(__dirname, '..');
const { python, problem } = findPython(['numpy']);
if (!python) {
  console.error(`bench:python: ${problem}.`);
  process.exit(1);
}
buildPythonBundle();
// Gymnasium and PettingZoo (for the vector and two-player rows) from this Python, or from the read-only copy beside the repository.
const VENDORED = join(ROOT, '..', 'shared', 'vendor', 'python');
const hasBoth = spawnSync(python, ['-c', 'import gymnasium, pettingzoo']).status === 0;
const path = [join(ROOT, 'python', 'src'), ...(!hasBoth && existsSync(VENDORED) ? [VENDORED] : [])].join(delimiter);
const run = spawnSync(python, ['-m', 'cerealbar.bench', ...process.argv.slice(2)], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, CEREALBAR_NODE: process.execPath, PYTHONPATH: path, PYTHONDONTWRITEBYTECODE: '1' },
});
process.exit(run.status ?? 1);
