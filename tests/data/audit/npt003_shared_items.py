"""The right thing for npt003_dataset_items.py: the items are shared, not copied. No finding."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Items(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        return torch.from_numpy(self.items[index])


items = [np.random.default_rng(0).random(32, dtype=np.float32) for _ in range(12)]
for batch in DataLoader(Items(items), batch_size=4):
    assert batch.shape == (4, 32)
# a dtype change copies whatever is called: not a needless copy
converted = torch.tensor(items[0], dtype=torch.float64)
