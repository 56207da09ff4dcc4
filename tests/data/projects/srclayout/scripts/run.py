import torch
from mylib.nets import Net, build

net = Net()
x = torch.randn(8, 4)
net(x).numpy()  # NPT001
net.embed(x).numpy()  # ok: embed runs under no_grad
build()(x).numpy()  # NPT001
with torch.no_grad():
    net(x).numpy()  # ok: no grad here


class Head(Net):
    def export(self):
        return self.fc.weight.numpy()  # NPT001
