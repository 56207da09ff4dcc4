# NPT001: converting a model's output raises before the fix; after it, the same numbers as a detached copy.
import numpy as np
import torch

torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
x = torch.ones(4, 3)
reference = model(x).detach().clone()
result = model(x).numpy()
print("values", [round(float(v), 6) for v in result.ravel()])
print("matches", bool((torch.from_numpy(result.copy()) == reference).all()))
as_array = np.asarray(model(x) * 2)
print("asarray", [round(float(v), 6) for v in as_array.ravel()])
