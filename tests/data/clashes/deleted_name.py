# A name deleted after use: an added import of that name would be deleted too.
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
to_numpy = "temporary"
del to_numpy
x = torch.arange(3.0).to(device)
print("converted", x.numpy().tolist())
