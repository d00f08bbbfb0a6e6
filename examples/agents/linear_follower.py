#!/usr/bin/env python3
"""A follower written with the project's Python package: the linear softmax policy that
docs/python.md's training loop trains in `cerealbar.FollowerEnv`, playing through the agent
protocol, so the same policy plays live and in evaluation. It needs the package
(`pip install ./python`) and numpy.

    npx cerealbar eval --agent "python3 examples/agents/linear_follower.py --weights weights.npy" --logs data/selfplay
    npx cerealbar agent --server http://localhost:2567 --agent "python3 examples/agents/linear_follower.py"

Without --weights every action the mask allows is equally likely.
"""

import argparse
import sys
import zlib

import numpy as np

try:
    import cerealbar
except ImportError:
    sys.exit("linear_follower.py needs the cerealbar package: pip install ./python (from the repository)")


class LinearFollower(cerealbar.FollowerAgent):
    name = "python-linear"
    description = False  # the policy does not read it: leave it out, it costs time

    def __init__(self, weights: np.ndarray):
        self.weights = weights
        self.rng = np.random.default_rng(0)

    def reset(self, episode_id: str) -> None:
        # Seeded from the episode, so that an evaluation repeats exactly.
        self.rng = np.random.default_rng(zlib.crc32(episode_id.encode()))

    def act(self, observation, info):
        x = np.append(observation["pose"] / 25, 1.0)  # the training loop's features
        logits = np.where(info["action_mask"] == 1, self.weights @ x, -np.inf)
        p = np.exp(logits - logits.max())
        return int(self.rng.choice(5, p=p / p.sum()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights", help="a (5, 4) array saved with numpy.save")
    arguments = parser.parse_args()
    weights = np.load(arguments.weights) if arguments.weights else np.zeros((5, 4))
    if weights.shape != (5, 4):
        sys.exit(f"--weights: expected a (5, 4) array, got {weights.shape}")
    LinearFollower(weights).run()
