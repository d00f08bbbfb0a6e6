"""Gymnasium spaces built from an environment's layout (imported only when Gymnasium is installed)."""

from __future__ import annotations

import string

from gymnasium import spaces

from .layout import Layout

#: What `AnyText.sample()` draws from.
SAMPLE_CHARACTERS = string.ascii_letters + string.digits + string.punctuation + " "


class AnyText(spaces.Text):
    """Text of `min_length` to `max_length` characters, any Unicode characters in it: instructions
    are people's writing. Samples are drawn from printable ASCII."""

    def __init__(self, max_length: int, min_length: int = 0, seed=None):
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARACTERS, seed=seed)

    def contains(self, x) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"AnyText({self.min_length}, {self.max_length})"


def observation_space(layout: Layout, texts: bool = True) -> spaces.Dict:
    """A Box per array of the observation, and an AnyText per text (with `texts`)."""
    fields: dict[str, spaces.Space] = {
        spec.name: spaces.Box(low=spec.low, high=spec.high, shape=spec.shape, dtype=spec.dtype)
        for spec in layout.arrays
        if spec.group == "observation"
    }
    if texts:
        fields.update({spec.name: AnyText(spec.max_length) for spec in layout.texts if spec.group == "observation"})
    return spaces.Dict(fields)


def with_image(observation: spaces.Dict, size: tuple[int, int]) -> spaces.Dict:
    """`observation`'s fields and `image`, a (height, width, 3) uint8 frame: the pixels observation."""
    width, height = size
    return spaces.Dict({**observation.spaces, "image": spaces.Box(low=0, high=255, shape=(height, width, 3), dtype="uint8")})


def follower_action_space(layout: Layout) -> spaces.Discrete:
    return spaces.Discrete(len(layout.actions))


def leader_action_space(layout: Layout) -> spaces.Dict:
    """`action` by index; `instruction` is the text sent with INSTRUCTION (ignored with the others),
    as long as any instruction the leader sees."""
    longest = next(spec.max_length for spec in layout.texts if spec.name == "previous_instruction")
    return spaces.Dict({"action": spaces.Discrete(len(layout.actions)), "instruction": AnyText(longest, min_length=1)})
