# NPT003: torch.tensor copies, so a later write to the array is not seen; after the fix the tensor shares it.
import numpy as np
import torch

array = np.zeros(4, dtype=np.float32)
tensor = torch.tensor(array)
array[0] = 7.0
print("sees write", float(tensor[0]) == 7.0)
print("dtype", tensor.dtype)
