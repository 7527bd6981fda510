// Session: an ONNX model loaded, prepared for a range of sizes and run on numpy arrays (the engine
// of lathe.InferenceSession). Inputs lathe can read in place are borrowed, not staged; outputs
// are the run's own copies, handed to numpy without another. A session serialises its runs (one
// plan, one set of buffers); two sessions run at once, the interpreter lock released meanwhile.
#include <pybind11/stl.h>

#include <map>
#include <mutex>
#include <optional>

#include "arrays.hpp"
#include "bindings.hpp"
#include "lathe/onnx.hpp"

namespace lathe::python {

namespace {

using onnx::Model;
using onnx::PreparedModel;
using onnx::ValueInfo;
using onnx::ValueKind;

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

py::list described(const std::vector<ValueInfo>& values) {
  py::list out;
  for (const ValueInfo& v : values) out.append(describe(v));
  return out;
}

class Session {
 public:
  explicit Session(Model model) : model_(std::move(model)) {}

  py::list inputs() const { return described(model_.inputs()); }
  py::list outputs() const { return described(model_.outputs()); }

  // Builds and compiles the model for inputs whose named dimensions reach `max_sizes`; runs
  // meanwhile use the model prepared before, which stays where this fails.
  void prepare(const std::map<std::string, int64_t>& max_sizes, const PrepareOptions& options) {
    py::gil_scoped_release unlocked;
    PreparedModel fresh = model_.prepare(max_sizes, options);
    std::lock_guard<std::mutex> lock(mu_);
    prepared_.reset();
    prepared_.emplace(std::move(fresh));
  }

  bool prepared() {
    py::gil_scoped_release unlocked;  // a run may hold the lock: wait for it without the interpreter's
    std::lock_guard<std::mutex> lock(mu_);
    return prepared_.has_value();
  }

  // The outputs in graph order; with `profile`, each kernel's run appended to it.
  std::vector<py::array> run(const std::map<std::string, py::array>& feed, std::optional<py::list> profile) {
    std::map<std::string, Tensor> inputs;
    for (const auto& [name, array] : feed) inputs.emplace(name, borrow_or_copy(array));
    std::vector<Tensor> outs;
    std::vector<KernelRecord> records;
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> lock(mu_);
      if (!prepared_) throw Error("the session is not prepared: prepare(max_sizes) first");
      std::vector<KernelProfile> kernels;
      outs = prepared_->run(inputs, profile ? &kernels : nullptr);
      records = records_of(kernels);  // while the plan the profiles point into is held
    }
    if (profile)
      for (KernelRecord& r : records) profile->append(py::cast(std::move(r)));
    std::vector<py::array> arrays;
    for (const Tensor& t : outs) arrays.push_back(array_over(t.buffer(), t.shape()));  // PreparedModel::run's own copies
    return arrays;
  }

 private:
  Model model_;
  std::optional<PreparedModel> prepared_;
  std::mutex mu_;
};

}  // namespace

void bind_session(py::module_& m) {
  py::class_<Session>(m, "Session", "An ONNX model loaded by lathe (lathe.InferenceSession wraps it)")
      .def_static("from_path", [](const std::string& path) { return std::make_unique<Session>(Model::load(path)); }, py::arg("path"),
                  "Loads an ONNX model file (external data beside it)")
      .def_static("from_bytes", [](const py::bytes& bytes) { return std::make_unique<Session>(Model::from_bytes(std::string(bytes))); },
                  py::arg("data"), "Loads an ONNX model from its serialized bytes")
      .def("inputs", &Session::inputs, "The graph's inputs: (name, dims, dtype, kind) each; a dim is an int, a name or None")
      .def("outputs", &Session::outputs, "The graph's outputs, as inputs() describes them")
      .def(
          "prepare",
          [](Session& s, const std::map<std::string, int64_t>& max_sizes, std::optional<int> threads, std::optional<std::string> backend,
             std::optional<bool> optimize) { s.prepare(max_sizes, prepare_options(threads, backend, optimize, std::nullopt)); },
          py::arg("max_sizes"), py::arg("threads") = py::none(), py::arg("backend") = py::none(), py::arg("optimize") = py::none(),
          "Builds and compiles the model for every named dimension from 1 up to its maximum (a dict), with the most threads a "
          "kernel uses, the backend by name and the optimizer on or off (None: the defaults)")
      .def_property_readonly("prepared", &Session::prepared, "Whether a model is prepared (compiled) to run")
      .def("run", &Session::run, py::arg("feed"), py::arg("profile") = py::none(),
           "Runs on a dict of input name -> numpy array; returns the outputs as new numpy arrays, in graph order. Each kernel's "
           "KernelProfile is appended to `profile` when a list is given");

  m.def(
      "load_tensor_pb",
      [](const std::string& path) {
        std::string name;
        Tensor t = onnx::load_tensor_pb(path, &name);
        return py::make_tuple(name, array_of(t));
      },
      py::arg("path"), "Reads a serialized ONNX TensorProto file: (name, numpy array)");
}

}  // namespace lathe::python
