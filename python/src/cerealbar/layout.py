"""Reading the engine's encoded blocks: the `Layout` an environment's make answer gives says where
each field lies (shared/env/observationArrays.ts writes the blocks). Arrays are numpy views on the
answer's bytes, made without touching their elements; each answer has its own buffer, so an
observation stays valid (and writable) after later steps.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

_STRUCT_CODES = {"float64": "d", "int32": "i", "uint8": "B", "int8": "b"}
_TEXT_LENGTH = struct.Struct("<I")


@dataclass(frozen=True)
class ArraySpec:
    name: str
    group: str
    dtype: np.dtype
    shape: tuple[int, ...]
    offset: int
    count: int
    low: int
    high: int


@dataclass(frozen=True)
class TextSpec:
    name: str
    group: str
    max_length: int


@dataclass
class Transition:
    observation: dict[str, Any]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    #: Where the block ended in the payload: what follows (reset's episode id) starts here.
    end: int


class Layout:
    def __init__(self, raw: dict):
        scalars = raw["scalars"]
        self._scalars = struct.Struct("<" + "".join(_STRUCT_CODES[field["dtype"]] for field in scalars))
        names = [field["name"] for field in scalars]
        self._reward, self._terminated, self._truncated = (names.index(name) for name in ("reward", "terminated", "truncated"))
        self._info_scalars = [(i, field["name"]) for i, field in enumerate(scalars) if field["group"] == "info"]
        self.arrays = [
            ArraySpec(
                name=field["name"],
                group=field["group"],
                dtype=np.dtype(field["dtype"]),
                shape=tuple(field["shape"]),
                offset=field["offset"],
                count=int(np.prod(field["shape"])),
                low=field["low"],
                high=field["high"],
            )
            for field in raw["arrays"]
        ]
        self.texts = [TextSpec(field["name"], field["group"], field["maxLength"]) for field in raw["texts"]]
        self.fixed_bytes: int = raw["fixedBytes"]
        #: Action names by index, the order of `action_mask` too.
        self.actions: list[str] = raw["actions"]
        #: What grid codes mean: code i of `terrain` is `codes["terrain"][i]`, and so on.
        self.codes: dict[str, list[str]] = raw["codes"]

    def decode(self, payload: bytearray, offset: int = 0) -> Transition:
        scalars = self._scalars.unpack_from(payload, offset)
        observation: dict[str, Any] = {}
        info: dict[str, Any] = {name: scalars[i] for i, name in self._info_scalars}
        for spec in self.arrays:
            array = np.frombuffer(payload, spec.dtype, spec.count, offset + spec.offset).reshape(spec.shape)
            (observation if spec.group == "observation" else info)[spec.name] = array
        position = offset + self.fixed_bytes
        for spec in self.texts:
            text, position = read_text(payload, position)
            (observation if spec.group == "observation" else info)[spec.name] = text
        return Transition(
            observation=observation,
            reward=float(scalars[self._reward]),
            terminated=bool(scalars[self._terminated]),
            truncated=bool(scalars[self._truncated]),
            info=info,
            end=position,
        )


def read_text(payload: bytearray, position: int) -> tuple[str, int]:
    """The text at `position` (a u32 byte count and UTF-8), and where the next field starts."""
    (length,) = _TEXT_LENGTH.unpack_from(payload, position)
    end = position + 4 + length
    return payload[position + 4 : end].decode("utf-8"), end
