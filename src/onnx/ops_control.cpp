// Control flow: If picks a branch and Loop unrolls its body, deciding on conditions computed at
// import time (so shapes stay static and kernels fuse across iterations' boundaries).
#include <limits>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Value>;

constexpr int64_t kMaxIterations = 100000;

bool truth(const Tensor& t) { return t.cast(dtypes::bool_).reshape(Shape{}).item<bool>(); }

// Computes a carried value now, so each iteration's graph stays small.
Value realized(const Value& v) {
  if (v.is_tensor()) return Tensor(v.tensor()).realize();
  if (!v.is_sequence()) return v;
  std::vector<Tensor> items = v.items();
  for (Tensor& t : items) t.realize();
  return Value::sequence(std::move(items), v.dtype());
}

V loop(const OpContext& c) {
  int64_t max_trips = c.has(0) ? c.ints(0).at(0) : std::numeric_limits<int64_t>::max();
  bool cond = c.has(1) ? truth(c.in(1)) : true;
  V carried;
  for (size_t i = 2; i < c.num_inputs(); ++i) carried.push_back(c.value(i));
  size_t n_scan = c.num_outputs() - carried.size();
  std::vector<std::vector<Tensor>> scans(n_scan);
  int64_t i = 0;
  for (; i < max_trips && cond; ++i) {
    if (i >= kMaxIterations) c.fail("more than " + std::to_string(kMaxIterations) + " iterations");
    V in{Tensor::full({}, i, dtypes::int64), Tensor::full({}, cond, dtypes::bool_)};
    in.insert(in.end(), carried.begin(), carried.end());
    V out = c.run_graph("body", in);
    if (out.size() != 1 + carried.size() + n_scan) c.fail("the body returns " + std::to_string(out.size()) + " values");
    cond = truth(out[0].tensor(c.where() + ": the body's condition"));
    for (size_t k = 0; k < carried.size(); ++k) carried[k] = realized(out[1 + k]);
    for (size_t k = 0; k < n_scan; ++k) scans[k].push_back(out[1 + carried.size() + k].tensor(c.where() + ": a scan output").unsqueeze(0));
  }
  V result = carried;
  for (auto& s : scans) {
    if (s.empty()) c.fail("a scan output of a loop that ran no iteration has no shape");
    result.emplace_back(Tensor::cat(s, 0));
  }
  return result;
}

}  // namespace

void register_control_ops(std::map<std::string, ValueOpFn>& t) {
  t["If"] = [](const OpContext& c) { return c.run_graph(truth(c.in(0)) ? "then_branch" : "else_branch", {}); };
  t["Loop"] = loop;
}

}  // namespace lathe::onnx::detail
