# The package re-exports its submodules; Head.py imports from the package in turn, so the two make an import cycle.
from .utils import *
from .Head import Head
