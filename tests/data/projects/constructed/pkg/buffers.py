from typing import NamedTuple

import numpy as np
import torch

from pkg.utils import get_device


class Samples(NamedTuple):
    observations: torch.Tensor
    rewards: torch.Tensor


class BaseBuffer:
    def __init__(self, size, device="auto"):
        self.size = size
        self.device = get_device(device)

    def sample(self, batch_size):
        index = np.random.randint(0, self.size, size=batch_size)
        return self._get_samples(index)

    def _get_samples(self, index):
        raise NotImplementedError()

    def to_torch(self, array, copy=True):
        if copy:
            return torch.tensor(array, device=self.device)
        return torch.as_tensor(array, device=self.device)


class ReplayBuffer(BaseBuffer):
    def __init__(self, size, device="auto"):
        super().__init__(size, device=device)
        self.observations = np.zeros((size, 4), dtype=np.float32)
        self.rewards = np.zeros(size, dtype=np.float32)

    def sample(self, batch_size):
        return super().sample(batch_size=batch_size)  # whose self._get_samples is this class's

    def _get_samples(self, index):
        data = (self.observations[index], self.rewards[index])
        return Samples(*tuple(map(self.to_torch, data)))


class NStepReplayBuffer(ReplayBuffer):
    def __init__(self, *args, n_steps=3, **kwargs):
        super().__init__(*args, **kwargs)  # hands on what it is given, device too
        self.n_steps = n_steps
