"""Followers written in Python for the agent protocol (docs/agents.md): subclass `FollowerAgent`,
write `act`, and call `run()`. The program then plays the follower wherever the project runs an
agent, live against a person (`npx cerealbar agent --agent "python3 my_agent.py"`) and in offline
evaluation (`npx cerealbar eval --agent "python3 my_agent.py"`), and its `act` gets the very
observation and `action_mask` a `FollowerEnv` gives: the host's JSON observation is encoded by
the engine's own encoder (an observer environment), not by code written twice.

    import cerealbar

    class Forward(cerealbar.FollowerAgent):
        name = "forward"

        def act(self, observation, info):
            return 0 if info["action_mask"][0] else 4  # MF while it can, then DONE

    if __name__ == "__main__":
        Forward().run()
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from .engine import DEFAULT_TIMEOUT, OP_ENCODE, OP_MAKE, EngineProcess
from .envs import _ENV_ID, action_index
from .errors import CerealBarError, IllegalActionError
from .layout import Layout

PROTOCOL = "cerealbar-agent"
PROTOCOL_VERSION = 2
#: The grid of self-play games, and of live games on the default maps.
_SELF_PLAY_GRID = (25, 25)


class AgentProtocolError(CerealBarError):
    """The host sent something the agent protocol does not allow."""


class FollowerAgent:
    """A follower for the agent protocol. Override `act` (and `reset` if the agent keeps state).

    Class attributes set the observation, as `FollowerEnv`'s arguments do: `description` adds the
    English description, `max_steps` bounds `card_seen_ago`, and `grid` (width, height) pads the
    grids to that size (None: the map's own size; a FollowerEnv pads to the largest map of its
    logs, 25 x 25 in self-play). `name` names the agent in reports.
    """

    name = "python-follower"
    description = True
    max_steps = 500
    grid: tuple[int, int] | None = None

    def reset(self, episode_id: str) -> None:
        """A new episode starts (`<gameId>#<instruction index>` in evaluation)."""

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> int | str:
        """The action for this observation: an index (0 MF, 1 MB, 2 RL, 3 RR, 4 DONE) or its name.

        `observation` is FollowerEnv's; `info` holds `action_mask`, `score`, `points` (sets made
        since the previous observation), `steps` (this agent's actions so far in the episode),
        `instruction_id` and `episode_id`.
        """
        raise NotImplementedError("write act(observation, info) in your FollowerAgent")

    def run(self, stdin: IO[str] | None = None, stdout: IO[str] | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Speaks the agent protocol on stdin and stdout until the host says close."""
        _Session(self, timeout).serve(stdin or sys.stdin, stdout or sys.stdout)


class _Session:
    def __init__(self, agent: FollowerAgent, timeout: float):
        self.agent = agent
        self.timeout = timeout
        self.engine = None
        #: One observer environment per grid size.
        self.observers: dict[tuple[int, int], tuple[bytes, Layout]] = {}
        self.episode_id = ""
        self.map: dict | None = None
        self.score = 0
        self.steps = 0

    def serve(self, stdin: IO[str], stdout: IO[str]) -> None:
        try:
            while True:
                line = stdin.readline()
                if not line:
                    return  # the host went away: nothing more to do
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except json.JSONDecodeError:
                    raise AgentProtocolError(f"the host sent a line that is not JSON: {line[:200]!r}") from None
                kind = message.get("type") if isinstance(message, dict) else None
                if kind == "close":
                    return
                answer = self.answer(kind, message)
                stdout.write(json.dumps(answer) + "\n")
                stdout.flush()
        finally:
            if self.engine is not None:
                self.engine.close()

    def answer(self, kind: str | None, message: dict) -> dict:
        if kind == "hello":
            if message.get("protocol") != PROTOCOL or message.get("version") != PROTOCOL_VERSION:
                raise AgentProtocolError(f"the host speaks {message.get('protocol')} version {message.get('version')}; this agent speaks {PROTOCOL} version {PROTOCOL_VERSION}")
            # The engine starts now, inside the host's handshake time, so that the first step is quick.
            self._observer(*(self.agent.grid or _SELF_PLAY_GRID))
            return {"type": "hello", "protocol": PROTOCOL, "version": PROTOCOL_VERSION, "name": self.agent.name, "oracle": False, "needsRecording": False}
        if kind == "reset":
            self.episode_id = message["episode"]["episodeId"]
            self.map, self.score, self.steps = None, 0, 0
            self.agent.reset(self.episode_id)
            return {"type": "ready"}
        if kind == "observe":
            observation, info, actions = self.encode(message["observation"])
            action = self.agent.act(observation, info)
            self.steps += 1
            return {"type": "act", "action": self._action_name(action, actions)}
        raise AgentProtocolError(f"the host sent a message of type {kind!r}; expected hello, reset, observe or close")

    def encode(self, wire: dict) -> tuple[dict, dict, list[str]]:
        """FollowerEnv's observation and info for the host's JSON observation, and the action names."""
        if "map" in wire:
            self.map = wire["map"]
        elif self.map is None:
            raise AgentProtocolError("the first observation of an episode came without its map")
        observation = {**wire, "map": self.map}
        points = observation["score"] - self.score if self.steps else 0
        self.score = observation["score"]
        env_id, layout = self._observer(observation["map"]["width"], observation["map"]["height"])
        request = json.dumps({"observation": observation, "steps": self.steps, "points": points}).encode()
        transition = layout.decode(self.engine.request(bytes([OP_ENCODE]) + env_id + request))
        transition.info["episode_id"] = self.episode_id
        return transition.observation, transition.info, layout.actions

    def _observer(self, width: int, height: int) -> tuple[bytes, Layout]:
        size = self.agent.grid or (width, height)
        if self.engine is None or not self.engine.alive:
            self.engine = EngineProcess(self.timeout)
            self.observers.clear()
        if size not in self.observers:
            made = self.engine.request_json(bytes([OP_MAKE]) + json.dumps(self._observer_options(*size)).encode())
            self.observers[size] = (_ENV_ID.pack(made["env"]), Layout(made["layout"]))
        return self.observers[size]

    def _observer_options(self, width: int, height: int) -> dict:
        return {"role": "observer", "width": width, "height": height, "maxSteps": self.agent.max_steps, "description": self.agent.description}

    def _action_name(self, action, names: list[str]) -> str:
        if isinstance(action, str) and action in names:
            return action
        try:
            return names[action_index(action, names)]
        except IllegalActionError:
            raise IllegalActionError(f"{self.agent.name}.act returned {action!r}: an action is 0 to {len(names) - 1} ({', '.join(names)}) or one of those names") from None
