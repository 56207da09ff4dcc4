# NPT005: items stacked along another dim than the first (by keyword and by position), arrays and tensors: the fix
# stacks along the same dim, so the batch has the same shape and values.
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
arrays = [np.arange(12, dtype=np.float32).reshape(4, 3) + 100 * i for i in range(2)]
tensors = [torch.from_numpy(a) for a in arrays]
last = -1
by_keyword = torch.stack([torch.from_numpy(a).to(device) for a in arrays], dim=1)
by_position = torch.stack([torch.from_numpy(a).to(device) for a in arrays], last)
first = torch.stack([torch.from_numpy(a).to(device) for a in arrays], dim=0)
of_tensors = torch.stack([t.to(device) for t in tensors], dim=2)
assert by_keyword.shape == (4, 2, 3), by_keyword.shape
assert by_position.shape == (4, 3, 2) and first.shape == (2, 4, 3) and of_tensors.shape == (4, 3, 2)
for batch in (by_keyword, by_position, first, of_tensors):
    print(tuple(batch.shape), batch.is_contiguous(), batch.flatten()[:8].tolist())
