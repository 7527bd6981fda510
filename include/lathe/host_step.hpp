// A host step: a computation whose output sizes depend on its input values (NonZero, non-maximum
// suppression, a TopK whose k is computed), run on the host as one step of an ExecutionPlan.
//
// A plan is prepared once. Each output of a step is given memory for its largest size, and each
// size that depends on values is a Variable of the step (`sizes`): every run of the step writes
// its outputs at the front of that memory and sets those variables, and the kernels after it read
// them as symbolic sizes, the way execute_with_vars rebinds a model's input sizes. So a new input
// compiles nothing, however many elements the step keeps. Make one with Tensor::host_step.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lathe/device.hpp"
#include "lathe/dtype.hpp"
#include "lathe/variable.hpp"

namespace lathe {

/// A tensor as a host step sees it: host memory, packed row-major.
struct HostTensor {
  void* data = nullptr;
  DType dtype = dtypes::float32;
  /// An input's sizes in this run; an output's largest sizes (the memory it may fill).
  std::vector<int64_t> shape;

  int64_t numel() const;
  /// The memory as T; throws Error when T is not the tensor's dtype.
  template <class T>
  T* as() const {
    if (dtype_of<T>() != dtype) throw Error("a host step read a " + dtype.name() + " tensor as " + dtype_of<T>().name());
    return static_cast<T*>(data);
  }
};

/// One output of a host step: its dtype, and its shape, which may name the step's `sizes`
/// variables and the variables of its inputs' shapes.
struct HostOutput {
  DType dtype = dtypes::float32;
  SymShape shape;
};

struct HostStep {
  /// Names the step in errors, profiles and DEBUG output ("NonZero", an ONNX node).
  std::string name;
  /// The sizes each run decides, each with the range its values may take (a step that keeps
  /// nothing may return 0 where the minimum allows it). Names are unique within one graph.
  std::vector<Variable> sizes;
  std::vector<HostOutput> outputs;
  /// Reads `in` (each at its sizes in this run), writes each of `out` packed at the front of its
  /// memory, and returns the value of each of `sizes`, in order and within its range. It runs on
  /// the thread that runs the plan; an exception from it leaves the run with that error.
  std::function<std::vector<int64_t>(const std::vector<HostTensor>& in, const std::vector<HostTensor>& out)> run;
};

/// Calls fn(i) for every i in [0, n), split across the threads the running plan was prepared with
/// (PrepareOptions::threads, its kernels' count): for a step's independent pieces (RoiAlign's
/// regions). Outside a step's run, or where the plan has one thread, on the calling thread alone.
/// The first exception an fn throws reaches the caller once every thread has stopped (a thread
/// runs no more of its pieces after one throws).
void host_parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

}  // namespace lathe
