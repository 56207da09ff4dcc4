import torch

torch.set_default_tensor_type(torch.cuda.DoubleTensor)

import load_data  # noqa: E402 - its code runs in this program, with the default set here
