"""The right thing for NPT005: one copy per batch, and a training loop's per-step moves. No finding."""
import json

import numpy as np
import torch

DEVICE = torch.device(json.loads('{"device": "meta"}')["device"])
batches = [[np.zeros(16, dtype=np.float32) for _ in range(8)] for _ in range(3)]
for batch in batches:
    stacked = torch.from_numpy(np.stack(batch)).to(DEVICE)
    assert stacked.shape == (8, 16)

steps = [(np.zeros((4, 16), dtype=np.float32), np.zeros(4, dtype=np.int64)) for _ in range(6)]
for features, labels in steps:
    features, labels = torch.from_numpy(features).to(DEVICE), torch.from_numpy(labels).to(DEVICE)
    assert features.device.type == "meta"
