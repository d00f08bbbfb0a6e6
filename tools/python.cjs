/**
 * The machine's Python for the package's tests and benchmark: the first of $PYTHON, python3 and
 * python that is 3.10 or newer and has the modules asked for; or why none will do.
 */
const { spawnSync } = require('node:child_process');

function findPython(neededModules) {
  const probeScript = `import sys, importlib.util as u; print(sys.version.split()[0], sys.version_info >= (3, 10), *[u.find_spec(m) is not None for m in ${JSON.stringify(neededModules)}])`;
  const candidates = [process.env.PYTHON, 'python3', 'python'].filter(Boolean);
  const problems = [];
  for (const python of candidates) {
    const probe = spawnSync(python, ['-c', probeScript], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) continue;
    const [version, recent, ...found] = probe.stdout.trim().split(' ');
    const missing = neededModules.filter((_, i) => found[i] !== 'True');
    if (recent === 'True' && missing.length === 0) return { python };
    problems.push(recent !== 'True' ? `${python} is Python ${version}, older than 3.10` : `${python} lacks ${missing.join(' and ')} (pip install ${missing.join(' ')})`);
  }
  return { problem: problems.length > 0 ? problems.join('; ') : `no Python found (tried ${candidates.join(', ')})` };
}

module.exports = { findPython };
