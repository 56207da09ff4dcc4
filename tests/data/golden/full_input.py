"""Input of the `full` format's golden file (tests/test_output_formats.py)."""
import numpy as np
import torch

w = torch.ones(3, requires_grad=True)
print(w.numpy())
values = np.asarray(
	w,
)
t = torch.tensor(np.zeros(3)).float()


batch = []
for a in arrays:
    batch.append(torch.from_numpy(np.asarray(a, dtype=np.float32)).cuda())
