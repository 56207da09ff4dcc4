"""The right thing for NPT004: a dtype decided on (float32 by .float(), float64 everywhere by .double()). No
finding, though every array here is float64."""
import numpy as np
import torch


def rows(count):
    return np.random.default_rng(0).random((count, 3))


model = torch.nn.Linear(3, 1)
prediction = model(torch.from_numpy(rows(4)).float())
loss = torch.nn.functional.mse_loss(prediction, torch.from_numpy(rows(4)[:, :1]).to(torch.float32))
loss.backward()

scientific = torch.nn.Linear(3, 1).double()
exact = scientific(torch.from_numpy(rows(4)))
assert exact.dtype == torch.float64
