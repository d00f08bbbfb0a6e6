"""`FastFollowerVectorEnv`: the same trajectories as `FollowerVectorEnv(description=False)` (same
seeds, same actions, seed draws, autoresets and seeds that give no game included), and with logs
as `FollowerEnv(logs=...)`s in Gymnasium's SyncVectorEnv (self-play logs, one on a wider map, and
the imported CB2 games of the fixtures); Gymnasium's vector API, the shared file's arrays, that
no name leads to the file (and that one a killed maker left is removed), new processes after a
crash, seeded resets crossing a seed with no game, and bad use."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the fast vector environment's tests are skipped")

import cerealbar  # noqa: E402
from cerealbar import FollowerEnv, fast  # noqa: E402
from cerealbar.errors import EngineCrashedError, EngineError, EnvClosedError, EpisodeOverError, IllegalActionError, InvalidRequestError  # noqa: E402
from cerealbar.fast import FastFollowerVectorEnv  # noqa: E402
from cerealbar.vector import FollowerVectorEnv  # noqa: E402

from conftest import REPO, node  # noqa: E402

NO_GAME = 139765  # a seed whose game ends before the follower's first turn
NO_GAME_LEVEL = 1189  # the first such seed: with 1,190 levels, the last level gives no game
TEXTS = ("instruction", "previous_instruction")


class ForcedDraws:
    """A generator whose first draws are given (seeds with no game, say), then those of default_rng(seed)."""

    def __init__(self, seed: int, forced: list[int]):
        self.rng = np.random.default_rng(seed)
        self.forced = list(forced)

    def integers(self, low, high):
        return self.forced.pop(0) if self.forced else self.rng.integers(low, high)


def force_draws(env, slot: int, seed: int, forced: list[int]) -> ForcedDraws:
    env._generators[slot] = ForcedDraws(seed, forced)
    return env._generators[slot]


def assert_same_step(fast_result, vector_result, what: str) -> None:
    """Everything FollowerVectorEnv gives, but the texts, and its integer infos are int64 where the batch's are int32."""
    observation, *scalars, infos = fast_result
    expected_observation, *expected_scalars, expected_infos = vector_result
    assert observation.keys() == expected_observation.keys() - set(TEXTS), what
    for key, array in observation.items():
        assert array.dtype == expected_observation[key].dtype and np.array_equal(array, expected_observation[key]), f"{what}: {key}"
    for name, array, expected in zip(("rewards", "terminations", "truncations"), scalars, expected_scalars):
        assert array.dtype == expected.dtype and np.array_equal(array, expected), f"{what}: {name}"
    assert infos.keys() == expected_infos.keys(), what
    for key, value in infos.items():
        assert value.shape == expected_infos[key].shape and list(value.ravel()) == list(expected_infos[key].ravel()), f"{what}: info {key}"


def cerealbar_cli(*args: str) -> None:
    result = subprocess.run([node(), str(REPO / "bin" / "cerealbar.cjs"), *args], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def logs(selfplay_logs, tmp_path_factory) -> list:
    """Self-play games 1 and 2 (25 x 25), self-play game 3 on a 30 x 21 map, and the 20 CB2 games
    of the fixtures imported by `cerealbar import cb2`: the grid is 30 x 25."""
    directory = tmp_path_factory.mktemp("more-logs")
    cerealbar_cli("maps", "generate", "--seed", "3", "--width", "30", "--height", "21", "--out", str(directory / "wide.json"))
    cerealbar_cli("selfplay", "--map", str(directory / "wide.json"), "--out", str(directory / "wide"), "--seed", "3")
    cerealbar_cli("import", "cb2", str(REPO / "test" / "fixtures" / "cb2-logs"), "--out", str(directory / "cb2"))
    return [selfplay_logs, directory / "wide", directory / "cb2"]


def check_arrays(env, observation, rewards, terminations, truncations) -> None:
    """Each field's dtype and shape is its space's with a leading axis of N, and the observation is in the space."""
    assert env.observation_space.contains(observation)
    for key, space in env.single_observation_space.items():
        assert observation[key].dtype == space.dtype and observation[key].shape == (env.num_envs, *space.shape), key
    assert rewards.dtype == np.float64 and rewards.shape == (env.num_envs,)
    assert terminations.dtype == truncations.dtype == np.bool_ and terminations.shape == truncations.shape == (env.num_envs,)


@pytest.mark.parametrize("reward, processes, levels", [("sparse", 1, None), ("distance", 1, None), ("distance", 2, None), ("distance", 1, NO_GAME_LEVEL + 1), ("sparse", 2, NO_GAME_LEVEL + 1)])
def test_the_same_games_as_follower_vector_env_autoresets_and_seeds_with_no_game_included(reward, processes, levels):
    """With `levels`, every game is one of them (the batch starting those it kept by copying), and a
    level with no game is drawn again. An int seed whose environments' seeds cross one with no
    game replaces it by the next seed after them in both (with 1,190 levels there is none: both
    say so)."""
    n, options = 5, {"reward": reward, "gamma": 0.9, "max_steps": 6, "levels": levels}
    no_game = NO_GAME if levels is None else NO_GAME_LEVEL
    env = FastFollowerVectorEnv(n, processes=processes, **options)
    vector = FollowerVectorEnv(n, description=False, **options)
    try:
        assert env.metadata["autoreset_mode"] == vector.metadata["autoreset_mode"]
        assert env.single_observation_space == gymnasium.spaces.Dict({key: space for key, space in vector.single_observation_space.items() if key not in TEXTS})
        assert env.single_action_space == vector.single_action_space and env.action_space == vector.action_space
        # A given seed with no game is refused by both, and no episode runs.
        for either in (env, vector):
            with pytest.raises(InvalidRequestError) as refused:
                either.reset(seed=[1, 2, no_game, 4, 5])
            assert refused.value.kind == "setup"
        with pytest.raises(EpisodeOverError):
            env.step(np.zeros(n, dtype=np.int64))
        if levels is not None:
            # Seeds 1185 to 1189, and 1189 gives no game: no level is left to replace it.
            for either in (env, vector):
                with pytest.raises(InvalidRequestError, match=r"seed 1185: the 1190 levels from 1185 on give fewer than 5 episodes") as refused:
                    either.reset(seed=NO_GAME_LEVEL - 4)
                assert refused.value.kind == "setup"
                with pytest.raises(EpisodeOverError):
                    either.step(np.zeros(n, dtype=np.int64))

        rng = np.random.default_rng(3)
        ended = starts = 0
        forced = []
        played = []
        # Without levels, seeds 1187 to 1191 but 1189, which gives no game: environment 2 plays 1192.
        for run, seed in enumerate((11, None) if levels is not None else (11, None, NO_GAME_LEVEL - 2)):
            if seed is None:
                # Drawn seeds with no game are drawn again: at reset here, at an autoreset below.
                forced += [force_draws(either, 1, 7, [no_game]) for either in (env, vector)]
            result, expected = env.reset(seed=seed), vector.reset(seed=seed)
            assert_same_step((result[0], result[1]), (expected[0], expected[1]), f"reset {run}")
            assert list(result[1]["episode_id"]) == [f"selfplay-{seed}" for seed in env._seeds]
            if seed is not None:
                expected_seeds = [seed + i for i in range(n)] if seed != NO_GAME_LEVEL - 2 else [1187, 1188, 1192, 1190, 1191]
                assert list(result[1]["episode_id"]) == list(expected[1]["episode_id"]) == [f"selfplay-{single}" for single in expected_seeds]
            played += list(result[1]["episode_id"])
            check_arrays(env, result[0], np.zeros(n), np.zeros(n, bool), np.zeros(n, bool))
            previous_ended = np.zeros(n, dtype=np.bool_)
            for step in range(150):
                if step == 40:
                    forced += [force_draws(either, 3, 5, [no_game, no_game]) for either in (env, vector)]
                actions = rng.integers(0, 5, size=n)
                result, expected = env.step(actions), vector.step(actions)
                assert_same_step(result, expected, f"run {run}, step {step}")
                observation, rewards, terminations, truncations, infos = result
                check_arrays(env, observation, rewards, terminations, truncations)
                # Next-step autoreset: an environment that ended starts a new game, reward 0, not ended.
                assert not (terminations | truncations)[previous_ended].any() and not rewards[previous_ended].any()
                assert (infos["steps"][previous_ended] == 0).all()
                assert np.array_equal(infos.get("_episode_id", np.zeros(n, bool)), previous_ended)
                starts += int(previous_ended.sum())
                if previous_ended.any():
                    played += list(infos["episode_id"][previous_ended])
                previous_ended = terminations | truncations
                ended += int(previous_ended.sum())
        # Episodes of at most 6 steps: many ended and started again (after the replaced seed too, from its generator); every forced seed was drawn.
        assert ended >= 100 and starts >= 100
        assert all(not generator.forced for generator in forced)
        if levels is not None:
            seeds = [int(episode.removeprefix("selfplay-")) for episode in played]
            assert max(seeds) < levels and len(seeds) > len(set(seeds))
    finally:
        env.close()
        vector.close()


@pytest.mark.parametrize("reward, gamma, processes", [("distance", 0.9, 1), ("ndtw", 1.0, 1), ("ndtw", 0.99, 2)])
def test_with_logs_the_same_episodes_as_follower_envs_with_logs_in_a_sync_vector_env(logs, reward, gamma, processes):
    n, options = 5, {"reward": reward, "gamma": gamma, "max_steps": 6, "logs": logs}
    env = FastFollowerVectorEnv(n, processes=processes, **options)
    sync = gymnasium.vector.SyncVectorEnv([lambda: FollowerEnv(description=False, **options) for _ in range(n)])
    try:
        assert env.episodes == sync.envs[0].unwrapped.episodes
        assert len(env.episodes) > 150 and sum(episode.startswith("cb2-") for episode in env.episodes) == 115
        assert env.single_observation_space == gymnasium.spaces.Dict({key: space for key, space in sync.single_observation_space.items() if key not in TEXTS})
        assert env.single_observation_space["terrain"].shape == (25, 30)
        assert env.single_action_space == sync.single_action_space and env.action_space == sync.action_space

        rng = np.random.default_rng(4)
        ended = shaped = 0
        played = set()
        # Seeded, drawn on, and every environment on one episode (by id, by index), as SyncVectorEnv passes options to each.
        resets = [{"seed": 11}, {}, {"seed": 3, "options": {"episode": env.episodes[-1]}}, {"options": {"episode": 7}}]
        for run, arguments in enumerate(resets):
            result, expected = env.reset(**arguments), sync.reset(**arguments)
            assert_same_step((result[0], result[1]), (expected[0], expected[1]), f"reset {run}")
            previous_ended = np.zeros(n, dtype=np.bool_)
            for step in range(100):
                actions = rng.integers(0, 5, size=n)
                result, expected = env.step(actions), sync.step(actions)
                assert_same_step(result, expected, f"run {run}, step {step}")
                observation, rewards, terminations, truncations, infos = result
                check_arrays(env, observation, rewards, terminations, truncations)
                assert np.array_equal(infos.get("_episode_id", np.zeros(n, bool)), previous_ended)
                if previous_ended.any():
                    played.update(infos["episode_id"][previous_ended])
                previous_ended = terminations | truncations
                ended += int(previous_ended.sum())
                shaped += int(np.count_nonzero(rewards % 1))
        # Episodes of at most 6 steps: many ended and started again, on episodes of every log; the potentials shaped the rewards.
        assert ended >= 250 and shaped >= 500
        assert {episode.split("-")[0] for episode in played} == {"selfplay", "cb2"} and any(episode.startswith("selfplay-3#") for episode in played)

        # One episode per environment (None: drawn), as each FollowerEnv reset on it.
        chosen = [env.episodes[0], None, 5, "selfplay-3#2", None]
        observation, infos = env.reset(seed=[1, 2, 3, 4, 5], options={"episode": chosen})
        for i, (episode, single) in enumerate(zip(chosen, sync.envs)):
            expected, expected_info = single.reset(seed=i + 1, options={} if episode is None else {"episode": episode})
            assert infos["episode_id"][i] == expected_info["episode_id"]
            assert all(np.array_equal(observation[key][i], expected[key]) for key in observation), i
        assert infos["episode_id"][2] == env.episodes[5] and infos["episode_id"][3] == "selfplay-3#2"
    finally:
        env.close()
        sync.close()


def test_with_logs_bad_use_gets_clear_errors_and_changes_nothing(logs, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        FastFollowerVectorEnv(2, logs=tmp_path / "absent")
    (tmp_path / "not-a-log.jsonl").write_text("{}\n")
    with pytest.raises(InvalidRequestError, match="not-a-log.jsonl"):
        FastFollowerVectorEnv(2, logs=tmp_path / "not-a-log.jsonl")
    with pytest.raises(InvalidRequestError, match="'ndtw' reward needs recorded reference paths"):
        FastFollowerVectorEnv(2, reward="ndtw")
    env = FastFollowerVectorEnv(2, reward="ndtw", logs=logs[0])
    fresh = FastFollowerVectorEnv(2, reward="ndtw", logs=logs[0])
    try:
        env.reset(seed=1)
        refusals = [
            ({"episode": len(env.episodes)}, InvalidRequestError, "episode must be an index among the"),
            ({"episode": [0, -1]}, InvalidRequestError, "episode must be an index among the"),
            ({"episode": 1.5}, InvalidRequestError, "episode must be an index among the"),
            ({"episode": "cb2-none#0"}, ValueError, "no episode 'cb2-none#0' in the logs"),
            ({"episode": [0, 1, 2]}, ValueError, "one per environment"),
            ({"episode": 0, "seed": 3}, ValueError, "the only option is 'episode'"),
        ]
        for options, error, message in refusals:
            with pytest.raises(error, match=message):
                env.reset(seed=2, options=options)
        # Nothing moved, not even the generators: the next step and autoresets are a fresh environment's.
        fresh.reset(seed=1)
        for step in range(12):
            actions = np.array([step % 5, 4])
            assert_same_step(env.step(actions), fresh.step(actions), f"step {step}")
    finally:
        env.close()
        fresh.close()


@pytest.mark.parametrize("processes", [1, 2])
def test_copy_false_gives_the_same_arrays_every_step_and_copy_true_gives_new_ones(processes):
    env = FastFollowerVectorEnv(3, copy=False, processes=processes)
    copied = FastFollowerVectorEnv(3, processes=processes)
    try:
        first, first_infos = env.reset(seed=2)
        kept = {key: array.copy() for key, array in first.items()}
        second, rewards, terminations, truncations, infos = env.step(np.array([0, 2, 3]))
        after_step = {key: array.copy() for key, array in second.items()}
        again = env.step(np.array([1, 2, 3]))
        assert second is first and again[0] is first
        assert all(second[key] is first[key] for key in first)
        # The mapped arrays themselves, with one process or several: read-only views of the one shared file.
        assert all(not first[key].flags.writeable for key in first)
        assert all(first[key].base is not None for key in first)
        assert again[1] is rewards and again[2] is terminations and again[3] is truncations
        assert all(again[4][key] is infos[key] for key in ("score", "action_mask", "potential"))
        assert not np.array_equal(first["pose"], kept["pose"])  # overwritten in place

        observation, _ = copied.reset(seed=2)
        assert all(np.array_equal(observation[key], kept[key]) for key in kept)
        step = copied.step(np.array([0, 2, 3]))
        assert step[0] is not observation and step[0]["pose"] is not observation["pose"] and step[0]["pose"].flags.writeable
        assert np.array_equal(observation["pose"], kept["pose"])  # what was returned stays as it was
        assert all(np.array_equal(step[0][key], after_step[key]) for key in kept)
    finally:
        env.close()
        copied.close()
    # The arrays held after close keep the last values.
    assert first["terrain"].shape == (3, 25, 25) and int(first["terrain"].sum()) > 0


def memory_files(pid: int | str = "self") -> list[int]:
    """The inode of each descriptor of process `pid` that leads to a batch's anonymous memory file."""
    inodes = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/memfd:cerealbar-batch"):
                inodes.append(os.stat(f"/proc/{pid}/fd/{fd}").st_ino)
    return inodes


def named_files(directory: str = fast._SHARED_MEMORY) -> set[str]:
    return {name for name in os.listdir(directory) if name.startswith("cerealbar-batch-")} if os.path.isdir(directory) else set()


needs_memfd = pytest.mark.skipif(not hasattr(os, "memfd_create") or not os.path.isdir("/proc/self/fd"), reason="needs Linux's anonymous memory files and /proc")


@needs_memfd
def test_close_stops_the_process_and_the_file_never_has_a_name():
    before = named_files()
    env = FastFollowerVectorEnv(3, processes=2)
    pids = env.engine_pids
    # One file for both processes and Python: an anonymous memory file each inherited, named nowhere.
    assert len(set(pids)) == 2 and all(set(memory_files(pid)) == {os.fstat(env._file).st_ino} for pid in pids)
    assert named_files() == before
    env.reset(seed=1)
    env.step(np.array([0, 0, 0]))
    env.close()
    env.close()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with pytest.raises(EnvClosedError):
        env.step(np.array([0, 0, 0]))
    with pytest.raises(EnvClosedError):
        env.reset(seed=1)


@needs_memfd
def test_processes_that_lay_the_shared_file_out_differently_are_refused_and_stopped(monkeypatch):
    started = []
    real_make = fast._Part.make
    held = len(memory_files())

    def make(part, options, size):
        started.append(part.engine.pid)
        answer = real_make(part, options, size)
        # The second process answers another size, as an engine with another layout would.
        return {**answer, "bytes": answer["bytes"] + 8} if part.start > 0 else answer

    monkeypatch.setattr(fast._Part, "make", make)
    with pytest.raises(EngineError, match="laid the shared file out differently"):
        FastFollowerVectorEnv(4, processes=2)
    # Python holds the file no more, and the processes that held it are gone.
    assert len(started) == 2 and len(memory_files()) == held
    for pid in started:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


#: A Python that makes a FastFollowerVectorEnv(N, processes=2) and prints a line at the moment to be killed:
#: "making <pids>" once the processes have made their batches on the file, before it is mapped (memfd), or
#: "made <path>" once the named file is made, before it is removed (named: a system without memfd_create).
MAKER = """
import os, sys, time
from cerealbar import fast

fast._SHARED_MEMORY = sys.argv[1]
if sys.argv[2] == "named":
    del os.memfd_create

    def unlink(path):
        print("made", path, flush=True)
        time.sleep(60)

    os.unlink = unlink
else:
    start_parts = fast.FastFollowerVectorEnv._start_parts

    def paused(self):
        made = start_parts(self)
        print("making", *[part.engine.pid for part in self._parts], flush=True)
        time.sleep(60)
        return made

    fast.FastFollowerVectorEnv._start_parts = paused
fast.FastFollowerVectorEnv(int(sys.argv[3]), processes=2)
"""


def killed_while_making(directory, mode: str, n: int) -> tuple[int, list[str]]:
    """Runs MAKER, SIGKILLs it once it printed its line; its pid and the line's words."""
    child = subprocess.Popen(
        [sys.executable, "-c", MAKER, str(directory), mode, str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)},
    )
    try:
        line = child.stdout.readline().split()
    finally:
        child.send_signal(signal.SIGKILL)
        _, stderr = child.communicate()
    assert child.returncode == -signal.SIGKILL and line, stderr
    return child.pid, line


def ended(pid: int, within: float = 5.0) -> bool:
    """Whether process `pid` has exited within `within` seconds (a zombie nobody reaped yet has: it holds no file)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                if stat.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


@needs_memfd
def test_a_python_killed_while_it_makes_the_env_leaves_no_file(tmp_path):
    """SIGKILLed once its two processes have sized the file (31 MB at N = 4,096) and before it maps
    it: the file never had a name, and the processes, its last holders, end with their stdin."""
    before = named_files()
    _, line = killed_while_making(tmp_path, "memfd", 4096)
    assert line[0] == "making" and len(line) == 3, line
    assert all(ended(int(pid)) for pid in line[1:])
    assert os.listdir(tmp_path) == [] and named_files() == before


def test_a_named_file_left_by_a_maker_killed_before_it_removed_it_is_removed_at_the_next_start(tmp_path, monkeypatch):
    """Without memfd_create the file is named, with its maker's pid and start time, and removed at
    once: a maker killed in between leaves it, and the next environment made removes it."""
    pid, line = killed_while_making(tmp_path, "named", 2)
    assert line[0] == "made", line
    left = line[1]
    assert os.path.dirname(left) == str(tmp_path) and os.path.basename(left).startswith(f"cerealbar-batch-{pid}-") and os.path.exists(left)
    monkeypatch.setattr(fast, "_SHARED_MEMORY", str(tmp_path))
    FastFollowerVectorEnv(1).close()
    assert os.listdir(tmp_path) == []


def test_only_the_files_of_makers_that_are_gone_are_removed(tmp_path):
    me = os.getpid()
    started = fast._start_time(me)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    names = {
        "mine": f"cerealbar-batch-{me}-{started}-a1b2",  # its maker runs: kept
        "reused": f"cerealbar-batch-{me}-{started + 1}-a1b2",  # this pid, but a process started at another time made it: removed
        "dead": f"cerealbar-batch-{dead.pid}-{started}-a1b2",  # no process has that pid: removed
        "older": "cerealbar-batch-k3j4h5x_",  # no maker named (an older version's name): kept
        "other": "not-cerealbar-batch-1-2-x",  # kept
    }
    for name in names.values():
        (tmp_path / name).write_bytes(b"x")
    removed = fast.remove_stale_files(str(tmp_path))
    assert sorted(removed) == sorted(str(tmp_path / names[key]) for key in ("reused", "dead"))
    assert sorted(os.listdir(tmp_path)) == sorted(names[key] for key in ("mine", "older", "other"))


def test_without_memfd_create_the_named_file_is_removed_at_once_and_plays_the_same_games(tmp_path, monkeypatch):
    memory = FastFollowerVectorEnv(3)
    monkeypatch.delattr(os, "memfd_create", raising=False)
    monkeypatch.setattr(fast, "_SHARED_MEMORY", str(tmp_path))
    named = FastFollowerVectorEnv(3, processes=2)
    try:
        assert os.listdir(tmp_path) == []
        result, expected = named.reset(seed=4), memory.reset(seed=4)
        assert_same_step((result[0], result[1]), (expected[0], expected[1]), "reset")
        for step in range(20):
            actions = np.array([step % 5, 2, 0])
            assert_same_step(named.step(actions), memory.step(actions), f"step {step}")
    finally:
        named.close()
        memory.close()


def test_after_a_process_died_the_next_reset_starts_new_ones_on_the_same_arrays():
    env = FastFollowerVectorEnv(4, processes=2, copy=False)
    fresh = FastFollowerVectorEnv(4)
    try:
        observation, _ = env.reset(seed=1)
        old = env.engine_pids
        os.kill(old[1], signal.SIGKILL)
        with pytest.raises(EngineCrashedError, match=r"exited \(code -9\)"):
            env.step(np.zeros(4, dtype=np.int64))
        with pytest.raises(EpisodeOverError):
            env.step(np.zeros(4, dtype=np.int64))
        again, infos = env.reset(seed=1)
        # Two new processes (the one still running was stopped), writing into the file Python mapped.
        assert set(env.engine_pids).isdisjoint(old) and ended(old[0])
        assert again is observation and all(again[key] is observation[key] for key in observation)
        expected, expected_infos = fresh.reset(seed=1)
        assert_same_step((again, infos), (expected, expected_infos), "reset")
        for step in range(30):
            actions = np.array([step % 5, 2, 0, 4 - step % 5])
            assert_same_step(env.step(actions), fresh.step(actions), f"step {step}")
    finally:
        env.close()
        fresh.close()


def test_a_seeded_reset_of_more_environments_than_the_seeds_before_one_with_no_game():
    """reset(seed=0) at N = 1,200: seed 1189 gives no game, so environment 1189 plays seed 1200, the
    first after the others'; FollowerVectorEnv gives the same seeds and the same games."""
    n = 1200
    env = FastFollowerVectorEnv(n)
    vector = FollowerVectorEnv(n, description=False)
    try:
        result, expected = env.reset(seed=0), vector.reset(seed=0)
        seeds = [*range(NO_GAME_LEVEL), n, *range(NO_GAME_LEVEL + 1, n)]
        assert list(result[1]["episode_id"]) == list(expected[1]["episode_id"]) == [f"selfplay-{seed}" for seed in seeds]
        assert_same_step((result[0], result[1]), (expected[0], expected[1]), "reset")
        rng = np.random.default_rng(5)
        for step in range(3):
            actions = rng.integers(0, 5, size=n)
            assert_same_step(env.step(actions), vector.step(actions), f"step {step}")
    finally:
        env.close()
        vector.close()


def test_a_process_that_dies_is_reported_and_the_others_stop_at_close():
    env = FastFollowerVectorEnv(4, processes=2)
    try:
        env.reset(seed=1)
        first, second = env.engine_pids
        os.kill(second, signal.SIGKILL)
        with pytest.raises(EngineCrashedError):
            env.step(np.zeros(4, dtype=np.int64))
        with pytest.raises(EpisodeOverError):
            env.step(np.zeros(4, dtype=np.int64))
    finally:
        env.close()
    with pytest.raises(ProcessLookupError):
        os.kill(first, 0)


@pytest.mark.parametrize("mode", ["seeds", "logs", "levels"])
def test_make_vec_builds_it_and_the_sync_mode_plays_the_same_games(logs, mode):
    options = {"seeds": {"reward": "distance"}, "logs": {"reward": "ndtw", "logs": logs}, "levels": {"reward": "distance", "levels": 8}}[mode]
    vector = gymnasium.make_vec(cerealbar.FAST_FOLLOWER_ID, num_envs=3, **options)
    sync = gymnasium.make_vec(cerealbar.FAST_FOLLOWER_ID, num_envs=3, vectorization_mode="sync", **options)
    try:
        assert isinstance(vector.unwrapped, FastFollowerVectorEnv) and vector.num_envs == 3
        if mode == "levels":
            # Both were given the levels: seeds 6, 7 and 8 are not all among them.
            for either in (vector, sync):
                with pytest.raises(ValueError, match=r"one of the 8 levels, an integer from 0 to 7 \(Python ints or numpy integers, not bools\)"):
                    either.reset(seed=6)
        observation, _ = vector.reset(seed=5)
        expected, _ = sync.reset(seed=5)
        for step in range(20):
            actions = np.array([step % 5, 2, 0])
            observation, rewards, *_ = vector.step(actions)
            expected, expected_rewards, *_ = sync.step(actions)
            assert all(np.array_equal(observation[key], expected[key]) for key in observation) and np.array_equal(rewards, expected_rewards)
    finally:
        vector.close()
        sync.close()


def test_bad_use_gets_clear_errors_and_changes_nothing():
    with pytest.raises(ValueError, match="positive integer"):
        FastFollowerVectorEnv(0)
    for processes in (0, 3, 1.0):
        with pytest.raises(ValueError, match="processes must be an integer from 1 to num_envs"):
            FastFollowerVectorEnv(2, processes=processes)
    with pytest.raises(ValueError, match="no text fields"):
        FastFollowerVectorEnv(2, description=True)
    with pytest.raises(InvalidRequestError, match="reward"):
        FastFollowerVectorEnv(2, reward="ndtw")
    env = FastFollowerVectorEnv(2)
    try:
        with pytest.raises(EpisodeOverError):
            env.step(np.array([0, 0]))
        for bad in (-1, 2**32, 1.5, "7"):
            with pytest.raises(InvalidRequestError, match=r"seed\[1\] must be None or an integer from 0 to 4294967295"):
                env.reset(seed=[1, bad])
        with pytest.raises(ValueError, match="one seed per environment"):
            env.reset(seed=[1, 2, 3])
        with pytest.raises(ValueError, match="needs an environment made with logs"):
            env.reset(seed=1, options={"episode": 0})
        with pytest.raises(ValueError, match="unknown reset options"):
            env.reset(seed=1, options={"level": 0})
        observation, _ = env.reset(seed=1)
        for bad in (np.array([0]), np.array([0, 5]), np.array([0.5, 1.0]), np.array([-1, 0]), np.array([[0, 0]])):
            with pytest.raises(IllegalActionError):
                env.step(bad)
        # Nothing moved: the next step is the one a fresh environment takes.
        fresh = FastFollowerVectorEnv(2)
        try:
            fresh.reset(seed=1)
            assert all(np.array_equal(a, b) for a, b in zip(env.step(np.array([0, 2]))[0].values(), fresh.step(np.array([0, 2]))[0].values()))
        finally:
            fresh.close()
    finally:
        env.close()
