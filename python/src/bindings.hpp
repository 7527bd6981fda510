// The parts of the native module (_lathe), each bound by its own file, and what they share.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "lathe/lathe.hpp"

namespace lathe::python {

namespace py = pybind11;

void bind_errors(py::module_& m);    // errors.cpp: lathe's exceptions
void bind_profiles(py::module_& m);  // profiles.cpp: KernelProfile
void bind_session(py::module_& m);   // session.cpp: ONNX models (InferenceSession's engine)
void bind_tensor(py::module_& m);    // tensor.cpp: DType, Variable, SInt, Tensor, Plan
void bind_dlpack(py::class_<Tensor>& tensor);  // dlpack.cpp: __dlpack__, from_dlpack
void bind_buffer_protocol(py::class_<Tensor>& tensor);  // buffer_protocol.cpp: memoryview(t), numpy.asarray(t)

/// One kernel's run, as Python reads it (KernelProfile holds pointers into its plan; this does not).
struct KernelRecord {
  std::string name, device, actions;
  double ms = 0, gflops = 0, gbps = 0;  // KernelProfile's rates
  int64_t ops = 0, bytes = 0;
  std::vector<std::string> labels;
};
std::vector<KernelRecord> records_of(const std::vector<KernelProfile>& profile);

/// A plan's settings from the keyword arguments prepare() takes (None: the default).
inline PrepareOptions prepare_options(std::optional<int> threads, const std::optional<std::string>& backend, std::optional<bool> optimize,
                                      std::optional<int> beam) {
  if (threads && *threads < 1) throw Error("threads must be at least 1, not " + std::to_string(*threads));
  if (beam && *beam < 0) throw Error("beam must be at least 0, not " + std::to_string(*beam));
  PrepareOptions o;
  o.threads = threads;
  o.compiler = backend.value_or("");
  o.optimize = optimize;
  o.beam = beam;
  return o;
}

}  // namespace lathe::python
