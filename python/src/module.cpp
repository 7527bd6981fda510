// lathe's native Python module (_lathe): ONNX models loaded, prepared and run on numpy arrays,
// and lathe's errors as Python exceptions. The package's Python layer (lathe/__init__.py) shapes
// it like ONNX Runtime's InferenceSession.
//
// Arrays cross by copy: an input's bytes are copied into a lathe tensor before the interpreter
// lock is released, an output's are copied into a new numpy array after it is taken again. A
// session serialises its own runs (one plan, one set of buffers); two sessions run at once.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"

namespace py = pybind11;
using namespace lathe;
using namespace lathe::onnx;

namespace {

// numpy's name for a dtype lathe has (bfloat16: none; its values cross as float32).
std::string numpy_name(DType dt) { return dt == dtypes::bool_ ? "bool" : dt.name(); }

DType dtype_of_array(const py::array& a) {
  std::string name = py::str(a.dtype().attr("name"));
  if (name == "bool") return dtypes::bool_;
  if (name == "void" || name == "object" || name.rfind("str", 0) == 0 || name.rfind("bytes", 0) == 0)
    throw DTypeError("lathe has no dtype for numpy's " + name);
  try {
    return dtypes::from_name(name);
  } catch (const Error&) {
    throw DTypeError("lathe has no dtype for numpy's " + name);
  }
}

// A copy of a C-contiguous view of `a` as a lathe tensor of its dtype and shape.
Tensor tensor_of(const py::array& given) {
  DType dt = dtype_of_array(given);
  if (!py::bool_(given.dtype().attr("isnative")))
    throw DTypeError("an array of " + std::string(py::str(given.dtype().attr("str"))) + " is not in this machine's byte order: astype('=') it first");
  py::array a = py::array::ensure(given, py::array::c_style);
  if (!a) throw py::error_already_set();
  Shape shape(a.shape(), a.shape() + a.ndim());
  return detail::tensor_from_bytes(a.data(), static_cast<size_t>(a.nbytes()), dt, shape);
}

// A new numpy array with `t`'s values (bfloat16 widened to float32).
py::array array_of(const Tensor& given) {
  Tensor t = given.dtype() == dtypes::bfloat16 ? given.cast(dtypes::float32) : given;
  std::vector<uint8_t> bytes = detail::tensor_bytes(t, t.dtype(), "a model's output");
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  py::array out(py::dtype(numpy_name(t.dtype())), shape);
  if (!bytes.empty()) std::memcpy(out.mutable_data(), bytes.data(), bytes.size());
  return out;
}

// A graph input or output for Python: (name, dims: int, str or None each, dtype name, kind).
py::tuple describe(const ValueInfo& v) {
  py::list dims;
  for (size_t d = 0; d < v.dims.size(); ++d) {
    if (v.dims[d]) dims.append(*v.dims[d]);
    else if (d < v.dim_params.size() && !v.dim_params[d].empty()) dims.append(v.dim_params[d]);
    else dims.append(py::none());
  }
  const char* kind = v.kind == ValueKind::kTensor ? "tensor"
                     : v.kind == ValueKind::kSequence ? "sequence"
                     : v.kind == ValueKind::kOptionalTensor ? "optional"
                                                            : "optional sequence";
  return py::make_tuple(v.name, dims, v.dtype.name(), kind);
}

class Session {
 public:
  explicit Session(Model model) : model_(std::move(model)) {}

  py::list inputs() const { return described(model_.inputs()); }
  py::list outputs() const { return described(model_.outputs()); }

  // Builds and compiles the model for inputs whose named dimensions reach `max_sizes`.
  // Builds and compiles the model for inputs whose named dimensions reach `max_sizes`; runs meanwhile
  // use the model prepared before, which stays where this fails.
  void prepare(const std::map<std::string, int64_t>& max_sizes) {
    py::gil_scoped_release unlocked;
    PreparedModel fresh = model_.prepare(max_sizes);
    std::lock_guard<std::mutex> lock(mu_);
    prepared_.reset();
    prepared_.emplace(std::move(fresh));
  }

  bool prepared() {
    std::lock_guard<std::mutex> lock(mu_);
    return prepared_.has_value();
  }

  std::vector<py::array> run(const std::map<std::string, py::array>& feed) {
    std::map<std::string, Tensor> inputs;
    for (const auto& [name, array] : feed) inputs.emplace(name, tensor_of(array));
    std::vector<Tensor> outs;
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> lock(mu_);
      if (!prepared_) throw Error("the session is not prepared: prepare(max_sizes) first");
      outs = prepared_->run(inputs);
    }
    std::vector<py::array> arrays;
    for (const Tensor& t : outs) arrays.push_back(array_of(t));
    return arrays;
  }

 private:
  static py::list described(const std::vector<ValueInfo>& values) {
    py::list out;
    for (const ValueInfo& v : values) out.append(describe(v));
    return out;
  }

  Model model_;
  std::optional<PreparedModel> prepared_;
  std::mutex mu_;
};

}  // namespace

PYBIND11_MODULE(_lathe, m) {
  m.doc() = "lathe's native module: ONNX models prepared and run on numpy arrays (use the lathe package)";
  m.attr("__version__") = LATHE_VERSION_STRING;

  // lathe's errors, most general first: pybind11 tries the translator registered last first, so
  // each subclass is caught before Error.
  py::object error = py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<OnnxError>(m, "OnnxError", error);
  py::register_exception<ShapeError>(m, "ShapeError", error);
  py::register_exception<DTypeError>(m, "DTypeError", error);
  py::register_exception<CompileError>(m, "CompileError", error);
  py::register_exception<SpecError>(m, "SpecError", error);

  py::class_<Session>(m, "Session", "An ONNX model loaded by lathe (lathe.InferenceSession wraps it)")
      .def_static("from_path", [](const std::string& path) { return std::make_unique<Session>(Model::load(path)); }, py::arg("path"),
                  "Loads an ONNX model file (external data beside it)")
      .def_static("from_bytes", [](const py::bytes& bytes) { return std::make_unique<Session>(Model::from_bytes(std::string(bytes))); },
                  py::arg("data"), "Loads an ONNX model from its serialized bytes")
      .def("inputs", &Session::inputs, "The graph's inputs: (name, dims, dtype, kind) each; a dim is an int, a name or None")
      .def("outputs", &Session::outputs, "The graph's outputs, as inputs() describes them")
      .def("prepare", &Session::prepare, py::arg("max_sizes"),
           "Builds and compiles the model for every named dimension from 1 up to its maximum (a dict)")
      .def_property_readonly("prepared", &Session::prepared)
      .def("run", &Session::run, py::arg("feed"),
           "Runs on a dict of input name -> numpy array; returns the outputs as new numpy arrays, in graph order");

  m.def("load_tensor_pb", [](const std::string& path) {
    std::string name;
    Tensor t = load_tensor_pb(path, &name);
    return py::make_tuple(name, array_of(t));
  }, py::arg("path"), "Reads a serialized ONNX TensorProto file: (name, numpy array)");
}
