import numpy as np


def load():
    return np.random.rand(3)


def load_float32():
    return np.random.rand(3).astype(np.float32)


def load_ints():
    return np.arange(3)


GRID = np.linspace(0, 1, 5)
