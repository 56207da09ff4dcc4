# NPT005: one transfer per array before the fix, one stacked transfer after; the same batch either way.
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
arrays = [np.full((2, 3), float(i), dtype=np.float32) for i in range(5)]
batch = torch.stack([torch.from_numpy(a).to(device) for a in arrays])
items = [torch.from_numpy(a).to(device) for a in arrays]
print("batch", batch.shape, batch.dtype, batch.sum().item())
print("items", len(items), [tuple(t.shape) for t in items], [t.sum().item() for t in items])
