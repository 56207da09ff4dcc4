"""The analysis: what each expression of a module is, and the facts the rules read.

``analyze(module)`` runs it. The package's modules are its parts: ``values`` (what is known of one value, and
joins), ``dtypes``, ``scope``, ``statements``, ``control_flow``, ``loops``, ``expressions``, ``calls``, the library
semantics (``numpy_semantics``, ``torch_semantics``, tables in ``known_apis``), ``facts`` (what rules read),
and ``interpreter``, which puts them together. ``docs/inference.md`` explains what it knows and why.
"""

from __future__ import annotations

from .facts import CollectedTransfer, Facts, HostReadBeforeSync, NumpyToTensor, TensorToNumpy
from .interpreter import Analyzer, analyze
from .torch_semantics import device_on_accelerator

__all__ = ["Analyzer", "CollectedTransfer", "Facts", "HostReadBeforeSync", "NumpyToTensor", "TensorToNumpy",
           "analyze", "device_on_accelerator"]
