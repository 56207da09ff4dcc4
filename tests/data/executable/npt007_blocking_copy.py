# NPT007: the non-blocking copies to the host are read before any sync; the fix makes them wait. On this CPU-only
# machine the device is the CPU, where nothing is asynchronous, so the program prints the same before and after.
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.arange(6.0, device=device).reshape(2, 3) * 2
host = x.to("cpu", non_blocking=True)
print("values", host.tolist(), float(host.sum()))
print("array", x.to("cpu", non_blocking=True).numpy().tolist())
buffer = torch.empty(2, 3)
buffer.copy_(x, non_blocking=True)
print("buffer", np.asarray(buffer).tolist())
