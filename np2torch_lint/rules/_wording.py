"""How messages name what the code calls."""

from __future__ import annotations

import libcst as cst

from ..analysis import NumpyToTensor


def constructor_name(conversion: NumpyToTensor) -> str:
    """The qualified name of the constructor (``torch.cuda.FloatTensor``), or the call's own spelling where it is
    one of several picked at run time (``Tensor``, for ``Tensor = torch.cuda.FloatTensor if cuda else ...``):
    naming one of them would say a device the code may not use."""
    if not conversion.alternatives:
        return conversion.constructor
    return cst.Module([]).code_for_node(conversion.node.func)
