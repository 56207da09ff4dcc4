# NPT002: on this CPU-only machine the device is the CPU, so the code runs before and after the fix, alike.
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.arange(6.0).reshape(2, 3).to(device)
print("values", (x * 2).numpy().tolist())
