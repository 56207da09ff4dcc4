"""What the analysis knows of Python itself and of torch's class hierarchy: names, not library behaviour.

What library calls give lives in the models tables (``models/*.toml``, read by ``models.py``).
"""

from __future__ import annotations

ACCELERATOR_DEVICE_PREFIXES = ("cuda", "mps", "xpu", "hpu", "npu", "xla", "ipu", "mtia", "privateuseone")

NN_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}

# Calls that consume a generator and keep its items (the items are "collected").
COLLECTORS = {"builtins.list", "builtins.tuple", "builtins.set", "builtins.sorted", "torch.stack", "torch.cat",
              "torch.concat", "torch.concatenate",
              "torch.vstack", "torch.hstack", "numpy.stack", "numpy.concatenate"}

# Builtins the analysis knows; an unbound name among these is the builtin.
BUILTINS = {"float", "int", "bool", "complex", "list", "tuple", "set", "sorted", "reversed", "zip", "enumerate",
            "range", "len", "str", "repr", "print", "isinstance", "hash", "id"}

NOT_A_COLLECTION_ITERATION = {"items", "keys", "values", "named_parameters", "named_modules", "children",
                              "modules", "parameters", "named_children", "buffers", "named_buffers"}
