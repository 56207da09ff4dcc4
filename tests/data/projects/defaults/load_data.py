import numpy as np
import torch

labels = torch.FloatTensor(np.arange(3))  # NPT009
noise = torch.from_numpy(np.random.rand(3))  # ok: the project changes the default dtype (run.py: CUDA float64)
