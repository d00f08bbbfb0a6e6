"""The engine's Node process: `node` running the bundled environment server (built from
shared/env by `npm run build:python`), and the requests and answers exchanged with it.

Requests go to the child's stdin, each a little-endian u32 byte count and the bytes (an op byte,
then the op's arguments). Answers come back on its stdout, each an 8-byte header (u32 payload
length, u8 status, 3 zero bytes) and the payload. The ops and the payloads are described in
shared/env/server.ts and docs/python.md.

Every wait for an answer has a timeout, and every failure is an exception: the child is never
left hanging, and a child that died is reported with the end of its stderr.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import select
import shutil
import struct
import subprocess
import tempfile
import weakref
from pathlib import Path
from typing import Any

from .errors import (
    EngineCrashedError,
    EngineError,
    EngineTimeoutError,
    EpisodeOverError,
    InvalidRequestError,
    NodeUnavailableError,
)

BUNDLE = Path(__file__).parent / "_engine" / "engine.cjs"
MIN_NODE_MAJOR = 20
PROTOCOL = "cerealbar-env"
PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT = 60.0

OP_HELLO, OP_MAKE, OP_RESET, OP_STEP, OP_STEP_MANY, OP_RENDER, OP_CLOSE, OP_ENCODE = range(8)
OP_BATCH_MAKE, OP_BATCH_RESET, OP_BATCH_STEP, OP_BATCH_RESET_AT, OP_BATCH_CLOSE, OP_FRAME_VIEW = range(8, 14)
STATUS_OK = 0

_REQUEST_HEADER = struct.Struct("<I")
_ANSWER_HEADER = struct.Struct("<IB3x")
_STDERR_TAIL_CHARS = 4000
_STDERR_TAIL_LINES = 10


def find_node() -> str:
    """The `node` to run: $CEREALBAR_NODE if set, else `node` on PATH; checked to be new enough."""
    wanted = os.environ.get("CEREALBAR_NODE", "node")
    node = shutil.which(wanted)
    if node is None:
        raise NodeUnavailableError(
            f"cannot find {wanted!r}: install Node.js {MIN_NODE_MAJOR} or newer and put `node` on PATH "
            "(or set CEREALBAR_NODE to its path)"
        )
    _check_version(node)
    return node


@functools.lru_cache(maxsize=None)
def _check_version(node: str) -> None:
    try:
        result = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise NodeUnavailableError(f"{node} --version failed: {error}") from error
    match = re.fullmatch(r"v(\d+)\.\d+\.\d+\S*", result.stdout.strip())
    if result.returncode != 0 or match is None:
        raise NodeUnavailableError(f"{node} --version did not give a Node.js version: {result.stdout.strip() or result.stderr.strip()!r}")
    if int(match.group(1)) < MIN_NODE_MAJOR:
        raise NodeUnavailableError(f"{node} is Node.js {result.stdout.strip()}; the engine needs {MIN_NODE_MAJOR} or newer")


def start_engine(make_options: dict, timeout: float) -> tuple["EngineProcess", dict]:
    """A new engine process with one environment made in it, and the make answer (its id and layout)."""
    engine = EngineProcess(timeout)
    try:
        return engine, engine.request_json(bytes([OP_MAKE]) + json.dumps(make_options).encode())
    except BaseException:
        engine.close()
        raise


class EngineProcess:
    """One Node process serving environments. Not thread-safe: one request at a time."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, pass_fds: tuple[int, ...] = ()):
        """`pass_fds`: descriptors the process inherits, at the same numbers (`/dev/fd/<n>` there)."""
        if not BUNDLE.is_file():
            raise NodeUnavailableError(f"the engine bundle {BUNDLE} is missing: run `npm run build:python` in the repository")
        node = find_node()
        self.timeout = timeout
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            [node, str(BUNDLE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, bufsize=0, pass_fds=pass_fds
        )
        # A process nobody closed is stopped when its owner is collected, or at exit.
        self._finalizer = weakref.finalize(self, _stop, self._process, self._stderr)
        self._poll = select.poll()
        self._poll.register(self._process.stdout.fileno(), select.POLLIN)
        self._dead: str | None = None
        hello = self.request_json(bytes([OP_HELLO]))
        if hello.get("protocol") != PROTOCOL or hello.get("version") != PROTOCOL_VERSION:
            self.close()
            raise EngineError(f"the engine speaks {hello}, this package {PROTOCOL} version {PROTOCOL_VERSION}: rebuild it with `npm run build:python`")
        self.engine_version: str = hello["engineVersion"]

    @property
    def alive(self) -> bool:
        return self._dead is None

    @property
    def pid(self) -> int:
        return self._process.pid

    def request(self, body: bytes) -> bytearray:
        """Sends one request and returns the payload of its answer; an error answer is raised."""
        self.send(body)
        return self.receive()

    def send(self, body: bytes) -> None:
        """Sends one request; `receive` reads its answer. Requests to several processes can all be
        sent before any answer is read, so that the processes work at the same time."""
        if self._dead is not None:
            raise EngineCrashedError(f"the engine process is gone ({self._dead})")
        with self._cut_short():
            self._write(_REQUEST_HEADER.pack(len(body)) + body)

    def receive(self) -> bytearray:
        """The payload of the answer to the request sent; an error answer is raised."""
        if self._dead is not None:
            raise EngineCrashedError(f"the engine process is gone ({self._dead})")
        with self._cut_short():
            length, status = _ANSWER_HEADER.unpack(self._read(_ANSWER_HEADER.size))
            payload = self._read(length)
        if status != STATUS_OK:
            raise _answered_error(json.loads(payload))
        return payload

    @contextlib.contextmanager
    def _cut_short(self):
        try:
            yield
        except BaseException as error:
            # A request cut short (a crash, a timeout, Ctrl-C) leaves the stream out of step: this
            # process cannot be used again.
            if not isinstance(error, (EngineCrashedError, EngineTimeoutError)):
                self._kill("interrupted during a request")
            raise

    def request_json(self, body: bytes) -> Any:
        return json.loads(self.request(body))

    def close(self) -> None:
        """Ends the process: it exits when its stdin closes (killed if it does not within 2 s)."""
        if self._dead is None:
            self._dead = "closed"
        self._finalizer()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._process.stdin.fileno(), view):]
        except BrokenPipeError:
            raise self._crashed() from None

    def _read(self, length: int) -> bytearray:
        buffer = bytearray(length)
        view = memoryview(buffer)
        filled = 0
        fd = self._process.stdout.fileno()
        while filled < length:
            if not self._poll.poll(self.timeout * 1000):
                self._kill(f"no answer within {self.timeout} s")
                raise EngineTimeoutError(f"the engine did not answer within {self.timeout} s; its process was killed")
            read = os.readv(fd, [view[filled:]])
            if read == 0:
                raise self._crashed()
            filled += read
        return buffer

    def _crashed(self) -> EngineCrashedError:
        try:
            code = self._process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            code = None
        tail = self._stderr_tail()
        self._kill(f"exited with code {code}")
        lines = "\n".join(tail.splitlines()[-_STDERR_TAIL_LINES:])
        return EngineCrashedError(
            f"the engine process exited (code {code})" + (f"; the end of its stderr:\n{lines}" if lines else ", with nothing on stderr"),
            exit_code=code,
            stderr_tail=tail,
        )

    def _stderr_tail(self) -> str:
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - _STDERR_TAIL_CHARS))
            return self._stderr.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return ""

    def _kill(self, why: str) -> None:
        self._dead = why
        if self._process.poll() is None:
            self._process.kill()
        self._finalizer()


def _stop(process: subprocess.Popen, stderr) -> None:
    try:
        process.stdin.close()
    except OSError:
        pass
    try:
        process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    process.stdout.close()
    stderr.close()


def _answered_error(error: dict) -> Exception:
    kind, message = error.get("kind"), error.get("message", "")
    if kind == "episode-over":
        return EpisodeOverError(message)
    if kind in ("invalid", "setup"):
        return InvalidRequestError(message, kind)
    return EngineError(message)
