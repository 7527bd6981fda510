// Sizes as values: ONNX graphs compute shapes as small int64 tensors (Shape, Gather, Concat,
// ReduceMin, Reshape...). While a graph is built, such a tensor's elements are followed as SInts:
// a size that is symbolic (a variable the plan binds, or one a host step decides as it runs)
// stays an expression of its variables instead of a number read once. An operator that takes a
// shape, a count or a k (Reshape, Expand, ConstantOfShape, TopK) reads it with OpContext::sizes, so
// what it makes has symbolic sizes and the plan is prepared once.
#pragma once

#include <optional>
#include <vector>

#include "onnx/op_context.hpp"

namespace lathe::onnx::detail {

/// While it lives (nested scopes share one), the graph built on this thread has its sizes followed.
class SizeValuesScope {
 public:
  SizeValuesScope();
  ~SizeValuesScope();
  SizeValuesScope(const SizeValuesScope&) = delete;
  SizeValuesScope& operator=(const SizeValuesScope&) = delete;
};

/// Notes that `values` (the vector Tensor::host_step returns after a step's outputs) holds the
/// sizes `step` decides, for size_as_tensor.
void note_decided_sizes(const HostStep& step, const Tensor& values);
/// A size as an int64 scalar computed as the plan runs: a size a host step decides read from the
/// step's vector of sizes (so what uses it runs after the step), a bound one from its variable.
Tensor size_as_tensor(const SInt& size);

/// `name`, or where the graph being built has named a size so already (a node of a Loop's body,
/// unrolled), the name numbered: each decided size has a name of its own, the same at every build.
std::string own_size_name(const std::string& name);

/// `t` made to depend on the host steps that decide `sizes` (adding 0 read from each step's vector
/// of sizes): a tensor shaped by a decided size that reads none of its step's data (a
/// ConstantOfShape of it) is then computed after the step, and the step is part of its plan.
Tensor after_decided_sizes(const Tensor& t, const SymShape& sizes);

/// The smaller and the larger of two sizes (an expression where either is symbolic).
SInt size_min(const SInt& a, const SInt& b);
SInt size_max(const SInt& a, const SInt& b);
/// a / b rounded down, for sizes (b > 0). A factor of b that is also one of a cancels where it
/// cannot be 0, or anywhere with `zero_cancels` (a Reshape's -1: where that factor is 0 the tensor
/// is empty whatever the quotient).
SInt size_quotient(const SInt& a, const SInt& b, bool zero_cancels = false);

/// The symbolic elements of `t`, when the graph being built follows them.
std::optional<SymShape> size_values_of(const Tensor& t);
/// The same when every element is a number: a value known while the graph is built, even where
/// it was computed from a symbolic size (a dimension of 1 compared with 1).
std::optional<std::vector<int64_t>> static_size_values(const Tensor& t);
/// Follows `values` as the elements of `t` (an int tensor of that many elements).
void note_size_values(const Tensor& t, SymShape values);
/// After node `c` made `outs`: the elements of its first output, where its inputs' are followed
/// and the operator is one whose result is then known (Shape, Gather, Concat, Unsqueeze, a
/// reduction, integer arithmetic...).
void follow_size_values(const OpContext& c, const std::vector<Value>& outs);

}  // namespace lathe::onnx::detail
