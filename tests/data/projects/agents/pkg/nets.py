import torch.nn.functional as F
from torch import nn


class Actor(nn.Module):
    def __init__(self, state_size, action_size):
        super().__init__()
        self.hidden = nn.Linear(state_size, 64)
        self.mu = nn.Linear(64, action_size)

    def forward(self, state):
        return self.mu(F.relu(self.hidden(state)))
