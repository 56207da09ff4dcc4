import numpy as np
import torch
import torch.nn as nn

from evaluation import evaluate, evaluate_quietly, im2tensor, nan_count, scores_at, to_numpy
from exporter import Exporter
from memory import ReplayMemory
from runners import pipeline_for
from toolbox import host_copy, to_host
from utils import get_device, resolve

device = get_device("auto")
net = nn.Linear(3, 3).to(device)
loader = [(torch.ones(3, device=device), 1)]
evaluate(net, loader)
evaluate_quietly(net, loader)
im2tensor(np.random.rand(3, 32, 32))
to_numpy(net(torch.ones(3, device=device)))
nan_count(net(torch.ones(3, device=device)).detach())
on_host = get_device("cpu")
x = torch.ones(3).to(on_host)
x.numpy()  # ok: "cpu" is the host
y = torch.ones(3).to(resolve("auto"))
# "auto" is cuda where it is available, two calls deep
y.numpy()  # NPT002
memory = ReplayMemory(100, 4)
states = torch.from_numpy(memory.sample(8))  # NPT004
Exporter(nn.BatchNorm1d(3))
scores_at([(net(torch.ones(3, device=device)).detach(), torch.ones(3))], "test")
host_copy(net(torch.ones(3, device=device)).detach())  # found in tensors.py, which toolbox re-exports
to_host(net)  # moves net to the host in place
net.weight.detach().numpy()  # ok: to_host moved it back


def test_only(task, x):
    # the summary of runners.py keeps both classes the factory may return: the object is one or the other
    _, runner_class = pipeline_for(task)
    return runner_class(nn.Linear(3, 2)).evaluate(x)
