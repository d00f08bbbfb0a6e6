"""Environment steps per second on this machine: `python -m cerealbar.bench` (or, from a clone,
`npm run bench:python`). One `FollowerEnv` (with and without the text description), one
`LeaderEnv`, the engine's batched step at N = 1, 16 and 256 environments in one Node process
(one round trip per step of all N, each answer decoded into numpy views), and `FollowerVectorEnv`
at the same N (with Gymnasium), and the PettingZoo AEC environment (with PettingZoo), all with
random actions and self-play games, a finished game's environment reset at once.

`python -m cerealbar.bench --fast` (with Gymnasium) measures only `FastFollowerVectorEnv` against
`FollowerVectorEnv` at N = 1024 (`--envs`), and prints one line; `--processes 1 2` splits it
across 1, then 2 Node processes, a line for each; with `--levels K`, more: both on a fixed set of
K levels (the `levels` option), the fast one's batch keeping their starts; with `--logs DIR`,
more: `FastFollowerVectorEnv` playing the episodes of the logs in DIR with the "ndtw" reward.

`python -m cerealbar.bench --frames` measures only the frames (it needs the frame renderer,
docs/python.md): `FollowerEnv(render_mode="rgb_array")`'s render() after each step, first-person at
320x240 (`--frame-size`), and `observation_mode="pixels"`'s steps per second, one line each.
"""

from __future__ import annotations

import argparse
import json
import struct
import time

import numpy as np

from .engine import OP_MAKE, OP_RESET, OP_STEP_MANY, EngineProcess
from .envs import FollowerEnv, LeaderEnv
from .errors import InvalidRequestError
from .fast import FastFollowerVectorEnv
from .layout import Layout
from .vector import FollowerVectorEnv, gymnasium

U32 = struct.Struct("<I")


def single(env, steps: int, actions: int, seed: int) -> float:
    """Steps per second of one environment over `steps` random actions (0 to actions - 1)."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(int(rng.integers(actions)))
        if terminated or truncated:
            env.reset()  # a fresh game drawn by the env (it skips seeds that give none)
    return steps / (time.perf_counter() - start)


def batched(n: int, rounds: int, seed: int) -> float:
    """Environment steps per second of the batched step over `n` follower environments."""
    engine = EngineProcess()
    try:
        made = [engine.request_json(bytes([OP_MAKE]) + json.dumps({"role": "follower", "reward": "distance", "description": False}).encode()) for _ in range(n)]
        envs, layout = [answer["env"] for answer in made], Layout(made[0]["layout"])
        seeds = iter(range(seed, 2**31))

        def reset(env: int) -> None:
            # A seed whose game ends before the follower's first turn gives no episode: the next one does.
            for next_seed in seeds:
                try:
                    engine.request(bytes([OP_RESET]) + U32.pack(env) + json.dumps({"seed": next_seed}).encode())
                    return
                except InvalidRequestError:
                    continue

        for env in envs:
            reset(env)
        rng = np.random.default_rng(seed)
        head = bytes([OP_STEP_MANY]) + U32.pack(n)
        ids = [U32.pack(env) for env in envs]
        start = time.perf_counter()
        for _ in range(rounds):
            actions = rng.integers(len(layout.actions), size=n)
            payload = engine.request(head + b"".join(env + bytes([int(action)]) for env, action in zip(ids, actions)))
            position = 0
            for env in envs:
                (length,) = U32.unpack_from(payload, position)
                transition = layout.decode(payload, position + 4)
                position += 4 + length
                if transition.terminated or transition.truncated:
                    reset(env)
        return n * rounds / (time.perf_counter() - start)
    finally:
        engine.close()


def vectorized(
    n: int, rounds: int, seed: int, processes: int | None = None, digests: int = 0, logs: str | None = None, levels: int | None = None
) -> tuple[float, list[int]]:
    """Environment steps per second of a FollowerVectorEnv of `n`, or with `processes` a
    FastFollowerVectorEnv in that many Node processes (autoreset included; both give their arrays
    without copies), and a digest of each of the first `digests` steps (rewards, terminations,
    truncations and poses) for comparing the two. With `logs`, the FastFollowerVectorEnv plays
    their episodes with the "ndtw" reward. With `levels`, both play that many levels, environment i
    starting on level (seed + i) modulo their number; the FastFollowerVectorEnv first starts every
    level in every process, untimed, so that its batches have kept them all, as after a while of
    training."""
    if processes is None:
        vector = FollowerVectorEnv(n, reward="distance", description=False, copy=False, levels=levels)
    elif logs is None:
        vector = FastFollowerVectorEnv(n, reward="distance", copy=False, processes=processes, levels=levels)
    else:
        vector = FastFollowerVectorEnv(n, reward="ndtw", logs=logs, copy=False, processes=processes)
    try:
        if levels is None:
            vector.reset(seed=seed)
        else:
            if processes is not None:
                # Each process keeps the starts of its own environments: slide every process's window over all the levels.
                for first in range(0, levels, n // processes):
                    try:
                        vector.reset(seed=[(first + i) % levels for i in range(n)])
                    except InvalidRequestError as error:
                        # A level with no game (1189) is refused after the batch started, and kept, the others.
                        if error.kind != "setup":
                            raise
            vector.reset(seed=[(seed + i) % levels for i in range(n)])
        rng = np.random.default_rng(seed)
        kept: list[int] = []
        start = time.perf_counter()
        for step in range(rounds):
            observation, rewards, terminations, truncations, _ = vector.step(rng.integers(0, 5, size=n))
            if step < digests:
                kept.append(hash((rewards.tobytes(), terminations.tobytes(), truncations.tobytes(), observation["pose"].tobytes())))
        return n * rounds / (time.perf_counter() - start), kept
    finally:
        vector.close()


def fast_lines(n: int, rounds: int, seed: int, processes: list[int], levels: int | None = None) -> list[str]:
    """FastFollowerVectorEnv's steps per second over `rounds` steps of all `n` (in each of the
    `processes` numbers of Node processes), against FollowerVectorEnv's over a third as many (its
    first steps, before any game ends and the autoresets begin, weigh more in a short run: the
    ratio errs low), both on `levels` levels if given. The steps both ran must agree (same seeds,
    same actions), or it raises SystemExit."""
    compared = max(1, rounds // 3)
    vector, vector_digests = vectorized(n, compared, seed, digests=compared, levels=levels)
    lines = []
    for count in processes:
        fast, fast_digests = vectorized(n, rounds, seed, processes=count, digests=compared, levels=levels)
        differing = [step for step, (a, b) in enumerate(zip(fast_digests, vector_digests)) if a != b]
        if differing:
            raise SystemExit(f"FastFollowerVectorEnv in {count} processes and FollowerVectorEnv disagree at steps {differing[:10]} of {compared}")
        on = ("" if levels is None else f", {levels:,} levels") + _in_processes(count)
        lines.append(f"python vector env N={n}{on}: {fast:,.0f} steps/s = {fast / vector:.1f}x FollowerVectorEnv")
    return lines


def fast_logs_line(n: int, rounds: int, seed: int, logs: str, processes: int = 1) -> str:
    """FastFollowerVectorEnv's steps per second over `rounds` steps of all `n` (in `processes` Node
    processes) playing the episodes of `logs` with the "ndtw" reward."""
    rate, _ = vectorized(n, rounds, seed, processes=processes, logs=logs)
    return f"python vector env N={n}, logged episodes (ndtw){_in_processes(processes)}: {rate:,.0f} steps/s"


def _in_processes(count: int) -> str:
    return "" if count == 1 else f", {count} processes"


def frames_lines(renders: int, size: tuple[int, int], seed: int) -> list[str]:
    """The frames' rates: FollowerEnv's first-person render() after each of `renders` random steps
    (only the render timed), and the steps per second of FollowerEnv(observation_mode="pixels")
    (step and image together) over as many steps; a finished game's environment reset at once.
    The renderer's start (its first frame) is left out, and said."""
    width, height = size
    lines = []
    env = FollowerEnv(description=False, render_mode="rgb_array", render_size=size)
    try:
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        start = time.perf_counter()
        env.render()
        started = time.perf_counter() - start
        drawing = 0.0
        for _ in range(renders):
            _, _, terminated, truncated, _ = env.step(int(rng.integers(5)))
            if terminated or truncated:
                env.reset()
            start = time.perf_counter()
            env.render()
            drawing += time.perf_counter() - start
        lines.append(
            f"FollowerEnv rgb_array, first-person {width}x{height}: {renders / drawing:,.1f} frames/s "
            f"({1000 * drawing / renders:.1f} ms a render() after a step; the renderer's start and first frame {started:.1f} s)"
        )
    finally:
        env.close()
    env = FollowerEnv(description=False, observation_mode="pixels", render_size=size)
    try:
        env.reset(seed=seed)  # the renderer starts here, untimed
        lines.append(f"FollowerEnv observation_mode='pixels', first-person {width}x{height}: {single(env, renders, 5, seed):,.1f} steps/s")
    finally:
        env.close()
    return lines


def _size(text: str) -> tuple[int, int]:
    width, _, height = text.partition("x")
    return int(width), int(height)


def two_player(steps: int, seed: int) -> float:
    """Steps per second of the PettingZoo AEC environment (both players, actions drawn with the masks)."""
    from . import multiagent

    env = multiagent.env(description=False)
    try:
        env.reset(seed=seed)
        for space in env.action_spaces.values():
            space.seed(seed)
        start = time.perf_counter()
        for _ in range(steps):
            agent = env.agent_selection
            _, _, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.reset()
                continue
            env.step(env.action_space(agent).sample(mask=info["action_mask"]))
        return steps / (time.perf_counter() - start)
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m cerealbar.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=20_000, help="steps of each single-environment run (default 20000)")
    parser.add_argument("--batch-steps", type=int, default=100_000, help="environment steps of each batched run (default 100000)")
    parser.add_argument("--fast", action="store_true", help="only FastFollowerVectorEnv against FollowerVectorEnv, in one line")
    parser.add_argument("--envs", type=int, default=1024, help="N for --fast (default 1024)")
    parser.add_argument("--fast-steps", type=int, default=300, help="steps of all N environments for --fast: FastFollowerVectorEnv's (default 300); FollowerVectorEnv takes a third as many")
    parser.add_argument("--processes", type=int, nargs="+", default=[1], help="Node processes of FastFollowerVectorEnv for --fast: one line for each number given (default 1)")
    parser.add_argument("--levels", type=int, help="with --fast, also both on this many levels (the levels option), the fast one's starts kept")
    parser.add_argument("--logs", help="with --fast, also FastFollowerVectorEnv on the episodes of these logs (a .jsonl file or a directory), 'ndtw' rewards")
    parser.add_argument("--frames", action="store_true", help="only the frames: FollowerEnv's rgb_array render() and its pixels observation (needs the frame renderer)")
    parser.add_argument("--renders", type=int, default=200, help="renders and pixels steps for --frames (default 200)")
    parser.add_argument("--frame-size", type=_size, default=(320, 240), help="WIDTHxHEIGHT for --frames (default 320x240)")
    args = parser.parse_args()
    if args.frames:
        for line in frames_lines(args.renders, args.frame_size, seed=1):
            print(line, flush=True)
        return
    if args.fast:
        for line in fast_lines(args.envs, args.fast_steps, seed=1, processes=args.processes):
            print(line, flush=True)
        if args.levels:
            for line in fast_lines(args.envs, args.fast_steps, seed=1, processes=args.processes, levels=args.levels):
                print(line, flush=True)
        if args.logs:
            for count in args.processes:
                print(fast_logs_line(args.envs, args.fast_steps, seed=1, logs=args.logs, processes=count), flush=True)
        return
    rows: list[tuple[str, float]] = []
    for name, env, actions in (
        ("FollowerEnv, one environment", FollowerEnv(reward="distance", description=False), 5),
        ("FollowerEnv, one environment, with the text description", FollowerEnv(reward="distance"), 5),
        ("LeaderEnv, one environment (moves and End Turn only)", LeaderEnv(), 5),
    ):
        try:
            rows.append((name, single(env, args.steps, actions, seed=1)))
        finally:
            env.close()
    for n in (1, 16, 256):
        rows.append((f"batched step, N = {n} follower environments in one process", batched(n, max(1, args.batch_steps // n), seed=1)))
    if gymnasium is not None:
        for n in (1, 16, 256):
            rows.append((f"FollowerVectorEnv, N = {n}", vectorized(n, max(1, args.batch_steps // n), seed=1)[0]))
    try:
        import pettingzoo  # noqa: F401
    except ImportError:
        pass
    else:
        rows.append(("PettingZoo AEC environment, both players", two_player(args.steps, seed=1)))
    print("Environment steps per second (random actions, self-play games):")
    for name, rate in rows:
        print(f"  {name:<62} {rate:>10,.0f}")


if __name__ == "__main__":
    main()
