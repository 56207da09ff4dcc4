"""Speed of np2torch_lint.runtime against the torch idioms it replaces, and against the bus itself.

Run: python benchmarks/runtime_speed.py [--quick] [--sides 256,1024,4096] [--rounds N] [--threads N]
Prints each comparison as a ratio (ours / theirs: below 1.00x means ours is faster), from
interleaved rounds, so both sides see the same machine state: the median ratio, then the ratio of
the fastest rounds (steadier on a shared machine). The CUDA section runs only where
torch.cuda.is_available(); it gives host-to-device throughput as a share of pinned-memory
``copy_`` bandwidth measured in the same run, and the share of copy time the prefetcher hides
behind consumer compute.
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

SIDES = (256, 512, 1024, 2048, 4096)


def interleaved(candidates: dict[str, Callable[[], object]], *, rounds: int,
                calls: int = 1) -> dict[str, list[float]]:
    """Seconds per call of each candidate in every round, measured round-robin after one warm-up call each."""
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for fn in candidates.values():  # warm-up: first touch, lazy init, caches
        fn()
    for _ in range(rounds):
        for name, fn in candidates.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            samples[name].append((time.perf_counter() - start) / calls)
    return samples


def _duration(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def report(label: str, ours: list[float], theirs: list[float], goal: str) -> None:
    median, fastest = statistics.median(ours) / statistics.median(theirs), min(ours) / min(theirs)
    print(f"  {label}: {median:.2f}x (fastest rounds {fastest:.2f}x; "
          f"{_duration(statistics.median(ours))} vs {_duration(statistics.median(theirs))}; goal: {goal})")


# ----------------------------------------------------------------------------- CPU


def bench_to_numpy_overhead(rounds: int) -> None:
    print("to_numpy per-call overhead, torch.ones(10) on the CPU")
    t = torch.ones(10)
    grad = torch.ones(10, requires_grad=True)
    times = interleaved(
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
    report("to_numpy(grad tensor, copies) / detach().cpu().numpy() (aliases)",
           times["to_numpy_grad"], times["raw_grad"], "informative: the copy is the price of not aliasing")


def bench_from_numpy_cast(rounds: int, sides: tuple[int, ...]) -> None:
    print("from_numpy(a, dtype=torch.float32), a = side x side float64: a size sweep")
    for side in sides:
        a = np.random.default_rng(0).random((side, side))
        preallocated = torch.empty(side, side)
        times = interleaved(
            {
                "ours": lambda: from_numpy(a, dtype=torch.float32),
                "float": lambda: torch.from_numpy(a).float(),
                "as_tensor": lambda: torch.as_tensor(a, dtype=torch.float32),
                # float64 on purpose: copy_ into the float32 tensor is the cast being measured
                "copy_": lambda: preallocated.copy_(torch.from_numpy(a)),  # noqa: NPT004
            },
            rounds=rounds if side >= 1024 else rounds * 10,
        )
        report(f"{side}x{side}: ours / torch.from_numpy(a).float()", times["ours"], times["float"], "<= 1.0x")
        report(f"{side}x{side}: ours / torch.as_tensor(a, dtype=float32)", times["ours"], times["as_tensor"],
               "<= 1.0x")
        report(f"{side}x{side}: ours / copy_ into a preallocated tensor (the cast alone, no allocation)",
               times["ours"], times["copy_"], "informative: the price of fresh memory")


def bench_stack(rounds: int, count: int) -> None:
    print(f"stack_to_device of {count} arrays (224, 224, 3) float64 -> float32, device='cpu'")
    rng = np.random.default_rng(0)
    arrays = [rng.random((224, 224, 3)) for _ in range(count)]
    times = interleaved(
        {
            "ours": lambda: stack_to_device(arrays, "cpu", dtype=torch.float32),
            "np_stack_astype": lambda: torch.from_numpy(np.stack(arrays).astype(np.float32)),
            "np_stack_float": lambda: torch.from_numpy(np.stack(arrays)).float(),
            # the per-item loop is the baseline being measured, so NPT005 is expected here
            "per_item_loop":
                lambda: torch.stack([torch.from_numpy(a).to("cpu") for a in arrays]).float(),  # noqa: NPT005
        },
        rounds=rounds,
    )
    report("stack_to_device / np.stack + astype", times["ours"], times["np_stack_astype"], "<= 1.0x")
    report("stack_to_device / from_numpy(np.stack) + .float()", times["ours"], times["np_stack_float"], "<= 1.0x")
    report("stack_to_device / [from_numpy(a).to(dev)] + torch.stack + .float()",
           times["ours"], times["per_item_loop"], "< 1.0x")


# ----------------------------------------------------------------------------- CUDA


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


def _pinned_bandwidth(nbytes: int, rounds: int) -> float:
    """Bytes per second of copy_ from a preallocated pinned buffer into a preallocated device one: the bus."""
    pinned = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    on_device = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    return nbytes / _cuda_seconds(lambda: on_device.copy_(pinned, non_blocking=True), rounds)


def bench_cuda_stack(rounds: int, count: int) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.random((224, 224, 3)).astype(np.float32) for _ in range(count)]
    nbytes = count * arrays[0].nbytes
    bus = _pinned_bandwidth(nbytes, rounds)
    print(f"  pinned-memory copy_ bandwidth: {bus / 1e9:.1f} GB/s ({nbytes / 2**20:.0f} MiB)")

    def share(seconds: float) -> str:
        return f"{nbytes / seconds / 1e9:.1f} GB/s = {nbytes / seconds / bus:.2f} of pinned copy_"

    ours = _cuda_seconds(lambda: stack_to_device(arrays, "cuda"), rounds)
    idiom = _cuda_seconds(
        lambda: torch.from_numpy(np.stack(arrays)).pin_memory().to("cuda", non_blocking=True), rounds)
    loop = _cuda_seconds(lambda: torch.stack([torch.from_numpy(a).to("cuda") for a in arrays]), rounds)  # noqa: NPT005
    print(f"  stack_to_device, float32 in, end to end: {share(ours)} (goal >= 0.8)")
    print(f"  from_numpy(np.stack(xs)).pin_memory().to(dev, non_blocking=True): {share(idiom)}")
    report("stack_to_device / the pinned non_blocking idiom", [ours], [idiom], "<= 1.0x")
    report("stack_to_device / per-item .to('cuda') loop + torch.stack", [ours], [loop], "< 1.0x")
    arrays64 = [a.astype(np.float64) for a in arrays]
    ours64 = _cuda_seconds(lambda: stack_to_device(arrays64, "cuda", dtype=torch.float32), rounds)
    idiom64 = _cuda_seconds(
        lambda: torch.from_numpy(np.stack(arrays64)).pin_memory().to("cuda", non_blocking=True).float(), rounds)
    report("float64 -> float32: stack_to_device / pinned idiom + .float() on the device", [ours64], [idiom64],
           "< 1.0x (half the bytes cross)")


def _spin_cycles_per_second() -> float:
    """How many torch.cuda._sleep cycles the GPU spins per second (after a warm-up spin)."""
    cycles = 50_000_000
    torch.cuda._sleep(cycles // 10)
    torch.cuda.synchronize()
    start = time.perf_counter()
    torch.cuda._sleep(cycles)
    torch.cuda.synchronize()
    return cycles / (time.perf_counter() - start)


def bench_cuda_prefetcher(rounds: int, batch_count: int) -> None:
    rng = np.random.default_rng(0)
    batch = rng.random((64, 3, 224, 224)).astype(np.float32)
    host_batches = [batch.copy() for _ in range(batch_count)]
    pinned_batches = [torch.from_numpy(b).pin_memory() for b in host_batches]
    total = batch_count * batch.nbytes
    bus = _pinned_bandwidth(batch.nbytes, rounds)
    per_batch_copy = batch.nbytes / bus
    # consumer compute a little longer than one batch's copy, so that the copy can hide behind it entirely
    spin = int(1.2 * per_batch_copy * _spin_cycles_per_second())

    def compute(x: torch.Tensor) -> None:
        torch.cuda._sleep(spin)
        x.mul_(1.0)

    resident = torch.empty(batch.shape, device="cuda")
    compute_only = _cuda_seconds(lambda: [compute(resident) for _ in range(batch_count)], rounds)

    # DataLoader with pin_memory=True: its pin thread, then the usual .to(device, non_blocking=True)
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(np.concatenate(host_batches)))
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch.shape[0], pin_memory=True)
    dataloader = _cuda_seconds(lambda: [x.to("cuda", non_blocking=True) for (x,) in loader], rounds)
    print(f"  DataLoader(pin_memory=True) + .to(non_blocking=True): "
          f"{total / dataloader / 1e9:.1f} GB/s = {total / dataloader / bus:.2f} of pinned copy_")

    for name, source in (("ndarray batches", host_batches), ("pinned tensor batches", pinned_batches)):
        copy_only = _cuda_seconds(lambda: [None for _ in DevicePrefetcher(source, "cuda", depth=2)], rounds)
        both = _cuda_seconds(lambda: [compute(x) for x in DevicePrefetcher(source, "cuda", depth=2)], rounds)
        hidden = (copy_only + compute_only - both) / copy_only
        print(f"  DevicePrefetcher, {name}: {total / copy_only / 1e9:.1f} GB/s = "
              f"{total / copy_only / bus:.2f} of pinned copy_ (goal >= 0.8); "
              f"copy time hidden behind compute: {min(max(hidden, 0.0), 1.0):.2f} (goal >= 0.9)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and smaller inputs (a smoke run)")
    parser.add_argument("--sides", default=None, help="the from_numpy size sweep, e.g. 256,1024 (default: all)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per comparison (default: 9, 3 with --quick)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (default: torch's); 1 keeps a busy machine's scheduling out of the ratios")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    rounds = args.rounds or (3 if args.quick else 9)
    sides = tuple(int(s) for s in args.sides.split(",")) if args.sides else (SIDES[:3] if args.quick else SIDES)
    print(f"torch {torch.__version__}, numpy {np.__version__}, {torch.get_num_threads()} torch threads")
    bench_to_numpy_overhead(rounds)
    bench_from_numpy_cast(rounds, sides)
    bench_stack(rounds, count=10 if args.quick else 100)
    if torch.cuda.is_available():
        print(f"CUDA ({torch.cuda.get_device_name()}): host -> device")
        bench_cuda_stack(rounds, count=10 if args.quick else 100)
        bench_cuda_prefetcher(rounds, batch_count=4 if args.quick else 20)
    else:
        print("CUDA: not available here; the GPU figures need a machine with one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
