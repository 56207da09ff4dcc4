"""Speed of np2torch_lint.runtime against the one-line torch idioms it replaces.

Run: python benchmarks/runtime_speed.py [--quick]
Prints each comparison as a ratio (ours / theirs: below 1.00x means ours is faster), from
interleaved runs (medians), so both sides see the same machine state. The CUDA section runs only
where torch.cuda.is_available().
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np
import torch

from np2torch_lint.runtime import DevicePrefetcher, from_numpy, stack_to_device, to_numpy


def interleaved_medians(candidates: dict[str, Callable[[], object]], *, rounds: int,
                        calls: int = 1) -> dict[str, float]:
    """Median seconds per call of each candidate, measured round-robin."""
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for name, fn in candidates.items():  # warm-up: first touch, lazy init, caches
        fn()
    for _ in range(rounds):
        for name, fn in candidates.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - start) / calls)
    return {name: statistics.median(times) for name, times in samples.items()}


def _duration(seconds: float) -> str:
    return f"{seconds * 1e6:.2f} us" if seconds < 1e-3 else f"{seconds * 1e3:.1f} ms"


def report(label: str, ours: float, theirs: float, goal: str) -> None:
    print(f"  {label}: {ours / theirs:.2f}x   ({_duration(ours)} vs {_duration(theirs)}; goal: {goal})")


def bench_to_numpy_overhead(rounds: int) -> None:
    print("to_numpy per-call overhead, torch.ones(10) on the CPU")
    t = torch.ones(10)
    grad = torch.ones(10, requires_grad=True)
    times = interleaved_medians(
        {
            "to_numpy": lambda: to_numpy(t),
            "raw": lambda: t.detach().cpu().numpy(),
            "to_numpy_grad": lambda: to_numpy(grad),
            "raw_grad": lambda: grad.detach().cpu().numpy(),
        },
        rounds=rounds,
        calls=20_000,
    )
    report("to_numpy / t.detach().cpu().numpy()", times["to_numpy"], times["raw"], "<= 1.3x")
    report(
        "to_numpy(grad tensor, copies) / detach().cpu().numpy() (aliases)",
        times["to_numpy_grad"], times["raw_grad"], "informative: the copy is the price of not aliasing",
    )


def bench_stack(rounds: int, count: int) -> None:
    print(f"stack_to_device of {count} arrays (224, 224, 3) float64 -> float32, device='cpu'")
    rng = np.random.default_rng(0)
    arrays = [rng.random((224, 224, 3)) for _ in range(count)]
    times = interleaved_medians(
        {
            "ours": lambda: stack_to_device(arrays, "cpu", dtype=torch.float32),
            "np_stack_astype": lambda: torch.from_numpy(np.stack(arrays).astype(np.float32)),
            "per_item_loop": lambda: torch.stack([torch.from_numpy(a).to("cpu") for a in arrays]).float(),
        },
        rounds=rounds,
    )
    report("stack_to_device / np.stack + astype", times["ours"], times["np_stack_astype"], "<= 1.0x")
    report(
        "stack_to_device / [from_numpy(a).to(dev)] + torch.stack + .float()",
        times["ours"], times["per_item_loop"], "< 1.0x",
    )


def bench_from_numpy_cast(rounds: int, side: int) -> None:
    print(f"from_numpy(a, dtype=torch.float32), a = {side}x{side} float64")
    a = np.random.default_rng(0).random((side, side))
    times = interleaved_medians(
        {
            "ours": lambda: from_numpy(a, dtype=torch.float32),
            "idiom": lambda: torch.from_numpy(a).float(),
        },
        rounds=rounds,
    )
    report("from_numpy(a, dtype=float32) / torch.from_numpy(a).float()", times["ours"], times["idiom"], "<= 1.0x")


def _cuda_seconds(fn: Callable[[], object], rounds: int) -> float:
    """Median wall seconds of fn() followed by a device synchronize (end to end, host work included)."""
    fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def bench_cuda(rounds: int, count: int) -> None:
    print(f"CUDA ({torch.cuda.get_device_name()}): host -> device")
    rng = np.random.default_rng(0)
    arrays = [rng.random((224, 224, 3)).astype(np.float32) for _ in range(count)]
    nbytes = count * arrays[0].nbytes
    pinned = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    on_device = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    pinned_seconds = _cuda_seconds(lambda: on_device.copy_(pinned, non_blocking=True), rounds)
    pinned_gbps = nbytes / pinned_seconds / 1e9
    print(f"  pinned-memory copy bandwidth: {pinned_gbps:.1f} GB/s ({nbytes / 2**20:.0f} MiB)")

    ours = _cuda_seconds(lambda: stack_to_device(arrays, "cuda"), rounds)
    # the per-item loop is the baseline being measured, so NPT005 is expected here
    loop = _cuda_seconds(lambda: torch.stack([torch.from_numpy(a).to("cuda") for a in arrays]), rounds)  # noqa: NPT005
    print(f"  stack_to_device (float32 in, end to end): {nbytes / ours / 1e9:.1f} GB/s = "
          f"{nbytes / ours / 1e9 / pinned_gbps:.2f} of pinned (goal >= 0.8)")
    report("stack_to_device / per-item .to('cuda') loop + torch.stack", ours, loop, "< 1.0x")
    arrays64 = [a.astype(np.float64) for a in arrays]
    ours64 = _cuda_seconds(lambda: stack_to_device(arrays64, "cuda", dtype=torch.float32), rounds)
    loop64 = _cuda_seconds(
        lambda: torch.stack([torch.from_numpy(a).to("cuda") for a in arrays64]).float(), rounds)  # noqa: NPT005
    report("float64 -> float32: stack_to_device / per-item loop + .float()", ours64, loop64, "< 1.0x")

    batch_count, batch = 20, np.stack(arrays[:32])
    host_batches = [batch.copy() for _ in range(batch_count)]
    pinned_batches = [torch.from_numpy(b).pin_memory() for b in host_batches]
    total = batch_count * batch.nbytes
    for name, source in (("ndarray batches", host_batches), ("pinned tensor batches", pinned_batches)):
        seconds = _cuda_seconds(lambda: [None for _ in DevicePrefetcher(source, "cuda", depth=2)], rounds)
        gbps = total / seconds / 1e9
        print(f"  DevicePrefetcher, {name}: {gbps:.1f} GB/s = {gbps / pinned_gbps:.2f} of pinned (goal >= 0.8)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and smaller inputs (a smoke run)")
    args = parser.parse_args(argv)
    rounds = 3 if args.quick else 9
    print(f"torch {torch.__version__}, numpy {np.__version__}, {torch.get_num_threads()} torch threads")
    bench_to_numpy_overhead(rounds)
    bench_stack(rounds, count=10 if args.quick else 100)
    bench_from_numpy_cast(rounds, side=1024 if args.quick else 4096)
    if torch.cuda.is_available():
        bench_cuda(rounds, count=10 if args.quick else 100)
    else:
        print("CUDA: not available here; the GPU figures need a machine with one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
