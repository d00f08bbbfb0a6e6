"""`FollowerVectorEnv`: N follower environments in one Node process, all stepped in one round trip
(the engine's batched step), with Gymnasium's vector API and its default autoreset (an
environment whose episode ended is reset at the next step, which then returns its first
observation, reward 0 and no termination). Observations are written into arrays allocated once.

It plays the same games as N `FollowerEnv`s in a `gymnasium.vector.SyncVectorEnv`, with the same
seeds and actions (python/tests/test_vector.py checks it), in one process instead of N. It needs
Gymnasium (its spaces and vector base class).
"""

from __future__ import annotations

import json
import struct
from copy import deepcopy
from typing import Any

import numpy as np

from .engine import DEFAULT_TIMEOUT, OP_MAKE, OP_RESET, OP_STEP_MANY, EngineProcess
from .errors import EnvClosedError, EpisodeOverError, IllegalActionError
from .layout import Layout, Transition, read_text

try:
    import gymnasium
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space, concatenate, create_empty_array
except ImportError:  # pragma: no cover - the error says what to install
    gymnasium = None
    VectorEnv = object

from .envs import check_level, checked_levels, first_game, seed_bound

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
    ):
        if gymnasium is None:
            raise ImportError("FollowerVectorEnv needs Gymnasium: pip install './python[gymnasium]'")
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self._levels = checked_levels(levels, None)
        self.num_envs = num_envs
        #: Return copies of the observation arrays (True), or the arrays themselves, overwritten at the next step.
        self.copy = copy
        self._closed = False
        self._running = False
        self._engine = EngineProcess(timeout)
        options = {"role": "follower", "reward": reward, "gamma": gamma, "maxSteps": max_steps, "description": description}
        try:
            made = [self._engine.request_json(bytes([OP_MAKE]) + json.dumps(options).encode()) for _ in range(num_envs)]
        except BaseException:
            self._engine.close()
            raise
        self._ids = [_U32.pack(answer["env"]) for answer in made]
        self.layout = Layout(made[0]["layout"])
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

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None) -> tuple[Any, dict]:
        """`seed`: None (drawn), an int (environment i plays seed + i) or one per environment; with
        `levels`, each of them one of the levels (ValueError otherwise, and nothing changes)."""
        self._check_open()
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; the vector environment takes none")
        seeds = [None] * self.num_envs if seed is None else [seed + i for i in range(self.num_envs)] if isinstance(seed, int) else list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"reset needs one seed per environment ({self.num_envs}), got {len(seeds)}")
        for single in seeds:
            check_level(single, self._levels)
        super().reset(seed=seed if isinstance(seed, int) else None)
        transitions = [self._reset_one(i, single) for i, single in enumerate(seeds)]
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
            payload = self._engine.request(request)
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
