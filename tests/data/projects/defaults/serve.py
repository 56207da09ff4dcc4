import numpy as np
import torch

# another entry script: it never imports run.py, so torch's default dtype is its own
noise = torch.from_numpy(np.random.rand(3))  # NPT004
