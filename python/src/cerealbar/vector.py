"""`FollowerVectorEnv`: N follower environments in one Node process, all stepped in one round trip
(the engine's batched step), with Gymnasium's vector API and its default autoreset (an
environment whose episode ended is reset at the next step, which then returns its first
observation, reward 0 and no termination). Observations are written into arrays allocated once.

It plays the same games as N `FollowerEnv`s in a `gymnasium.vector.SyncVectorEnv`, with the same
seeds and actions (python/tests/test_vector.py checks it), in one process instead of N; but an int
seed s whose seeds s + i cross one that gives no episode has it replaced (see `reset`), where the
SyncVectorEnv raises. After its process died, the next reset starts a new one. It needs Gymnasium
(its spaces and vector base class).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from copy import deepcopy
from typing import Any

import numpy as np

from .engine import DEFAULT_TIMEOUT, OP_MAKE, OP_RESET, OP_STEP_MANY, EngineProcess
from .errors import EngineCrashedError, EngineTimeoutError, EnvClosedError, EpisodeOverError, IllegalActionError, InvalidRequestError
from .layout import Layout, Transition, read_text

try:
    import gymnasium
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space, concatenate, create_empty_array
except ImportError:  # pragma: no cover - the error says what to install
    gymnasium = None
    VectorEnv = object

from .envs import checked_levels, first_game, refuse_frames, replacement_seeds, seed_bound, vector_seeds

_U32 = struct.Struct("<I")


class FollowerVectorEnv(VectorEnv):
    """`num_envs` follower environments (self-play games) with `FollowerEnv`'s options, `levels` included."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP if gymnasium else None}

    def __init__(
        self,
        num_envs: int,
        reward: str = "sparse",
        gamma: float = 0.99,
        max_steps: int = 500,
        description: bool = True,
        timeout: float = DEFAULT_TIMEOUT,
        copy: bool = True,
        levels: int | None = None,
        render_mode: None = None,
        render_camera: None = None,
        render_size: None = None,
        observation_mode: None = None,
    ):
        if gymnasium is None:
            raise ImportError("FollowerVectorEnv needs Gymnasium: pip install './python[gymnasium]'")
        refuse_frames("FollowerVectorEnv", render_mode, render_camera, render_size, observation_mode)
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self._levels = checked_levels(levels, None)
        self.num_envs = num_envs
        #: Return copies of the observation arrays (True), or the arrays themselves, overwritten at the next step.
        self.copy = copy
        self._closed = False
        self._running = False
        self._timeout = timeout
        self._options = {"role": "follower", "reward": reward, "gamma": gamma, "maxSteps": max_steps, "description": description}
        made = self._start_engine()
        self.layout = Layout(made["layout"])
        from . import spaces as _spaces

        self.single_observation_space = _spaces.observation_space(self.layout)
        self.single_action_space = _spaces.follower_action_space(self.layout)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._observations = create_empty_array(self.single_observation_space, num_envs)
        self._rewards = np.zeros(num_envs, dtype=np.float64)
        self._terminations = np.zeros(num_envs, dtype=np.bool_)
        self._truncations = np.zeros(num_envs, dtype=np.bool_)
        self._autoreset = np.zeros(num_envs, dtype=np.bool_)
        # Each environment draws its next game's seed as a FollowerEnv seeded the same way would.
        self._generators = [np.random.default_rng() for _ in range(num_envs)]

    @property
    def engine_pid(self) -> int:
        """The process id of the Node process playing the games."""
        return self._engine.pid

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """`seed`: None (drawn), an int s (environment i plays seed s + i; the rare seeds among them
        that give no episode are replaced, in the order of their environments, by the seeds from
        s + num_envs on that give one), or one per environment (None: drawn; a given seed that
        gives no episode raises InvalidRequestError, kind "setup"). Python and numpy integers are
        seeds; anything else, and with `levels` a seed outside them, raises InvalidRequestError
        (a ValueError) and changes nothing. After the engine process died or was killed, a new
        one is started."""
        self._check_open()
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; the vector environment takes none")
        seeds, first = vector_seeds(seed, self.num_envs, self._levels)
        super().reset(seed=first)
        self._running = False
        if not self._engine.alive:  # it died or was killed: the new episodes start in a new one
            self._start_engine()
        transitions: list[Transition] = []
        failed: list[int] = []
        for i, single in enumerate(seeds):
            try:
                transitions.append(self._reset_one(i, single))
            except InvalidRequestError as error:
                if first is None or error.kind != "setup":
                    raise
                failed.append(i)
                transitions.append(None)  # replaced below
        replacements = replacement_seeds(first, self.num_envs, self._levels) if failed else iter(())
        for i in failed:
            transitions[i] = self._reset_replaced(i, replacements)
        self._terminations[:] = False
        self._truncations[:] = False
        self._autoreset[:] = False
        self._running = True
        infos: dict = {}
        for i, transition in enumerate(transitions):
            infos = self._add_info(infos, transition.info, i)
        return self._observe(transitions), infos

    def step(self, actions) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        self._check_open()
        if not self._running:
            raise EpisodeOverError("call reset() first")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer) or actions.min() < 0 or actions.max() >= len(self.layout.actions):
            raise IllegalActionError(f"actions must be {self.num_envs} integers from 0 to {len(self.layout.actions) - 1}, got {actions!r}")
        transitions: list[Transition | None] = [None] * self.num_envs
        stepping = np.flatnonzero(~self._autoreset)
        if len(stepping) > 0:
            request = bytes([OP_STEP_MANY]) + _U32.pack(len(stepping)) + b"".join(self._ids[i] + bytes([int(actions[i])]) for i in stepping)
            try:
                payload = self._engine.request(request)
            except (EngineCrashedError, EngineTimeoutError):
                self._running = False
                raise
            position = 0
            for i in stepping:
                (length,) = _U32.unpack_from(payload, position)
                transitions[i] = self.layout.decode(payload, position + 4)
                position += 4 + length
        infos: dict = {}
        for i in range(self.num_envs):
            transition = transitions[i]
            if transition is None:  # its episode ended at the last step: it starts a new one now
                transition = transitions[i] = self._reset_one(i, None)
                self._rewards[i], self._terminations[i], self._truncations[i] = 0.0, False, False
            else:
                self._rewards[i], self._terminations[i], self._truncations[i] = transition.reward, transition.terminated, transition.truncated
            infos = self._add_info(infos, transition.info, i)
        self._autoreset = np.logical_or(self._terminations, self._truncations)
        return self._observe(transitions), np.copy(self._rewards), np.copy(self._terminations), np.copy(self._truncations), infos

    def close_extras(self, **kwargs) -> None:
        """Stops the Node process (VectorEnv.close calls this once)."""
        self._engine.close()
        self._closed = True
        self._running = False

    def _start_engine(self) -> dict:
        """A new engine process with the N environments made in it; the first make's answer."""
        engine = EngineProcess(self._timeout)
        try:
            made = [engine.request_json(bytes([OP_MAKE]) + json.dumps(self._options).encode()) for _ in range(self.num_envs)]
        except BaseException:
            engine.close()
            raise
        self._engine = engine
        self._ids = [_U32.pack(answer["env"]) for answer in made]
        return made[0]

    def _reset_replaced(self, i: int, replacements: Iterator[int]) -> Transition:
        """Environment i, whose seed (of an int seed) gives no episode, on the next replacement that gives one."""
        for seed in replacements:
            try:
                return self._reset_one(i, seed)
            except InvalidRequestError as error:
                if error.kind != "setup":
                    raise
        raise AssertionError("replacement_seeds ends with an error")  # pragma: no cover

    def _reset_one(self, i: int, seed: int | None) -> Transition:
        if seed is not None:
            self._generators[i] = np.random.default_rng(seed)

        def draw() -> tuple[dict, bool]:
            # A drawn seed whose game cannot start is drawn again, as FollowerEnv does.
            return {"seed": int(self._generators[i].integers(0, seed_bound(self._levels)))}, True

        def send(task: dict) -> bytearray:
            return self._engine.request(bytes([OP_RESET]) + self._ids[i] + json.dumps(task).encode())

        payload = first_game(send, *(({"seed": seed}, False) if seed is not None else draw()), draw, self._levels)
        transition = self.layout.decode(payload)
        transition.info["episode_id"], _ = read_text(payload, transition.end)
        return transition

    def _observe(self, transitions) -> Any:
        self._observations = concatenate(self.single_observation_space, [transition.observation for transition in transitions], self._observations)
        return deepcopy(self._observations) if self.copy else self._observations

    def _check_open(self) -> None:
        if self._closed:
            raise EnvClosedError("the environment is closed")
