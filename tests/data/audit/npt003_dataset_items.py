"""NPT003 only at run time: the dataset's items come from a loader the linter does not know (a config names it)."""
import importlib
import json

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

CONFIG = json.loads('{"loader": "numpy.random.default_rng"}')


class Items(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return torch.tensor(self.items[index])  # audit: NPT003 count=12 bytes=1536


def load(config):
    module, name = config["loader"].rsplit(".", 1)
    generator = getattr(importlib.import_module(module), name)(0)
    return [generator.random(32, dtype=np.float32) for _ in range(12)]


for batch in DataLoader(Items(load(CONFIG)), batch_size=4):
    assert batch.shape == (4, 32)
