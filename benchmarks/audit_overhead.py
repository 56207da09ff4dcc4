"""What the runtime audit costs: a small CPU training loop, with and without ``np2torch_lint.runtime.audit()``.

Run: python benchmarks/audit_overhead.py [--steps N] [--rounds N]
The loop: a two-layer MLP and Adam, a DataLoader (batch 32, no workers) over a dataset whose samples are NumPy
arrays (so the DataLoader's collate converts each sample, through a wrapped entry point), the batch moved with
``.to(device)``, a loss, backward and a step: about 130 torch calls a step, each small, which is the worst case
for per-call overhead. Rounds alternate plain and audited; the ratio is of the medians (goal: at most 1.3x).

A second loop has float64 samples, converted with ``.float()`` in the loop (right, and silent): there the audit
watches every torch call from the first float64 tensor on (NPT004's mode), and the ratio shows what that costs.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from np2torch_lint.runtime import audit


class Samples(Dataset):
    def __init__(self, count: int, dtype: type) -> None:
        generator = np.random.default_rng(0)
        self.features = generator.random((count, 32)).astype(dtype)
        self.labels = generator.integers(0, 10, count)

    def __len__(self) -> int:
        return len(self.features)

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.int64]:
        return self.features[index], self.labels[index]


def training(steps: int, dtype: type) -> callable:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    optimizer = torch.optim.Adam(model.parameters())
    loader = DataLoader(Samples(steps * 32, dtype), batch_size=32, shuffle=True)
    device = torch.device("cpu")

    def epoch() -> None:
        for features, labels in loader:
            features, labels = features.to(device).float(), labels.to(device)
            loss = torch.nn.functional.cross_entropy(model(features), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    return epoch


def audited(run: callable) -> callable:
    def run_audited() -> None:
        with audit() as report:
            run()
        assert not report.findings, report  # the loops do the right thing: nothing to report
    return run_audited


def ratio(run: callable, rounds: int) -> tuple[float, float, float]:
    """(audited / plain, plain seconds, audited seconds): medians of alternating rounds."""
    candidates = {"plain": run, "audited": audited(run)}
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for fn in candidates.values():  # warm-up: lazy imports, first touch, the audit's first installation
        fn()
    for _ in range(rounds):
        for name, fn in candidates.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    plain, with_audit = (statistics.median(samples[name]) for name in ("plain", "audited"))
    return with_audit / plain, plain, with_audit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300, help="training steps per round (default 300)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of each (default 7)")
    args = parser.parse_args()
    torch.set_num_threads(1)  # steadier on a shared machine; the ratio is what matters
    for label, dtype, goal in (("float32 samples", np.float32, "goal: <= 1.3x"),
                               ("float64 samples, .float() in the loop", np.float64, "NPT004's watch on")):
        factor, plain, with_audit = ratio(training(args.steps, dtype), args.rounds)
        print(f"{label}: {factor:.2f}x  ({plain * 1e3 / args.steps:.2f} ms a step plain, "
              f"{with_audit * 1e3 / args.steps:.2f} ms audited; {goal})")


if __name__ == "__main__":
    main()
