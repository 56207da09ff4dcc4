# NPT006: torch converts a list of arrays number by number (and warns); after the fix it stacks first. Same batch.
import numpy as np
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
frames = [np.full((4, 5), i, dtype=np.float32) for i in range(6)]
batch = torch.tensor(frames)
pair = torch.as_tensor([frames[0], frames[1]], dtype=torch.float64)
moved = torch.tensor(frames, device=device)
print("batch", batch.dtype, tuple(batch.shape), batch.sum().item())
print("pair", pair.dtype, tuple(pair.shape), pair.sum().item())
print("moved", moved.dtype, tuple(moved.shape), moved.sum().item())
