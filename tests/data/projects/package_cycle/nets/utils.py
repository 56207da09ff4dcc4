import numpy as np
import torch.nn as nn

HIDDEN = 3
