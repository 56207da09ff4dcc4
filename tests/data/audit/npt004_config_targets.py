"""NPT004 only at run time: the targets come from a config file's numbers; NumPy makes them float64 and the loss
meets float32 predictions."""
import json

import numpy as np
import torch

CONFIG = json.loads('{"rows": [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], "targets": [[1.0], [2.0]]}')


def arrays(config):
    return np.asarray(config["rows"]), np.asarray(config["targets"])


model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
rows, targets = arrays(CONFIG)
features = torch.from_numpy(rows).float()
for step in range(3):
    target = torch.as_tensor(targets)  # audit: NPT004 count=3
    loss = torch.nn.functional.mse_loss(model(features), target)  # promoted to float64 here
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
