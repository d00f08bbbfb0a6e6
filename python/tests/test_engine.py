"""The engine process itself: several environments in one process, and the batched step that a
vector environment will use (one round trip for many environments)."""

from __future__ import annotations

import json
import struct

import numpy as np

from cerealbar.engine import OP_MAKE, OP_RESET, OP_STEP, OP_STEP_MANY, EngineProcess
from cerealbar.layout import Layout

ENV = struct.Struct("<I")


def make(engine: EngineProcess) -> tuple[int, Layout]:
    made = engine.request_json(bytes([OP_MAKE]) + json.dumps({"role": "follower", "reward": "distance", "description": False}).encode())
    return made["env"], Layout(made["layout"])


def test_a_batched_step_answers_as_single_steps_do():
    engine = EngineProcess()
    try:
        (one, layout), (two, _), (alone, _) = make(engine), make(engine), make(engine)
        for env, seed in ((one, 4), (two, 5), (alone, 4)):
            engine.request(bytes([OP_RESET]) + ENV.pack(env) + json.dumps({"seed": seed}).encode())
        batch = [(one, 0), (two, 2), (one, 3)]
        payload = engine.request(bytes([OP_STEP_MANY]) + ENV.pack(len(batch)) + b"".join(ENV.pack(env) + bytes([action]) for env, action in batch))
        transitions, position = [], 0
        while position < len(payload):
            (length,) = ENV.unpack_from(payload, position)
            transitions.append(layout.decode(payload, position + 4))
            position += 4 + length
        assert len(transitions) == 3
        for (_, action), transition in zip([batch[0], batch[2]], [transitions[0], transitions[2]]):
            single = layout.decode(engine.request(bytes([OP_STEP]) + ENV.pack(alone) + bytes([action])))
            assert (transition.reward, transition.terminated, transition.truncated) == (single.reward, single.terminated, single.truncated)
            assert transition.info.keys() == single.info.keys()
            for key, value in transition.observation.items():
                assert np.array_equal(value, single.observation[key]), key
        assert transitions[1].info["steps"] == 1
    finally:
        engine.close()
