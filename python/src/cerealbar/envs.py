"""`FollowerEnv` and `LeaderEnv`: Gymnasium environments whose games the TypeScript engine plays in
a Node process (shared/env/env.ts's FollowerEnv and shared/env/leaderEnv.ts's LeaderEnv). No rule
of the game lives here: this module chooses tasks, sends actions and reads the answers.

With Gymnasium installed they subclass `gymnasium.Env` and have `observation_space` and
`action_space`; without it they are plain classes with the same methods, and both spaces are None.
"""

from __future__ import annotations

import json
import operator
import os
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import render as _render
from .engine import DEFAULT_TIMEOUT, OP_FRAME_VIEW, OP_RENDER, OP_RESET, OP_STEP, start_engine
from .frames import CAMERAS, DEFAULT_SIZE, RENDER_CAMERAS, FrameRenderer, checked_camera, checked_size, default_camera
from .errors import EngineCrashedError, EngineTimeoutError, EnvClosedError, EpisodeOverError, IllegalActionError, InvalidRequestError
from .layout import Layout, Transition, read_text

try:
    import gymnasium
except ImportError:
    gymnasium = None

if gymnasium is not None:
    from . import spaces as _spaces

    _Env = gymnasium.Env
else:

    class _Env:
        """What the environments use of gymnasium.Env, for when Gymnasium is not installed."""

        metadata: dict[str, Any] = {}
        render_mode: str | None = None
        observation_space = None
        action_space = None
        spec = None
        _np_random: np.random.Generator | None = None

        @property
        def np_random(self) -> np.random.Generator:
            if self._np_random is None:
                self._np_random = np.random.default_rng()
            return self._np_random

        def reset(self, *, seed: int | None = None, options: dict | None = None):
            # The same generator as gymnasium.utils.seeding.np_random(seed).
            if seed is not None:
                self._np_random = np.random.default_rng(seed)

        @property
        def unwrapped(self):
            return self

        def __enter__(self):
            return self

        def __exit__(self, *exc_info) -> bool:
            self.close()
            return False


#: Seeds are 32-bit in the engine.
SEED_LIMIT = 2**32
#: Drawn self-play seeds whose game cannot start (rare) are replaced by new draws, this many times at most.
_SEED_DRAWS = 100
_ENV_ID = struct.Struct("<I")
#: What `observation_mode` takes: None, today's observation, or "pixels", with the frame as `image` beside it.
OBSERVATION_MODES = (None, "pixels")


class _EngineEnv(_Env):
    """What both roles share: the engine process, reset, step, render, frames and close."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    #: Self-play's seeds are the levels 0 to levels - 1 (None: any seed).
    _levels: int | None = None

    def __init__(
        self,
        make_options: dict,
        render_mode: str | None,
        timeout: float,
        render_camera: str | None = None,
        render_size=DEFAULT_SIZE,
        observation_mode: str | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        role = make_options["role"]
        render_camera = checked_camera(render_camera)
        if observation_mode not in OBSERVATION_MODES:
            raise ValueError(f"observation_mode must be None (the arrays and texts) or 'pixels' (with the frame as 'image'), got {observation_mode!r}")
        if observation_mode == "pixels" and render_camera == "map":
            raise ValueError(f"observation_mode='pixels' draws the world from a camera ({', '.join(map(repr, CAMERAS))}); render_camera='map' is only for render()")
        self.render_mode = render_mode
        self._render_camera: str = render_camera or default_camera(role)
        #: (width, height) of render()'s frames and of the pixels observation's image.
        self.render_size: tuple[int, int] = checked_size(DEFAULT_SIZE if render_size is None else render_size)
        #: None: the arrays and texts; "pixels": with the frame of `image_camera` as `image`.
        self.observation_mode = observation_mode
        #: The camera of the pixels observation's image: render_camera if given, else the role's own view.
        self.image_camera: str = render_camera or default_camera(role)
        self._make_options = make_options
        self._timeout = timeout
        self._closed = False
        self._running = False
        self._observation: dict | None = None
        # The frame renderer's process starts at the first frame.
        self._renderer = FrameRenderer(timeout)
        self._episode_number = 0
        self._frame_view: bytes | None = None
        self._frames_now: dict[tuple[str, tuple[int, int]], np.ndarray] = {}
        self._start_engine()

    @property
    def engine_pid(self) -> int:
        """The process id of the Node process playing this environment's games."""
        return self._engine.pid

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """`seed`: None, or a Python or numpy integer from 0 to 2**32 - 1 (with `levels`, one of
        them); anything else raises InvalidRequestError and changes nothing."""
        self._check_open()
        seed = checked_seed(seed, self._levels)
        super().reset(seed=seed)
        if not self._engine.alive:  # it died or was killed: a new episode can start on a new one
            self._start_engine()
        options = dict(options or {})
        payload = first_game(lambda task: self._request(OP_RESET, json.dumps(task).encode()), *self._task(seed, options), lambda: self._task(None, options), self._levels)
        transition = self._decode(payload)
        transition.info["episode_id"], _ = read_text(payload, transition.end)
        self._episode_number += 1
        self._now(transition.observation)
        self._running = True
        return transition.observation, transition.info

    def step(self, action) -> tuple[dict, float, bool, bool, dict]:
        self._check_open()
        if not self._running:
            raise EpisodeOverError("no episode is running: call reset() first, and again after terminated or truncated")
        transition = self._decode(self._request(OP_STEP, self._action_bytes(action)))
        self._running = not (transition.terminated or transition.truncated)
        self._now(transition.observation)
        return transition.observation, transition.reward, transition.terminated, transition.truncated, transition.info

    def render(self):
        """`ansi`: the engine's text picture of what this role sees. `rgb_array`: the frame of
        `render_camera` at `render_size`, a (height, width, 3) uint8 array of the agent's own view
        drawn by the frame renderer; with render_camera="map", the small top-down picture of the
        observation (8 pixels a cell)."""
        self._check_open()
        if self.render_mode == "ansi":
            return self._request(OP_RENDER, b"").decode("utf-8")
        if self.render_mode == "rgb_array":
            if self._observation is None:
                raise EpisodeOverError("nothing to draw yet: call reset() first")
            if self.render_camera == "map":
                return _render.draw(self._observation, self.layout.codes)
            return self._frame(self.render_camera, self.render_size).copy()
        return None

    def close(self) -> None:
        """Stops the Node process and the frame renderer's. Closing twice is allowed; any other call afterwards raises EnvClosedError."""
        self._engine.close()
        self._renderer.close()
        self._closed = True
        self._running = False

    @property
    def render_camera(self) -> str:
        """What render() draws with render_mode="rgb_array": "first-person", "overhead", "angled",
        or "map", the small top-down picture of the observation. It may be changed between renders."""
        return self._render_camera

    @render_camera.setter
    def render_camera(self, camera: str) -> None:
        if camera is None:
            raise ValueError(f"render_camera must be one of {', '.join(map(repr, RENDER_CAMERAS))}, got None")
        self._render_camera = checked_camera(camera)

    @property
    def renderer_pid(self) -> int | None:
        """The process id of the frame renderer (`cerealbar frames`) while one runs: it starts at the first frame."""
        return self._renderer.pid

    def _now(self, observation: dict) -> None:
        """The episode is at a new state: frames drawn before are of another, and the pixels observation gets its image."""
        self._frame_view = None
        self._frames_now.clear()
        self._observation = observation
        if self.observation_mode == "pixels":
            observation["image"] = self._frame(self.image_camera, self.render_size).copy()

    def _frame(self, camera: str, size: tuple[int, int]) -> np.ndarray:
        """The frame of the state now from `camera` at `size` (drawn once a state)."""
        frame = self._frames_now.get((camera, size))
        if frame is None:
            if self._frame_view is None:
                self._frame_view = bytes(self._request(OP_FRAME_VIEW, b""))
            frame = self._renderer.frame(f"episode-{self._episode_number}", self._frame_view, camera, size)
            self._frames_now[(camera, size)] = frame
        return frame

    def _start_engine(self) -> None:
        self._engine, made = start_engine(self._make_options, self._timeout)
        self._env_id: int = made["env"]
        #: Where everything lies in the engine's answers, the action names and what the grid codes mean.
        self.layout = Layout(made["layout"])
        self._episodes: list[str] | None = made["episodes"]
        if gymnasium is not None:
            self.observation_space = _spaces.observation_space(self.layout)
            if self.observation_mode == "pixels":
                self.observation_space = _spaces.with_image(self.observation_space, self.render_size)
            self.action_space = self._action_space()

    def _request(self, op: int, arguments: bytes) -> bytearray:
        try:
            return self._engine.request(bytes([op]) + _ENV_ID.pack(self._env_id) + arguments)
        except (EngineCrashedError, EngineTimeoutError):
            self._running = False
            raise

    def _check_open(self) -> None:
        if self._closed:
            raise EnvClosedError("the environment is closed")

    def _draw_seed(self) -> int:
        return int(self.np_random.integers(0, seed_bound(self._levels)))

    def _decode(self, payload: bytearray) -> Transition:
        return self.layout.decode(payload)

    def _task(self, seed: int | None, options: dict) -> tuple[dict, bool]:
        """The reset request for the engine, and whether it was drawn at random (then a seed with no game is redrawn)."""
        raise NotImplementedError

    def _action_bytes(self, action) -> bytes:
        raise NotImplementedError

    def _action_space(self):
        raise NotImplementedError


class FollowerEnv(_EngineEnv):
    """The agent plays the follower; the engine plays the leader's turns between its actions.

    Episodes are self-play games against the scripted leader, one per seed (`reset(seed=s)` plays
    game s, the same game as the TypeScript `reset({ seed: s })`), or with `logs` the recorded
    instructions of logged games, as in evaluation (`reset(options={"episode": id or index})`, or
    one drawn with the env's generator). With `levels=K`, self-play's seeds are the K levels 0 to
    K - 1: drawn among them, and a given seed outside them is refused (ValueError). Rewards are
    docs/env.md's: `reward` is "sparse", "distance" or "ndtw" (logs only), `gamma` the shaping's
    discount (use your learner's).

    Actions: 0 MF, 1 MB, 2 RL, 3 RR, 4 DONE (`layout.actions`). While the follower has control the
    engine accepts all five (a move into an obstacle changes nothing); `info["action_mask"]` marks
    the ones that change something.

    Frames (docs/python.md, "Rendering and pixels"): with render_mode="rgb_array", render() draws
    the follower's view in 3D from `render_camera` ("first-person" by default, "overhead",
    "angled"; "map" is the small top-down picture) at `render_size` (width, height); with
    observation_mode="pixels", the observation also has that frame (of the follower's eyes unless
    `render_camera` says otherwise) as `image`. They show only what the follower knows.
    """

    def __init__(
        self,
        reward: str = "sparse",
        gamma: float = 0.99,
        max_steps: int = 500,
        logs: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
        description: bool = True,
        render_mode: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        levels: int | None = None,
        render_camera: str | None = None,
        render_size: tuple[int, int] = DEFAULT_SIZE,
        observation_mode: str | None = None,
    ):
        self._levels = checked_levels(levels, logs)
        options: dict[str, Any] = {"role": "follower", "reward": reward, "gamma": gamma, "maxSteps": max_steps, "description": description}
        if logs is not None:
            options["logs"] = log_files(logs)
        super().__init__(options, render_mode, timeout, render_camera, render_size, observation_mode)
        self._episode_index = {episode: i for i, episode in enumerate(self._episodes or [])}

    @property
    def episodes(self) -> list[str] | None:
        """With logs, the episode ids (`<gameId>#<instruction index>`) in the order of their indices; else None."""
        return self._episodes

    def _task(self, seed: int | None, options: dict) -> tuple[dict, bool]:
        episode = options.pop("episode", None)
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; the only option is 'episode' (with logs)")
        if self._episodes is None:
            if episode is not None:
                raise ValueError("reset's 'episode' option needs an environment made with logs")
            return ({"seed": seed}, False) if seed is not None else ({"seed": self._draw_seed()}, True)
        if episode is None:
            return {"episode": int(self.np_random.integers(0, len(self._episodes)))}, False
        if isinstance(episode, str):
            if episode not in self._episode_index:
                raise ValueError(f"no episode {episode!r} in the logs")
            return {"episode": self._episode_index[episode]}, False
        return {"episode": operator.index(episode)}, False

    def _action_bytes(self, action) -> bytes:
        return follower_action_bytes(action, self.layout.actions)

    def _action_space(self):
        return _spaces.follower_action_space(self.layout)


class LeaderEnv(_EngineEnv):
    """The agent plays the leader; a built-in follower agent (`follower`: "heuristic" or "random")
    plays the follower's turns, reading the instructions as text from its own observations.

    Episodes are self-play games, one per seed. Actions: `{"action": i, "instruction": text}` with
    i = 0 MF, 1 MB, 2 RL, 3 RR, 4 END, 5 INSTRUCTION (the text goes only with 5; a bare integer
    does for 0 to 4). An action the engine refuses (End Turn with nothing queued, a move with no
    steps left, an empty instruction) changes nothing and counts as a step: `info["refused"]` says
    why. The reward is the points made during the step.

    Frames as FollowerEnv's, of the leader's view (the whole board), "overhead" by default.
    """

    def __init__(
        self,
        max_steps: int = 500,
        follower: str = "heuristic",
        render_mode: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        render_camera: str | None = None,
        render_size: tuple[int, int] = DEFAULT_SIZE,
        observation_mode: str | None = None,
    ):
        super().__init__({"role": "leader", "maxSteps": max_steps, "follower": follower}, render_mode, timeout, render_camera, render_size, observation_mode)

    def _task(self, seed: int | None, options: dict) -> tuple[dict, bool]:
        if options:
            raise ValueError(f"unknown reset options {sorted(options)}; the leader environment takes none")
        return ({"seed": seed}, False) if seed is not None else ({"seed": self._draw_seed()}, True)

    def _action_bytes(self, action) -> bytes:
        return leader_action_bytes(action, self.layout.actions)

    def _action_space(self):
        return _spaces.leader_action_space(self.layout)

    def _decode(self, payload: bytearray) -> Transition:
        transition = super()._decode(payload)
        leader_mask(transition.info)
        return transition


def refuse_frames(name: str, render_mode, render_camera, render_size, observation_mode) -> None:
    """A vector environment draws no frames: its render arguments and the pixels observation are refused, saying what does draw them."""
    given = {key: value for key, value in (("render_mode", render_mode), ("render_camera", render_camera), ("render_size", render_size), ("observation_mode", observation_mode)) if value is not None}
    if given:
        arguments = ", ".join(f"{key}={value!r}" for key, value in given.items())
        raise ValueError(
            f"{name} draws no frames ({arguments}): rendering and observation_mode='pixels' are FollowerEnv's and LeaderEnv's. "
            "For pixels over several games use FollowerEnvs in Gymnasium's SyncVectorEnv or AsyncVectorEnv, e.g. "
            "gymnasium.make_vec('CerealBar/Follower-v0', num_envs=N, vectorization_mode='sync', observation_mode='pixels') "
            "(each environment runs its own frame renderer)"
        )


def first_game(send: Callable[[dict], bytearray], task: dict, drawn: bool, draw: Callable[[], tuple[dict, bool]], levels: int | None = None) -> bytearray:
    """The answer to the reset request for `task`; when its seed was drawn at random and gives no
    game (rare), the answer for the next drawn task that does (with `levels`, while some level
    has not failed)."""
    failed: set[int] = set()
    for _ in range(_SEED_DRAWS):
        try:
            return send(task)
        except InvalidRequestError as error:
            if not (drawn and error.kind == "setup"):
                raise
        failed.add(task["seed"])
        check_levels_left(failed, levels)
        task, drawn = draw()
    raise InvalidRequestError(f"none of {_SEED_DRAWS} drawn seeds gives a game", "setup")


def checked_levels(levels, logs) -> int | None:
    """`levels` as a number of levels (None: any seed), refused unless a positive integer, and with logs."""
    if levels is None:
        return None
    if logs is not None:
        raise ValueError("levels are self-play's seeds: with logs, the episodes are the logs' instructions, so give one or the other")
    if isinstance(levels, bool) or not isinstance(levels, (int, np.integer)) or levels < 1:
        raise ValueError(f"levels must be a positive integer (seeds 0 to levels - 1) or None, got {levels!r}")
    return int(levels)


def seed_bound(levels: int | None) -> int:
    """What self-play's seeds are drawn below: the levels' number, or every seed."""
    return SEED_LIMIT if levels is None else levels


_INTEGERS = "Python ints or numpy integers, not bools"


def _seeds_among(levels: int | None) -> str:
    """The seeds, in words."""
    return f"an integer from 0 to {SEED_LIMIT - 1}" if levels is None else f"one of the {levels} levels, an integer from 0 to {levels - 1}"


def _given(value) -> str:
    return f"{value!r} (type {type(value).__name__})"


def _is_integer(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def checked_seed(seed, levels: int | None = None, what: str = "seed") -> int | None:
    """A reset's seed as an int (None stays None): a Python or numpy integer, not a bool, from 0 to
    2**32 - 1, or with `levels` one of them (a given seed outside them would play a game the
    learner is not meant to see). Anything else raises InvalidRequestError (a ValueError) saying
    what was given and what is accepted."""
    if seed is None:
        return None
    if _is_integer(seed) and 0 <= seed < seed_bound(levels):
        return int(seed)
    raise InvalidRequestError(f"{what} must be None or {_seeds_among(levels)} ({_INTEGERS}), got {_given(seed)}")


def vector_seeds(seed, size: int, levels: int | None = None) -> tuple[list[int | None], int | None]:
    """A vector environment's reset seed for `size` environments: one seed or None (drawn) per
    environment, and the first seed when `seed` is an int (environment i then plays seed + i, or
    if that gives no episode a replacement: see `replacement_seeds`). `seed` is None, a Python or
    numpy integer, or a sequence (a list, a tuple, a 1-D numpy array...) of one seed or None per
    environment; anything else (a bool, a float, a string, a wrong length or nesting, a seed out of
    range) raises InvalidRequestError saying what was given and what is accepted, before anything
    changes."""
    if seed is None:
        return [None] * size, None
    highest = seed_bound(levels) - size
    first = (
        f"an integer s from 0 to {highest} (environment i plays seed s + i)"
        if highest >= 0
        else f"no integer (environment i would play seed s + i, and {size} environments need more than the {levels} levels)"
    )
    accepted = f"None, {first}, or a sequence of one seed per environment ({size}), each None or {_seeds_among(levels)} ({_INTEGERS})"
    if _is_integer(seed):
        if 0 <= seed <= highest:
            return [int(seed) + i for i in range(size)], int(seed)
        raise InvalidRequestError(f"seed must be {accepted}; got {_given(seed)}")
    if isinstance(seed, (str, bytes, bytearray)) or not isinstance(seed, (Sequence, np.ndarray)) or getattr(seed, "ndim", 1) != 1:
        raise InvalidRequestError(f"seed must be {accepted}; got {_given(seed)}")
    if len(seed) != size:
        raise InvalidRequestError(f"seed must be {accepted}; got a {type(seed).__name__} of {len(seed)}")
    return [checked_seed(single, levels, f"seed[{i}]") for i, single in enumerate(seed)], None


def replacement_seeds(first: int, size: int, levels: int | None) -> Iterator[int]:
    """The seeds that replace, in the order of their environments, those of an int seed `first`
    (environment i plays first + i) that give no episode: first + size, first + size + 1, ...
    (each tried in turn; one that gives no episode is skipped), up to the last seed, or level;
    past it, InvalidRequestError (kind "setup")."""
    yield from range(first + size, seed_bound(levels))
    among = "seeds" if levels is None else f"{levels} levels"
    raise InvalidRequestError(f"seed {first}: the {among} from {first} on give fewer than {size} episodes, one per environment", "setup")


def check_levels_left(failed: set[int], levels: int | None) -> None:
    """Gives up once every level has given no game (`failed`: the seeds that gave none): drawing again would never end."""
    if levels is not None and len(failed) >= levels:
        raise InvalidRequestError(f"none of the {levels} levels gives a game (seeds 0 to {levels - 1}): use more levels", "setup")


def leader_action_bytes(action, names: list[str]) -> bytes:
    """A leader action as the engine reads it: `{"action": i, "instruction": text}` (the text only
    with INSTRUCTION), or a bare index for the others."""
    if isinstance(action, Mapping):
        if "action" not in action:
            raise IllegalActionError(f"a leader action is {{'action': index, 'instruction': text}}, got {action!r}")
        index, text = action_index(action["action"], names), action.get("instruction")
    else:
        index, text = action_index(action, names), None
    if names[index] != "INSTRUCTION":
        return bytes([index])
    if not isinstance(text, str):
        raise IllegalActionError(f"INSTRUCTION needs its text: {{'action': {index}, 'instruction': 'get the 3 red stars'}}, got {action!r}")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise IllegalActionError(f"the instruction is not valid Unicode text: {error}") from None
    return bytes([index]) + struct.pack("<I", len(data)) + data


def follower_action_bytes(action, names: list[str]) -> bytes:
    return bytes([action_index(action, names)])


def leader_mask(info: dict) -> None:
    """The leader's action mask as Gymnasium's Dict space takes it: `action_space.sample(mask=info["action_mask"])`
    draws a legal action (and any instruction text)."""
    info["action_mask"] = {"action": info["action_mask"], "instruction": None}


def action_index(action, names: list[str]) -> int:
    try:
        index = operator.index(action)
    except TypeError:
        index = None
    if index is None or not 0 <= index < len(names):
        raise IllegalActionError(f"an action is an integer from 0 to {len(names) - 1} ({', '.join(names)}), got {action!r}")
    return index


def log_files(logs: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    """The .jsonl logs among `logs` (files, or directories searched one level deep), as absolute paths."""
    paths = [logs] if isinstance(logs, (str, os.PathLike)) else list(logs)
    files: list[str] = []
    for path in map(Path, paths):
        if path.is_dir():
            files.extend(str(file.resolve()) for file in sorted(path.glob("*.jsonl")))
        elif path.is_file():
            files.append(str(path.resolve()))
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
    if not files:
        raise ValueError(f"no .jsonl logs in {', '.join(map(str, paths))}")
    return files
