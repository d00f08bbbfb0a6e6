"""Shared test setup.

The tests import the package from this checkout (python/src), so nothing needs installing.
Gymnasium and PettingZoo come from the machine's own install, or else from the read-only copies
that sit beside the repository (../shared/vendor/python) on machines without PyPI; without either,
their tests skip, and the header of pytest's report says so.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python" / "src"))

VENDORED = REPO.parent / "shared" / "vendor" / "python"
MISSING = [name for name in ("gymnasium", "pettingzoo") if importlib.util.find_spec(name) is None]
if MISSING and VENDORED.is_dir():
    # Appended: a package this Python has comes first.
    sys.path.append(str(VENDORED))


def pytest_report_header(config) -> list[str]:
    lines = []
    for name, tests in (("gymnasium", "check_env, vector envs, make"), ("pettingzoo", "api_test, parallel_api_test")):
        spec = importlib.util.find_spec(name)
        if spec is None:
            lines.append(f"{name}: not importable, its tests ({tests}) are skipped")
            continue
        module = __import__(name)
        where = "the read-only copy beside the repository" if name in MISSING else "this Python's packages"
        lines.append(f"{name} {module.__version__} from {where}")
    return lines


def node() -> str:
    from cerealbar.engine import find_node

    return find_node()


def needs_node_modules() -> None:
    """The reference trajectories and the self-play logs are made by TypeScript run through tsx."""
    if not (REPO / "node_modules" / "tsx").is_dir():
        pytest.skip("needs the repository's node_modules (npm ci): the TypeScript side runs through tsx")


def run_typescript(script: str, *args: str, stdin: str | None = None) -> str:
    needs_node_modules()
    result = subprocess.run(
        [node(), "--import", "tsx", script, *args], cwd=REPO, input=stdin, capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        raise AssertionError(f"{script} failed ({result.returncode}):\n{result.stderr[-4000:]}")
    return result.stdout


@pytest.fixture(scope="session")
def selfplay_logs(tmp_path_factory) -> Path:
    """A directory with the logs of self-play games 1 and 2, written by `cerealbar selfplay`."""
    needs_node_modules()
    directory = tmp_path_factory.mktemp("logs")
    result = subprocess.run(
        [node(), str(REPO / "bin" / "cerealbar.cjs"), "selfplay", "--out", str(directory), "--games", "2", "--seed", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    return directory


@pytest.fixture
def fake_node(tmp_path, monkeypatch):
    """A stand-in for `node` (a shell script): `fake_node(version, body)` answers --version with
    `version` and otherwise runs the shell `body`; CEREALBAR_NODE points at it for the test."""
    if shutil.which("sh") is None:
        pytest.skip("needs a POSIX shell")

    def make(version: str, body: str) -> str:
        path = tmp_path / f"node-{version}"
        path.write_text(f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo {version}; exit 0; fi\n{body}\n')
        path.chmod(0o755)
        monkeypatch.setenv("CEREALBAR_NODE", str(path))
        return str(path)

    return make
