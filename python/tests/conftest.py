"""Shared test setup.

The tests import the package from this checkout (python/src), so nothing needs installing.
Gymnasium and PettingZoo come from the machine's own install, or else from the read-only copies
that sit beside the repository (../shared/vendor/python) on machines without PyPI; without either,
their tests skip, and the header of pytest's report says so.
"""

from __future__ import annotations

import importlib.util
import shlex
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


STAND_IN = r'''
import json, os, struct, sys, time
mode, marker = sys.argv[1], sys.argv[2]
if mode == "fail-start" or (mode == "die-then-fail" and os.path.exists(marker)):
    sys.stderr.write("starting...\ncannot start the frame renderer: /x/client/dist/frames/index.html is missing; run `npm run build:client`\n")
    sys.exit(1)
open(marker, "a").close()
out = sys.stdout.buffer
for served, line in enumerate(sys.stdin.buffer):
    request = json.loads(line)
    assert request["format"] == "rgb" and request["view"]["role"] in ("follower", "leader"), request
    if mode in ("die-after-1", "die-then-fail") and served == 1:
        sys.exit(3)
    if mode == "hang-after-1" and served == 1:
        time.sleep(120)
    if mode == "refuse":
        message = b"not a frame request: camera: Invalid option"
        out.write(struct.pack("<II", 0xFFFFFFFF, len(message)) + message)
    else:
        size = request["size"]
        data = bytes([os.getpid() % 251]) * (size["width"] * size["height"] * 3)
        out.write(struct.pack("<I", len(data)) + data)
    out.flush()
'''


@pytest.fixture
def stand_in_renderer(tmp_path, monkeypatch):
    """`stand_in_renderer(mode)`: CEREALBAR_RENDERER runs a stand-in for the frame renderer (no
    browser) in that mode: it answers each frame request with a frame of one byte value (its pid
    modulo 251), `die-after-1` exits at its second request, `die-then-fail` too and every later
    start fails, `fail-start` fails as `cerealbar frames` does without the built client, `refuse`
    refuses every request, `hang-after-1` never answers its second."""
    script = tmp_path / "renderer.py"
    script.write_text(STAND_IN)

    def use(mode: str) -> None:
        monkeypatch.setenv("CEREALBAR_RENDERER", shlex.join([sys.executable, str(script), mode, str(tmp_path / f"started-{mode}")]))

    return use
