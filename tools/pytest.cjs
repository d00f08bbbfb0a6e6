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

const ROOT = join(__dirname, '..');
const BUNDLE = 'python/src/cerealbar/_engine/engine.cjs';
const NEEDED_MODULES = ['numpy', 'pytest'];
const PROBE = `import sys, importlib.util as u; print(sys.version.split()[0], sys.version_info >= (3, 10), *[u.find_spec(m) is not None for m in ${JSON.stringify(NEEDED_MODULES)}])`;

/** The first Python that has everything, or why none will do. */
function findPython() {
  const candidates = [process.env.PYTHON, 'python3', 'python'].filter(Boolean);
  const problems = [];
  for (const python of candidates) {
    const probe = spawnSync(python, ['-c', PROBE], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) continue;
    const [version, recent, ...found] = probe.stdout.trim().split(' ');
    const missing = NEEDED_MODULES.filter((_, i) => found[i] !== 'True');
    if (recent === 'True' && missing.length === 0) return { python };
    problems.push(recent !== 'True' ? `${python} is Python ${version}, older than 3.10` : `${python} lacks ${missing.join(' and ')} (pip install ${missing.join(' ')})`);
  }
  return { problem: problems.length > 0 ? problems.join('; ') : `no Python found (tried ${candidates.join(', ')})` };
}

const { python, problem } = findPython();
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
