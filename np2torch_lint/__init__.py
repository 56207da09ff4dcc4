"""np2torch-lint: find and fix NumPy <-> PyTorch conversion pitfalls.

Importing this package must stay cheap: no libcst, numpy or torch here.
"""

__version__ = "0.1.0"
