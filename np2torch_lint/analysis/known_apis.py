"""What the analysis knows of NumPy's, torch's and Python's own functions, methods and classes.

Tables only: the handlers of the analysis package read them. Qualified names are what imports resolve to
(``numpy.zeros`` for ``np.zeros``). Adding an API here is how the analysis learns it.
"""

from __future__ import annotations

# NumPy constructors whose floats default to float64: the index of a positional ``dtype`` (or None), and whether
# the call without a size gives a Python float rather than an array ("size" = the index of the size argument).
NUMPY_FLOAT_CONSTRUCTORS: dict[str, tuple[int | None, int | None]] = {
    # name: (dtype position, size position); size position -1 means "any positional argument is a shape"
    "numpy.zeros": (1, None),
    "numpy.ones": (1, None),
    "numpy.empty": (1, None),
    "numpy.identity": (1, None),
    "numpy.eye": (3, None),
    "numpy.linspace": (5, None),
    "numpy.logspace": (6, None),
    "numpy.geomspace": (5, None),
    "numpy.loadtxt": (1, None),
    "numpy.genfromtxt": (1, None),
    "numpy.random.rand": (None, -1),
    "numpy.random.randn": (None, -1),
    "numpy.random.random": (None, 0),
    "numpy.random.random_sample": (None, 0),
    "numpy.random.ranf": (None, 0),
    "numpy.random.sample": (None, 0),
    "numpy.random.standard_normal": (None, 0),
    "numpy.random.uniform": (None, 2),
    "numpy.random.normal": (None, 2),
    "numpy.random.laplace": (None, 2),
    "numpy.random.lognormal": (None, 2),
    "numpy.random.exponential": (None, 1),
    "numpy.random.gamma": (None, 2),
    "numpy.random.beta": (None, 2),
}
NUMPY_GENERATOR_FLOAT_METHODS: dict[str, int | None] = {
    # method of np.random.default_rng() / RandomState(): the position of its size argument (-1: any positional)
    "random": 0,
    "standard_normal": 0,
    "normal": 2,
    "uniform": 2,
    "exponential": 1,
    "random_sample": 0,
    "rand": -1,
    "randn": -1,
    "laplace": 2,
    "lognormal": 2,
    "beta": 2,
    "gamma": 2,
}
NUMPY_INT_CONSTRUCTORS = {"numpy.random.randint", "numpy.random.choice", "numpy.random.permutation"}
NUMPY_ARRAY_FROM_DATA = {"numpy.array", "numpy.asarray", "numpy.asanyarray", "numpy.ascontiguousarray"}
# NumPy functions that read a tensor through ``Tensor.__array__``, which calls ``.numpy()``.
TENSOR_READING_NUMPY_FUNCTIONS = {"numpy.asarray", "numpy.array", "numpy.asanyarray"}
NUMPY_LIKE = {"numpy.zeros_like", "numpy.ones_like", "numpy.empty_like", "numpy.full_like", "numpy.copy"}
# Elementwise functions that give floats: an integer input becomes float64.
NUMPY_TO_FLOAT = {
    "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sinh", "cosh",
    "arcsin", "arccos", "arctan", "cbrt", "floor", "ceil", "trunc", "rint", "mean", "std", "var", "average",
    "median", "nanmean", "nanstd", "nanvar", "nanmedian",
}
NUMPY_REDUCTIONS = {"mean", "std", "var", "average", "median", "sum", "prod", "max", "min", "amax", "amin",
                    "nanmean", "nanstd", "nanvar", "nanmedian", "nansum", "nanmax", "nanmin", "ptp"}
# Functions and methods that keep the dtype of their (first) array argument.
NUMPY_SAME_DTYPE = {
    "abs", "absolute", "negative", "clip", "round", "around", "transpose", "reshape", "squeeze", "expand_dims",
    "flip", "fliplr", "flipud", "roll", "sort", "copy", "ravel", "flatten", "swapaxes", "moveaxis", "tile",
    "repeat", "take", "sum", "prod", "max", "min", "amax", "amin", "cumsum", "cumprod", "nansum", "nanmax",
    "nanmin", "squeeze", "atleast_1d", "atleast_2d", "atleast_3d", "pad", "rot90", "ascontiguousarray",
    "asfortranarray", "diag", "triu", "tril", "view", "ptp",
}
NUMPY_JOINING = {"numpy.stack", "numpy.concatenate", "numpy.vstack", "numpy.hstack", "numpy.dstack",
                 "numpy.column_stack", "numpy.row_stack", "numpy.concat"}
NUMPY_BINARY = {"add", "subtract", "multiply", "divide", "true_divide", "power", "maximum", "minimum", "dot",
                "matmul", "outer", "where", "fmax", "fmin", "hypot", "arctan2"}

# torch creators: a float result is the default dtype (float32) unless ``dtype=`` says otherwise.
TORCH_CREATORS = {
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace", "logspace",
    "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
    "normal", "empty_strided", "tensor", "scalar_tensor",
}
# Legacy constructors and the dtype they make. Each shares an ndarray's memory when the dtypes already match.
LEGACY_TENSOR_TYPES = {
    "torch.Tensor": "float32",
    "torch.FloatTensor": "float32",
    "torch.DoubleTensor": "float64",
    "torch.HalfTensor": "float16",
    "torch.BFloat16Tensor": "bfloat16",
    "torch.LongTensor": "int64",
    "torch.IntTensor": "int32",
    "torch.ShortTensor": "int16",
    "torch.CharTensor": "int8",
    "torch.ByteTensor": "uint8",
    "torch.BoolTensor": "bool",
}
# nn classes with no trainable parameters: calling one only passes on its inputs' requires_grad.
PARAMETER_FREE_MODULES = {
    "Identity", "Flatten", "Unflatten", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softmax",
    "LogSoftmax", "Softmin", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink",
    "Threshold", "LogSigmoid", "GLU", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d",
    "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d",
    "PixelShuffle", "PixelUnshuffle", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad2d",
    "ReplicationPad2d", "CosineSimilarity", "PairwiseDistance", "ChannelShuffle", "Fold", "Unfold",
    "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "SmoothL1Loss",
    "HuberLoss", "KLDivLoss", "CTCLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MarginRankingLoss",
    "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss", "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
}
MODULE_CONTAINERS = {"Sequential", "ModuleList", "ModuleDict"}
NN_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
DATALOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}
PARAMETER = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}
# Context managers and decorators that set autograd's mode: the mode they set (None: read from the argument).
GRAD_MODE_SETTERS: dict[str, bool | None] = {
    "torch.no_grad": False,
    "torch.autograd.no_grad": False,
    "torch.autograd.grad_mode.no_grad": False,
    "torch.inference_mode": False,
    "torch.autograd.grad_mode.inference_mode": False,
    "torch.enable_grad": True,
    "torch.autograd.enable_grad": True,
    "torch.set_grad_enabled": None,
    "torch.autograd.set_grad_enabled": None,
}
ACCELERATOR_DEVICE_PREFIXES = ("cuda", "mps", "xpu", "hpu", "npu", "xla", "ipu", "mtia", "privateuseone")

# Tensor methods.
TENSOR_DTYPE_METHODS = {
    "float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16", "long": "int64",
    "int": "int32", "short": "int16", "char": "int8", "byte": "uint8", "bool": "bool", "cfloat": "complex64",
    "cdouble": "complex128",
}
# Methods whose result is a tensor with the receiver's autograd state, device and dtype.
TENSOR_SAME = {
    "clone", "contiguous", "view", "view_as", "reshape", "reshape_as", "permute", "transpose", "t", "squeeze",
    "unsqueeze", "flatten", "unflatten", "expand", "expand_as", "repeat", "flip", "abs", "neg", "exp", "log",
    "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "softmax", "log_softmax", "pow", "sum", "mean", "std", "var",
    "norm", "prod", "cumsum", "add", "sub", "mul", "div", "matmul", "mm", "bmm", "clamp", "clip", "narrow",
    "index_select", "gather", "masked_fill", "squeeze_", "unsqueeze_", "add_", "sub_", "mul_", "div_", "roll",
    "movedim", "swapaxes", "select", "diagonal", "tril", "triu", "detach_", "pin_memory", "resolve_conj",
    "resolve_neg", "to_dense", "coalesce", "__getitem__", "square", "reciprocal", "rsqrt", "logsumexp",
    "floor", "ceil", "round", "trunc", "sign", "exp_", "abs_", "clamp_", "type_as", "new_tensor",
}
# Methods whose result is an integer or boolean tensor: it cannot require grad.
TENSOR_INDEX_OR_BOOL = {
    "argmax", "argmin", "argsort", "nonzero", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf",
    "isfinite", "logical_and", "logical_or", "logical_not", "logical_xor", "bitwise_and", "bitwise_or",
}
TENSOR_NOT_ARRAYS = {"item", "tolist", "size", "dim", "numel", "element_size", "is_contiguous", "data_ptr",
                     "is_pinned", "nelement", "ndimension", "get_device", "untyped_storage", "stride",
                     "storage_offset", "is_floating_point", "is_complex", "equal", "allclose"}
TORCH_INDEX_OR_BOOL = {"torch." + name for name in TENSOR_INDEX_OR_BOOL | {
    "equal", "allclose", "is_tensor", "numel", "is_floating_point", "is_complex", "topk", "sort", "max", "min",
    "unique", "bucketize", "searchsorted", "where", "histc", "bincount", "count_nonzero", "randperm"}}
# Calls that consume a generator and keep its items (the items are "collected").
COLLECTORS = {"builtins.list", "builtins.tuple", "builtins.set", "builtins.sorted", "torch.stack", "torch.cat",
              "torch.concat", "torch.concatenate",
              "torch.vstack", "torch.hstack", "numpy.stack", "numpy.concatenate"}

# Builtins the analysis knows; an unbound name among these is the builtin.
BUILTINS = {"float", "int", "bool", "complex", "list", "tuple", "set", "sorted", "reversed", "zip", "enumerate",
            "range", "len", "str", "repr", "print", "isinstance", "hash", "id"}

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
NUMPY_READ_ONLY_VIEWS = {"numpy.broadcast_to", "numpy.lib.stride_tricks.broadcast_to",
                         "numpy.lib.stride_tricks.sliding_window_view"}

# Host synchronisation (NPT007). A call with one of these names waits for the device (``torch.cuda.synchronize``,
# ``stream.synchronize()``, ``event.synchronize()``, ``torch.accelerator.synchronize``, accelerate's
# ``wait_for_everyone``); a name containing "sync" (not "async") counts too.
SYNC_CALL_NAMES = {"synchronize", "barrier", "wait_for_everyone", "wait_device_ops"}
# Device-to-host copies that block: once they return, the work queued before them on the stream has run.
BLOCKING_HOST_COPY_METHODS = {"cpu", "item", "tolist"}
# What reads a host tensor's memory into Python or NumPy.
HOST_READING_TENSOR_METHODS = {"numpy", "tolist", "item", "__array__"}
HOST_READING_BUILTINS = {"builtins." + name for name in (
    "float", "int", "bool", "complex", "print", "list", "tuple", "str", "repr", "sorted")}
HOST_READING_RUNTIME_HELPERS = {"np2torch_lint.runtime.to_numpy", "np2torch_lint.runtime.to_numpy_async"}
