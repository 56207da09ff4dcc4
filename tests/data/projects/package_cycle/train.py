import torch

from nets import *
from nets import Head  # the class the package binds, not its submodule nets/Head.py

head = Head()
head(torch.ones(3)).numpy()  # NPT001
np.asarray(head(torch.ones(3)).detach())  # ok: detached
