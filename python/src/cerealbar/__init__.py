"""CerealBar for learning research: Gymnasium environments for the follower and the leader, played
by the project's TypeScript engine in a Node process. See docs/python.md.

    import cerealbar
    env = cerealbar.FollowerEnv(reward="distance")
    observation, info = env.reset(seed=7)

With Gymnasium installed, `gymnasium.make("CerealBar/Follower-v0")` and `"CerealBar/Leader-v0"`
work too once this package is imported.
"""

from .envs import FollowerEnv, LeaderEnv
from .errors import (
    CerealBarError,
    EngineCrashedError,
    EngineError,
    EngineTimeoutError,
    EnvClosedError,
    EpisodeOverError,
    IllegalActionError,
    InvalidRequestError,
    NodeUnavailableError,
)

__version__ = "0.1.0"

__all__ = [
    "FollowerEnv",
    "LeaderEnv",
    "CerealBarError",
    "EngineCrashedError",
    "EngineError",
    "EngineTimeoutError",
    "EnvClosedError",
    "EpisodeOverError",
    "IllegalActionError",
    "InvalidRequestError",
    "NodeUnavailableError",
    "FOLLOWER_ID",
    "LEADER_ID",
]

FOLLOWER_ID = "CerealBar/Follower-v0"
LEADER_ID = "CerealBar/Leader-v0"


def _register() -> None:
    try:
        import gymnasium
    except ImportError:
        return
    for env_id, entry_point in ((FOLLOWER_ID, "cerealbar.envs:FollowerEnv"), (LEADER_ID, "cerealbar.envs:LeaderEnv")):
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)


_register()
