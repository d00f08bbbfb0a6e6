"""Frames for image-based learners: the game's own 3D world, drawn from one role's view by the
project's frame renderer, `cerealbar frames` (headless Chromium running the game client's world code).

The environment server gives the env's frame view (op frameView: the drawn part of the agent's own
`playerView`, so a follower's frame shows only what the follower knows); this module sends it to
the renderer, a child process started at the first frame, as a JSON line, and reads the answer: a
u32 little-endian length and the frame's raw RGB rows (top to bottom), or the length 0xFFFFFFFF, a
u32 length and a one-line message when the renderer refuses the request.

Which renderer runs: $CEREALBAR_RENDERER (a command line, split as a shell would), else, when the
package runs from a clone of the repository, `node <repository>/bin/cerealbar.cjs frames` (with
$CEREALBAR_NODE's node), else `cerealbar frames` when `cerealbar` is on PATH.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shlex
import shutil
import struct
import subprocess
import tempfile
import time
import weakref
from pathlib import Path

import numpy as np

from .engine import find_node
from .errors import RendererError, RendererUnavailableError

#: The 3D cameras: the follower's eyes, the whole map from above, the leader's angled view.
CAMERAS = ("first-person", "overhead", "angled")
#: What `render_camera` takes: a 3D camera, or "map", the small top-down picture of the observation.
RENDER_CAMERAS = (*CAMERAS, "map")
#: render_size's default: (width, height) in pixels.
DEFAULT_SIZE = (320, 240)
#: The largest side a frame may have (the renderer's limit).
MAX_SIDE = 4096
#: A renderer's first frame also waits for it to start (Chromium and the page): this much longer.
START_SECONDS = 90.0

#: The repository's command-line entry, when the package runs from a clone (python/src/cerealbar/ here).
REPOSITORY_CLI = Path(__file__).resolve().parents[3] / "bin" / "cerealbar.cjs"

HELP = (
    "the frames need the CerealBar frame renderer, `cerealbar frames`: in a clone of the repository run "
    "`npm ci` and `npm run build:client`, and run the package from that clone or put its `cerealbar` command on PATH "
    "(`npm link`), or set CEREALBAR_RENDERER to a command that runs it "
    "(e.g. CEREALBAR_RENDERER='node /path/to/cerealbar/bin/cerealbar.cjs frames')"
)

_REFUSED = 0xFFFFFFFF
_U32 = struct.Struct("<I")
_STDERR_TAIL_CHARS = 4000


def default_camera(role: str) -> str:
    """Each role's own view: the follower's eyes, the leader's map from above."""
    return "first-person" if role == "follower" else "overhead"


def checked_camera(camera, allowed: tuple[str, ...] = RENDER_CAMERAS, what: str = "render_camera") -> str | None:
    if camera is None or (isinstance(camera, str) and camera in allowed):
        return camera
    raise ValueError(f"{what} must be None or one of {', '.join(map(repr, allowed))}, got {camera!r}")


def checked_size(size) -> tuple[int, int]:
    """`render_size` as (width, height): two integers from 1 to MAX_SIDE, else ValueError."""
    accepted = f"render_size must be (width, height), two integers from 1 to {MAX_SIDE} pixels, e.g. {DEFAULT_SIZE}"
    if isinstance(size, (str, bytes)) or not hasattr(size, "__len__") or len(size) != 2:
        raise ValueError(f"{accepted}; got {size!r}")
    for side in size:
        if isinstance(side, (bool, np.bool_)) or not isinstance(side, (int, np.integer)) or not 1 <= side <= MAX_SIDE:
            raise ValueError(f"{accepted}; got {size!r}")
    return int(size[0]), int(size[1])


def renderer_command() -> tuple[list[str], str]:
    """The renderer's command line, and where it came from (for messages); RendererUnavailableError if there is none."""
    configured = os.environ.get("CEREALBAR_RENDERER", "")
    if configured.strip():
        try:
            command = shlex.split(configured)
        except ValueError as error:
            raise RendererUnavailableError(f"CEREALBAR_RENDERER={configured!r} is not a command line ({error}); {HELP}") from None
        return command, "CEREALBAR_RENDERER"
    if REPOSITORY_CLI.is_file():
        return [find_node(), str(REPOSITORY_CLI), "frames"], "this repository"
    cli = shutil.which("cerealbar")
    if cli is not None:
        return [cli, "frames"], "PATH"
    raise RendererUnavailableError(f"no frame renderer: CEREALBAR_RENDERER is not set, the package does not run from a clone of the repository, and no `cerealbar` is on PATH; {HELP}")


class _Died(Exception):
    """The renderer process ended under a frame."""


class FrameRenderer:
    """One renderer process for one environment, started at the first frame and again (once a
    frame) if it died; `close` ends it, and so does garbage collection or the interpreter's exit.
    Not thread-safe."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        #: Times a renderer that had drawn frames was found dead and started again.
        self.restarts = 0
        self._process: subprocess.Popen | None = None
        self._finalizer: weakref.finalize | None = None
        #: The current (or last) process's stderr, for the messages.
        self._stderr = None
        self._closed = False

    @property
    def pid(self) -> int | None:
        """The renderer process's id while one runs (it starts at the first frame)."""
        return self._process.pid if self._process is not None else None

    def frame(self, world: str, view: bytes, camera: str, size: tuple[int, int]) -> np.ndarray:
        """The (height, width, 3) uint8 frame of `view` (a frame view's JSON) from `camera`.
        Frames with the same `world` reuse the renderer's scene (use one per episode)."""
        if self._closed:
            raise RendererError("the frame renderer is closed")
        width, height = size
        request = b"".join(
            (
                b'{"world":',
                json.dumps(world).encode(),
                b',"camera":',
                json.dumps(camera).encode(),
                f',"size":{{"width":{width},"height":{height}}},"format":"rgb","view":'.encode(),
                view,
                b"}\n",
            )
        )
        if self._process is not None and self._exited():  # it died since the last frame
            self._stop()
            self.restarts += 1
        for _ in range(2):
            fresh = self._process is None
            if fresh:
                self._start()
            try:
                data = self._exchange(request, fresh)
            except _Died:
                reason = self._stop()
                if fresh:
                    tail = self._stderr_tail()
                    raise RendererUnavailableError(
                        f"the frame renderer ({self._origin}: {shlex.join(self._command)}) did not start or died at its first frame "
                        f"({_last_line(tail) or reason}); {HELP}"
                    ) from None
                self.restarts += 1  # it had drawn frames: a new one draws this one
                continue
            if len(data) != width * height * 3:
                self._stop()
                raise RendererError(f"the frame renderer answered {len(data)} bytes, not the {width * height * 3} of a {width}x{height} RGB frame")
            return np.frombuffer(data, dtype=np.uint8).reshape(height, width, 3)
        raise AssertionError("unreachable: the second try is always a new process's")

    def close(self) -> None:
        """Ends the renderer process (it exits when its stdin closes; killed if it does not within 5 s)."""
        self._closed = True
        self._stop()
        if self._stderr is not None:
            self._stderr.close()

    def _start(self) -> None:
        self._stop()
        self._command, self._origin = renderer_command()
        if self._stderr is not None:
            self._stderr.close()
        self._stderr = tempfile.TemporaryFile()
        try:
            process = subprocess.Popen(self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0)
        except OSError as error:
            self._stderr.close()
            raise RendererUnavailableError(f"cannot run the frame renderer ({self._origin}: {shlex.join(self._command)}): {error.strerror or error}; {HELP}") from None
        self._process = process
        # Never left behind: stopped when this renderer is collected, or at the interpreter's exit.
        self._finalizer = weakref.finalize(self, _stop, process)
        self._poll = select.poll()
        self._poll.register(process.stdout.fileno(), select.POLLIN)

    def _exchange(self, request: bytes, fresh: bool) -> bytearray:
        wait = self.timeout + (START_SECONDS if fresh else 0.0)
        try:
            _write(self._process.stdin.fileno(), request)
            (length,) = _U32.unpack(self._read(4, wait))
            if length == _REFUSED:
                (length,) = _U32.unpack(self._read(4, wait))
                raise RendererError(f"the frame renderer refused a frame: {self._read(length, wait).decode('utf-8', 'replace')}")
            return self._read(length, wait)
        except BrokenPipeError:
            raise _Died() from None
        except (_Died, RendererError):
            raise
        except BaseException:
            # Cut short (a timeout, Ctrl-C): the stream is out of step, so this process is done.
            self._stop()
            raise

    def _read(self, length: int, wait: float) -> bytearray:
        buffer = bytearray(length)
        view = memoryview(buffer)
        filled = 0
        fd = self._process.stdout.fileno()
        deadline = time.monotonic() + wait
        while filled < length:
            left = deadline - time.monotonic()
            if left <= 0 or not self._poll.poll(left * 1000):
                self._stop(kill=True)
                raise RendererError(f"the frame renderer drew no frame within {wait:g} s; its process was killed (the next frame starts a new one)")
            read = os.readv(fd, [view[filled:]])
            if read == 0:
                raise _Died()
            filled += read
        return buffer

    def _exited(self) -> bool:
        return self._process.poll() is not None

    def _stop(self, kill: bool = False) -> str:
        """Stops the process if one runs (`kill`: at once, as one that hangs); how it ended."""
        process, self._process = self._process, None
        if process is None:
            return "not running"
        if kill and process.returncode is None:
            process.kill()
        self._finalizer()
        return f"exit code {process.returncode}" if process.returncode is not None and process.returncode >= 0 else f"killed by signal {-(process.returncode or 0)}"

    def _stderr_tail(self) -> str:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, self._stderr.tell() - _STDERR_TAIL_CHARS))
            return self._stderr.read().decode("utf-8", errors="replace")
        return ""


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _stop(process: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        process.stdin.close()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    with contextlib.suppress(OSError):
        process.stdout.close()


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""

