"""PettingZoo environments with both players as agents, "leader" and "follower", over the game's
real turn structure (shared/env/gameEnv.ts's GameEnv, played by the engine in a Node process).

`env()` is an AEC environment: `agent_selection` is always the player in control, since turns
alternate and only the player whose turn it is may act. `parallel_env()` takes an action from each
live agent at every step and plays the one of the player in control; the other's is ignored (give
anything, or leave it out). Either way one step is one action of one player.

Each agent observes its own view of the game: the leader the whole board (LeaderEnv's observation),
the follower what it sees and remembers (FollowerEnv's). The reward, the same for both, is the
points the action made: the game is cooperative. Needs PettingZoo (and Gymnasium, which it needs).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

try:
    from gymnasium import spaces
    from pettingzoo import AECEnv, ParallelEnv
except ImportError as error:  # pragma: no cover - exercised by users without the extra
    raise ImportError("cerealbar.multiagent needs PettingZoo: pip install './python[pettingzoo]'") from error

from . import render as _render
from . import spaces as _spaces
from .engine import DEFAULT_TIMEOUT, OP_RENDER, OP_RESET, OP_STEP, start_engine
from .envs import _ENV_ID, SEED_LIMIT, checked_seed, first_game, follower_action_bytes, leader_action_bytes, leader_mask
from .errors import EngineCrashedError, EngineTimeoutError, EnvClosedError, EpisodeOverError
from .layout import Layout, read_text

AGENTS = ("leader", "follower")
#: The byte that says no one acted (after reset).
_NOBODY = len(AGENTS)


@dataclass
class _Turn:
    """What the engine answered to a reset or a step."""

    control: str
    actor: str | None
    observations: dict[str, dict]
    infos: dict[str, dict]
    reward: float
    terminated: bool
    truncated: bool


class _Game:
    """The two-player game in its engine process: reset, step, render, close."""

    def __init__(self, max_steps: int, description: bool, timeout: float):
        self._options = {"role": "both", "maxSteps": max_steps, "description": description}
        self._timeout = timeout
        self._start()

    def _start(self) -> None:
        self.engine, made = start_engine(self._options, self._timeout)
        self._env_id = _ENV_ID.pack(made["env"])
        self.layouts = {agent: Layout(made["layouts"][agent]) for agent in AGENTS}

    def reset(self, seed: int | None, generator: np.random.Generator) -> tuple[_Turn, str]:
        if not self.engine.alive:  # it died or was killed: a new episode can start on a new one
            self._start()

        def draw() -> tuple[dict, bool]:
            return {"seed": int(generator.integers(0, SEED_LIMIT))}, True

        payload = first_game(lambda task: self._request(OP_RESET, json.dumps(task).encode()), *(({"seed": seed}, False) if seed is not None else draw()), draw)
        turn, end = self._decode(payload)
        episode_id, _ = read_text(payload, end)
        return turn, episode_id

    def step(self, agent: str, action) -> _Turn:
        names = self.layouts[agent].actions
        action_bytes = leader_action_bytes(action, names) if agent == "leader" else follower_action_bytes(action, names)
        return self._decode(self._request(OP_STEP, bytes([AGENTS.index(agent)]) + action_bytes))[0]

    def render_text(self) -> str:
        return self._request(OP_RENDER, b"").decode("utf-8")

    def _request(self, op: int, arguments: bytes) -> bytearray:
        return self.engine.request(bytes([op]) + self._env_id + arguments)

    def _decode(self, payload: bytearray) -> tuple[_Turn, int]:
        # 8 bytes (who is in control, who acted), the leader's block, padding to 8 bytes, the follower's block.
        leader = self.layouts["leader"].decode(payload, 8)
        follower = self.layouts["follower"].decode(payload, -(-leader.end // 8) * 8)
        leader_mask(leader.info)
        for transition, agent in ((leader, "leader"), (follower, "follower")):
            transition.info["in_control"] = payload[0] == AGENTS.index(agent)
        turn = _Turn(
            control=AGENTS[payload[0]],
            actor=None if payload[1] == _NOBODY else AGENTS[payload[1]],
            observations={"leader": leader.observation, "follower": follower.observation},
            infos={"leader": leader.info, "follower": follower.info},
            reward=leader.reward,
            terminated=leader.terminated,
            truncated=leader.truncated,
        )
        return turn, follower.end


class _TwoPlayer:
    """What the AEC and the parallel environments share: the game, the spaces, seeding, rendering."""

    metadata = {"name": "cerealbar_v0", "render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def _setup(self, max_steps: int, description: bool, render_mode: str | None, timeout: float) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self._game = _Game(max_steps, description, timeout)
        self._generator = np.random.default_rng()
        self._closed = False
        self._running = False
        self._observations: dict[str, dict] = {}
        #: The player in control: the only one that may act next.
        self._control = AGENTS[0]
        self.observation_spaces = {agent: _spaces.observation_space(self._game.layouts[agent]) for agent in AGENTS}
        self.action_spaces = {
            "leader": _spaces.leader_action_space(self._game.layouts["leader"]),
            "follower": spaces.Discrete(len(self._game.layouts["follower"].actions)),
        }

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def layouts(self) -> dict[str, Layout]:
        """Each agent's layout: its action names (`layouts[agent].actions`) and what the grid codes mean."""
        return self._game.layouts

    @property
    def engine_pid(self) -> int:
        """The process id of the Node process playing the games."""
        return self._game.engine.pid

    def render(self):
        """`ansi`: the engine's text picture of the board; `rgb_array`: a top-down picture of the leader's view (the whole board)."""
        self._check_open()
        if self.render_mode == "ansi":
            return self._game.render_text()
        if self.render_mode == "rgb_array":
            if not self._observations:
                raise EpisodeOverError("nothing to draw yet: call reset() first")
            return _render.draw(self._observations["leader"], self._game.layouts["leader"].codes)
        return None

    def close(self) -> None:
        """Stops the Node process. Closing twice is allowed; any other call afterwards raises EnvClosedError."""
        self._game.engine.close()
        self._closed = True
        self._running = False

    def _reset_game(self, seed: int | None, options: dict | None) -> tuple[_Turn, str]:
        """`reset(seed=s)` plays game s; `reset()` draws a seed from the generator that the last seeded reset seeded."""
        self._check_open()
        if options:
            # PettingZoo's API tests pass options; these environments have none.
            warnings.warn(f"cerealbar's two-player environments take no reset options; ignored {sorted(options)}", stacklevel=3)
        seed = checked_seed(seed)
        if seed is not None:
            self._generator = np.random.default_rng(seed)
        turn, episode_id = self._game.reset(seed, self._generator)
        self.agents = list(AGENTS)
        self._running = True
        for info in turn.infos.values():
            info["episode_id"] = episode_id
        self._observations = turn.observations
        self._control = turn.control
        return turn, episode_id

    def _play(self, agent: str, action) -> _Turn:
        try:
            turn = self._game.step(agent, action)
        except (EngineCrashedError, EngineTimeoutError):
            self._running = False
            raise
        self._running = not (turn.terminated or turn.truncated)
        self._observations = turn.observations
        self._control = turn.control
        return turn

    def _check_running(self) -> None:
        self._check_open()
        if not self._running:
            raise EpisodeOverError("no episode is running: call reset() first, and again after the game ended")

    def _check_open(self) -> None:
        if self._closed:
            raise EnvClosedError("the environment is closed")


class CerealBarAECEnv(_TwoPlayer, AECEnv):
    """The AEC environment: `agent_selection` is the player in control. See the module's doc."""

    def __init__(self, max_steps: int = 2000, description: bool = True, render_mode: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        AECEnv.__init__(self)
        self._setup(max_steps, description, render_mode, timeout)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        turn, _ = self._reset_game(seed, options)
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = turn.infos
        self.agent_selection = turn.control

    def observe(self, agent: str) -> dict:
        return self._observations[agent]

    def step(self, action) -> None:
        self._check_open()
        if self.agents and (self.terminations[self.agent_selection] or self.truncations[self.agent_selection]):
            self._was_dead_step(action)
            return
        self._check_running()
        agent = self.agent_selection
        turn = self._play(agent, action)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {name: turn.reward for name in self.agents}
        self.terminations = {name: turn.terminated for name in self.agents}
        self.truncations = {name: turn.truncated for name in self.agents}
        self.infos = turn.infos
        self.agent_selection = turn.control
        self._accumulate_rewards()


class CerealBarParallelEnv(_TwoPlayer, ParallelEnv):
    """The parallel environment: each step plays the action of the player in control (`infos[agent]["in_control"]`). See the module's doc."""

    def __init__(self, max_steps: int = 2000, description: bool = True, render_mode: str | None = None, timeout: float = DEFAULT_TIMEOUT):
        self._setup(max_steps, description, render_mode, timeout)

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        turn, _ = self._reset_game(seed, options)
        return dict(turn.observations), turn.infos

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        self._check_running()
        control = self._control
        if control not in actions:
            raise KeyError(f"it is the {control}'s turn: actions must hold an action for {control!r}, got {sorted(actions)}")
        turn = self._play(control, actions[control])
        agents = self.agents
        result = (
            {agent: turn.observations[agent] for agent in agents},
            {agent: turn.reward for agent in agents},
            {agent: turn.terminated for agent in agents},
            {agent: turn.truncated for agent in agents},
            {agent: turn.infos[agent] for agent in agents},
        )
        if turn.terminated or turn.truncated:
            self.agents = []
        return result


def env(**kwargs) -> CerealBarAECEnv:
    """The AEC environment: `cerealbar.multiagent.env(max_steps=2000, description=True, render_mode=None)`."""
    return CerealBarAECEnv(**kwargs)


def parallel_env(**kwargs) -> CerealBarParallelEnv:
    """The parallel environment, with the same arguments as `env`."""
    return CerealBarParallelEnv(**kwargs)
