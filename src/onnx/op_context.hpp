// What an operator's implementation sees of its node: inputs, attributes, the opset, and a way
// to fail that names the node. The operator table maps op_type to an implementation.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lathe/onnx.hpp"
#include "onnx/onnx_include.hpp"

namespace lathe::onnx::detail {

class OpContext {
 public:
  OpContext(const ::onnx::NodeProto& node, std::vector<std::optional<Value>> inputs, int64_t opset,
            const std::string& base_dir, const std::map<std::string, Value>* env = nullptr);

  const std::string& op() const { return node_.op_type(); }
  int64_t opset() const { return opset_; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return static_cast<size_t>(node_.output_size()); }
  /// The name of output `i` (empty for an output the model does not use).
  const std::string& output_name(size_t i) const { return node_.output(static_cast<int>(i)); }
  /// Whether optional input `i` is given (and is not an empty optional).
  bool has(size_t i) const { return i < inputs_.size() && inputs_[i].has_value() && !inputs_[i]->is_none(); }
  /// Whether input `i` is there at all (an empty optional counts).
  bool given(size_t i) const { return i < inputs_.size() && inputs_[i].has_value(); }
  /// Input `i`, a tensor; fails naming the node when it is missing or a sequence.
  const Tensor& in(size_t i) const;
  /// Input `i` as whatever value it is (a tensor, a sequence, an empty optional).
  const Value& value(size_t i) const;
  /// Input `i`, a sequence's tensors.
  const std::vector<Tensor>& items(size_t i) const;
  /// Input `i`, an int tensor of sizes (a shape, a count, a k), as SInts: symbolic where the
  /// graph follows it as an expression of variables (onnx/size_values.hpp), else read now as ints.
  SymShape sizes(size_t i) const;
  /// Input `i` computed now and read as numbers (shapes, axes, starts...).
  std::vector<int64_t> ints(size_t i) const;
  std::vector<double> doubles(size_t i) const;
  /// The first of ints(i); fails naming the node when input i is empty.
  int64_t int_at0(size_t i) const;
  double double_at0(size_t i) const;
  /// Whether `t`'s value is known while the graph is built: it depends on neither the model's
  /// inputs nor a host step (RunTimeInputsScope); a weight or a constant is known.
  bool known_at_build(const Tensor& t) const;
  /// For a read of `t`'s value while the graph is built (every such read goes through this): when
  /// the value is not known then, a model being prepared for a range of sizes fails naming the
  /// node, and a model built for its inputs computes it now (DEBUG=2 says which node did), so the
  /// graph holds for these inputs only.
  void require_build_time(const Tensor& t, const std::string& what) const;
  /// Whether `t`'s value can only be had as the plan runs: it comes from a host step, or from the
  /// inputs of a model prepared for a range of sizes (so a step of the plan must act on it; a
  /// model built for its inputs computes it now instead).
  bool decided_at_run(const Tensor& t) const;
  /// A name for a size a host step of this node decides, the same each time the model is built
  /// (kernels compiled for it are found in the cache again); a name given twice in one graph (an
  /// unrolled Loop's node, an If's outputs) is numbered.
  std::string size_name() const;

  bool has_attr(const std::string& name) const { return attr(name) != nullptr; }
  int64_t attr_i(const std::string& name, int64_t fallback) const;
  double attr_f(const std::string& name, double fallback) const;
  std::string attr_s(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<double> attr_floats(const std::string& name) const;
  Tensor attr_t(const std::string& name) const;
  /// Runs the graph attribute `name` (If's branches, Loop's body) on `inputs`, in this node's scope.
  std::vector<Value> run_graph(const std::string& name, const std::vector<Value>& inputs) const;
  /// The same with some of the enclosing graph's values replaced (by name) for this run.
  std::vector<Value> run_graph(const std::string& name, const std::vector<Value>& inputs, const std::map<std::string, Value>& replaced) const;
  /// The graph attribute `name`; fails naming the node when there is none.
  const ::onnx::GraphProto& graph_attr(const std::string& name) const;
  /// The enclosing graph's value named `name`, or null.
  const Value* scope_value(const std::string& name) const;

  /// Throws OnnxError: "node 'name' (OpType): `why`".
  [[noreturn]] void fail(const std::string& why) const;
  std::string where() const;

 private:
  const ::onnx::AttributeProto* attr(const std::string& name) const;
  const ::onnx::NodeProto& node_;
  std::vector<std::optional<Value>> inputs_;
  int64_t opset_;
  std::string base_dir_;
  const std::map<std::string, Value>* env_;
};

/// A value a prepared model's graph needs while it is built that is known only at run time
/// (Model::prepare then builds the model again for each input).
class NeedsRunTimeValue : public OnnxError {
 public:
  using OnnxError::OnnxError;
};

/// While a model's graph is built, the ids of the nodes that stand for its inputs: a value
/// computed from them (or from a host step) is unknown until run time (OpContext::known_at_build).
/// `prepared`: the graph is prepared for a range of sizes, so such a value cannot steer the build.
class RunTimeInputsScope {
 public:
  RunTimeInputsScope(std::set<uint64_t> input_ids, bool prepared);
  /// A scope inside the open one (whose inputs, reads and options it keeps; prepared when none is
  /// open) where the nodes `placeholder_ids` stand for values known only as the plan runs: a
  /// body plan's inputs, which nothing may read to decide the graph.
  explicit RunTimeInputsScope(std::set<uint64_t> placeholder_ids);
  ~RunTimeInputsScope();
  RunTimeInputsScope(const RunTimeInputsScope&) = delete;
  RunTimeInputsScope& operator=(const RunTimeInputsScope&) = delete;
  /// Whether a scope is open on this thread.
  static bool active();

  /// Every tensor whose value the build computes from the inputs is added to `reads` (the values
  /// that decide the graph, a PreparedModel's key for a graph built again).
  void record_reads(std::vector<Tensor>* reads) { state_.reads = reads; }
  /// The options the graph's plan is prepared with, for the plans a step of it prepares (a
  /// Loop's body); a scope opened inside another keeps the outer one's.
  void use_options(const PrepareOptions& options) { state_.options = options; }
  /// The open scope's options (defaults when none is open).
  static PrepareOptions options();
  /// Whether the open scope is a prepared model's, which builds the graph again for each input
  /// when its build throws NeedsRunTimeValue.
  static bool prepared();

  struct State {
    std::set<uint64_t> ids;
    bool prepared = false;
    std::set<uint64_t> at_run_ids;  // placeholders of a body plan: values only the plan has
    std::vector<Tensor>* reads = nullptr;
    PrepareOptions options;
  };

 private:
  State state_;
  const State* outer_;
};

/// Runs a graph's nodes over `env` (its values by name), adding each node's outputs to it.
void run_nodes(const ::onnx::GraphProto& g, std::map<std::string, Value>& env, int64_t opset, const std::string& base_dir);
/// Runs a subgraph with its inputs bound (in order) and the enclosing graph's values in scope.
std::vector<Value> run_subgraph(const ::onnx::GraphProto& g, const std::map<std::string, Value>& outer,
                                const std::vector<Value>& inputs, int64_t opset, const std::string& base_dir);

/// An operator over tensors, and one whose inputs or outputs may be sequences or optionals.
using OpFn = std::function<std::vector<Tensor>(const OpContext&)>;
using ValueOpFn = std::function<std::vector<Value>(const OpContext&)>;

/// Every operator the importer implements, by op_type: those over tensors, and the others.
const std::map<std::string, OpFn>& op_table();
const std::map<std::string, ValueOpFn>& value_op_table();

/// A TensorProto as a realized Tensor (raw or typed data, or external data under `base_dir`).
Tensor tensor_from_proto(const ::onnx::TensorProto& t, const std::string& base_dir);
/// The same, marked constant (an initializer or a Constant node's value): plans compute what
/// depends only on such tensors once, at prepare.
Tensor constant_from_proto(const ::onnx::TensorProto& t, const std::string& base_dir);
/// A constant of `t`'s dtype and shape whose raw data, `length` bytes kept out of `t`
/// (initializer_data.hpp), `fill` writes into its buffer.
Tensor constant_from_raw(const ::onnx::TensorProto& t, uint64_t length, const std::function<void(void*, uint64_t)>& fill);
DType dtype_from_onnx(int32_t elem_type, const std::string& what);

}  // namespace lathe::onnx::detail
