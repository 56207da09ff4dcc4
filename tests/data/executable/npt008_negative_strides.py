# NPT008: torch raises on an array with a negative stride (a BGR -> RGB flip); after the fix it converts a copy.
import numpy as np
import torch

bgr = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
rgb = torch.from_numpy(bgr[..., ::-1])
upside_down = torch.as_tensor(np.flipud(bgr), dtype=torch.float32)
print("matches", rgb.tolist() == bgr[..., ::-1].tolist(), upside_down.tolist() == np.flipud(bgr).tolist())
print("dtypes", rgb.dtype, upside_down.dtype)
