"""`FastFollowerVectorEnv`: N follower environments played by the engine's batched follower
environment (`FollowerBatch`, docs/env.md) in one Node process, whose arrays reach Python through a
file both map: a step is one small request (the actions, and the seeds of the environments starting
a new game) and one small answer, and the observations, rewards and infos are numpy views of the
file, read without decoding anything.

It plays the same games as `FollowerVectorEnv(num_envs, description=False)` with the same seeds and
actions, seed draws and autoresets included (python/tests/test_fast.py checks it step by step).
It supports what the batch does: self-play games by seed, the "sparse" and "distance" rewards, and
no text fields. It needs Gymnasium (its spaces and vector base class).
"""

from __future__ import annotations

import json
import mmap
import operator
import os
import struct
import tempfile
from typing import Any

import numpy as np

from .engine import DEFAULT_TIMEOUT, OP_BATCH_MAKE, OP_BATCH_RESET, OP_BATCH_RESET_AT, OP_BATCH_STEP, EngineProcess
from .envs import _SEED_DRAWS, SEED_LIMIT
from .errors import CerealBarError, EnvClosedError, EpisodeOverError, IllegalActionError, InvalidRequestError
from .layout import Layout

try:
    import gymnasium
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError:  # pragma: no cover - the error says what to install
    gymnasium = None
    VectorEnv = object

_U32 = struct.Struct("<I")
#: Where the shared file is made: memory, on Linux. Elsewhere the temporary directory.
_SHARED_MEMORY = "/dev/shm"


class FastFollowerVectorEnv(VectorEnv):
    """`num_envs` follower environments (self-play games) with `FollowerEnv`'s options, without
    the text fields.

    `copy=True` (the default) returns copies of the arrays at each step; `copy=False` returns the
    mapped arrays themselves: read-only views of the shared file, the same arrays at every step,
    overwritten by the next `reset` or `step`.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP if gymnasium else None}

    def __init__(
        self,
        num_envs: int,
        reward: str = "sparse",
        gamma: float = 0.99,
        max_steps: int = 500,
        description: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        copy: bool = True,
    ):
        if gymnasium is None:
            raise ImportError("FastFollowerVectorEnv needs Gymnasium: pip install './python[gymnasium]'")
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        if description:
            raise ValueError("FastFollowerVectorEnv has no text fields: use description=False, or FollowerVectorEnv for the texts")
        self.num_envs = num_envs
        #: Return copies of the arrays (True), or the mapped arrays themselves, overwritten at the next step.
        self.copy = copy
        self._closed = False
        self._running = False
        self._engine = EngineProcess(timeout)
        options = {"size": num_envs, "reward": reward, "gamma": gamma, "maxSteps": max_steps}
        try:
            made, memory = _make_batch(self._engine, options)
        except BaseException:
            self._engine.close()
            raise
        self._batch = _U32.pack(made["batch"])
        self.layout = Layout(made["layout"])
        from . import spaces as _spaces

        # The arrays only: the batch has no texts.
        self.single_observation_space = _spaces.observation_space(self.layout, texts=False)
        self.single_action_space = _spaces.follower_action_space(self.layout)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._arrays: _MappedArrays | None = _MappedArrays(memory, made, num_envs, list(self.single_observation_space.keys()))
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)
        # Each environment draws its next game's seed as FollowerVectorEnv's (and a FollowerEnv seeded the same way) would.
        self._generators = [np.random.default_rng() for _ in range(num_envs)]
        self._seeds = np.zeros(num_envs, dtype=np.int64)

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """`seed`: None (drawn), an int (environment i plays seed + i) or one per environment. A
        given seed whose game cannot start raises InvalidRequestError (kind "setup"); a drawn one is
        drawn again."""
        self._check_open()
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; the vector environment takes none")
        seeds = [None] * self.num_envs if seed is None else [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"reset needs one seed per environment ({self.num_envs}), got {len(seeds)}")
        given = [None if single is None else _checked_seed(single) for single in seeds]
        super().reset(seed=seed if isinstance(seed, int) else None)
        self._running = False
        for i, single in enumerate(given):
            if single is not None:
                self._generators[i] = np.random.default_rng(single)
        self._seeds[:] = [self._draw(i) if single is None else single for i, single in enumerate(given)]
        failed = self._request_slots(OP_BATCH_RESET, self._seeds.astype("<u4").tobytes())
        for slot in failed:
            if given[slot] is not None:
                raise InvalidRequestError(f"seed {given[slot]}: its game ends before the follower's first turn, so it gives no episode", "setup")
        self._start_again(failed)
        self._autoreset[:] = False
        self._running = True
        infos = self._infos()
        infos["episode_id"] = np.array([f"selfplay-{single}" for single in self._seeds], dtype=object)
        infos["_episode_id"] = np.ones(self.num_envs, dtype=np.bool_)
        return self._observe(), infos

    def step(self, actions) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        self._check_open()
        if not self._running:
            raise EpisodeOverError("call reset() first")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer) or actions.min() < 0 or actions.max() >= len(self.layout.actions):
            raise IllegalActionError(f"actions must be {self.num_envs} integers from 0 to {len(self.layout.actions) - 1}, got {actions!r}")
        # The environments whose episode ended at the previous step start a new game on a drawn seed.
        starting = np.flatnonzero(self._autoreset)
        seeds = np.array([self._draw(i) for i in starting], dtype="<u4")
        failed = self._request_slots(OP_BATCH_STEP, actions.astype(np.uint8).tobytes() + _U32.pack(len(seeds)) + seeds.tobytes())
        self._seeds[starting] = seeds
        self._start_again(failed)
        arrays = self._arrays
        self._autoreset = np.logical_or(arrays.terminations, arrays.truncations)
        infos = self._infos()
        if len(starting) > 0:
            infos["episode_id"] = np.full(self.num_envs, None, dtype=object)
            infos["episode_id"][starting] = [f"selfplay-{self._seeds[i]}" for i in starting]
            infos["_episode_id"] = self._autoreset_mask(starting)
        if self.copy:
            return self._observe(), arrays.rewards.copy(), arrays.terminations.copy(), arrays.truncations.copy(), infos
        return self._observe(), arrays.rewards, arrays.terminations, arrays.truncations, infos

    def close_extras(self, **kwargs) -> None:
        """Stops the Node process, which closes its side of the file (VectorEnv.close calls this
        once). The file itself was removed as soon as both sides had it open; its memory goes with
        the last array that maps it."""
        self._engine.close()
        self._closed = True
        self._running = False
        self._arrays = None

    @property
    def engine_pid(self) -> int:
        """The process id of the Node process playing the games."""
        return self._engine.pid

    def _draw(self, i: int) -> int:
        return int(self._generators[i].integers(0, SEED_LIMIT))

    def _start_again(self, slots: list[int]) -> None:
        """Starts the environments whose seed gave no game on new draws, as FollowerVectorEnv redraws."""
        for slot in slots:
            for _ in range(_SEED_DRAWS):
                seed = self._draw(slot)
                if self._request(OP_BATCH_RESET_AT, _U32.pack(slot) + _U32.pack(seed))[0] == 1:
                    self._seeds[slot] = seed
                    break
            else:
                self._running = False
                raise InvalidRequestError(f"none of {_SEED_DRAWS} drawn seeds gives a game", "setup")

    def _request(self, op: int, arguments: bytes) -> bytearray:
        try:
            return self._engine.request(bytes([op]) + self._batch + arguments)
        except CerealBarError:
            self._running = False
            raise

    def _request_slots(self, op: int, arguments: bytes) -> list[int]:
        """The slots the answer lists: those whose seed gave no game."""
        answer = self._request(op, arguments)
        (count,) = _U32.unpack_from(answer)
        return np.frombuffer(answer, "<u4", count, 4).tolist()

    def _autoreset_mask(self, slots: np.ndarray) -> np.ndarray:
        mask = np.zeros(self.num_envs, dtype=np.bool_)
        mask[slots] = True
        return mask

    def _observe(self) -> dict[str, np.ndarray]:
        observations = self._arrays.observations
        return {name: array.copy() for name, array in observations.items()} if self.copy else observations

    def _infos(self) -> dict[str, Any]:
        """FollowerVectorEnv's infos: each field with its mask (every environment has every field)."""
        infos: dict[str, Any] = {}
        for name, array in self._arrays.infos.items():
            infos[name] = array.copy() if self.copy else array
            infos[f"_{name}"] = np.ones(self.num_envs, dtype=np.bool_)
        return infos

    def _check_open(self) -> None:
        if self._closed:
            raise EnvClosedError("the environment is closed")


class _MappedArrays:
    """The batch's fields as numpy arrays over the shared file, each with a leading axis of N (read-only)."""

    def __init__(self, memory: mmap.mmap, made: dict, size: int, observation_names: list[str]):
        raw = made["layout"]
        shapes = {(field["group"], field["name"]): tuple(field.get("shape", ())) for field in raw["scalars"] + raw["arrays"]}
        fields = {
            (region["group"], region["name"]): np.frombuffer(memory, region["dtype"], region["length"], region["offset"]).reshape(
                (size, *shapes[region["group"], region["name"]])
            )
            for region in made["regions"]
        }
        self.observations = {name: fields["observation", name] for name in observation_names}
        self.rewards = fields["step", "reward"]
        # 0 or 1 in a byte: the same memory as booleans.
        self.terminations = fields["step", "terminated"].view(np.bool_)
        self.truncations = fields["step", "truncated"].view(np.bool_)
        # In the layout's order, as FollowerVectorEnv's infos.
        self.infos = {name: array for (group, name), array in fields.items() if group == "info"}


def _checked_seed(seed) -> int:
    try:
        value = operator.index(seed)
    except TypeError:
        value = None
    if value is None or not 0 <= value < SEED_LIMIT:
        raise InvalidRequestError(f"seeds are integers from 0 to {SEED_LIMIT - 1}, got {seed!r}")
    return value


def _make_batch(engine: EngineProcess, options: dict) -> tuple[dict, mmap.mmap]:
    """Makes the batch in `engine` and maps its file. The file is removed once both sides have it
    open: nothing is left behind, even when a process dies."""
    fd, path = tempfile.mkstemp(prefix="cerealbar-batch-", dir=_SHARED_MEMORY if os.path.isdir(_SHARED_MEMORY) else None)
    try:
        made = engine.request_json(bytes([OP_BATCH_MAKE]) + json.dumps({**options, "file": path}).encode())
        return made, mmap.mmap(fd, made["bytes"], access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
        os.unlink(path)
