import numpy as np


class ReplayMemory:
    def __init__(self, capacity, dim):
        self.states = np.empty((capacity, dim))
        self.position = 0

    def sample(self, batch_size):
        index = np.random.randint(0, self.position, size=batch_size)
        return self.states[index]
