# NPT008: torch shares a read-only broadcast view as a writable tensor, so a write through the tensor lands in
# the array (undefined behaviour, with a warning); after the fix the tensor owns a copy.
import numpy as np
import torch

base = np.zeros(3, dtype=np.float32)
tiled = torch.from_numpy(np.broadcast_to(base, (2, 3)))
tiled[0, 0] = 5.0
print("array changed", bool(base[0] == 5.0))
print("values", tiled.tolist())
