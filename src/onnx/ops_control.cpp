// Control flow. Where the conditions, trip counts and carried values are known while the graph is
// built, If picks a branch and Loop and Scan unroll their bodies (so shapes stay static and kernels
// fuse across iterations' boundaries). Where they are known only as the plan runs (a model
// prepared once, whose loops depend on its inputs), Loop and Scan are host steps that run their
// body, prepared once as a plan of its own (body_plan.hpp), once per iteration, and an If is one
// that runs the branch it picks, each branch such a plan.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include "onnx/body_plan.hpp"
#include "onnx/ops.hpp"
#include "onnx/size_values.hpp"
#include "support/settings.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Value>;

constexpr int64_t kMaxIterations = 100000;             // unrolled while the graph is built
constexpr int64_t kMaxRunIterations = int64_t{1} << 31;  // run by a step without a trip count

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

// Copies slice `index` along `axis` of the packed tensor at `whole` (sizes `shape`, `item` bytes an
// element) to the packed `slice`, or back when `to_slice` is false.
void copy_slice(uint8_t* whole, const Shape& shape, size_t axis, int64_t index, uint8_t* slice, size_t item, bool to_slice) {
  size_t outer = 1, inner = item;
  for (size_t d = 0; d < axis; ++d) outer *= static_cast<size_t>(shape[d]);
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= static_cast<size_t>(shape[d]);
  if (inner == 0) return;
  for (size_t o = 0; o < outer; ++o) {
    uint8_t* w = whole + (o * static_cast<size_t>(shape[axis]) + static_cast<size_t>(index)) * inner;
    uint8_t* p = slice + o * inner;
    if (to_slice) std::memcpy(p, w, inner);
    else std::memcpy(w, p, inner);
  }
}

SymShape without(const SymShape& s, size_t axis) {
  SymShape out = s;
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
  return out;
}

// Whether `t` is a size that is a variable's expression (x.shape[1] of a prepared model): its
// value is known only as the plan runs, at most its largest.
bool a_symbolic_size(const Tensor& t) {
  std::optional<SymShape> s = size_values_of(t);
  return s && std::any_of(s->begin(), s->end(), [](const SInt& d) { return !d.is_static(); });
}

// Whether the values a node decides with (`values`, its inputs) or its body reads are known only
// as the plan runs, or have sizes that are (so its body cannot be unrolled while the graph is built).
bool decided_as_it_runs(const OpContext& c, const V& values, const std::string& body) {
  for (const Value& v : values) {
    if (v.is_tensor() && (c.decided_at_run(v.tensor()) || v.tensor().is_symbolic() || a_symbolic_size(v.tensor()))) return true;
    if (v.is_stacked()) return true;  // a length only the plan knows
    if (v.is_sequence())
      for (const Tensor& t : v.items())
        if (c.decided_at_run(t) || t.is_symbolic()) return true;
  }
  return reads_run_time_values(c, body);
}

std::vector<Tensor> tensors_of(const OpContext& c, const V& values, const std::string& what) {
  std::vector<Tensor> out;
  for (const Value& v : values) {
    if (!v.is_tensor()) cannot_plan(c, what + " include a sequence or an empty optional");
    out.push_back(v.tensor());
  }
  return out;
}

// The body's output `k` must keep its input `slot`'s dtype and shape (a carried value or state).
void check_carried(const OpContext& c, const BodyPlan& body, size_t k, const Tensor& initial, const std::string& what) {
  if (body.output_dtype(k) != initial.dtype())
    c.fail(what + " is " + initial.dtype().name() + " going in and " + body.output_dtype(k).name() + " coming out of the body");
  SymShape out = body.output_shape(c, k);
  if (out != initial.symbolic_shape())
    cannot_plan(c, what + " changes shape across iterations (" + shape_to_string(initial.symbolic_shape()) + " to " + shape_to_string(out) + ")");
}

// Whether the body only appends to loop-carried value k: its input is read by one SequenceInsert
// with no position, whose result is the body's output for it and is read by nothing else (the way
// exporters collect a value per iteration). Such a value is stacked as the loop runs.
bool appends_only(const ::onnx::GraphProto& body, size_t k) {
  if (body.input_size() <= static_cast<int>(2 + k) || body.output_size() <= static_cast<int>(1 + k)) return false;
  const std::string& in = body.input(static_cast<int>(2 + k)).name();
  const std::string& out = body.output(static_cast<int>(1 + k)).name();
  int reads = 0;
  bool inserts = false;
  for (const auto& n : body.node()) {
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i) == out) return false;
      if (n.input(i) != in) continue;
      ++reads;
      inserts = n.op_type() == "SequenceInsert" && i == 0 && n.input_size() == 2 && n.output_size() == 1 && n.output(0) == out;
    }
    for (const auto& a : n.attribute()) {
      std::set<std::string> names;
      if (a.has_g()) names = names_read_from_outside(a.g());
      for (const auto& g : a.graphs())
        for (const std::string& name : names_read_from_outside(g)) names.insert(name);
      if (names.count(in) || names.count(out)) return false;
    }
  }
  int outputs = 0;
  for (const auto& o : body.output()) outputs += o.name() == out;
  return reads == 1 && inserts && outputs == 1;
}

// Loop as a step of the plan: the body a plan of its own, run while the trip count and the
// condition allow, its carried values handed from its outputs to its inputs between iterations
// (BodyPlan::carry: their memory swapped where the plan can);
// its scan outputs, and the values it appends to a carried sequence, stacked into memory sized
// for the trip count's largest value (a size's largest, or the count itself when known now).
V loop_step(const OpContext& c) {
  std::optional<int64_t> trips_now;  // the trip count, when known now
  int64_t most = std::numeric_limits<int64_t>::max();
  bool trips_in = false, cond_in = false;
  if (c.has(0)) {
    if (a_symbolic_size(c.in(0)) || c.decided_at_run(c.in(0))) {
      trips_in = true;
      if (std::optional<SymShape> size = size_values_of(c.in(0)); size && size->size() == 1) most = (*size)[0].max();
    } else {
      trips_now = c.int_at0(0);
      most = std::max<int64_t>(*trips_now, 0);
    }
  }
  std::optional<bool> cond_now;
  if (c.has(1)) {
    SymShape s = c.in(1).symbolic_shape();
    if (!std::all_of(s.begin(), s.end(), [](const SInt& d) { return d.is_static() && d.value() == 1; }))
      c.fail("a condition must hold one value, it has shape " + shape_to_string(s));
    if (c.decided_at_run(c.in(1))) cond_in = true;
    else cond_now = truth(c, c.in(1));
  }
  size_t n_carried = c.num_inputs() > 2 ? c.num_inputs() - 2 : 0;
  if (c.num_outputs() < n_carried) c.fail("fewer outputs than loop-carried values");
  size_t n_scan = c.num_outputs() - n_carried;
  const ::onnx::GraphProto& proto = c.graph_attr("body");
  std::vector<BodyPlan::Slot> slots{{dtypes::int64, {}}, {dtypes::bool_, {}}};
  std::vector<bool> appended(n_carried, false);
  for (size_t k = 0; k < n_carried; ++k) {
    const Value& v = c.value(2 + k);
    if (v.is_tensor()) {
      slots.push_back({v.tensor().dtype(), v.tensor().symbolic_shape()});
    } else if (v.is_sequence() && !v.is_stacked() && v.items().empty() && appends_only(proto, k)) {
      appended[k] = true;
      slots.push_back({v.dtype(), {}, v});
    } else {
      cannot_plan(c, "loop-carried value " + std::to_string(k) + " is an optional, or a sequence the body does more with than append to");
    }
  }
  auto body = std::make_shared<BodyPlan>(c, "body", slots);
  if (body->num_outputs() != 1 + n_carried + n_scan) c.fail("the body returns " + std::to_string(body->num_outputs()) + " values");
  if (body->output_dtype(0) != dtypes::bool_) c.fail("the body's condition is " + body->output_dtype(0).name() + ", not bool");
  // Stacked outputs (body output, step output): scan outputs and appended values.
  std::vector<std::pair<size_t, size_t>> stacked, carry;
  auto step = std::make_shared<HostStep>();
  step->name = c.where();
  for (size_t k = 0; k < c.num_outputs(); ++k) {
    size_t from = 1 + k;
    if (k < n_carried && !appended[k]) {
      if (body->output_is_one_item(from)) c.fail("loop-carried value " + std::to_string(k) + " goes in a tensor and comes out a sequence");
      const Tensor& initial = c.value(2 + k).tensor();
      check_carried(c, *body, from, initial, "loop-carried value " + std::to_string(k));
      step->outputs.push_back({initial.dtype(), initial.symbolic_shape()});
      carry.emplace_back(from, 2 + k);
      continue;
    }
    if (k < n_carried && !body->output_is_one_item(from)) c.fail("loop-carried sequence " + std::to_string(k) + " comes out of the body as no sequence of one more tensor");
    if (k >= n_carried && body->output_is_one_item(from)) cannot_plan(c, "scan output " + std::to_string(k - n_carried) + " is a sequence");
    stacked.emplace_back(from, k);
    step->outputs.push_back({body->output_dtype(from), body->output_shape(c, from)});  // its count put first below
  }
  if (!stacked.empty()) {
    if (most == std::numeric_limits<int64_t>::max())
      cannot_plan(c, "its scan outputs have no largest size (the trip count is known only at run time and has no bound)");
    int64_t bytes = 0;
    for (auto [from, to] : stacked) {
      int64_t n = body->output_dtype(from).itemsize();
      for (const SInt& d : step->outputs[to].shape) n *= d.max();
      bytes += n;
    }
    if (bytes && most > (int64_t{1} << 36) / bytes)
      cannot_plan(c, "its scan outputs for up to " + std::to_string(most) + " iterations would take more than 64 GiB");
    Variable trips(c.size_name(), 0, most);
    step->sizes.push_back(trips);
    for (auto [from, to] : stacked) step->outputs[to].shape.insert(step->outputs[to].shape.begin(), SInt(trips));
  }
  std::vector<Tensor> inputs;
  if (trips_in) inputs.push_back(c.in(0).cast(dtypes::int64).reshape(Shape{1}));
  if (cond_in) inputs.push_back(c.in(1).cast(dtypes::bool_).reshape(Shape{1}));
  std::vector<size_t> initial_at;  // each carried tensor's position among the step's inputs, by body input
  for (size_t k = 0; k < n_carried; ++k)
    if (!appended[k]) {
      initial_at.push_back(inputs.size());
      inputs.push_back(c.value(2 + k).tensor());
    }
  size_t first_captured = inputs.size();
  inputs.insert(inputs.end(), body->captured().begin(), body->captured().end());
  std::string where = c.where();
  // The function holds neither the step nor any tensor (the step owns it: no cycle keeps them).
  step->run = [body, trips_now, trips_in, cond_now, cond_in, n_carried, appended, carry, stacked, initial_at, first_captured,
               where](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    size_t at = 0;
    int64_t limit = trips_now ? *trips_now : trips_in ? in[at++].as<int64_t>()[0] : std::numeric_limits<int64_t>::max();
    bool cond = cond_now ? *cond_now : cond_in ? in[at++].as<bool>()[0] : true;
    std::vector<Shape> shapes{{}, {}};
    for (size_t k = 0, j = 0; k < n_carried; ++k) shapes.push_back(appended[k] ? Shape{} : in[initial_at[j++]].shape);
    body->start(shapes, std::vector<HostTensor>(in.begin() + static_cast<std::ptrdiff_t>(first_captured), in.end()));
    for (size_t j = 0; j < carry.size(); ++j)
      body->write_input(carry[j].second, in[initial_at[j]].data);
    int64_t i = 0;
    for (; i < limit && cond; ++i) {
      if (i >= kMaxRunIterations) throw Error(where + ": more than " + std::to_string(kMaxRunIterations) + " iterations (its condition never became false)");
      if (!stacked.empty() && i >= out[stacked[0].second].shape[0])
        throw Error(where + ": more than " + std::to_string(out[stacked[0].second].shape[0]) + " iterations, the most its scan outputs were given memory for");
      body->write_input(0, &i);
      body->write_input(1, &cond);
      body->run();
      body->read_output(0, &cond);
      for (auto [from, to] : stacked) {
        size_t n = body->output_bytes(from);
        body->read_output(from, static_cast<uint8_t*>(out[to].data) + static_cast<size_t>(i) * n);
      }
      body->carry(carry);
    }
    for (size_t j = 0; j < carry.size(); ++j) {
      size_t to = carry[j].first - 1;  // carried value k is output k
      body->read_input(carry[j].second, out[to].data);
    }
    return stacked.empty() ? std::vector<int64_t>{} : std::vector<int64_t>{i};
  };
  std::vector<Tensor> outs = host_step_outputs(step, inputs);
  V result;
  for (size_t k = 0; k < outs.size(); ++k) result.push_back(k < n_carried && appended[k] ? Value::stacked(outs[k]) : Value(outs[k]));
  return result;
}

// Scan as a step of the plan: the body a plan of its own, run once per slice of the scan inputs
// (each read along its axis and direction), its states carried and its scan outputs written into
// place along their axes. Opset 8's batch axis is a loop around the scan.
V scan_step(const OpContext& c, const std::vector<Tensor>& states, const std::vector<Tensor>& scans, bool batched) {
  size_t n_states = states.size(), n_scans = scans.size();
  std::vector<int64_t> in_axes = batched ? std::vector<int64_t>(n_scans, 0) : c.attr_ints("scan_input_axes", std::vector<int64_t>(n_scans, 0));
  std::vector<int64_t> in_dirs = c.attr_ints(c.opset() < 9 ? "directions" : "scan_input_directions", std::vector<int64_t>(n_scans, 0));
  if (c.num_outputs() < n_states) c.fail("fewer outputs than scan states");
  size_t n_out = c.num_outputs() - n_states;
  std::vector<int64_t> out_axes = c.attr_ints("scan_output_axes", std::vector<int64_t>(n_out, 0));
  std::vector<int64_t> out_dirs = c.attr_ints("scan_output_directions", std::vector<int64_t>(n_out, 0));
  if (in_axes.size() != n_scans || in_dirs.size() != n_scans || out_axes.size() != n_out || out_dirs.size() != n_out)
    c.fail("scan axes and directions do not match the numbers of scan inputs and outputs");
  // Each value as the body sees it: opset 8's batch axis taken off.
  auto per_batch = [&](const Tensor& t) { return batched ? without(t.symbolic_shape(), 0) : t.symbolic_shape(); };
  std::optional<SInt> length;
  std::vector<BodyPlan::Slot> slots;
  for (const Tensor& t : states) slots.push_back({t.dtype(), per_batch(t)});
  for (size_t k = 0; k < n_scans; ++k) {
    SymShape s = per_batch(scans[k]);
    in_axes[k] = axis_of(c, in_axes[k], static_cast<int64_t>(s.size()));
    SInt len = s[static_cast<size_t>(in_axes[k])];
    if (length && !(*length == len)) cannot_plan(c, "its scan inputs' lengths are different sizes (" + length->to_string() + ", " + len.to_string() + ")");
    length = len;
    slots.push_back({scans[k].dtype(), without(s, static_cast<size_t>(in_axes[k]))});
  }
  if (!length) c.fail("Scan needs at least one scan input");
  if (batched)
    for (const Tensor& t : states)
      if (t.ndim() < 1 || !(t.symbolic_shape()[0] == scans[0].symbolic_shape()[0])) c.fail("opset 8 states need the scan inputs' batch axis first");
  auto body = std::make_shared<BodyPlan>(c, "body", slots);
  for (size_t k = 0; k < body->num_outputs(); ++k)
    if (body->output_is_one_item(k)) cannot_plan(c, "its body returns a sequence as output " + std::to_string(k));
  if (body->num_outputs() != c.num_outputs())
    c.fail("the body returns " + std::to_string(body->num_outputs()) + " values, Scan has " + std::to_string(c.num_outputs()) + " outputs");
  for (size_t k = 0; k < n_states; ++k) {
    Tensor one = batched ? states[k].slice(0, 0, 1).squeeze(0) : states[k];
    check_carried(c, *body, k, one, "state " + std::to_string(k));
  }
  auto step = std::make_shared<HostStep>();
  step->name = c.where();
  for (const Tensor& t : states) step->outputs.push_back({t.dtype(), t.symbolic_shape()});
  for (size_t k = 0; k < n_out; ++k) {
    SymShape shape = body->output_shape(c, n_states + k);
    out_axes[k] = axis_of(c, out_axes[k], static_cast<int64_t>(shape.size()) + 1);
    shape.insert(shape.begin() + out_axes[k], *length);
    if (batched) shape.insert(shape.begin(), scans[0].symbolic_shape()[0]);
    step->outputs.push_back({body->output_dtype(n_states + k), shape});
  }
  std::vector<Tensor> inputs = states;
  inputs.insert(inputs.end(), scans.begin(), scans.end());
  inputs.insert(inputs.end(), body->captured().begin(), body->captured().end());
  std::string where = c.where();
  std::vector<size_t> item;  // each scan input's element size
  for (const Tensor& t : scans) item.push_back(static_cast<size_t>(t.dtype().itemsize()));
  // The function holds neither the step nor any tensor (the step owns it: no cycle keeps them).
  step->run = [body, batched, n_states, n_scans, n_out, in_axes, in_dirs, out_axes, out_dirs, where, item](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    auto drop_batch = [&](const Shape& s) { return batched ? Shape(s.begin() + 1, s.end()) : s; };
    int64_t batch = batched ? in[n_states].shape[0] : 1;
    Shape first = drop_batch(in[n_states].shape);
    int64_t steps = first[static_cast<size_t>(in_axes[0])];
    std::vector<Shape> shapes;
    for (size_t k = 0; k < n_states; ++k) shapes.push_back(drop_batch(in[k].shape));
    for (size_t k = 0; k < n_scans; ++k) {
      Shape s = drop_batch(in[n_states + k].shape);
      shapes.push_back(Shape(s.begin(), s.end()));
      shapes.back().erase(shapes.back().begin() + in_axes[k]);
    }
    body->start(shapes, std::vector<HostTensor>(in.begin() + static_cast<std::ptrdiff_t>(n_states + n_scans), in.end()));
    // Batch b's part of an input (packed at its sizes) or of an output (packed at this run's
    // sizes, at the front of memory sized for the largest).
    auto base = [&](const HostTensor& t, int64_t b, size_t part) { return static_cast<uint8_t*>(t.data) + static_cast<size_t>(b) * part; };
    auto in_part = [&](size_t k) { return static_cast<size_t>(in[k].numel() / batch) * static_cast<size_t>(in[k].dtype.itemsize()); };
    std::vector<std::pair<size_t, size_t>> carry;
    for (size_t k = 0; k < n_states; ++k) carry.emplace_back(k, k);
    std::vector<uint8_t> slice;  // one slice of a scan input or output, on the host
    for (int64_t b = 0; b < batch; ++b) {
      for (size_t k = 0; k < n_states; ++k)
        body->write_input(k, base(in[k], b, body->input_bytes(k)));
      for (int64_t t = 0; t < steps; ++t) {
        for (size_t k = 0; k < n_scans; ++k) {
          Shape s = drop_batch(in[n_states + k].shape);
          if (s[static_cast<size_t>(in_axes[k])] != steps) throw Error(where + ": scan inputs differ in length");
          slice.resize(body->input_bytes(n_states + k));
          copy_slice(base(in[n_states + k], b, in_part(n_states + k)), s, static_cast<size_t>(in_axes[k]), in_dirs[k] ? steps - 1 - t : t,
                     slice.data(), item[k], true);
          body->write_input(n_states + k, slice.data());
        }
        body->run();
        for (size_t k = 0; k < n_out; ++k) {
          Shape s = body->output_sizes(n_states + k);
          s.insert(s.begin() + out_axes[k], steps);
          slice.resize(body->output_bytes(n_states + k));
          body->read_output(n_states + k, slice.data());
          copy_slice(base(out[n_states + k], b, slice.size() * static_cast<size_t>(steps)), s, static_cast<size_t>(out_axes[k]), out_dirs[k] ? steps - 1 - t : t,
                     slice.data(), static_cast<size_t>(body->output_dtype(n_states + k).itemsize()), false);
        }
        body->carry(carry);
      }
      for (size_t k = 0; k < n_states; ++k)
        body->read_input(k, base(out[k], b, body->input_bytes(k)));
    }
    return std::vector<int64_t>{};
  };
  V result;
  for (Tensor& t : host_step_outputs(step, inputs)) result.emplace_back(std::move(t));
  return result;
}

V loop(const OpContext& c) {
  V decides;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has(i)) decides.push_back(c.value(i));
  if (decided_as_it_runs(c, decides, "body")) return loop_step(c);
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
  V decides = states;
  decides.insert(decides.end(), scans.begin(), scans.end());
  bool as_it_runs = decided_as_it_runs(c, decides, "body");
  if (c.opset() >= 9) return as_it_runs ? scan_step(c, tensors_of(c, states, "its states"), scans, false) : scan_once(c, states, scans, c.num_outputs());
  for (const Tensor& t : scans)
    if (t.ndim() < 2) c.fail("opset 8 scan inputs need a batch axis and a sequence axis");
  if (c.has(0)) {
    if (c.decided_at_run(c.in(0))) cannot_plan(c, "its sequence_lens are known only at run time");
    SInt length = scans[0].symbolic_shape()[1];
    for (int64_t len : c.ints(0))
      if (!(SInt(len) == length)) c.fail("sequence_lens shorter than the sequence are not supported");
  }
  if (as_it_runs) return scan_step(c, tensors_of(c, states, "its states"), scans, true);
  int64_t batch = scans[0].shape()[0];
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

// The shape of an output that is `a` in one branch and `b` in the other (a size none where the
// branch decides it as it runs, `largest` at most): a size they share is kept; any other becomes
// a size `step` decides (its axis added to `differing`).
SymShape either_shape(const OpContext& c, const std::vector<std::optional<SInt>>& a, const std::vector<std::optional<SInt>>& b,
                      const std::vector<int64_t>& largest, HostStep& step, std::vector<size_t>& differing) {
  SymShape out;
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] && b[d] && *a[d] == *b[d]) {
      out.push_back(*a[d]);
      continue;
    }
    Variable v(c.size_name(), 0, largest[d]);  // names repeated in one graph are numbered
    step.sizes.push_back(v);
    out.emplace_back(v);
    differing.push_back(d);
  }
  return out;
}

// If as a step of the plan: each branch a plan of its own, and each run runs the one its
// condition picks and copies its outputs out; an output whose sizes differ between the branches
// has those sizes decided by the run.
V if_step(const OpContext& c, const Tensor& cond) {
  auto yes = std::make_shared<BodyPlan>(c, "then_branch", std::vector<BodyPlan::Slot>{});
  auto no = std::make_shared<BodyPlan>(c, "else_branch", std::vector<BodyPlan::Slot>{});
  if (yes->num_outputs() != no->num_outputs())
    c.fail("the branches return " + std::to_string(yes->num_outputs()) + " and " + std::to_string(no->num_outputs()) + " values");
  if (yes->num_outputs() == 0) c.fail("the branches return no values");
  for (size_t k = 0; k < yes->num_outputs(); ++k)
    if (yes->output_is_one_item(k) || no->output_is_one_item(k)) cannot_plan(c, "a branch returns a sequence as output " + std::to_string(k));
  auto step = std::make_shared<HostStep>();
  step->name = c.where();
  std::vector<std::vector<size_t>> differing(yes->num_outputs());  // per output, the axes whose sizes the run decides
  for (size_t k = 0; k < yes->num_outputs(); ++k) {
    std::string which = "output " + std::to_string(k);
    if (yes->output_dtype(k) != no->output_dtype(k))
      c.fail(which + " is " + yes->output_dtype(k).name() + " in one branch and " + no->output_dtype(k).name() + " in the other");
    size_t rank = yes->output_rank(k);
    if (rank != no->output_rank(k)) c.fail(which + " has rank " + std::to_string(rank) + " in one branch and " + std::to_string(no->output_rank(k)) + " in the other");
    std::vector<std::optional<SInt>> a, b;
    std::vector<int64_t> largest;
    for (size_t d = 0; d < rank; ++d) {
      a.push_back(yes->output_size(k, d));
      b.push_back(no->output_size(k, d));
      largest.push_back(std::max(yes->output_largest(k, d), no->output_largest(k, d)));
    }
    step->outputs.push_back({yes->output_dtype(k), either_shape(c, a, b, largest, *step, differing[k])});
  }
  std::vector<Tensor> inputs{cond.reshape(Shape{1})};
  inputs.insert(inputs.end(), yes->captured().begin(), yes->captured().end());
  inputs.insert(inputs.end(), no->captured().begin(), no->captured().end());
  size_t n_yes = yes->captured().size();
  step->run = [yes, no, n_yes, differing](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    bool pick = in[0].as<bool>()[0];
    BodyPlan& branch = pick ? *yes : *no;
    auto from = in.begin() + (pick ? 1 : 1 + static_cast<std::ptrdiff_t>(n_yes));
    branch.start({}, std::vector<HostTensor>(from, from + static_cast<std::ptrdiff_t>(branch.captured().size())));
    branch.run();
    std::vector<int64_t> sizes;
    for (size_t k = 0; k < out.size(); ++k) {
      branch.read_output(k, out[k].data);
      Shape s = branch.output_sizes(k);
      for (size_t d : differing[k]) sizes.push_back(s[d]);
    }
    return sizes;
  };
  V result;
  for (Tensor& t : host_step_outputs(step, inputs)) result.emplace_back(std::move(t));
  return result;
}

// One output of an If whose branches were both built into the graph: `yes` where the condition
// holds, else `no`. Of one shape, a select in the kernels; of sizes that differ, a host step
// copies the chosen one and sets the sizes that differ.
Tensor chosen(const OpContext& c, const Tensor& cond, const Tensor& yes, const Tensor& no, size_t k) {
  std::string which = "output " + std::to_string(k);
  if (yes.dtype() != no.dtype()) c.fail(which + " is " + yes.dtype().name() + " in one branch and " + no.dtype().name() + " in the other");
  SymShape a = yes.symbolic_shape(), b = no.symbolic_shape();
  if (a.size() != b.size()) c.fail(which + " has rank " + std::to_string(a.size()) + " in one branch and " + std::to_string(b.size()) + " in the other");
  if (a == b) return cond.where(yes, no);
  auto step = std::make_shared<HostStep>();
  step->name = c.where();
  std::vector<size_t> differing;
  std::vector<int64_t> largest;
  for (size_t d = 0; d < a.size(); ++d) largest.push_back(std::max(a[d].max(), b[d].max()));
  step->outputs = {{yes.dtype(), either_shape(c, {a.begin(), a.end()}, {b.begin(), b.end()}, largest, *step, differing)}};
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
// (computed from the inputs or from a data-dependent size) makes the If a step that runs the
// branch it picks, each branch prepared once as a plan of its own. A branch that cannot be a plan
// of its own (it returns a sequence, or reads a size that is an expression of sizes) is built into
// the graph with the other, both computed each run and each output picked as the plan runs.
V if_op(const OpContext& c) {
  const Tensor& cond_in = c.in(0);
  // Known now (or computable now, for a model built for its inputs, which notes the read).
  if (!c.decided_at_run(cond_in)) return c.run_graph(truth(c, cond_in) ? "then_branch" : "else_branch", {});
  if (cond_in.numel() != 1) c.fail("a condition must hold one value, it has shape " + shape_to_string(cond_in.symbolic_shape()));
  Tensor cond = cond_in.cast(dtypes::bool_).reshape(Shape{});
  try {
    return if_step(c, cond);
  } catch (const NeedsRunTimeValue& e) {
    if (settings::debug_level() >= 2) std::fprintf(stderr, "lathe: %s builds both branches into the graph: %s\n", c.where().c_str(), e.what());
  } catch (const OnnxError& e) {
    if (settings::debug_level() >= 2) std::fprintf(stderr, "lathe: %s builds both branches into the graph: %s\n", c.where().c_str(), e.what());
  }
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
