"""The right thing for NPT006: the frames stacked by NumPy first. No finding."""
import numpy as np
import torch

frames = [np.full((8, 8), step, dtype=np.float32) for step in range(8)]
batch = torch.from_numpy(np.stack(frames))
values = torch.tensor([1.0, 2.0, 3.0])
assert batch.shape == (8, 8, 8) and values.dtype == torch.float32
