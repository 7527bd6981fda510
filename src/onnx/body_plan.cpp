#include "onnx/body_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>

#include "ir/eval.hpp"
#include "ir/substitute.hpp"
#include "ir/toposort.hpp"
#include "onnx/size_values.hpp"
#include "support/settings.hpp"

namespace lathe::onnx::detail {
namespace {

// The names graph `g` reads that it does not define (its inputs, initializers and nodes' outputs
// are its own), its subgraphs' included: what it takes from the graphs around it.
void free_names(const ::onnx::GraphProto& g, std::set<std::string>& out) {
  std::set<std::string> own;
  for (const auto& v : g.input()) own.insert(v.name());
  for (const auto& t : g.initializer()) own.insert(t.name());
  for (const auto& n : g.node())
    for (const std::string& o : n.output()) own.insert(o);
  std::set<std::string> read;
  for (const auto& n : g.node()) {
    for (const std::string& i : n.input()) read.insert(i);
    for (const auto& a : n.attribute()) {
      if (a.has_g()) free_names(a.g(), read);
      for (const auto& sub : a.graphs()) free_names(sub, read);
    }
  }
  for (const std::string& name : read)
    if (!name.empty() && !own.count(name)) out.insert(name);
}

// The variable a size is, when it is one variable (bound or not), not a number or an expression.
std::optional<VarArg> bare_variable(const SInt& d) {
  if (d.is_static()) return std::nullopt;
  UOpPtr u = d.uop();
  if (u->op() == Ops::BIND) u = u->src(0);
  if (u->op() != Ops::DEFINE_VAR) return std::nullopt;
  return u->arg_as<VarArg>();
}

size_t bytes_of(DType dtype, const Shape& shape) {
  size_t n = static_cast<size_t>(dtype.itemsize());
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

}  // namespace

std::set<std::string> names_read_from_outside(const ::onnx::GraphProto& g) {
  std::set<std::string> names;
  free_names(g, names);
  return names;
}

bool reads_run_time_values(const OpContext& c, const std::string& graph) {
  for (const std::string& name : names_read_from_outside(c.graph_attr(graph)))
    if (const Value* v = c.scope_value(name); v && v->is_tensor() && c.decided_at_run(v->tensor())) return true;
  return false;
}

void cannot_plan(const OpContext& c, const std::string& why) {
  if (RunTimeInputsScope::prepared())
    throw NeedsRunTimeValue(c.where() + ": " + why + "; a model prepared once cannot run it as a step of its plan");
  c.fail(why + "; it cannot run as a step of the plan");
}

BodyPlan::BodyPlan(const OpContext& c, const std::string& graph, const std::vector<Slot>& inputs) : where_(c.where() + " " + graph) {
  // The placeholders' sizes: numbers, and one body variable per variable outside.
  std::unordered_map<std::string, Variable> inner;
  auto body_shape = [&](const SymShape& outer, const std::string& what) {
    SymShape s;
    for (const SInt& d : outer) {
      if (d.is_static()) {
        s.push_back(d);
        continue;
      }
      std::optional<VarArg> v = bare_variable(d);
      if (!v) cannot_plan(c, what + " has size " + d.to_string() + ", an expression of sizes (a body plan takes numbers and variables)");
      auto it = inner.try_emplace(v->name, v->name, v->min, v->max).first;
      outer_.insert_or_assign(v->name, d);
      ranges_[v->name] = {v->min, v->max};
      s.push_back(it->second.bind(v->max));
      inner_.insert_or_assign(v->name, s.back());
    }
    return s;
  };
  std::vector<Value> body_inputs;
  std::set<uint64_t> ids;
  auto placeholder = [&](DType dtype, const SymShape& outer, const std::string& what) {
    SymShape s = body_shape(outer, what);
    Shape largest;
    for (const SInt& d : s) largest.push_back(d.max());
    Buffer b(dtype, bytes_of(dtype, largest) / static_cast<size_t>(dtype.itemsize()));
    b.ensure_allocated();
    Tensor t = Tensor::from_buffer(b, s);
    for (const UOpPtr& u : toposort(t.uop()))
      if (u->op() == Ops::BUFFER) ids.insert(u->id());
    inputs_.push_back(b);
    input_shapes_.push_back(s);
    return t;
  };
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].given) {  // no placeholder: the value as it is
      body_inputs.push_back(*inputs[k].given);
      inputs_.emplace_back();
      input_shapes_.emplace_back();
      continue;
    }
    body_inputs.emplace_back(placeholder(inputs[k].dtype, inputs[k].shape, "body input " + std::to_string(k)));
  }
  num_body_inputs_ = inputs.size();
  std::map<std::string, Value> replaced;
  for (const std::string& name : names_read_from_outside(c.graph_attr(graph))) {
    const Value* v = c.scope_value(name);
    if (!v) continue;
    if (v->is_stacked() || (v->is_sequence() && std::any_of(v->items().begin(), v->items().end(), [&](const Tensor& t) { return c.decided_at_run(t); })))
      cannot_plan(c, "its " + graph + " reads sequence '" + name + "', known only at run time");
    if (!v->is_tensor() || !c.decided_at_run(v->tensor())) continue;
    captured_.push_back(v->tensor());
    size_of_.emplace_back();
    replaced.insert_or_assign(name, placeholder(v->tensor().dtype(), v->tensor().symbolic_shape(), "'" + name + "'"));
  }
  std::vector<Value> outs;
  try {
    RunTimeInputsScope scope(std::move(ids));  // the placeholders steer nothing while the body is built
    outs = c.run_graph(graph, body_inputs, replaced);
  } catch (const NeedsRunTimeValue& e) {
    cannot_plan(c, "its " + graph + " reads a value known only at run time to decide its graph (" + e.what() + ")");
  } catch (const Error& e) {  // an operator that takes no run-time sizes, a value only the plan has read, ...
    cannot_plan(c, "its " + graph + " cannot be built over run-time sizes (" + e.what() + ")");
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    bool one_item = outs[k].is_sequence() && !outs[k].is_stacked() && outs[k].items().size() == 1;
    if (!outs[k].is_tensor() && !one_item)
      cannot_plan(c, "its " + graph + " returns a sequence or an empty optional as output " + std::to_string(k));
    outputs_.push_back(one_item ? outs[k].items()[0] : outs[k].tensor());
    one_item_.push_back(one_item);
  }
  // Variables from outside the body's inputs that it reads (a size computed outside, Shape(x), read
  // as a value inside): bound ones become captured sizes, bound each run from the enclosing plan.
  std::map<std::string, UOpPtr> bound_outside;
  std::set<std::string> free_outside;
  std::set<const UOp*> seen;
  for (const Tensor& t : outputs_)
    for (const UOpPtr& u : toposort(t.uop())) {
      if (!seen.insert(u.get()).second) continue;
      if (u->op() == Ops::BIND && u->src(0)->op() == Ops::DEFINE_VAR && !outer_.count(u->src(0)->arg_as<VarArg>().name))
        bound_outside.emplace(u->src(0)->arg_as<VarArg>().name, u);
      if (u->op() == Ops::DEFINE_VAR && !outer_.count(u->arg_as<VarArg>().name)) free_outside.insert(u->arg_as<VarArg>().name);
    }
  for (const Tensor& t : outputs_) {
    bool by_inputs = true;  // every variable of its shape is one of the inputs'
    for (const SInt& d : t.symbolic_shape())
      if (!d.is_static())
        for (const VarArg& v : free_variables(d.uop())) by_inputs = by_inputs && (outer_.count(v.name) || bound_outside.count(v.name));
    sized_by_inputs_.push_back(by_inputs);
  }
  out_sizes_.assign(outputs_.size(), std::nullopt);
  plan_ = std::make_shared<ExecutionPlan>(Tensor::prepare(outputs_, RunTimeInputsScope::options()));
  std::set<std::string> decided_inside;
  for (const PreparedOp& op : plan_->prepared_ops())
    if (const auto* f = std::get_if<PreparedCustom>(&op))
      for (const RuntimeVar& v : f->sets) decided_inside.insert(v.name);
  for (const auto& [name, bind] : bound_outside) {
    if (decided_inside.count(name)) continue;
    const VarArg& v = bind->src(0)->arg_as<VarArg>();
    captured_.push_back(size_as_tensor(SInt(bind)).cast(dtypes::int64).reshape(Shape{1}));
    size_of_.push_back(name);
    inputs_.emplace_back();
    input_shapes_.emplace_back();
    outer_.insert_or_assign(name, SInt(bind));
    ranges_[name] = {v.min, v.max};
  }
  for (const std::string& name : free_outside)
    if (!decided_inside.count(name) && !bound_outside.count(name))
      cannot_plan(c, "its " + graph + " reads size '" + name + "', which a step outside decides, as a value");
  for (const PreparedOp& op : plan_->prepared_ops()) {
    std::vector<RuntimeVar> read;
    if (const auto* k = std::get_if<PreparedKernel>(&op)) read = k->runtime_vars;
    if (const auto* f = std::get_if<PreparedCustom>(&op)) read = f->runtime_vars;
    for (const RuntimeVar& v : read)
      if (outer_.count(v.name) && std::find(bound_.begin(), bound_.end(), v.name) == bound_.end()) bound_.push_back(v.name);
  }
  if (settings::debug_level() >= 2)
    std::fprintf(stderr, "lathe: %s prepared as a plan of its own (%zu ops), run by a step of the model's plan\n", where_.c_str(),
                 plan_->prepared_ops().size());
}

std::optional<SInt> BodyPlan::output_size(size_t k, size_t axis) const {
  SInt d = outputs_[k].symbolic_shape().at(axis);
  if (d.is_static()) return d;
  // Each body variable is replaced by the size outside it stands for (an expression of them too,
  // as 2n); a variable left is one the body decides.
  Substitution map;
  for (const auto& [name, in] : inner_)
    if (in.uop() != outer_.at(name).uop()) map[in.uop().get()] = outer_.at(name).uop();
  UOpPtr e = map.empty() ? d.uop() : substitute(d.uop(), map);
  for (const UOpPtr& u : toposort(e))
    if (u->op() == Ops::DEFINE_VAR && !outer_.count(u->arg_as<VarArg>().name)) return std::nullopt;
  return SInt(e);
}

SymShape BodyPlan::output_shape(const OpContext& c, size_t k) const {
  SymShape s;
  for (size_t d = 0; d < output_rank(k); ++d) {
    std::optional<SInt> size = output_size(k, d);
    if (!size)
      cannot_plan(c, "output " + std::to_string(k) + " of its body has size " + outputs_[k].symbolic_shape()[d].to_string() +
                         ", which the body decides each run; here its outputs must take sizes of its inputs");
    s.push_back(*size);
  }
  return s;
}

void BodyPlan::start(const std::vector<Shape>& inputs, const std::vector<HostTensor>& captured) {
  vars_.clear();
  bound_this_start_ = false;
  out_sizes_.assign(outputs_.size(), std::nullopt);
  auto set = [&](const std::string& name, int64_t value) {
    auto [lo, hi] = ranges_.at(name);
    if (value < lo || value > hi)
      throw Error(where_ + ": size '" + name + "' is " + std::to_string(value) + ", outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    auto [it, added] = vars_.try_emplace(name, value);
    if (!added && it->second != value) throw Error(where_ + ": size '" + name + "' is both " + std::to_string(it->second) + " and " + std::to_string(value));
  };
  auto note = [&](size_t slot, const Shape& sizes, const std::string& what) {
    const SymShape& s = input_shapes_[slot];
    if (sizes.size() != s.size()) throw Error(where_ + ": " + what + " has rank " + std::to_string(sizes.size()) + ", its plan " + std::to_string(s.size()));
    for (size_t d = 0; d < s.size(); ++d) {
      if (std::optional<VarArg> v = bare_variable(s[d])) set(v->name, sizes[d]);
      else if (s[d].value() != sizes[d])
        throw Error(where_ + ": " + what + " has size " + std::to_string(sizes[d]) + " at axis " + std::to_string(d) + ", its plan " + std::to_string(s[d].value()));
    }
  };
  if (inputs.size() != num_body_inputs_ || captured.size() != captured_.size()) throw InternalError(where_ + ": started with the wrong number of inputs");
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs_[k].valid()) note(k, inputs[k], "body input " + std::to_string(k));
  for (size_t k = 0; k < captured.size(); ++k) {
    if (!size_of_[k].empty()) set(size_of_[k], captured[k].as<int64_t>()[0]);
    else note(num_body_inputs_ + k, captured[k].shape, "the value it reads from outside (" + std::to_string(k) + ")");
  }
  for (size_t k = 0; k < captured.size(); ++k)
    if (size_of_[k].empty()) write_input(num_body_inputs_ + k, captured[k].data);
}

size_t BodyPlan::input_bytes(size_t k) const {
  Shape sizes;
  for (const SInt& d : input_shapes_[k]) sizes.push_back(d.is_static() ? d.value() : vars_.at(bare_variable(d)->name));
  return bytes_of(inputs_[k].dtype(), sizes);
}

namespace {

// Copies `n` bytes between host memory and the front of `b`: directly where the host addresses
// it, else through the device (a buffer copies in and out whole: a view of its front).
void copy_in(const Buffer& b, const void* src, size_t n) {
  if (!n) return;
  if (b.host_visible()) std::memcpy(b.data(), src, n);
  else Buffer::view(b, 0, n / static_cast<size_t>(b.dtype().itemsize()), b.dtype()).copyin(src, n);
}

void copy_out(const Buffer& b, void* dst, size_t n) {
  if (!n) return;
  if (b.host_visible()) std::memcpy(dst, b.data(), n);
  else Buffer::view(b, 0, n / static_cast<size_t>(b.dtype().itemsize()), b.dtype()).copyout(dst, n);
}

}  // namespace

void BodyPlan::write_input(size_t k, const void* src) const { copy_in(inputs_[k], src, input_bytes(k)); }

void BodyPlan::read_input(size_t k, void* dst) const { copy_out(inputs_[k], dst, input_bytes(k)); }

void BodyPlan::run() const {
  // Variables are bound once per start (a loop's iterations share them), then each run executes.
  if (!bound_this_start_ && !bound_.empty()) {
    std::vector<std::pair<std::string, int64_t>> binds;
    for (const std::string& name : bound_) binds.emplace_back(name, vars_.at(name));
    plan_->execute_with_vars(binds);
  } else {
    plan_->execute();
  }
  bound_this_start_ = true;
  for (size_t k = 0; k < outputs_.size(); ++k)
    if (!sized_by_inputs_[k]) out_sizes_[k].reset();  // the body decided it in this run
}

Shape BodyPlan::output_sizes(size_t k) const {
  if (out_sizes_[k]) return *out_sizes_[k];
  std::unordered_map<std::string, int64_t> vals;
  if (!sized_by_inputs_[k]) vals = plan_->variable_values();
  for (const auto& [name, v] : vars_) vals[name] = v;
  Shape sizes;
  for (const SInt& d : outputs_[k].symbolic_shape()) sizes.push_back(d.value_at(vals));
  out_sizes_[k] = sizes;
  return sizes;
}

size_t BodyPlan::output_bytes(size_t k) const { return bytes_of(outputs_[k].dtype(), output_sizes(k)); }

void BodyPlan::read_output(size_t k, void* dst) const {
  copy_out(*plan_->output_buffer_at(k), dst, output_bytes(k));
}

void BodyPlan::carry(const std::vector<std::pair<size_t, size_t>>& pairs) const {
  // Where the plan can, an output's memory and its input's are swapped: nothing is copied, and the
  // next run writes the output where the input was. An output that is a placeholder (a value
  // passed through) or another pair's output too is copied instead, as is one the plan will not
  // swap. In three phases, so no swap moves memory a copy still reads: what is copied is read (or
  // noted, where it is the plan's own memory) first, then the swaps, then the copies written.
  if (carried_ != pairs) {  // which pairs can swap: found once, the plan's buffers fixed
    carried_ = pairs;
    swaps_.assign(pairs.size(), std::nullopt);
    const std::vector<Buffer>& all = plan_->buffers();
    for (size_t j = 0; j < pairs.size(); ++j) {
      size_t out = pairs[j].first, in = pairs[j].second;  // (clang 14 captures no structured binding)
      auto at = std::find(all.begin(), all.end(), inputs_[in]);
      auto o = static_cast<size_t>(plan_->output_buffer_at(out) - all.data());
      bool placeholder = std::any_of(inputs_.begin(), inputs_.end(), [&](const Buffer& b) { return b.valid() && b == all[o]; });
      bool shared = std::any_of(pairs.begin(), pairs.end(), [&](const std::pair<size_t, size_t>& p) {
        return p.first != out && plan_->output_buffer_at(p.first) == plan_->output_buffer_at(out);
      });
      if (at != all.end() && !placeholder && !shared) swaps_[j] = std::pair<size_t, size_t>{o, static_cast<size_t>(at - all.begin())};
      if (settings::debug_level() >= 3)
        std::fprintf(stderr, "lathe: %s hands output %zu to input %zu by %s\n", where_.c_str(), out, in, swaps_[j] ? "swapping their memory" : "copying");
    }
  }
  // An output in a placeholder's memory (or in memory the host cannot address) is read out first.
  auto read_first = [&](size_t out) {
    const Buffer* o = plan_->output_buffer_at(out);
    if (!o->host_visible()) return true;
    auto* p = static_cast<const uint8_t*>(o->data());
    size_t n = output_bytes(out);
    return std::any_of(inputs_.begin(), inputs_.end(), [&](const Buffer& b) {
      if (!b.valid()) return false;  // a value given as it is, or a size
      if (!b.host_visible()) return true;
      const auto* q = static_cast<const uint8_t*>(b.data());
      return p < q + b.nbytes() && q < p + n;
    });
  };
  staged_.resize(pairs.size());
  std::vector<const void*>& direct = direct_;  // a copy's source where it is the plan's own memory
  direct.assign(pairs.size(), nullptr);
  for (size_t j = 0; j < pairs.size(); ++j) {
    if (swaps_[j]) continue;
    if (read_first(pairs[j].first)) {
      staged_[j].resize(output_bytes(pairs[j].first));
      read_output(pairs[j].first, staged_[j].data());
    } else {
      direct[j] = plan_->output_buffer_at(pairs[j].first)->data();
    }
  }
  for (size_t j = 0; j < pairs.size(); ++j) {
    if (!swaps_[j]) continue;
    if (plan_->swap_buffers(swaps_[j]->first, swaps_[j]->second)) {
      inputs_[pairs[j].second] = plan_->buffers()[swaps_[j]->second];
      continue;
    }
    // The plan will not swap these (a constant, a view): copied, now and from now on. Its output
    // is no placeholder and no other pair's, so no swap above moved it.
    swaps_[j].reset();
    direct[j] = plan_->output_buffer_at(pairs[j].first)->data();
    if (!plan_->output_buffer_at(pairs[j].first)->host_visible()) {
      staged_[j].resize(output_bytes(pairs[j].first));
      read_output(pairs[j].first, staged_[j].data());
      direct[j] = nullptr;
    }
  }
  for (size_t j = 0; j < pairs.size(); ++j) {
    if (swaps_[j]) continue;
    write_input(pairs[j].second, direct[j] ? direct[j] : staged_[j].data());
  }
}

}  // namespace lathe::onnx::detail
