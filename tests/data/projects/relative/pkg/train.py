import torch

from . import data
from .data import GRID, load, load_ints
from pkg import load_float32

torch.from_numpy(load())  # NPT004
torch.tensor(data.load())  # NPT004
torch.from_numpy(load_float32())  # ok: float32
torch.FloatTensor(load_ints())  # NPT009
torch.as_tensor(GRID)  # NPT004
