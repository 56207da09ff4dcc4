"""NPT001 only at run time: the logger's conversion is a callback looked up by name as the program runs, so the
linter cannot see which function it is (np.asarray, which takes a grad tensor)."""
import numpy as np
import torch


def log(metrics, convert):
    return {name: convert(value) for name, value in metrics.items()}  # audit: NPT001 count=1


weight = torch.ones(3, requires_grad=True)
loss = (weight * 2).sum()
log({"loss": loss}, getattr(np, "".join(["as", "array"])))
