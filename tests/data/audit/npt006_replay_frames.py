"""NPT006 only at run time: the frames come out of a buffer that a callback fills."""
import random

import numpy as np
import torch


class Buffer:
    def __init__(self):
        self.frames = []

    def put(self, frame):
        self.frames.append(frame)

    def sample(self, count):
        return random.sample(self.frames, count)


def run(observe, buffer):
    for step in range(20):
        buffer.put(observe(step))
    return [torch.tensor(buffer.sample(8)) for _ in range(3)]  # audit: NPT006 count=3 bytes=6144


batches = run(lambda step: np.full((8, 8), step, dtype=np.float32), Buffer())
assert batches[0].shape == (8, 8, 8)
