"""A small top-down picture of an observation, for `render_mode="rgb_array"`: each hex cell a square
of pixels, odd rows shifted half a cell east as in the game, north at the top. It draws only what
the observation holds, so a follower's picture shows only what the follower knows.
"""

from __future__ import annotations

import numpy as np

CELL = 8
HALF = CELL // 2

_TERRAIN_RGB = {
    "off-map": (0, 0, 0),
    "unseen": (40, 40, 40),
    "grass": (110, 170, 80),
    "path": (200, 180, 130),
    "water": (70, 130, 200),
    "deep_water": (30, 70, 150),
    "hill": (150, 120, 90),
}
_PROP_RGB = (60, 90, 50)
_CARD_RGB = {
    "orange": (240, 140, 30),
    "black": (20, 20, 20),
    "blue": (40, 60, 230),
    "yellow": (240, 220, 40),
    "pink": (240, 120, 200),
    "red": (220, 30, 30),
    "green": (20, 140, 40),
}
_SELECTED_RGB = (255, 255, 255)
_PLAYER_RGB = {"leader": (150, 0, 150), "follower": (0, 220, 220)}
_OTHER_RGB = (128, 128, 128)


def _pattern(margin: int) -> np.ndarray:
    """Which pixels of a cell a mark covers: a square `margin` pixels in from the cell's edge."""
    pattern = np.zeros((CELL, CELL), dtype=bool)
    pattern[margin : CELL - margin, margin : CELL - margin] = True
    return pattern


def _palette(names: list[str], colours: dict[str, tuple[int, int, int]]) -> np.ndarray:
    return np.array([colours.get(name, _OTHER_RGB) for name in names], dtype=np.uint8)


def draw(observation: dict, codes: dict[str, list[str]]) -> np.ndarray:
    """An (height * CELL, width * CELL + CELL / 2, 3) uint8 picture of `observation`."""
    terrain = observation["terrain"]
    height, width = terrain.shape
    cells = _palette(codes["terrain"], _TERRAIN_RGB)[terrain]
    if "visible" in observation:  # the follower's view cone, lighter
        lit = observation["visible"].astype(bool)
        cells[lit] = np.minimum(cells[lit].astype(np.int16) + 40, 255).astype(np.uint8)
    cells[observation["props"] > 0] = _PROP_RGB
    pixels = np.repeat(np.repeat(cells, CELL, axis=0), CELL, axis=1)

    def mark(where: np.ndarray, colours: np.ndarray, margin: int) -> None:
        covered = np.tile(_pattern(margin), (height, width)) & np.repeat(np.repeat(where, CELL, axis=0), CELL, axis=1)
        pixels[covered] = np.repeat(np.repeat(colours, CELL, axis=0), CELL, axis=1)[covered]

    cards = observation["cards"]
    has_card = cards[..., 0] > 0
    selected = np.zeros_like(cells)
    selected[cards[..., 3] > 0] = _SELECTED_RGB
    mark(has_card & (cards[..., 3] > 0), selected, 1)
    mark(has_card, _palette(codes["colors"], _CARD_RGB)[cards[..., 0]], 2)
    if "visible" in observation:  # the follower's own pose, and the leader's when in view
        players = [("follower", observation["pose"])]
        if observation["leader"][0]:
            players.append(("leader", observation["leader"][1:]))
    else:
        players = [("leader", observation["pose"]), ("follower", observation["follower"])]
    for role, pose in players:
        where = np.zeros((height, width), dtype=bool)
        where[pose[1], pose[0]] = True
        colour = np.zeros_like(cells)
        colour[where] = _PLAYER_RGB[role]
        mark(where, colour, 3)

    # North up, and odd rows half a cell east.
    picture = np.zeros((height * CELL, width * CELL + HALF, 3), dtype=np.uint8)
    for y in range(height):
        shift = HALF if y % 2 else 0
        top = (height - 1 - y) * CELL
        picture[top : top + CELL, shift : shift + width * CELL] = pixels[y * CELL : (y + 1) * CELL]
    return picture
