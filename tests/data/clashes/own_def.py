# The project's own to_numpy: both call sites must keep calling what they called.
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def to_numpy(values):
    return ["mine", *values]


x = torch.arange(3.0).to(device)
print("converted", x.numpy().tolist())
print("own helper", to_numpy([1, 2]))
