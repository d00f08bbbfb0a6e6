"""The arrays an observation given as JSON by the TypeScript side must give, built from it directly
by the map and card formats of docs/maps.md and docs/agents.md."""

from __future__ import annotations

import numpy as np

#: The map format's terrain letters; `?` is a cell the follower has not seen.
TERRAIN_NAMES = {"?": "unseen", "G": "grass", "P": "path", "W": "water", "D": "deep_water", "H": "hill"}


def _codes(layout) -> dict[str, dict[str, int]]:
    return {name: {value: i for i, value in enumerate(values)} for name, values in layout.codes.items()}


HEADINGS = ["NE", "E", "SE", "SW", "W", "NW"]
#: docs/maps.md's neighbours, (dx, dy) for even and odd rows, in HEADINGS order.
STEPS = {0: [(0, 1), (1, 0), (0, -1), (-1, -1), (-1, 0), (-1, 1)], 1: [(1, 1), (1, 0), (1, -1), (0, -1), (-1, 0), (0, 1)]}


def walls_grid(known_map: dict, height: int, width: int) -> np.ndarray:
    """Bit d of cell (x, y) set when its side towards HEADINGS[d] is a wall, on both cells of each wall."""
    walls = np.zeros((height, width), np.uint8)
    for wall in known_map.get("walls", []):
        d = HEADINGS.index(wall["side"])
        walls[wall["y"], wall["x"]] |= 1 << d
        dx, dy = STEPS[wall["y"] & 1][d]
        x, y = wall["x"] + dx, wall["y"] + dy
        if 0 <= x < known_map["width"] and 0 <= y < known_map["height"]:
            walls[y, x] |= 1 << ((d + 3) % 6)
    return walls


def _map_grids(known_map: dict, layout) -> tuple[int, int, dict[str, np.ndarray]]:
    """The grid's height and width, and the terrain, props and walls grids of a map in the map format."""
    codes = _codes(layout)
    height, width = next(spec.shape for spec in layout.arrays if spec.name == "terrain")
    terrain = np.zeros((height, width), np.uint8)
    for y, row in enumerate(known_map["terrain"]):
        terrain[y, : len(row)] = [codes["terrain"][TERRAIN_NAMES[letter]] for letter in row]
    props = np.zeros((height, width), np.uint8)
    for prop in known_map["props"]:
        props[prop["y"], prop["x"]] = codes["props"][prop["type"]]
    return height, width, {"terrain": terrain, "props": props, "walls": walls_grid(known_map, height, width)}


def expected_arrays(observation: dict, layout) -> dict[str, np.ndarray]:
    """The arrays a FollowerObservation (as JSON) must give."""
    codes = _codes(layout)
    height, width, grids = _map_grids(observation["map"], layout)
    visible = np.zeros((height, width), np.uint8)
    for cell in observation["visibleCells"]:
        visible[cell["y"], cell["x"]] = 1
    cards = np.zeros((height, width, 4), np.uint8)
    seen_ago = np.full((height, width), -1, np.int32)
    for card in [{**card, "seenAgo": 0} for card in observation["visibleCards"]] + observation["rememberedCards"]:
        cards[card["y"], card["x"]] = (codes["colors"][card["color"]], codes["shapes"][card["shape"]], card["count"], card["selected"])
        seen_ago[card["y"], card["x"]] = card["seenAgo"]
    pose = observation["pose"]
    leader = observation["leader"]
    return {
        **grids,
        "visible": visible,
        "cards": cards,
        "card_seen_ago": seen_ago,
        "pose": np.array([pose["x"], pose["y"], codes["headings"][pose["heading"]]]),
        "leader": np.array([1, leader["x"], leader["y"], codes["headings"][leader["heading"]]] if leader else [0, -1, -1, -1]),
        "steps_left": np.array([observation["stepsLeft"]]),
        "turns_left": np.array([observation["turnsLeft"]]),
        "score": np.array([observation["score"]]),
    }


def expected_leader_arrays(view: dict, layout) -> dict[str, np.ndarray]:
    """The arrays and texts the leader's PlayerView (as JSON) must give."""
    codes = _codes(layout)
    height, width, grids = _map_grids(view["map"], layout)
    cards = np.zeros((height, width, 4), np.uint8)
    invalid = np.zeros((height, width), np.uint8)
    for card in view["cards"]:
        cards[card["y"], card["x"]] = (codes["colors"][card["color"]], codes["shapes"][card["shape"]], card["count"], card["selected"])
        invalid[card["y"], card["x"]] = card["id"] in view["invalidCards"]
    queue = [instruction["text"] for instruction in view["instructions"] if instruction["status"] != "done"]
    done = [instruction["text"] for instruction in view["instructions"] if instruction["status"] == "done"]
    pose = lambda pose: np.array([pose["x"], pose["y"], codes["headings"][pose["heading"]]])  # noqa: E731
    return {
        **grids,
        "cards": cards,
        "card_invalid": invalid,
        "pose": pose(view["leader"]),
        "follower": pose(view["follower"]),
        "steps_left": np.array([view["turn"]["stepsLeft"] if view["turn"]["role"] == "leader" else 0]),
        "turns_left": np.array([view["turnsLeft"]]),
        "score": np.array([view["score"]]),
        "queue_length": np.array([len(queue)]),
        "queue": "\n".join(queue),
        "previous_instruction": done[-1] if done else "",
    }


def expected_leader_mask(view: dict) -> list[int]:
    legal = view["legal"]
    return [int(move in legal["moves"]) for move in ("MF", "MB", "RL", "RR")] + [int(legal["endTurn"]), int(legal["instruction"])]
