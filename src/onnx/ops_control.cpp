// Control flow: If picks a branch and Loop unrolls its body, deciding on conditions computed at
// import time (so shapes stay static and kernels fuse across iterations' boundaries); an If whose
// condition is known only at run time picks as the plan runs.
#include <algorithm>
#include <cstring>
#include <limits>

#include "onnx/ops.hpp"
#include "onnx/size_values.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Value>;

constexpr int64_t kMaxIterations = 100000;

bool truth(const OpContext& c, const Tensor& t) {
  if (auto v = static_size_values(t); v && v->size() == 1) return (*v)[0] != 0;  // decided by sizes alone
  c.require_build_time(t, "the condition");
  if (t.numel() != 1) c.fail("a condition must hold one value, it has shape " + shape_to_string(t.shape()));
  return t.cast(dtypes::bool_).reshape(Shape{}).item<bool>();
}

// Computes a carried value now, so each iteration's graph stays small.
Value realized(const OpContext& c, const Value& v) {
  if (v.is_tensor()) {
    if (auto known = static_size_values(v.tensor()))  // sizes known as numbers: no plan to run
      return Tensor::from_vector(*known, v.tensor().shape()).cast(v.tensor().dtype()).realize();
    c.require_build_time(v.tensor(), "a value carried between iterations");
    return Tensor(v.tensor()).realize();
  }
  if (!v.is_sequence()) return v;
  std::vector<Tensor> items = v.items();
  for (Tensor& t : items) {
    c.require_build_time(t, "a value carried between iterations");
    t.realize();
  }
  return Value::sequence(std::move(items), v.dtype());
}

V loop(const OpContext& c) {
  int64_t max_trips = c.has(0) ? c.int_at0(0) : std::numeric_limits<int64_t>::max();
  bool cond = c.has(1) ? truth(c, c.in(1)) : true;
  V carried;
  for (size_t i = 2; i < c.num_inputs(); ++i) carried.push_back(c.value(i));
  if (c.num_outputs() < carried.size()) c.fail("fewer outputs than loop-carried values");
  size_t n_scan = c.num_outputs() - carried.size();
  std::vector<std::vector<Tensor>> scans(n_scan);
  int64_t i = 0;
  for (; i < max_trips && cond; ++i) {
    if (i >= kMaxIterations) c.fail("more than " + std::to_string(kMaxIterations) + " iterations");
    V in{Tensor::full({}, i, dtypes::int64), Tensor::full({}, cond, dtypes::bool_)};
    in.insert(in.end(), carried.begin(), carried.end());
    V out = c.run_graph("body", in);
    if (out.size() != 1 + carried.size() + n_scan) c.fail("the body returns " + std::to_string(out.size()) + " values");
    cond = truth(c, out[0].tensor(c.where() + ": the body's condition"));
    for (size_t k = 0; k < carried.size(); ++k) carried[k] = realized(c, out[1 + k]);
    for (size_t k = 0; k < n_scan; ++k) scans[k].push_back(out[1 + carried.size() + k].tensor(c.where() + ": a scan output").unsqueeze(0));
  }
  V result = carried;
  for (auto& s : scans) {
    if (s.empty()) c.fail("a scan output of a loop that ran no iteration has no shape");
    result.emplace_back(Tensor::cat(s, 0));
  }
  return result;
}

// One Scan over `states` and `scans` (each scanned along its axis): the body maps (states, one
// slice of each scan input) to (new states, one slice of each scan output).
V scan_once(const OpContext& c, V states, const std::vector<Tensor>& scans, size_t n_outputs) {
  std::vector<int64_t> in_axes = c.attr_ints("scan_input_axes", std::vector<int64_t>(scans.size(), 0));
  // Opset 8 calls the input directions `directions`.
  std::vector<int64_t> in_dirs = c.attr_ints(c.opset() < 9 ? "directions" : "scan_input_directions", std::vector<int64_t>(scans.size(), 0));
  if (n_outputs < states.size()) c.fail("fewer outputs than scan states");
  size_t n_scan_out = n_outputs - states.size();
  std::vector<int64_t> out_axes = c.attr_ints("scan_output_axes", std::vector<int64_t>(n_scan_out, 0));
  std::vector<int64_t> out_dirs = c.attr_ints("scan_output_directions", std::vector<int64_t>(n_scan_out, 0));
  if (in_axes.size() != scans.size() || in_dirs.size() != scans.size() || out_axes.size() != n_scan_out || out_dirs.size() != n_scan_out)
    c.fail("scan axes and directions do not match the numbers of scan inputs and outputs");
  int64_t steps = -1;
  for (size_t k = 0; k < scans.size(); ++k) {
    in_axes[k] = axis_of(c, in_axes[k], scans[k].ndim());
    int64_t len = scans[k].shape()[in_axes[k]];
    if (steps >= 0 && len != steps) c.fail("scan inputs differ in length");
    steps = len;
  }
  if (steps < 0) c.fail("Scan needs at least one scan input");
  std::vector<std::vector<Tensor>> outs(n_scan_out);
  for (int64_t i = 0; i < steps; ++i) {
    V in = states;
    for (size_t k = 0; k < scans.size(); ++k) {
      int64_t t = in_dirs[k] ? steps - 1 - i : i;
      in.emplace_back(scans[k].slice(in_axes[k], t, t + 1).squeeze(in_axes[k]));
    }
    V out = c.run_graph("body", in);
    if (out.size() != n_outputs) c.fail("the body returns " + std::to_string(out.size()) + " values, Scan has " + std::to_string(n_outputs) + " outputs");
    for (size_t k = 0; k < states.size(); ++k) states[k] = realized(c, out[k]);
    for (size_t k = 0; k < n_scan_out; ++k) outs[k].push_back(out[states.size() + k].tensor(c.where() + ": a scan output"));
  }
  V result = states;
  for (size_t k = 0; k < n_scan_out; ++k) {
    if (outs[k].empty()) c.fail("a scan output of a scan with no steps has no shape");
    if (out_dirs[k]) std::reverse(outs[k].begin(), outs[k].end());
    result.emplace_back(Tensor::stack(outs[k], axis_of(c, out_axes[k], outs[k][0].ndim() + 1)));
  }
  return result;
}

// Scan: opset 9 and later scan the inputs directly; opset 8 has a batch axis first on every
// input and output (and an optional sequence_lens, which must be the full length).
V scan(const OpContext& c) {
  int64_t n_scan = c.attr_i("num_scan_inputs", 0);
  size_t first = c.opset() < 9 ? 1 : 0;
  if (n_scan <= 0 || static_cast<size_t>(n_scan) + first > c.num_inputs()) c.fail("num_scan_inputs does not fit the inputs");
  size_t n_states = c.num_inputs() - first - static_cast<size_t>(n_scan);
  V states;
  std::vector<Tensor> scans;
  for (size_t i = first; i < first + n_states; ++i) states.push_back(c.value(i));
  for (size_t i = first + n_states; i < c.num_inputs(); ++i) scans.push_back(c.in(i));
  if (c.opset() >= 9) return scan_once(c, states, scans, c.num_outputs());
  for (const Tensor& t : scans)
    if (t.ndim() < 2) c.fail("opset 8 scan inputs need a batch axis and a sequence axis");
  int64_t batch = scans[0].shape()[0];
  if (c.has(0))
    for (int64_t len : c.ints(0))
      if (len != scans[0].shape()[1]) c.fail("sequence_lens shorter than the sequence are not supported");
  std::vector<V> per_batch;
  for (int64_t b = 0; b < batch; ++b) {
    V st;
    for (const Value& v : states) st.emplace_back(v.tensor(c.where() + ": a state").slice(0, b, b + 1).squeeze(0));
    std::vector<Tensor> sc;
    for (const Tensor& t : scans) sc.push_back(t.slice(0, b, b + 1).squeeze(0));
    per_batch.push_back(scan_once(c, st, sc, c.num_outputs()));
  }
  V result;
  for (size_t k = 0; k < c.num_outputs(); ++k) {
    std::vector<Tensor> parts;
    for (const V& r : per_batch) parts.push_back(r[k].tensor(c.where() + ": an output"));
    result.emplace_back(Tensor::stack(parts, 0));
  }
  return result;
}

// One output of an If whose condition is known only at run time: `yes` where it holds, else `no`.
// Of one shape, a select in the kernels; of sizes that differ, a host step copies the chosen one
// and sets the sizes that differ.
Tensor chosen(const OpContext& c, const Tensor& cond, const Tensor& yes, const Tensor& no, size_t k) {
  std::string which = "output " + std::to_string(k);
  if (yes.dtype() != no.dtype()) c.fail(which + " is " + yes.dtype().name() + " in one branch and " + no.dtype().name() + " in the other");
  SymShape a = yes.symbolic_shape(), b = no.symbolic_shape();
  if (a.size() != b.size()) c.fail(which + " has rank " + std::to_string(a.size()) + " in one branch and " + std::to_string(b.size()) + " in the other");
  bool same = true;
  for (size_t d = 0; d < a.size(); ++d) same = same && a[d] == b[d];
  if (same) return cond.where(yes, no);
  auto step = std::make_shared<HostStep>();
  step->name = c.where();
  SymShape out = a;
  std::vector<size_t> differing;
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] == b[d]) continue;
    Variable v(c.size_name(), 0, std::max(a[d].max(), b[d].max()));  // names repeated in one graph are numbered
    step->sizes.push_back(v);
    out[d] = v;
    differing.push_back(d);
  }
  step->outputs = {{yes.dtype(), out}};
  step->run = [differing](const std::vector<HostTensor>& in, const std::vector<HostTensor>& o) {
    const HostTensor& pick = in[0].as<bool>()[0] ? in[1] : in[2];
    size_t bytes = static_cast<size_t>(pick.numel()) * static_cast<size_t>(pick.dtype.itemsize());
    if (bytes) std::memcpy(o[0].data, pick.data, bytes);
    std::vector<int64_t> sizes;
    for (size_t d : differing) sizes.push_back(pick.shape[d]);
    return sizes;
  };
  return host_step_outputs(step, {cond.reshape(Shape{1}), yes, no})[0];
}

// If: a condition known while the graph is built picks one branch. One known only at run time
// (computed from the inputs or from a data-dependent size) builds both branches and picks each
// output as the plan runs: both are computed every run (a branch here is the small tail of a
// model, as a detector's empty-result case), and nothing is built again.
V if_op(const OpContext& c) {
  const Tensor& cond_in = c.in(0);
  if (c.known_at_build(cond_in)) return c.run_graph(truth(c, cond_in) ? "then_branch" : "else_branch", {});
  if (cond_in.numel() != 1) c.fail("a condition must hold one value, it has shape " + shape_to_string(cond_in.symbolic_shape()));
  Tensor cond = cond_in.cast(dtypes::bool_).reshape(Shape{});
  V yes = c.run_graph("then_branch", {}), no = c.run_graph("else_branch", {});
  if (yes.size() != no.size()) c.fail("the branches return " + std::to_string(yes.size()) + " and " + std::to_string(no.size()) + " values");
  // Sequences and optionals are chosen while the graph is built (for a model built for its inputs).
  for (size_t k = 0; k < yes.size(); ++k)
    if (!yes[k].is_tensor() || !no[k].is_tensor()) return truth(c, cond_in) ? yes : no;
  V out;
  for (size_t k = 0; k < yes.size(); ++k) out.emplace_back(chosen(c, cond, yes[k].tensor(), no[k].tensor(), k));
  return out;
}

}  // namespace

void register_control_ops(std::map<std::string, ValueOpFn>& t) {
  t["If"] = if_op;
  t["Loop"] = loop;
  t["Scan"] = scan;
}

}  // namespace lathe::onnx::detail
