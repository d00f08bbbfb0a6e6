#!/usr/bin/env python3
"""A CerealBar follower agent in plain Python (standard library only).

It speaks the cerealbar-agent protocol (docs/agents.md): one JSON object per line on stdin
(from the host) and one JSON object per line on stdout (its answers). Anything else it wants to
say goes to stderr, which the host keeps for its error messages.

Its policy is deliberately tiny, to show how the text observation can be used:
  * if the text lists a card "ahead" among the cards in view, move forward (MF);
  * otherwise make a random move (seeded from the episode id, so runs repeat exactly);
  * say DONE after --steps actions on the same instruction.

Run it through the host, for example:
    npx cerealbar eval --agent "python3 examples/agents/random_agent.py --steps 8" --logs data/selfplay
"""

import argparse
import json
import random
import sys

PROTOCOL = "cerealbar-agent"
VERSION = 2


def send(message):
    """Writes one answer line. flush=True matters: the host waits for the whole line."""
    print(json.dumps(message), flush=True)


def log(text):
    """Diagnostics go to stderr: stdout carries protocol messages only."""
    print(text, file=sys.stderr, flush=True)


def card_ahead(text):
    """True when a line of the "Cards in view" list places a card ahead.

    Those lines look like "- 2 hexes straight ahead: a card with 3 red stars." or
    "- 1 hex ahead, slightly to the left: a card with 1 blue heart, selected."
    """
    in_card_list = False
    for line in text.splitlines():
        if line.startswith("Cards in view"):
            in_card_list = True
        elif not line.startswith("- "):
            in_card_list = False
        elif in_card_list and "ahead" in line.split(":", 1)[0]:
            return True
    return False


class Agent:
    def __init__(self, steps_per_instruction):
        self.steps_per_instruction = steps_per_instruction
        self.rng = random.Random(0)
        self.instruction_id = None
        self.steps = 0

    def reset(self, episode):
        # A string seed is hashed the same way on every run and machine (random.seed version 2).
        self.rng = random.Random(episode["episodeId"])
        self.instruction_id = None
        self.steps = 0
        # The terrain as the follower knows it: rows of letters, "?" where it has not looked yet.
        self.known_map = None

    def act(self, observation, text):
        # The host sends the known map only when it changed: keep the last one.
        self.known_map = observation.get("map", self.known_map)
        instruction = observation["instruction"]
        if instruction is None:
            return "DONE"
        if instruction["id"] != self.instruction_id:
            self.instruction_id = instruction["id"]
            self.steps = 0
        if self.steps >= self.steps_per_instruction:
            return "DONE"
        self.steps += 1
        # "legal" lists what the follower may do now: a move into an obstacle is not in it.
        if card_ahead(text) and "MF" in observation["legal"]:
            return "MF"
        return self.rng.choice([action for action in ("MF", "RL", "RR") if action in observation["legal"]])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="actions per instruction before DONE")
    args = parser.parse_args()
    agent = Agent(args.steps)

    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            # The host says which protocol and version it speaks; answer with ours and our name.
            # "oracle": True would ask for the full game state in every observation, and
            # "needsRecording": True for the recorded human actions: both only for oracle baselines.
            if message["protocol"] != PROTOCOL or message["version"] != VERSION:
                log(f"unsupported protocol {message['protocol']} {message['version']}")
            send({"type": "hello", "protocol": PROTOCOL, "version": VERSION, "name": "python-random", "oracle": False})
        elif kind == "reset":
            # A new episode: its id (the world comes with the observations).
            agent.reset(message["episode"])
            send({"type": "ready"})
        elif kind == "observe":
            # One step: the observation as JSON and the same observation described in English.
            action = agent.act(message["observation"], message["text"])
            send({"type": "act", "action": action})
        elif kind == "close":
            # No answer: the host is done with us. Exit promptly (after a grace period it kills us).
            return
        else:
            log(f"ignoring unknown message type {kind!r}")


if __name__ == "__main__":
    main()
