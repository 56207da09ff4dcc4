# A loop variable named like a helper, earlier in the module: the fix must not call the int.
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
for to_numpy in range(3):
    pass
x = torch.arange(6.0).to(device)
print("values", (x * 2).numpy().tolist())
print("loop variable", to_numpy)
