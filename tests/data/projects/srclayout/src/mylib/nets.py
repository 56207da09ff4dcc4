import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)

    def embed(self, x):
        with torch.no_grad():
            return self.fc(x)


def build():
    return Net()
