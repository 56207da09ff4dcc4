import matplotlib.pyplot as plt
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)


def fit(model, loader, warmup):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.to(device)
    losses = []
    for epoch, (x, y) in enumerate(loader):
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        if epoch < warmup:
            loss = 0  # not trained yet: a number on this path, the loss tensor on the other
        losses.append(loss)
    # run.py passes a network with parameters
    plt.plot(losses)  # NPT001, NPT002
