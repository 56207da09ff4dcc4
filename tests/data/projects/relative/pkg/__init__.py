"""A package whose modules import each other with relative imports."""
from .data import load_float32 as load_float32  # noqa: F401 - re-exported
