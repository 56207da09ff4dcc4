import torch

from pkg.convert import frame_on_host, to_gpu
from .convert import frame_to_tensor


def window(clip, length: int, n: int, device: torch.device):
    img = []
    for i in range(length):
        index = n + i
        if index >= clip.num_frames:
            img.append(frame_to_tensor(clip.get_frame(clip.num_frames - 1), device=device).unsqueeze(0))  # ok: same
        else:
            img.append(frame_to_tensor(clip.get_frame(n + i), device=device).unsqueeze(0))  # NPT005
    return torch.stack(img, dim=1)


def arrays_to_gpu(arrays):
    return [to_gpu(a) for a in arrays]  # NPT005


def on_the_host(frames, device: torch.device):
    return torch.stack([frame_on_host(frame, device) for frame in frames])  # ok: moved back to the host


def each_to_its_device(frames, devices):
    return torch.stack([frame_to_tensor(f, d) for f, d in zip(frames, devices)])  # ok: one device per item


def to_the_cpu(frames):
    return torch.stack([frame_to_tensor(frame, "cpu") for frame in frames])  # ok: the caller's device is the host


def device_left_out(frames):
    return torch.stack([frame_to_tensor(frame) for frame in frames])  # ok: no device given
