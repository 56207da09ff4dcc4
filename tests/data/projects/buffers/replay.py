import numpy as np
import torch


def get_device(device="auto"):
    if device == "auto":
        device = "cuda"
    return torch.device(device)


class ReplayBuffer:
    def __init__(self, size, device="auto"):
        self.device = get_device(device)
        self.observations = np.zeros((size, 4), dtype=np.float32)

    def sample(self, indices):
        return torch.as_tensor(self.observations[indices], device=self.device)
