"""`FastFollowerVectorEnv`: N follower environments played by the engine's batched follower
environment (`FollowerBatch`, docs/env.md) in a Node process (or a few, each with its share),
whose arrays reach Python through one file that Node writes after each change (each process its
environments' rows of every field) and Python maps (Node cannot map a file). The file has no name:
Python makes it (an anonymous memory file) and the processes inherit its descriptor, so it cannot
outlive them and Python, however they end. A step is one small
request per process (the actions, and the seeds of the environments starting a new game) and one
small answer, and the observations, rewards and infos are numpy views of the file, read without
decoding or copying anything.

It plays the same games as `FollowerVectorEnv(num_envs, description=False)` with the same seeds and
actions, seed draws and autoresets included; with `logs`, the same episodes as N
`FollowerEnv(logs=..., description=False)` in Gymnasium's `SyncVectorEnv` (python/tests/test_fast.py
checks both step by step). It supports what the batch does: self-play games by seed with the
"sparse" and "distance" rewards, logged episodes with those and "ndtw", and no text fields. It
needs Gymnasium (its spaces and vector base class).
"""

from __future__ import annotations

import contextlib
import json
import mmap
import operator
import os
import re
import struct
import tempfile
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from .engine import DEFAULT_TIMEOUT, OP_BATCH_MAKE, OP_BATCH_RESET, OP_BATCH_RESET_AT, OP_BATCH_STEP, EngineProcess
from .envs import _SEED_DRAWS, check_levels_left, checked_levels, log_files, refuse_frames, replacement_seeds, seed_bound, vector_seeds
from .errors import CerealBarError, EngineError, EnvClosedError, EpisodeOverError, IllegalActionError, InvalidRequestError
from .layout import Layout

try:
    import gymnasium
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError:  # pragma: no cover - the error says what to install
    gymnasium = None
    VectorEnv = object

_U32 = struct.Struct("<I")
#: The most levels whose starts a batch keeps (shared/env/servedBatch.ts's MAX_KEPT_STARTS); with more, the least recently started are made again.
_MOST_KEPT_STARTS = 65_536
#: Where the shared file is made when the system has no anonymous memory files (memfd_create, Linux): memory where there is /dev/shm, else the temporary directory.
_SHARED_MEMORY = "/dev/shm"
#: The start of the shared file's name: a memory file's, or a named file's with its maker's pid and start time after it.
_FILE_PREFIX = "cerealbar-batch-"
_MADE_BY = re.compile(re.escape(_FILE_PREFIX) + r"(\d+)-(\d+)-")


class FastFollowerVectorEnv(VectorEnv):
    """`num_envs` follower environments with `FollowerEnv`'s options, without the text fields, in
    `processes` Node processes (each a batch of its share of them, stepped at the same time as the
    others). Episodes are self-play games by seed, or with `logs` (as `FollowerEnv`'s) the logged
    games' recorded instructions, each environment drawing its episodes as a `FollowerEnv` with
    those logs does. With `levels=K`, the self-play games are the K levels 0 to K - 1, as
    `FollowerVectorEnv(levels=K)`'s, and the batch keeps their starts to start them again by copying.

    `copy=True` (the default) returns new arrays at each call. `copy=False` returns the mapped
    arrays themselves (read-only views of the shared file), the same at every step, overwritten by
    the next `reset` or `step`.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP if gymnasium else None}

    def __init__(
        self,
        num_envs: int,
        reward: str = "sparse",
        gamma: float = 0.99,
        max_steps: int = 500,
        logs: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
        description: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        copy: bool = True,
        processes: int = 1,
        levels: int | None = None,
        render_mode: None = None,
        render_camera: None = None,
        render_size: None = None,
        observation_mode: None = None,
    ):
        if gymnasium is None:
            raise ImportError("FastFollowerVectorEnv needs Gymnasium: pip install './python[gymnasium]'")
        refuse_frames("FastFollowerVectorEnv", render_mode, render_camera, render_size, observation_mode)
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if not isinstance(processes, int) or not 1 <= processes <= num_envs:
            raise ValueError(f"processes must be an integer from 1 to num_envs ({num_envs}), got {processes!r}")
        if description:
            raise ValueError("FastFollowerVectorEnv has no text fields: use description=False, or FollowerVectorEnv for the texts")
        self._levels = checked_levels(levels, logs)
        self.num_envs = num_envs
        #: Return new arrays (True), or the same arrays at every step, overwritten by the next.
        self.copy = copy
        self._closed = False
        self._running = False
        self._timeout = timeout
        options: dict[str, Any] = {"reward": reward, "gamma": gamma, "maxSteps": max_steps}
        if logs is not None:
            options["logs"] = log_files(logs)
        if self._levels is not None:
            # The levels come round again: the batch starts them by copying what it kept of their first start.
            options["keptStarts"] = min(self._levels, _MOST_KEPT_STARTS)
        self._options = options
        self._bounds = np.linspace(0, num_envs, processes + 1).astype(int)
        self._parts: list[_Part] = []
        # The file, with no name: the processes inherit it, Python maps it and keeps it for the processes a reset starts after a crash.
        self._file = _shared_file()
        self._close_file = weakref.finalize(self, os.close, self._file)
        try:
            made = self._start_parts()
            #: Each field of all N environments by (group, name): read-only views of the file.
            self._fields = _mapped_fields(self._file, made, num_envs)
        except BaseException:
            self._close_parts()
            self._close_file()
            raise
        self._file_layout = (made["bytes"], made["regions"])
        self.layout = Layout(made["layout"])
        self._episodes: list[str] | None = made["episodes"]
        self._episode_index = {episode: i for i, episode in enumerate(self._episodes or [])}
        from . import spaces as _spaces

        # The arrays only: the batch has no texts.
        self.single_observation_space = _spaces.observation_space(self.layout, texts=False)
        self.single_action_space = _spaces.follower_action_space(self.layout)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._observation_keys = [("observation", name) for name in self.single_observation_space.keys()]
        # In the layout's order, as FollowerVectorEnv's infos.
        self._info_keys = [(region["group"], region["name"]) for region in made["regions"] if region["group"] == "info"]
        self._observations: dict[str, np.ndarray] = {}
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)
        # Each environment draws its next game's seed (or with logs, its next episode) as
        # FollowerVectorEnv's (and a FollowerEnv seeded the same way) would.
        self._generators = [np.random.default_rng() for _ in range(num_envs)]
        #: The batch's seed of each environment's episode: with logs, its episode number.
        self._seeds = np.zeros(num_envs, dtype=np.int64)

    @property
    def episodes(self) -> list[str] | None:
        """With logs, the episode ids (`<gameId>#<instruction index>`) in the order of their indices; else None."""
        return self._episodes

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """`seed`: None (drawn), an int s (environment i plays seed s + i; the rare seeds among them
        that give no episode are replaced, in the order of their environments, by the seeds from
        s + num_envs on that give one, as `FollowerVectorEnv` does), or one per environment (None:
        drawn). A seed of the list whose game cannot start raises InvalidRequestError (kind
        "setup"); a drawn one is drawn again. Python and numpy integers are seeds; anything else,
        and with `levels` a seed outside them, raises InvalidRequestError (a ValueError) and
        changes nothing. After an engine process died or was killed, new ones are started.

        With logs, `seed` seeds each environment's generator (an int s: environment i's with
        s + i), which draws its episodes as a `FollowerEnv`'s does, and `options={"episode": e}`
        starts environments on given episodes: `e` an episode id or index for every environment
        (as `SyncVectorEnv` passes the same options to each `FollowerEnv`), or a list of one per
        environment (None: drawn)."""
        self._check_open()
        episodes = self._reset_episodes(dict(options or {}))
        given, first = vector_seeds(seed, self.num_envs, self._levels)
        super().reset(seed=first)
        self._running = False
        if not self._parts or not all(part.engine.alive for part in self._parts):
            self._restart()
        for i, single in enumerate(given):
            if single is not None:
                self._generators[i] = np.random.default_rng(single)
        # With logs, the seeds only seed the generators: the batch's seeds are episode numbers.
        starts = given if self._episodes is None else episodes
        self._seeds[:] = [self._draw(i) if start is None else start for i, start in enumerate(starts)]
        seed_bytes = self._seeds.astype("<u4")
        failed = self._exchange(OP_BATCH_RESET, lambda part: seed_bytes[part.start : part.stop].tobytes())
        if first is not None:
            # From an int seed: the environments whose seed gives no episode play the next seeds that give one.
            self._replace(failed, replacement_seeds(first, self.num_envs, self._levels))
        else:
            for slot in failed:
                if starts[slot] is not None:
                    raise InvalidRequestError(f"seed {given[slot]}: its game ends before the follower's first turn, so it gives no episode", "setup")
            self._start_again(failed)
        self._autoreset[:] = False
        self._running = True
        infos = self._infos()
        infos["episode_id"] = np.array([self._episode_id(i) for i in range(self.num_envs)], dtype=object)
        infos["_episode_id"] = np.ones(self.num_envs, dtype=np.bool_)
        return self._observe(), infos

    def step(self, actions) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        self._check_open()
        if not self._running:
            raise EpisodeOverError("call reset() first")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer) or actions.min() < 0 or actions.max() >= len(self.layout.actions):
            raise IllegalActionError(f"actions must be {self.num_envs} integers from 0 to {len(self.layout.actions) - 1}, got {actions!r}")
        # The environments whose episode ended at the previous step start a new one on a drawn seed (or episode).
        starting = np.flatnonzero(self._autoreset)
        self._seeds[starting] = [self._draw(i) for i in starting]
        action_bytes = actions.astype(np.uint8)
        seed_bytes = self._seeds.astype("<u4")

        def arguments(part: _Part) -> bytes:
            ending = starting[(starting >= part.start) & (starting < part.stop)]
            return action_bytes[part.start : part.stop].tobytes() + _U32.pack(len(ending)) + seed_bytes[ending].tobytes()

        self._start_again(self._exchange(OP_BATCH_STEP, arguments))
        rewards, terminations, truncations = (self._field(("step", name)) for name in ("reward", "terminated", "truncated"))
        self._autoreset = np.logical_or(terminations, truncations)
        infos = self._infos()
        if len(starting) > 0:
            infos["episode_id"] = np.full(self.num_envs, None, dtype=object)
            infos["episode_id"][starting] = [self._episode_id(i) for i in starting]
            infos["_episode_id"] = np.zeros(self.num_envs, dtype=np.bool_)
            infos["_episode_id"][starting] = True
        return self._observe(), rewards, terminations, truncations, infos

    def close_extras(self, **kwargs) -> None:
        """Stops the Node processes and closes Python's descriptor of the file (VectorEnv.close
        calls this once). The file has no name: its memory goes with the last array that maps it."""
        self._close_parts()
        self._close_file()
        self._closed = True
        self._running = False

    @property
    def engine_pids(self) -> list[int]:
        """The process ids of the Node processes playing the games."""
        return [part.engine.pid for part in self._parts]

    def _draw(self, i: int) -> int:
        """Environment i's next seed, or with logs its next episode number, as FollowerEnv draws them."""
        return int(self._generators[i].integers(0, seed_bound(self._levels) if self._episodes is None else len(self._episodes)))

    def _episode_id(self, i: int) -> str:
        return f"selfplay-{self._seeds[i]}" if self._episodes is None else self._episodes[self._seeds[i]]

    def _reset_episodes(self, options: dict) -> list[int | None]:
        """The episode number each environment starts on by reset's options (None: drawn)."""
        episode = options.pop("episode", None)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; the only option is 'episode' (with logs)")
        if episode is None:
            return [None] * self.num_envs
        if self._episodes is None:
            raise ValueError("reset's 'episode' option needs an environment made with logs")
        chosen = list(episode) if isinstance(episode, (list, tuple, np.ndarray)) else [episode] * self.num_envs
        if len(chosen) != self.num_envs:
            raise ValueError(f"reset's 'episode' option is one episode for every environment or a list of one per environment ({self.num_envs}), got {len(chosen)}")
        return [None if single is None else self._episode_number(single) for single in chosen]

    def _episode_number(self, episode) -> int:
        if isinstance(episode, str):
            if episode not in self._episode_index:
                raise ValueError(f"no episode {episode!r} in the logs")
            return self._episode_index[episode]
        try:
            number = operator.index(episode)
        except TypeError:
            number = None
        if number is None or not 0 <= number < len(self._episodes):
            raise InvalidRequestError(f"episode must be an index among the {len(self._episodes)} episodes, got {episode!r}")
        return number

    def _exchange(self, op: int, arguments: Callable[[_Part], bytes]) -> list[int]:
        """Sends `op` to every process, then reads every answer (so that the processes work at the
        same time): the environments whose seed gave no game."""
        sent: list[_Part] = []
        failed: list[int] = []
        error: CerealBarError | None = None
        try:
            for part in self._parts:
                part.engine.send(bytes([op]) + part.batch + arguments(part))
                sent.append(part)
        except CerealBarError as problem:
            error = problem
        # Every answer is read, even after an error, so that each process's stream stays in step.
        for part in sent:
            try:
                answer = part.engine.receive()
            except CerealBarError as problem:
                error = error or problem
                continue
            (count,) = _U32.unpack_from(answer)
            failed += [part.start + slot for slot in np.frombuffer(answer, "<u4", count, 4).tolist()]
        if error is not None:
            self._running = False
            raise error
        return failed

    def _start_again(self, slots: list[int]) -> None:
        """Starts the environments whose seed gave no game on new draws, as FollowerVectorEnv redraws."""
        try:
            for slot in slots:
                self._seeds[slot] = self._started_on_a_new_draw(slot)
        except CerealBarError:
            self._running = False
            raise

    def _started_on_a_new_draw(self, slot: int) -> int:
        """Starts environment `slot`, whose seed gave no game, on the next drawn seed that gives one."""
        failed = {int(self._seeds[slot])}
        for _ in range(_SEED_DRAWS):
            check_levels_left(failed, self._levels)
            seed = self._draw(slot)
            if self._started_at(slot, seed):
                return seed
            failed.add(seed)
        raise InvalidRequestError(f"none of {_SEED_DRAWS} drawn seeds gives a game", "setup")

    def _replace(self, slots: list[int], replacements: Iterator[int]) -> None:
        """Starts the environments `slots` (in their order), whose seeds of an int seed give no
        episode, on the next of `replacements` that give one, each seeding its generator."""
        for slot in sorted(slots):
            for seed in replacements:
                if self._started_at(slot, seed):
                    self._seeds[slot] = seed
                    self._generators[slot] = np.random.default_rng(seed)
                    break

    def _started_at(self, slot: int, seed: int) -> bool:
        """Starts environment `slot` on `seed`: whether its game could start."""
        part = next(part for part in self._parts if part.start <= slot < part.stop)
        return part.engine.request(bytes([OP_BATCH_RESET_AT]) + part.batch + _U32.pack(slot - part.start) + _U32.pack(seed))[0] == 1

    def _start_parts(self) -> dict:
        """Starts the Node processes, each inheriting the file, and makes each one's batch of its
        rows on it (the first sizes it, the others find it sized and all zeros); the first answer."""
        self._parts = []
        for start, stop in zip(self._bounds[:-1], self._bounds[1:]):
            self._parts.append(_Part(self._timeout, int(start), int(stop), self._file))
        answers = [part.make({**self._options, "file": f"/dev/fd/{self._file}"}, self.num_envs) for part in self._parts]
        made = answers[0]
        if any((answer["bytes"], answer["regions"]) != (made["bytes"], made["regions"]) for answer in answers):
            raise EngineError("the engine processes laid the shared file out differently")
        return made

    def _restart(self) -> None:
        """New Node processes in place of those of which one died or was killed, their batches on the
        same file (so the arrays mapped before stay the environment's), the others stopped first."""
        self._close_parts()
        # A batch takes a file another one sized only while it is all zeros, as before any batch wrote into it.
        _zero(self._file, self._file_layout[0])
        try:
            made = self._start_parts()
            if (made["bytes"], made["regions"]) != self._file_layout:
                raise EngineError("the new engine processes laid the shared file out differently from the first ones")
        except BaseException:
            self._close_parts()
            raise

    def _field(self, key: tuple[str, str]) -> np.ndarray:
        """A field of all N environments: as `copy` asks, the mapped array or a copy of it."""
        return self._fields[key].copy() if self.copy else self._fields[key]

    def _observe(self) -> dict[str, np.ndarray]:
        observations = {name: self._field((group, name)) for group, name in self._observation_keys}
        if self.copy:
            return observations
        # The same dict at every step, as FollowerVectorEnv's.
        self._observations.update(observations)
        return self._observations

    def _infos(self) -> dict[str, Any]:
        """FollowerVectorEnv's infos: each field with its mask (every environment has every field)."""
        infos: dict[str, Any] = {}
        for key in self._info_keys:
            infos[key[1]] = self._field(key)
            infos[f"_{key[1]}"] = np.ones(self.num_envs, dtype=np.bool_)
        return infos

    def _close_parts(self) -> None:
        for part in self._parts:
            part.engine.close()

    def _check_open(self) -> None:
        if self._closed:
            raise EnvClosedError("the environment is closed")


class _Part:
    """One Node process, for environments `start` to `stop` of the vector environment: once `make`
    is called, a batch of them that writes into their rows of the shared file."""

    def __init__(self, timeout: float, start: int, stop: int, file: int):
        self.start, self.stop = start, stop
        self.engine = EngineProcess(timeout, pass_fds=(file,))
        self.batch = b""

    def make(self, options: dict, size: int) -> dict:
        """Makes the batch, on `options["file"]` laid out for all `size` environments; its answer."""
        made = self.engine.request_json(bytes([OP_BATCH_MAKE]) + json.dumps({**options, "size": self.stop - self.start, "rows": {"first": self.start, "of": size}}).encode())
        self.batch = _U32.pack(made["batch"])
        return made


def _shared_file() -> int:
    """A descriptor of a new empty file for the batches to share, which no name leads to, so that
    it cannot outlive its users: an anonymous memory file (memfd_create, Linux), or where there are
    none a file made in /dev/shm (or the temporary directory) and removed at once. That file's
    name carries its maker's pid and start time: one left by a maker killed in between (a few
    microseconds) is removed here the next time (on any system). The Node processes inherit the
    descriptor and open it as /dev/fd/<n>."""
    directory = _SHARED_MEMORY if os.path.isdir(_SHARED_MEMORY) else tempfile.gettempdir()
    remove_stale_files(directory)
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        with contextlib.suppress(OSError):
            return memfd_create(_FILE_PREFIX.rstrip("-"))
    pid = os.getpid()
    fd, path = tempfile.mkstemp(prefix=f"{_FILE_PREFIX}{pid}-{_start_time(pid) or 0}-", dir=directory)
    os.unlink(path)
    return fd


def remove_stale_files(directory: str) -> list[str]:
    """Removes the shared files in `directory` whose makers are gone (a pid no process has, or one
    that another process, started at another time, has since taken); the paths removed."""
    removed = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        match = _MADE_BY.match(name)
        if match is None or _running(int(match[1]), int(match[2])):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(directory, name))
            removed.append(os.path.join(directory, name))
    return removed


def _running(pid: int, started: int) -> bool:
    """Whether process `pid`, started at `started` (0: unknown), is still running."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's
    except (OverflowError, ValueError):
        return True  # no pid of this system: not ours to judge
    now = _start_time(pid)
    return started == 0 or now == 0 or now == started


def _start_time(pid: int) -> int | None:
    """When process `pid` started (clock ticks after boot, /proc/<pid>/stat's 22nd field): 0 on a
    system without /proc, None when the process is gone."""
    if not os.path.isdir("/proc/self"):
        return 0
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read()
    except OSError:
        return None
    # The command name, in parentheses, may hold spaces: the fields after it are the 3rd on.
    return int(fields[fields.rindex(b")") + 2 :].split()[19])


def _zero(fd: int, size: int) -> None:
    """Writes zeros over the first `size` bytes of file `fd`."""
    zeros = memoryview(bytes(min(size, 1 << 20)))
    position = 0
    while position < size:
        position += os.pwrite(fd, zeros[: size - position], position)


def _mapped_fields(fd: int, made: dict, size: int) -> dict[tuple[str, str], np.ndarray]:
    """The fields of file `fd`, laid out as `made` says, each a read-only view with a leading axis of `size`."""
    memory = mmap.mmap(fd, made["bytes"], access=mmap.ACCESS_READ)
    raw = made["layout"]
    shapes = {(field["group"], field["name"]): tuple(field.get("shape", ())) for field in raw["scalars"] + raw["arrays"]}
    fields = {
        (region["group"], region["name"]): np.frombuffer(memory, region["dtype"], region["length"], region["offset"]).reshape(
            (size, *shapes[region["group"], region["name"]])
        )
        for region in made["regions"]
    }
    # 0 or 1 in a byte: the same memory as booleans.
    for name in ("terminated", "truncated"):
        fields["step", name] = fields["step", name].view(np.bool_)
    return fields
