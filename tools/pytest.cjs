#!/usr/bin/env node
/**
 * `npm run test:python`: the Python package's tests (python/tests) under pytest. It looks for a
 * Python 3.10 or newer with numpy and pytest ($PYTHON, else python3, else python), rebuilds the
 * engine bundle, and runs pytest with this `node` as the engine's (CEREALBAR_NODE). Nothing is
 * installed: the tests import the package from python/src, and Gymnasium from that Python or from
 * the read-only copy beside the repository (python/tests/conftest.py). Without a usable Python it
 * says why and skips, successfully. Arguments are passed on to pytest.
 */
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');
const { buildPythonBundle } = require('./build-python.cjs');
const { findPython } = require('./python.cjs');

const ROOT = join(__dirname, '..');
const BUNDLE = 'python/src/cerealbar/_engine/engine.cjs';
const { python, problem } = findPython(['numpy', 'pytest']);
if (!python) {
  console.log(`test:python: ${problem}. Skipping the Python tests.`);
  process.exit(0);
}
buildPythonBundle();
// The bundle is committed (so that pip install ./python needs no npm): say when it is out of date.
const stale = spawnSync('git', ['diff', '--quiet', '--', BUNDLE], { cwd: ROOT });
if (stale.status === 1) console.log(`test:python: ${BUNDLE} changed with this build of shared/: commit it with your change.`);
const run = spawnSync(python, ['-m', 'pytest', '-p', 'no:cacheprovider', 'python/tests', ...process.argv.slice(2)], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, CEREALBAR_NODE: process.execPath, PYTHONDONTWRITEBYTECODE: '1' },
});
process.exit(run.status ?? 1);
