import torch.nn as nn


class BoxDecoder(nn.Module):
    def forward(self, anchors, regression):
        return anchors + regression


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)
