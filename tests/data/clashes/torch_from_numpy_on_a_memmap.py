# `from torch import from_numpy` plus an unrelated NPT003 fix: torch's from_numpy on a memory map must keep
# writing through to the file (np2torch_lint.runtime.from_numpy copies memory maps).
import os
import tempfile

import numpy as np
import torch
from torch import from_numpy

path = os.path.join(tempfile.mkdtemp(), "data.bin")
mapped = np.memmap(path, dtype=np.float32, mode="w+", shape=(4,))
view = from_numpy(mapped)
view[0] = 5.0
mapped.flush()
print("file sees write", float(np.fromfile(path, dtype=np.float32)[0]) == 5.0)
array = np.zeros(4, dtype=np.float32)
copied = torch.tensor(array)
print("dtype", copied.dtype)
