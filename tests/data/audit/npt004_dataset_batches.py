"""NPT004 only at run time: the dataset's samples are float64 arrays (made by a callback), the DataLoader collates
them into float64 batches, and the float32 model raises on them."""
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __init__(self, make, count):
        self.samples = [make(index) for index in range(count)]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, index):
        return self.samples[index]


model = torch.nn.Linear(4, 2)
errors = []
for batch in DataLoader(Samples(lambda index: np.full(4, index / 10), 8), batch_size=4):  # audit: NPT004 count=2
    try:
        model(batch)  # raises: mat1 and mat2 must have the same dtype
    except RuntimeError as error:
        errors.append(error)
assert len(errors) == 2
