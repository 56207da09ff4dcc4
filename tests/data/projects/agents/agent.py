import numpy as np
import torch

from pkg.nets import Actor

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Agent:
    # the network is built in a method __init__ calls, of a class another module defines: each read of reset()
    # constructs it anew, and what self.actor holds is one of those objects
    def __init__(self, state_size, action_size):
        self.state_size, self.action_size = state_size, action_size
        self.reset()

    def reset(self):
        self.actor = Actor(self.state_size, self.action_size).to(device)

    def act(self, state):
        state = torch.from_numpy(state).float().to(device)
        action = self.actor(state)
        return np.clip(np.array(action), -1, 1)  # NPT001, NPT002

    def act_on_host(self, state):
        with torch.no_grad():
            action = self.actor(torch.from_numpy(state).float().to(device)).cpu()
        return np.array(action)  # ok: moved to the host first
