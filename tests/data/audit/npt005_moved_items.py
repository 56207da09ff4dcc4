"""NPT005 only at run time: the device comes from a config (a meta device stands in for an accelerator here) and
the items are moved one by one by a function passed in."""
import functools
import json

import numpy as np
import torch

DEVICE = torch.device(json.loads('{"device": "meta"}')["device"])


def gather(items, move):
    return torch.stack([move(item) for item in items])  # audit: NPT005 count=24 bytes=1536


batches = [[np.zeros(16, dtype=np.float32) for _ in range(8)] for _ in range(3)]
for batch in batches:
    stacked = gather([torch.from_numpy(item) for item in batch], functools.partial(torch.Tensor.to, device=DEVICE))
    assert stacked.shape == (8, 16)
