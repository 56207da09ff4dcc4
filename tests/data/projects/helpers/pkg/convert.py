import numpy as np
import torch


def frame_to_tensor(frame, device: torch.device) -> torch.Tensor:
    return torch.stack(
        [torch.from_numpy(np.asarray(frame[plane])).to(device) for plane in range(3)]  # NPT005
    ).clamp(0.0, 1.0)


def frame_on_host(frame, device: torch.device) -> torch.Tensor:
    return torch.from_numpy(np.asarray(frame)).to(device).cpu()


def to_gpu(array) -> torch.Tensor:
    return torch.from_numpy(array).cuda()
