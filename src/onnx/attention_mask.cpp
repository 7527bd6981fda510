#include "onnx/attention_mask.hpp"

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <unordered_map>

#include "lathe/error.hpp"

namespace lathe::onnx::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Operators whose output is not the same on every run from the same inputs.
const std::set<std::string>& random_ops() {
  static const std::set<std::string> ops{"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Bernoulli", "Multinomial"};
  return ops;
}

// Whether a value is the same whatever the model's inputs: an initializer, a Constant, a Shape or
// Size of a tensor with a static shape, or what nodes make from those alone.
class BuildTimeConstants {
 public:
  BuildTimeConstants(const ::onnx::GraphProto& g, const std::map<std::string, Value>& env) : g_(g), env_(env) {
    for (const auto& t : g.initializer()) known_[t.name()] = true;
    // An input is what it is bound to: the caller's value, or (a main graph's input that names an
    // initializer, as keep_initializers_as_inputs exports write) the initializer's constant.
    for (const auto& in : g.input()) {
      auto v = env.find(in.name());
      known_[in.name()] = v != env.end() && v->second.is_tensor() && v->second.tensor().is_realized() && v->second.tensor().buffer().is_constant();
    }
    for (int i = 0; i < g.node_size(); ++i)
      for (const std::string& out : g.node(i).output()) producer_[out] = i;
  }

  bool operator()(const std::string& name) {
    if (auto k = known_.find(name); k != known_.end()) return k->second;
    known_[name] = false;  // a cycle (none in a valid graph) reads as not constant
    auto p = producer_.find(name);
    bool constant = false;
    if (p != producer_.end()) {
      const ::onnx::NodeProto& node = g_.node(p->second);
      if (node.op_type() == "Shape" || node.op_type() == "Size") {
        auto in = node.input_size() > 0 ? env_.find(node.input(0)) : env_.end();
        constant = in != env_.end() && in->second.is_tensor() && !in->second.tensor().is_symbolic();
      } else if (!random_ops().count(node.op_type())) {
        constant = true;
        for (const auto& a : node.attribute()) constant = constant && !a.has_g() && a.graphs_size() == 0;  // no subgraph's outer reads
        for (const std::string& in : node.input()) constant = constant && (in.empty() || (*this)(in));
      }
    }
    return known_[name] = constant;
  }

 private:
  const ::onnx::GraphProto& g_;
  const std::map<std::string, Value>& env_;
  std::unordered_map<std::string, int> producer_;
  std::unordered_map<std::string, bool> known_;
};

}  // namespace

std::optional<SeenKeys> seen_keys(const ::onnx::GraphProto& g, const AttentionChain& chain, const std::map<std::string, Value>& env) {
  BuildTimeConstants constant(g, env);
  auto tensor = [&](const std::string& name) -> const Tensor* {
    auto it = env.find(name);
    return it != env.end() && it->second.is_tensor() ? &it->second.tensor() : nullptr;
  };
  const Tensor* scores = tensor(g.node(chain.softmax).input(0));
  if (!scores || scores->is_symbolic() || scores->ndim() < 2 || !scores->dtype().is_float()) return std::nullopt;
  // Where the chain's value is -inf whatever the scores; none until a mask puts some there.
  std::optional<Tensor> shut;
  std::string chain_value = g.node(chain.nodes.front()).output(0);
  for (auto it = chain.nodes.begin() + 1; it != chain.nodes.end() && *it != chain.softmax; ++it) {
    const ::onnx::NodeProto& node = g.node(*it);
    int at = -1;  // which input is the chain's value
    for (int i = 0; i < node.input_size() && at < 0; ++i)
      if (node.input(i) == chain_value) at = i;
    chain_value = node.output(0);
    const std::string& op = node.op_type();
    // The other operand of a binary node, or of Where's condition and branches, when it is known
    // at build time (the callers check a float type where they need one).
    auto other = [&](int i) -> const Tensor* {
      const Tensor* t = i < node.input_size() ? tensor(node.input(i)) : nullptr;
      return t && !t->is_symbolic() && constant(node.input(i)) ? t : nullptr;
    };
    if (op == "Where") {
      const Tensor* cond = other(0);
      const Tensor* branch = at == 1 ? other(2) : at == 2 ? other(1) : nullptr;
      if (!cond || !branch || !branch->dtype().is_float()) {
        if (shut) return std::nullopt;  // the chain's -inf may be replaced by anything
        continue;
      }
      Tensor passes = at == 1 ? *cond : cond->logical_not();  // where the chain's value goes on
      Tensor here = passes.logical_not().logical_and(*branch == -kInf);
      shut = shut ? passes.logical_and(*shut).logical_or(here) : here;
    } else if (op == "Add" || op == "Sub") {
      const Tensor* m = other(at == 0 ? 1 : 0);
      if (!m || !m->dtype().is_float() || at < 0) {
        if (shut) return std::nullopt;
        continue;
      }
      if (op == "Sub" && at == 1) {  // m - x: the chain's -inf becomes +inf
        if (shut) return std::nullopt;
        shut = *m == -kInf;
        continue;
      }
      // -inf + m stays -inf unless m is +inf or NaN (the comparison is false for NaN).
      Tensor keeps = op == "Add" ? *m < kInf : *m > -kInf;
      Tensor here = op == "Add" ? *m == -kInf : *m == kInf;
      shut = shut ? shut->logical_and(keeps).logical_or(here) : here;
    } else if (op == "Mul" || op == "Div") {
      if (!shut) continue;  // a scale before the mask
      const Tensor* m = other(at == 0 ? 1 : 0);
      if (!m || (op == "Div" && at != 0)) return std::nullopt;
      Tensor keeps = op == "Mul" ? *m > 0.0 : (*m > 0.0).logical_and(*m < kInf);
      shut = shut->logical_and(keeps);
    } else if (op == "Cast") {
      const Tensor* out = tensor(node.output(0));
      if (shut && (!out || !out->dtype().is_float())) return std::nullopt;
    } else if (shut) {
      return std::nullopt;  // an operator this does not follow
    }
  }
  if (!shut) return std::nullopt;
  // Over every batch and head: which keys each query sees, then the first and the end of them
  // (a vector per query, not the queries x keys flags: those grow with the square of the sequence).
  // The mask is reduced over the lead axes it has, computed once, and scanned here per query.
  int64_t rank = scores->ndim(), queries = scores->shape()[static_cast<size_t>(rank - 2)], keys = scores->shape().back();
  Tensor s = *shut;
  if (s.ndim() > rank) return std::nullopt;
  Shape ones(static_cast<size_t>(rank - s.ndim()), 1);
  ones.insert(ones.end(), s.shape().begin(), s.shape().end());
  s = s.reshape(ones);
  std::vector<int64_t> lead;
  for (int64_t a = 0; a + 2 < rank; ++a) lead.push_back(a);
  if (!lead.empty()) s = s.all(lead);
  int64_t rows = s.shape()[static_cast<size_t>(s.ndim() - 2)], cols = s.shape().back();  // each 1 (broadcast) or whole
  return seen_keys_of(s.reshape({rows, cols}).cast(dtypes::uint8).to_vector<uint8_t>(), rows, cols, queries, keys);
}

}  // namespace lathe::onnx::detail
