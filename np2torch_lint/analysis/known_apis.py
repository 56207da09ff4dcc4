"""What the analysis knows of Python itself and of torch's class hierarchy: names, not library behaviour.

What library calls give lives in the models tables (``models/*.toml``, read by ``models.py``).
"""

from __future__ import annotations

ACCELERATOR_DEVICE_PREFIXES = ("cuda", "mps", "xpu", "hpu", "npu", "xla", "ipu", "mtia", "privateuseone")
#: calls that say whether an accelerator is there, and the device test each is (``control_flow.device_test``)
ACCELERATOR_AVAILABILITY = {
    "torch.cuda.is_available": "available:cuda",
    "torch.backends.mps.is_available": "available:mps",
    "torch.xpu.is_available": "available:xpu",
}
#: names NumPy gave Python's own types until 1.24 removed them, which older code still uses (``np.float`` is
#: ``float``: float64 as a dtype, not torch's float32; ``np.int(x)`` is a Python int)
REMOVED_NUMPY_ALIASES = {f"numpy.{name}": f"builtins.{name}" for name in (
    "float", "int", "bool", "complex", "object", "str")}
#: the device test that, where it is false, leaves no CUDA device: no copy from one can still be running
NO_CUDA_WHERE_FALSE = "available:cuda"

#: the legacy ``Variable``: ``isinstance`` accepts every tensor for it (since torch 0.4), yet it is no tensor's own
#: type, so ``type(t) == Variable`` is false for every tensor (``nn.Parameter`` and ``Variable(t)``'s result too)
NO_TENSOR_IS_EXACTLY = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})

NN_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}

# Calls that consume a generator and keep its items (the items are "collected").
COLLECTORS = {"builtins.list", "builtins.tuple", "builtins.set", "builtins.sorted", "torch.stack", "torch.cat",
              "torch.concat", "torch.concatenate",
              "torch.vstack", "torch.hstack", "numpy.stack", "numpy.concatenate"}

# Calls that take tensors only (or objects of a class with ``__torch_function__``) and stack them into one.
STACKING = {"torch.stack", "torch.cat", "torch.concat", "torch.concatenate", "torch.vstack", "torch.hstack"}

# Builtins the analysis knows; an unbound name among these is the builtin.
BUILTINS = {"float", "int", "bool", "complex", "list", "tuple", "set", "sorted", "reversed", "zip", "enumerate",
            "range", "len", "str", "repr", "print", "isinstance", "hash", "id", "super", "dict", "next", "iter",
            "map", "sum", "getattr", "abs"}
#: what makes a class a record of named fields: its objects hold what the constructor is given, by field
RECORD_BASES = {"typing.NamedTuple", "typing_extensions.NamedTuple"}
RECORD_DECORATORS = {"dataclasses.dataclass"}
#: calls that make a named tuple type from field names: ``namedtuple("Transition", "state action reward")``
RECORD_FACTORIES = {"collections.namedtuple", "typing.NamedTuple"}

NOT_A_COLLECTION_ITERATION = {"items", "keys", "values", "named_parameters", "named_modules", "children",
                              "modules", "parameters", "named_children", "buffers", "named_buffers"}

# Array layout (NPT008): what NumPy calls do to negative strides and to the writeable flag. torch rejects
# negative strides and warns about read-only arrays; a copy (``a.copy()``, ``np.array(a)``) clears both.
NUMPY_FLIPS = {"numpy.flip", "numpy.flipud", "numpy.fliplr", "numpy.rot90"}  # views with a negative stride
# Views that keep the strides' signs and the writeable flag of their (first) argument or receiver.
NUMPY_LAYOUT_KEEPING = {
    "numpy.asarray", "numpy.asanyarray", "numpy.transpose", "numpy.swapaxes", "numpy.moveaxis", "numpy.squeeze",
    "numpy.expand_dims", "numpy.atleast_1d", "numpy.atleast_2d", "numpy.atleast_3d",
}
NUMPY_LAYOUT_KEEPING_METHODS = {"transpose", "swapaxes", "squeeze"}
# Always a new array in fresh memory (``copy=False`` aside).
NUMPY_COPYING = {"numpy.array", "numpy.copy", "numpy.stack", "numpy.concatenate", "numpy.vstack", "numpy.hstack"}
NUMPY_COPYING_METHODS = {"copy", "astype", "flatten"}
# A contiguous copy when needed: no negative strides after, but an array that was already contiguous comes back
# as it is, read-only or not.
NUMPY_CONTIGUOUS = {"numpy.ascontiguousarray", "numpy.asfortranarray"}
# Read-only views of their argument.
NUMPY_READ_ONLY_VIEWS = {"numpy.broadcast_to", "numpy.lib.stride_tricks.sliding_window_view"}

# Host synchronisation (NPT007). A call with one of these names waits for the device (``torch.cuda.synchronize``,
# ``stream.synchronize()``, ``event.synchronize()``, ``torch.accelerator.synchronize``, accelerate's
# ``wait_for_everyone``); a name containing "sync" (not "async") counts too.
SYNC_CALL_NAMES = {"synchronize", "barrier", "wait_for_everyone", "wait_device_ops"}
# Device-to-host copies that block: once they return, the work queued before them on the stream has run.
BLOCKING_HOST_COPY_METHODS = {"cpu", "item", "tolist"}
# What reads a host tensor's memory into Python or NumPy.
HOST_READING_TENSOR_METHODS = {"numpy", "tolist", "item", "__array__"}
# Methods only a tensor has among what a computation hands back (an array, a number, a list have none of them): a
# value of unknown kind they are called on is a tensor (``model.sample(x.cuda()).detach().numpy()``).
TENSOR_ONLY_METHODS = frozenset({"detach", "numpy", "detach_", "requires_grad_", "backward"})
HOST_READING_BUILTINS = {"builtins." + name for name in (
    "float", "int", "bool", "complex", "print", "list", "tuple", "str", "repr", "sorted")}
HOST_READING_RUNTIME_HELPERS = {"np2torch_lint.runtime.to_numpy", "np2torch_lint.runtime.to_numpy_async"}

#: the ``qualname`` of what ``zip(*rows)`` gives: the columns of rows (the fields of one batch)
COLUMNS_OF_ROWS = "builtins.zip(*)"
#: the ``qualname`` of a tuple a generator yields (``yield x[i:j], y[i:j]``): the fields of one record, not many alike
YIELDED_FIELDS = "yield(...)"

#: ``nn.Module`` methods that change the module in place and return it, so that a chain of them changes the name
#: it starts from (``sampler.eval().requires_grad_(False).to(device)``)
MODULE_METHODS_RETURNING_SELF = frozenset({"eval", "train", "requires_grad_", "to", "cuda", "cpu", "float", "half",
                                           "double", "bfloat16", "share_memory", "xpu", "mps", "type"})

#: the modules that hold other modules as a list or dict (``layers[i]``, ``for layer in layers``, ``append``)
MODULE_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict"})

#: ``nn.Module`` methods that store the tensor they are given as it is: unlike a network's own method
#: (``G.mapping(z)``), they decide nothing of its dtype
NN_MODULE_STORING_METHODS = frozenset({"register_buffer", "register_parameter", "add_module", "register_module",
                                       "load_state_dict", "set_extra_state", "register_forward_hook"})

#: methods of loggers and metric writers (a run's own ``logger.log(name, value, step)``, TensorBoard's
#: ``writer.add_scalar``, Lightning's ``self.log``): they record the value they are given and hand nothing back to
#: the computation, so calling one decides nothing of a float64 tensor's dtype, even on an unknown receiver
LOGGING_METHODS = frozenset({"log", "log_metrics", "log_dict", "add_scalar", "add_scalars", "add_histogram",
                             "add_image", "add_images", "add_text", "add_figure"})
