"""CerealBar for learning research: Gymnasium environments for the follower and the leader, played
by the project's TypeScript engine in a Node process. See docs/python.md.

    import cerealbar
    env = cerealbar.FollowerEnv(reward="distance")
    observation, info = env.reset(seed=7)

With Gymnasium installed, `gymnasium.make("CerealBar/Follower-v0")` and `"CerealBar/Leader-v0"`
work too once this package is imported, and `FollowerVectorEnv` (or `gymnasium.make_vec(
"CerealBar/Follower-v0", num_envs=N, vectorization_mode="vector_entry_point")`) runs N follower
games in one engine process; `FastFollowerVectorEnv` (or `gymnasium.make_vec(
"CerealBar/FastFollower-v0", num_envs=N)`) plays them on the engine's batched follower
environment, its arrays shared through memory. With PettingZoo installed, `cerealbar.multiagent.env()` and
`parallel_env()` have both players, "leader" and "follower", as agents.
"""

from .agent import FollowerAgent
from .envs import FollowerEnv, LeaderEnv
from .vector import FollowerVectorEnv
from .fast import FastFollowerVectorEnv
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
    RendererError,
    RendererUnavailableError,
)

__version__ = "0.1.0"

__all__ = [
    "FollowerAgent",
    "FollowerEnv",
    "LeaderEnv",
    "FollowerVectorEnv",
    "FastFollowerVectorEnv",
    "CerealBarError",
    "EngineCrashedError",
    "EngineError",
    "EngineTimeoutError",
    "EnvClosedError",
    "EpisodeOverError",
    "IllegalActionError",
    "InvalidRequestError",
    "NodeUnavailableError",
    "RendererError",
    "RendererUnavailableError",
    "FOLLOWER_ID",
    "LEADER_ID",
    "FAST_FOLLOWER_ID",
]

FOLLOWER_ID = "CerealBar/Follower-v0"
LEADER_ID = "CerealBar/Leader-v0"
FAST_FOLLOWER_ID = "CerealBar/FastFollower-v0"


def _register() -> None:
    try:
        import gymnasium
    except ImportError:
        return
    if FOLLOWER_ID not in gymnasium.registry:
        # make_vec(FOLLOWER_ID, num_envs=N, vectorization_mode="vector_entry_point"): N games in one engine process.
        gymnasium.register(id=FOLLOWER_ID, entry_point="cerealbar.envs:FollowerEnv", vector_entry_point="cerealbar.vector:FollowerVectorEnv")
    if FAST_FOLLOWER_ID not in gymnasium.registry:
        # make_vec(FAST_FOLLOWER_ID, num_envs=N): the batched environment; make(FAST_FOLLOWER_ID) and the
        # sync and async modes: FollowerEnvs without the description, which play the same games.
        gymnasium.register(
            id=FAST_FOLLOWER_ID,
            entry_point="cerealbar.envs:FollowerEnv",
            vector_entry_point="cerealbar.fast:FastFollowerVectorEnv",
            kwargs={"description": False},
        )
    if LEADER_ID not in gymnasium.registry:
        gymnasium.register(id=LEADER_ID, entry_point="cerealbar.envs:LeaderEnv")


_register()
