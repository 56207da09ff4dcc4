import numpy as np
import torch

from b import helper


def make():
    return np.zeros(3)


torch.tensor(helper())  # NPT003, NPT004
