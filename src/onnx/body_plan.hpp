// A subgraph of a node (a Loop's or a Scan's body, an If's branch) prepared once as a plan of its
// own, which a host step of the enclosing plan runs as often as the node's run-time values say:
// control flow whose trip counts, conditions or carried values come from the inputs, in a model
// prepared once.
//
// The body's inputs are placeholder buffers sized for their largest sizes, and so is every value
// of the enclosing graph the body reads that is known only at run time (captured()), which the
// step is given as inputs too. A size that is a variable outside (a batch, a count a step
// decides) is a variable of the body's plan, bound on each run from the sizes the step is given;
// one the body reads only as a value (Shape(x) outside, read inside) is captured as a size.
//
// A BodyPlan is run by one thread at a time (its plan's is); each prepared model has its own.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/op_context.hpp"

namespace lathe::onnx::detail {

/// The names subgraph `g` reads that neither it nor a subgraph of it defines: what it takes from
/// the graphs around it.
std::set<std::string> names_read_from_outside(const ::onnx::GraphProto& g);

/// Whether subgraph `graph` of c's node reads a tensor of the enclosing graph that is known only
/// as the plan runs (OpContext::decided_at_run).
bool reads_run_time_values(const OpContext& c, const std::string& graph);

/// Fails in a way that lets a prepared model fall back to building the graph for each input
/// (NeedsRunTimeValue), where one can; else fails naming the node.
[[noreturn]] void cannot_plan(const OpContext& c, const std::string& why);

class BodyPlan {
 public:
  /// A body input: its dtype and shape in the enclosing graph's terms; or a value given to the
  /// body as it is, with no placeholder (the empty sequence a loop appends to).
  struct Slot {
    DType dtype;
    SymShape shape;
    std::optional<Value> given{};
  };

  /// Builds and prepares graph attribute `graph` of c's node over `inputs`. Fails (cannot_plan)
  /// for a body that reads a run-time value to decide its graph or cannot be built over run-time
  /// sizes, returns a sequence (of other than one tensor), or has an input size that is an
  /// expression of variables rather than a number or one variable. An output that is a sequence
  /// of one tensor is that tensor (output_is_one_item).
  BodyPlan(const OpContext& c, const std::string& graph, const std::vector<Slot>& inputs);

  /// What the step passes after its own inputs, in this order.
  const std::vector<Tensor>& captured() const { return captured_; }
  size_t num_outputs() const { return outputs_.size(); }
  DType output_dtype(size_t k) const { return outputs_[k].dtype(); }
  size_t output_rank(size_t k) const { return outputs_[k].symbolic_shape().size(); }
  /// Output k's shape in the enclosing graph's terms; fails (cannot_plan) for a size the body
  /// decides itself.
  SymShape output_shape(const OpContext& c, size_t k) const;
  /// Its size along `axis` in those terms, or none for a size the body decides (its largest is
  /// output_largest).
  std::optional<SInt> output_size(size_t k, size_t axis) const;
  int64_t output_largest(size_t k, size_t axis) const { return outputs_[k].symbolic_shape().at(axis).max(); }
  /// Whether output k was a sequence of one tensor (a loop's appended value), that tensor here.
  bool output_is_one_item(size_t k) const { return one_item_[k]; }

  // As the step runs (inputs and outputs are host memory, packed at this run's sizes; the body's
  // own memory may be a device's):
  /// Binds the variables from this run's sizes of the inputs and of the captured values (checked
  /// against each other and the variables' ranges), and copies the captured values in.
  void start(const std::vector<Shape>& inputs, const std::vector<HostTensor>& captured);
  /// Input k's size in bytes in this run, and copies into and out of it.
  size_t input_bytes(size_t k) const;
  void write_input(size_t k, const void* src) const;
  void read_input(size_t k, void* dst) const;
  void run() const;
  /// Output k after a run: its sizes, its size in bytes, and a copy of it.
  Shape output_sizes(size_t k) const;
  size_t output_bytes(size_t k) const;
  void read_output(size_t k, void* dst) const;
  /// Hands outputs to inputs (each pair output, input) as one step: the two buffers swapped where
  /// the plan can (nothing copied), else copied, an output that is an input's own memory (a value
  /// passed through, two swapped) read before any is written. The same pairs on every call of a
  /// start.
  void carry(const std::vector<std::pair<size_t, size_t>>& pairs) const;

 private:
  std::string where_;
  mutable std::vector<Buffer> inputs_;           // the placeholders (carry swaps memory into them): the body's inputs, then the captured values (none for a value given or a size)
  std::vector<SymShape> input_shapes_;           // their shapes in the body's terms
  std::vector<Tensor> captured_, outputs_;
  std::vector<std::string> size_of_;             // per captured value: the variable it gives, for a size read as a value
  std::vector<bool> one_item_;
  std::unordered_map<std::string, SInt> outer_;  // a body variable's name: the size outside it stands for
  std::unordered_map<std::string, SInt> inner_;  // and the body's own (bound) variable
  std::vector<std::string> bound_;               // the variables the body's plan reads
  std::unordered_map<std::string, int64_t> vars_;  // this run's values
  std::unordered_map<std::string, std::pair<int64_t, int64_t>> ranges_;
  std::vector<bool> sized_by_inputs_;            // an output whose sizes are the inputs' (not the body's own)
  mutable std::vector<std::optional<Shape>> out_sizes_;  // each output's sizes, once known in this start
  mutable bool bound_this_start_ = false;
  mutable std::vector<std::vector<uint8_t>> staged_;     // carry's copies of outputs in an input's memory
  mutable std::vector<const void*> direct_;              // and the plan's own memory it copies from
  mutable std::vector<std::pair<size_t, size_t>> carried_;              // the pairs swaps_ was found for
  mutable std::vector<std::optional<std::pair<size_t, size_t>>> swaps_;  // per carried pair: the plan's buffers it swaps
  std::shared_ptr<ExecutionPlan> plan_;
  size_t num_body_inputs_ = 0;
};

}  // namespace lathe::onnx::detail
