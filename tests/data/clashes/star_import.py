# A star import may bring in a to_numpy of its own: the fix must not shadow or be shadowed by it.
from math import *  # noqa: F401,F403

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.arange(3.0).to(device)
print("converted", x.numpy().tolist(), floor(2.5))  # noqa: F405
