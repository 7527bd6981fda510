// lathe's native Python module (_lathe): the Tensor API, ONNX models and lathe's errors. The
// package's Python layer (lathe/__init__.py) adds InferenceSession, shaped like ONNX Runtime's.
// Each part is bound by its own file (bindings.hpp lists them).
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "lathe/trace.hpp"

PYBIND11_MODULE(_lathe, m) {
  m.doc() = "lathe's native module: lazy tensors, ONNX models and numpy arrays (use the lathe package)";
  m.attr("__version__") = lathe::kVersion;
  lathe::python::bind_errors(m);
  lathe::python::bind_profiles(m);
  lathe::python::bind_tensor(m);
  lathe::python::bind_session(m);
  m.def("backends", &lathe::backend_names, "Every backend this build has, as 'DEVICE/compiler' ('CPU/llvm', 'CPU/clang', ...)");
  m.def("start_trace", &lathe::start_trace, pybind11::arg("path"),
        "Records every kernel run into a Chrome trace at `path` (Perfetto opens it) until stop_trace()");
  m.def("stop_trace", &lathe::stop_trace, "Writes the trace; returns how many kernel runs it holds");
}
