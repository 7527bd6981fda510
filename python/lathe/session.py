"""InferenceSession: an ONNX model compiled by lathe and run on numpy arrays, shaped like ONNX
Runtime's."""

from __future__ import annotations

import os
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _lathe
from ._lathe import Error, KernelProfile, OnnxError

# ONNX Runtime's spelling of an element type in NodeArg.type.
_ORT_TYPE = {
    "float32": "float",
    "float64": "double",
    "float16": "float16",
    "bfloat16": "bfloat16",
    "bool": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
}


def _native_order(a: np.ndarray) -> np.ndarray:
    """`a`, or a copy of it in this machine's byte order."""
    return a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))


class NodeArg:
    """A graph input or output, as ONNX Runtime describes one.

    ``name``; ``shape``, a list with an int for a fixed dimension, the dimension's name (a str) for
    a dynamic one, None where the model says nothing; ``type``, ONNX Runtime's spelling
    (``"tensor(float)"``); ``dtype``, the numpy dtype of its values.
    """

    def __init__(self, name: str, shape: List[Union[int, str, None]], dtype: str, kind: str) -> None:
        self.name = name
        self.shape = shape
        self.dtype = np.dtype("float32" if dtype == "bfloat16" else dtype)
        element = _ORT_TYPE.get(dtype, dtype)
        self.type = {
            "tensor": f"tensor({element})",
            "sequence": f"seq(tensor({element}))",
            "optional": f"optional(tensor({element}))",
        }.get(kind, f"optional(seq(tensor({element})))")

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class InferenceSession:
    """An ONNX model compiled by lathe, run on numpy arrays.

    ``path_or_bytes``: a model file's path (its external data beside it) or its serialized bytes.
    ``max_sizes``: the largest size each named dimension will take (``{"batch": 64}``). A named
    dimension without one is compiled for the size the first run gives it, and compiled again,
    for the larger of the size needed and twice the size before, when a later run exceeds it; a run
    past a given maximum raises OnnxError. A dimension the model neither sizes nor names (None) is
    refused when the model is prepared.

    ``threads``: the most threads one kernel uses (default: ``LATHE_THREADS``, else every core);
    ``backend``: the CPU compiler by name, ``"llvm"`` or ``"clang"`` (default: ``LATHE_CPU_COMPILER``,
    else LLVM where lathe was built with it); ``optimize``: the kernel optimizer on or off (default:
    on, off with ``NOOPT=1``). The device comes from ``LATHE_DEVICE`` (default: the CPU).

    One session may be used from several threads: its runs take turns. Runs of different sessions
    proceed at once; the interpreter lock is released while a model runs.
    """

    def __init__(
        self,
        path_or_bytes: Union[str, bytes, "os.PathLike[str]"],
        max_sizes: Optional[Mapping[str, int]] = None,
        *,
        threads: Optional[int] = None,
        backend: Optional[str] = None,
        optimize: Optional[bool] = None,
    ) -> None:
        if threads is not None and threads < 1:  # as a plan says it, before anything is loaded
            raise Error(f"threads must be at least 1, not {threads}")
        self._options = {"threads": threads, "backend": backend, "optimize": optimize}
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._native = _lathe.Session.from_bytes(bytes(path_or_bytes))
        else:
            self._native = _lathe.Session.from_path(str(path_or_bytes))
        self._inputs = [NodeArg(*v) for v in self._native.inputs()]
        self._outputs = [NodeArg(*v) for v in self._native.outputs()]
        self._position = {o.name: i for i, o in enumerate(self._outputs)}
        # Per input: its axes of fixed size, and its named ones.
        self._fixed = {a.name: [(axis, d) for axis, d in enumerate(a.shape) if isinstance(d, int)] for a in self._inputs}
        self._named = {a.name: [(axis, d) for axis, d in enumerate(a.shape) if isinstance(d, str)] for a in self._inputs}
        self._prepared = False
        self._given = dict(max_sizes or {})
        self._max: Dict[str, int] = {}
        self._lock = threading.Lock()
        named = {d for arg in self._inputs for d in arg.shape if isinstance(d, str)}
        unknown = set(self._given) - named
        if unknown:
            raise OnnxError(f"max_sizes names {sorted(unknown)}, which no input of the model has (its named dimensions: {sorted(named)})")
        if named <= set(self._given):  # every size known: compile now, as ONNX Runtime does
            self._prepare(dict(self._given))

    def get_inputs(self) -> List[NodeArg]:
        """The graph's inputs."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        """The graph's outputs."""
        return list(self._outputs)

    def get_max_sizes(self) -> Dict[str, int]:
        """The largest size of each named dimension the model is compiled for now."""
        return dict(self._max)

    def run(
        self,
        output_names: Optional[Sequence[str]],
        input_feed: Mapping[str, Any],
        run_options: Any = None,
        *,
        profile: Optional[List[KernelProfile]] = None,
        trace: Union[str, "os.PathLike[str]", None] = None,
    ) -> List[np.ndarray]:
        """Runs the model on ``input_feed`` (input name -> array or anything numpy.asarray takes).

        Returns the outputs named in ``output_names`` (all of them, in graph order, for None) as
        new numpy arrays. Raises OnnxError for a missing, unknown or misshapen input.
        ``profile``: a list that receives a KernelProfile (time, GFLOP/s, GB/s, ONNX nodes) for each
        kernel of this run. ``trace``: a file that receives a Chrome trace of this run (as
        ``lathe bench --trace`` writes; it records every kernel lathe runs meanwhile, in any thread).
        """
        feed = {name: _native_order(np.asarray(value)) for name, value in input_feed.items()}
        wanted = self._positions(output_names)
        self._ensure_prepared(feed)
        if trace is not None:
            _lathe.start_trace(os.fspath(trace))
        try:
            outs = self._native.run(feed, profile)
        finally:
            if trace is not None:
                _lathe.stop_trace()
        return [outs[i] for i in wanted]

    def _positions(self, output_names: Optional[Sequence[str]]) -> List[int]:
        if output_names is None:
            return list(range(len(self._outputs)))
        for name in output_names:
            if name not in self._position:
                raise OnnxError(f"no output named {name!r} (the model's outputs: {list(self._position)})")
        return [self._position[name] for name in output_names]

    def _ensure_prepared(self, feed: Mapping[str, np.ndarray]) -> None:
        missing = [arg.name for arg in self._inputs if arg.name not in feed]
        if missing:
            raise OnnxError(f"inputs {missing} are missing (the model's inputs: {[a.name for a in self._inputs]})")
        # A wrong rank or fixed size is refused before any size grows (and anything compiles).
        needed: Dict[str, int] = {}
        for arg in self._inputs:
            value = feed[arg.name]
            if value.ndim != len(arg.shape) or any(value.shape[axis] != dim for axis, dim in self._fixed[arg.name]):
                raise OnnxError(f"input {arg.name!r} has shape {tuple(value.shape)}; the model's is {arg.shape}")
            for axis, dim in self._named[arg.name]:
                needed[dim] = max(needed.get(dim, 1), int(value.shape[axis]))
        with self._lock:
            grown = dict(self._max)
            for dim, size in needed.items():
                if dim in self._given:
                    grown[dim] = self._given[dim]  # a run past it is refused by the model, naming it
                elif size > grown.get(dim, 0):
                    grown[dim] = size if dim not in self._max else max(size, 2 * self._max[dim])
            if not self._prepared or grown != self._max:
                self._prepare(grown)

    def _prepare(self, max_sizes: Dict[str, int]) -> None:
        self._native.prepare(max_sizes, **self._options)
        self._max = dict(max_sizes)
        self._prepared = True
