# A parameter, a comprehension variable, a with target and a global named like the helper.
import contextlib

import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def scale(to_numpy, values):
    return [to_numpy * value for value in values]


def remember():
    global to_numpy
    to_numpy = "global"


with contextlib.nullcontext("with target") as from_numpy:
    pass
squares = [to_numpy * to_numpy for to_numpy in range(4)]
remember()
x = torch.arange(3.0).to(device)
print("scaled", scale(2, x.numpy().tolist()))
print("names", to_numpy, from_numpy, squares)
