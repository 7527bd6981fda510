#include "onnx/op_context.hpp"

#include <cctype>
#include <cstdio>
#include <set>

#include "ir/toposort.hpp"
#include "onnx/ops.hpp"
#include "onnx/size_values.hpp"
#include "support/settings.hpp"

namespace lathe::onnx::detail {

OpContext::OpContext(const ::onnx::NodeProto& node, std::vector<std::optional<Value>> inputs, int64_t opset,
                     const std::string& base_dir, const std::map<std::string, Value>* env)
    : node_(node), inputs_(std::move(inputs)), opset_(opset), base_dir_(base_dir), env_(env) {}

std::vector<Value> OpContext::run_graph(const std::string& name, const std::vector<Value>& inputs) const {
  static const std::map<std::string, Value> kEmpty;
  return run_subgraph(graph_attr(name), env_ ? *env_ : kEmpty, inputs, opset_, base_dir_);
}

std::vector<Value> OpContext::run_graph(const std::string& name, const std::vector<Value>& inputs,
                                        const std::map<std::string, Value>& replaced) const {
  std::map<std::string, Value> env = env_ ? *env_ : std::map<std::string, Value>{};
  for (const auto& [key, v] : replaced) env.insert_or_assign(key, v);
  return run_subgraph(graph_attr(name), env, inputs, opset_, base_dir_);
}

const ::onnx::GraphProto& OpContext::graph_attr(const std::string& name) const {
  const auto* a = attr(name);
  if (!a || !a->has_g()) fail("attribute '" + name + "' (a graph) is required");
  return a->g();
}

const Value* OpContext::scope_value(const std::string& name) const {
  if (!env_) return nullptr;
  auto it = env_->find(name);
  return it == env_->end() ? nullptr : &it->second;
}

std::string OpContext::where() const { return "node '" + node_.name() + "' (" + node_.op_type() + ")"; }

void OpContext::fail(const std::string& why) const { throw OnnxError(where() + ": " + why); }

const Value& OpContext::value(size_t i) const {
  if (i >= inputs_.size() || !inputs_[i]) fail("input " + std::to_string(i) + " is required");
  return *inputs_[i];
}

namespace {

// Operators that take inputs with symbolic (dim_param) sizes: their implementations read no
// symbolic size as a number (reductions check that they do not reduce a symbolic axis). Any
// other operator given such an input fails, rather than bake in the size it was built with.
bool takes_symbolic(const std::string& op) {
  static const std::set<std::string> ops{
      "Abs", "Add", "And", "AveragePool", "BatchNormalization", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Concat", "Conv",
      "Cos", "Div", "Dropout", "Elu", "Equal", "Erf", "Exp", "Flatten", "Floor", "Gelu", "Gemm", "GlobalAveragePool",
      "GlobalMaxPool", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "InstanceNormalization",
      "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "MatMul", "Max", "MaxPool", "Mean", "Min",
      "Mish", "Mul", "Neg", "Not", "Or", "Pow", "PRelu", "Reciprocal", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
      "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Round", "Selu", "Sigmoid",
      "Sign", "Sin", "Softmax", "Softplus", "Softsign", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu",
      "Transpose", "Unsqueeze", "Where", "Xor", "Mod", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShift", "Sinh", "Cosh", "Asinh",
      "Acosh", "Atanh", "Asin", "Acos", "Atan", "Shrink", "IsNaN", "IsInf", "Tile",
      // Control flow whose sizes are known only as the plan runs is a step of it (ops_control.cpp).
      "Loop", "Scan",
      // Sequences: lists of tensors, whatever their sizes (ops_sequence.cpp).
      "SequenceConstruct", "SequenceInsert", "SequenceErase", "SequenceAt", "SequenceLength", "ConcatFromSequence",
      // Gathers, and what a host step decides the sizes of (ops_data_dependent.cpp).
      "Gather", "GatherElements", "GatherND", "NonZero", "NonMaxSuppression", "Unique", "Compress", "TopK", "Shape", "Size", "Slice", "Split", "If",
      "ConstantOfShape", "RoiAlign", "Reshape", "Expand", "ScatterElements"};
  return ops.count(op) != 0;
}

}  // namespace

const Tensor& OpContext::in(size_t i) const {
  if (!has(i)) fail("input " + std::to_string(i) + " is required");
  const Tensor& t = inputs_[i]->tensor(where() + ": input " + std::to_string(i));
  if (t.is_symbolic() && !takes_symbolic(op()))
    fail("input " + std::to_string(i) + " has symbolic sizes " + shape_to_string(t.symbolic_shape()) + "; this operator needs static sizes (build the model for fixed sizes instead)");
  return t;
}

const std::vector<Tensor>& OpContext::items(size_t i) const {
  const Value& v = value(i);
  if (v.is_stacked() && !v.stacked_items().symbolic_shape()[0].is_static()) {
    std::string why = where() + ": input " + std::to_string(i) + " is a sequence whose length is decided as the plan runs (a loop's appended values); "
                      "only ConcatFromSequence and SequenceLength read it";
    if (RunTimeInputsScope::prepared()) throw NeedsRunTimeValue(why);  // the model is built for each input instead
    throw OnnxError(why);
  }
  return v.items(where() + ": input " + std::to_string(i));
}

namespace {
thread_local const RunTimeInputsScope::State* run_time_inputs = nullptr;
}  // namespace

RunTimeInputsScope::RunTimeInputsScope(std::set<uint64_t> input_ids, bool prepared)
    : state_{std::move(input_ids), prepared, {}, nullptr, {}}, outer_(run_time_inputs) {
  if (outer_) state_.options = outer_->options;
  run_time_inputs = &state_;
}

RunTimeInputsScope::RunTimeInputsScope(std::set<uint64_t> placeholder_ids) : outer_(run_time_inputs) {
  if (outer_) state_ = *outer_;
  else state_.prepared = true;
  state_.at_run_ids.insert(placeholder_ids.begin(), placeholder_ids.end());
  run_time_inputs = &state_;
}

PrepareOptions RunTimeInputsScope::options() { return run_time_inputs ? run_time_inputs->options : PrepareOptions{}; }

bool RunTimeInputsScope::prepared() { return run_time_inputs && run_time_inputs->prepared; }

RunTimeInputsScope::~RunTimeInputsScope() { run_time_inputs = outer_; }

bool RunTimeInputsScope::active() { return run_time_inputs != nullptr; }

namespace {

// Where a tensor's value is known: while the graph is built, from the model's inputs (when it
// runs), or from what a host step decides as the plan runs.
enum class Known { kAtBuild, kFromInputs, kAsThePlanRuns };

Known known(const Tensor& t) {
  if (static_size_values(t)) return Known::kAtBuild;  // sizes that are numbers, however they were computed
  Known k = Known::kAtBuild;
  // A variable no BIND gives a value (a size a host step decides) is known as the plan runs only.
  for (const UOpPtr& u : toposort(t.uop(), [](const UOp& n) { return n.op() != Ops::BIND; })) {
    if (u->op() == Ops::CUSTOM || u->op() == Ops::DEFINE_VAR) return Known::kAsThePlanRuns;
    if (run_time_inputs && run_time_inputs->at_run_ids.count(u->id())) return Known::kAsThePlanRuns;
    // A size bound to a variable of a prepared model (an input's dimension) is its largest value
    // now, and another as the plan runs.
    if (u->op() == Ops::BIND && run_time_inputs && run_time_inputs->prepared) k = Known::kFromInputs;
    if (run_time_inputs && run_time_inputs->ids.count(u->id())) k = Known::kFromInputs;
  }
  return k;
}

}  // namespace

bool OpContext::known_at_build(const Tensor& t) const { return known(t) == Known::kAtBuild; }

bool OpContext::decided_at_run(const Tensor& t) const {
  switch (known(t)) {
    case Known::kAtBuild: return false;
    case Known::kAsThePlanRuns: return true;
    case Known::kFromInputs: return !run_time_inputs || run_time_inputs->prepared;
  }
  return false;
}

void OpContext::require_build_time(const Tensor& t, const std::string& what) const {
  switch (known(t)) {
    case Known::kAtBuild: return;
    case Known::kAsThePlanRuns:  // no value until the plan runs, whether prepared or built for inputs
      fail(what + " depends on a size or value a data-dependent operator (NonZero, NonMaxSuppression, ...) decides as the plan runs; "
                  "this operator cannot use it to decide its graph");
    case Known::kFromInputs: break;
  }
  if (!run_time_inputs || run_time_inputs->prepared)
    throw NeedsRunTimeValue(where() + ": " + what + " depends on the model's inputs, so it is not known until run time; a model prepared "
                            "once cannot use it to decide its graph");
  if (run_time_inputs->reads) run_time_inputs->reads->push_back(t);
  if (settings::debug_level() >= 2)
    std::fprintf(stderr, "lathe: %s reads %s, computed from the model's inputs, while the graph is built: the graph holds for these inputs only\n",
                 where().c_str(), what.c_str());
}

std::string OpContext::size_name() const {
  // Kernels name it in their code: letters, digits and underscores, and a hash of the whole name
  // so that two outputs whose names differ only in other characters stay apart.
  std::string who = num_outputs() && !output_name(0).empty() ? output_name(0) : node_.name();
  std::string full = op() + "/" + who, name = op() + "_";
  for (char ch : who.substr(0, 40)) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  uint32_t h = 2166136261u;  // FNV-1a: the same on every machine and compiler
  for (char ch : full) h = (h ^ static_cast<uint8_t>(ch)) * 16777619u;
  char hash[16];
  std::snprintf(hash, sizeof hash, "_%08x", h);
  return own_size_name(name + hash);
}

SymShape OpContext::sizes(size_t i) const {
  if (has(i) && value(i).is_tensor())
    if (auto v = size_values_of(value(i).tensor())) return *v;
  std::vector<int64_t> v = ints(i);
  return SymShape(v.begin(), v.end());
}

std::vector<int64_t> OpContext::ints(size_t i) const {
  const Tensor& t = in(i);
  if (!t.dtype().is_int()) fail("input " + std::to_string(i) + " must be an integer tensor, not " + t.dtype().name());
  if (auto v = static_size_values(t)) return *v;
  require_build_time(t, "input " + std::to_string(i));
  return t.cast(dtypes::int64).to_vector<int64_t>();
}

std::vector<double> OpContext::doubles(size_t i) const {
  require_build_time(in(i), "input " + std::to_string(i));
  return in(i).cast(dtypes::float64).to_vector<double>();
}

int64_t OpContext::int_at0(size_t i) const {
  std::vector<int64_t> v = ints(i);
  if (v.empty()) fail("input " + std::to_string(i) + " is empty, a value is needed");
  return v[0];
}

double OpContext::double_at0(size_t i) const {
  std::vector<double> v = doubles(i);
  if (v.empty()) fail("input " + std::to_string(i) + " is empty, a value is needed");
  return v[0];
}

const ::onnx::AttributeProto* OpContext::attr(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t OpContext::attr_i(const std::string& name, int64_t fallback) const {
  const auto* a = attr(name);
  return a ? a->i() : fallback;
}

double OpContext::attr_f(const std::string& name, double fallback) const {
  const auto* a = attr(name);
  return a ? static_cast<double>(a->f()) : fallback;
}

std::string OpContext::attr_s(const std::string& name, const std::string& fallback) const {
  const auto* a = attr(name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> OpContext::attr_ints(const std::string& name, std::vector<int64_t> fallback) const {
  const auto* a = attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
}

std::vector<double> OpContext::attr_floats(const std::string& name) const {
  const auto* a = attr(name);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : std::vector<double>{};
}

Tensor OpContext::attr_t(const std::string& name) const {
  const auto* a = attr(name);
  if (!a || !a->has_t()) fail("attribute '" + name + "' (a tensor) is required");
  return constant_from_proto(a->t(), base_dir_);
}

const std::map<std::string, OpFn>& op_table() {
  static const std::map<std::string, OpFn> table = [] {
    std::map<std::string, OpFn> t;
    register_elementwise_ops(t);
    register_shape_ops(t);
    register_reduce_ops(t);
    register_nn_ops(t);
    register_rnn_ops(t);
    register_quant_ops(t);
    register_training_ops(t);
    register_signal_ops(t);
    register_sampling_ops(t);
    register_text_ops(t);
    register_random_ops(t);
    register_linalg_ops(t);
    register_data_dependent_ops(t);
    return t;
  }();
  return table;
}

const std::map<std::string, ValueOpFn>& value_op_table() {
  static const std::map<std::string, ValueOpFn> table = [] {
    std::map<std::string, ValueOpFn> t;
    register_control_ops(t);
    register_sequence_ops(t);
    return t;
  }();
  return table;
}

}  // namespace lathe::onnx::detail
