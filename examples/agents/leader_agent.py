#!/usr/bin/env python3
"""A CerealBar leader agent in plain Python (standard library only).

It speaks the cerealbar-agent protocol, version 3, in the leader's seat (docs/agents.md): one JSON
object per line on stdin (from the host) and one JSON object per line on stdout (its answers).
Anything else it wants to say goes to stderr, which the host keeps for its error messages.

Its policy is small, and answers one plan per turn:
  * while instructions are still queued, it ends its turn at once (END) and lets the follower work;
  * when the selection cannot make a set (the red marks), it asks for one of its cards to be
    stepped on again, to unselect it;
  * otherwise it finds the valid set that contains the selected cards and lies nearest the
    follower, writes one instruction per card still to pick up ("pick up the 2 red stars"),
    nearest the follower first, and ends its turn.
It never walks: a better leader would also take cards itself.

Run it through the host, for example:
    npx cerealbar selfplay --leader "python3 examples/agents/leader_agent.py" --follower heuristic --out runs
"""

import itertools
import json
import sys

PROTOCOL = "cerealbar-agent"
VERSION = 3

# The shapes as the cards draw them and as instructions name them (the engine's values differ for two).
SHAPE_NAMES = {"torus": ("circle", "circles"), "plus": ("cross", "crosses")}


def send(message):
    """Writes one answer line. flush=True matters: the host waits for the whole line."""
    print(json.dumps(message), flush=True)


def log(text):
    """Diagnostics go to stderr: stdout carries protocol messages only."""
    print(text, file=sys.stderr, flush=True)


def card_words(card):
    """ "1 red star", "3 blue circles": how the game names a card. """
    one, many = SHAPE_NAMES.get(card["shape"], (card["shape"], card["shape"] + "s"))
    return f'{card["count"]} {card["color"]} {one if card["count"] == 1 else many}'


def hex_distance(a, b):
    """Steps between two cells in the engine's odd-r offset coordinates (odd rows shifted half a hex)."""

    def cube(cell):
        q = cell["x"] - (cell["y"] - (cell["y"] & 1)) // 2
        return q, cell["y"]

    (q1, r1), (q2, r2) = cube(a), cube(b)
    return (abs(q1 - q2) + abs(r1 - r2) + abs(q1 + r1 - q2 - r2)) // 2


def all_different(cards):
    """A valid set's cards share no colour, no shape and no count."""
    return all(len({card[key] for card in cards}) == len(cards) for key in ("color", "shape", "count"))


def nearest_set(cards, selected, follower):
    """The valid set holding every selected card whose missing cards are nearest the follower, or None."""
    others = [card for card in cards if not card["selected"]]
    best, best_cost = None, None
    for extra in itertools.combinations(others, 3 - len(selected)):
        if not all_different(selected + list(extra)):
            continue
        cost = sum(hex_distance(follower, card) for card in extra)
        if best is None or cost < best_cost:
            best, best_cost = list(extra), cost
    return best


class Leader:
    def act(self, observation):
        """One turn's plan: instructions, then END; or an empty plan (pass) when nothing can be done."""
        can_end = "END" in observation["legal"]
        pending = [i for i in observation["instructions"] if i["status"] != "done"]
        if pending:
            return ["END"] if can_end else []
        cards, follower = observation["cards"], observation["follower"]
        selected = [card for card in cards if card["selected"]]
        if observation["invalidCards"]:
            # Stepping on a selected card again unselects it: the one nearest the follower.
            wrong = min((card for card in selected if card["id"] in observation["invalidCards"]), key=lambda card: hex_distance(follower, card))
            todo = [f"unselect the {card_words(wrong)}"]
        else:
            missing = nearest_set(cards, selected, follower) or []
            todo = [f"pick up the {card_words(card)}" for card in sorted(missing, key=lambda card: hex_distance(follower, card))]
        if not todo or not observation["canInstruct"]:
            return ["END"] if can_end else []
        # END is allowed once something is queued: the instructions come first in the plan.
        return [{"instruction": text[: observation["maxInstructionLength"]]} for text in todo] + ["END"]


def main():
    leader = Leader()
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            # The host names the seat and the protocol versions it speaks there.
            if message.get("role") != "leader" or VERSION not in message.get("versions", []):
                log(f"this agent plays the leader with protocol version {VERSION}; the host offers {message}")
            send({"type": "hello", "protocol": PROTOCOL, "version": VERSION, "name": "python-leader", "agentVersion": "1"})
        elif kind == "reset":
            # A new game: the episode's id (nothing to prepare here).
            send({"type": "ready"})
        elif kind == "observe":
            # The leader's observation as JSON (its "map" only in the first of a game) and as English text.
            send({"type": "act", "actions": leader.act(message["observation"])})
        elif kind == "close":
            # No answer: the host is done with us. Exit promptly (after a grace period it kills us).
            return
        else:
            log(f"ignoring unknown message type {kind!r}")


if __name__ == "__main__":
    main()
