# NPT001: NumPy functions given tensors that require grad (one, or a list of them) raise before the fix; after it,
# the same numbers from detached tensors.
import numpy as np
import torch

torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
x = torch.ones(4, 3)
loss_a = model(x).sum()
loss_b = model(x).mean()
reference = float(loss_a.detach() + loss_b.detach())
total = np.sum([loss_a, loss_b])
print("matches", bool(abs(float(total) - reference) < 1e-5))
print("exp", [round(float(v), 6) for v in np.exp(model(x)).ravel()])
print("stacked", np.vstack([model(x), model(x) * 2]).shape)
