"""NPT006: how much slower is ``torch.tensor(list_of_arrays)`` than stacking with NumPy first?

Run: python benchmarks/list_of_arrays_speed.py [--rounds N] [--threads N]
Prints a Markdown table (docs/rules/NPT006.md shows one): for several list sizes and array shapes, the median
time of each conversion, from interleaved rounds, and its ratio to ``torch.from_numpy(np.stack(xs))``. Every
variant gives the same tensor (checked before timing). CPU only: the GPU was not measured.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
import warnings
from collections.abc import Callable

import numpy as np
import torch

from np2torch_lint.runtime import stack_to_device

# (number of arrays, shape of each, dtype)
CASES = [
    (200, (64, 64), np.float64),
    (1000, (8,), np.float32),
    (10_000, (3,), np.float32),
    (32, (3, 224, 224), np.float32),
    (8, (512, 512), np.float64),
]


def variants(arrays: list[np.ndarray]) -> dict[str, Callable[[], torch.Tensor]]:
    return {
        "torch.from_numpy(np.stack(xs))": lambda: torch.from_numpy(np.stack(arrays)),
        "stack_to_device(xs, 'cpu')": lambda: stack_to_device(arrays, "cpu"),
        "torch.stack([torch.from_numpy(x) for x in xs])": lambda: torch.stack([torch.from_numpy(x) for x in arrays]),
        "torch.tensor(xs)": lambda: torch.tensor(arrays),
        "torch.as_tensor(xs)": lambda: torch.as_tensor(arrays),
    }


def median_seconds(candidates: dict[str, Callable[[], torch.Tensor]], rounds: int) -> dict[str, float]:
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, convert in candidates.items():  # round-robin: every variant sees the same machine state
            start = time.perf_counter()
            convert()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


def duration(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    options = parser.parse_args()
    if options.threads:
        torch.set_num_threads(options.threads)
    warnings.simplefilter("ignore")  # the "extremely slow" warning, once per process
    print(f"torch {torch.__version__}, numpy {np.__version__}, {platform.processor() or platform.machine()}, "
          f"{torch.get_num_threads()} torch threads; median of {options.rounds} interleaved rounds\n")
    names = list(variants([np.zeros(1)]))
    print("| arrays | " + " | ".join(f"`{name}`" for name in names) + " |")
    print("|---|" + "---|" * len(names))
    rng = np.random.default_rng(0)
    for count, shape, dtype in CASES:
        arrays = [rng.random(shape).astype(dtype) for _ in range(count)]
        candidates = variants(arrays)
        reference = candidates[names[0]]()
        for name, convert in candidates.items():
            assert torch.equal(convert(), reference), name
        times = median_seconds(candidates, options.rounds)
        base = times[names[0]]
        cells = [f"{duration(times[name])} ({times[name] / base:.1f}×)" for name in names]
        label = f"{count} × {'x'.join(map(str, shape))} {np.dtype(dtype).name}"
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
