// lathe's errors as Python exceptions: lathe.Error (a RuntimeError) and one subclass per kind,
// each carrying lathe's message.
#include "bindings.hpp"
#include "lathe/onnx.hpp"

namespace lathe::python {

void bind_errors(py::module_& m) {
  // Most general first: pybind11 tries the translator registered last first, so each subclass is
  // caught before Error.
  py::object error = py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<onnx::OnnxError>(m, "OnnxError", error);
  py::register_exception<ShapeError>(m, "ShapeError", error);
  py::register_exception<DTypeError>(m, "DTypeError", error);
  py::register_exception<CompileError>(m, "CompileError", error);
  py::register_exception<SpecError>(m, "SpecError", error);
}

}  // namespace lathe::python
