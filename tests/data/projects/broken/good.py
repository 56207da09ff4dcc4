import torch

from bad import load

torch.tensor(load())  # ok: its module does not parse, so what it gives is unknown
