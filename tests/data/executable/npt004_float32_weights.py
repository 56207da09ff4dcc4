# NPT004: a NumPy default float64 batch into float32 weights raises before the fix; after it, float32 and runs.
import numpy as np
import torch

np.random.seed(0)
torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
batch = torch.from_numpy(np.random.rand(4, 3))
print("dtype", batch.dtype)
with torch.no_grad():
    out = model(batch)
print("values", [round(float(v), 5) for v in out.ravel()])
