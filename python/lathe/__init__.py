"""lathe from Python: lazy tensors compiled by lathe, and ONNX models run on numpy arrays.

    import numpy as np, lathe
    sess = lathe.InferenceSession("model.onnx")
    outputs = sess.run(None, {"input": np.zeros((1, 3, 224, 224), np.float32)})

    x = lathe.Tensor([[1.0, 2.0], [3.0, 4.0]])
    y = (x @ x.T).relu().sum(axis=1)
    y.numpy()                       # runs the graph: array([16., 36.], dtype=float32)

``InferenceSession`` is shaped like ONNX Runtime's; ``Tensor`` like tinygrad's: every op builds a
graph, ``realize()``/``numpy()``/``item()`` run it, ``prepare()`` compiles it into a ``Plan`` that
runs many times, its variables rebound without compiling again. Tensors exchange memory with numpy
and torch without copies (``Tensor.from_numpy``, ``Tensor.from_dlpack``, ``numpy.asarray(t)``,
``torch.from_dlpack(t)``).
"""

from __future__ import annotations

from ._lathe import (  # noqa: F401  (re-exported)
    CompileError,
    DType,
    DTypeError,
    Error,
    KernelProfile,
    OnnxError,
    Plan,
    ShapeError,
    SInt,
    SpecError,
    Tensor,
    Variable,
    __version__,
    backends,
    dtypes,
    load_tensor_pb,
    prepare,
    start_trace,
    stop_trace,
)
from .session import InferenceSession, NodeArg

__all__ = [
    "InferenceSession",
    "NodeArg",
    "Tensor",
    "DType",
    "dtypes",
    "Variable",
    "SInt",
    "Plan",
    "KernelProfile",
    "prepare",
    "backends",
    "start_trace",
    "stop_trace",
    "Error",
    "OnnxError",
    "ShapeError",
    "DTypeError",
    "CompileError",
    "SpecError",
    "load_tensor_pb",
    "__version__",
]
