# A to_numpy imported from another library keeps meaning that library's function.
from json import dumps as to_numpy

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.arange(3.0).to(device)
print("converted", x.numpy().tolist())
print("library", to_numpy({"a": 1}))
