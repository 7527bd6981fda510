// Tensor basics: construction from data, properties, running, broadcasting and the binary
// operators every other op is built from.
#include "lathe/tensor.hpp"

#include <algorithm>
#include <functional>
#include <sstream>
#include <unordered_set>

#include "device/buffer_registry.hpp"
#include "device/device_scope.hpp"
#include "ir/label.hpp"
#include "lathe/plan.hpp"
#include "runtime/plan_builder.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/create_schedule.hpp"
#include "schedule/constants.hpp"
#include "schedule/shape.hpp"
#include "tensor/attention_rule.hpp"
#include "tensor/tensor_util.hpp"
#include "tensor/tap_groups.hpp"
#include "tensor/transposed_phases.hpp"
#include "tensor/winograd.hpp"

namespace lathe {

std::string shape_to_string(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string shape_to_string(const SymShape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + shape[i].to_string();
  return s + (shape.size() == 1 ? ",)" : ")");
}

namespace detail {

Shape max_shape(const SymShape& s) {
  Shape out;
  for (const SInt& d : s) out.push_back(d.max());
  return out;
}

std::vector<UOpPtr> sym_entries(const SymShape& s) {
  if (is_static(s)) return {};
  std::vector<UOpPtr> out;
  for (const SInt& d : s) out.push_back(d.is_static() ? nullptr : d.uop());
  return out;
}

bool is_static(const SymShape& s) {
  return std::all_of(s.begin(), s.end(), [](const SInt& d) { return d.is_static(); });
}

SInt sym_numel(const SymShape& s) {
  SInt n = 1;
  for (const SInt& d : s) n = n * d;
  return n;
}

namespace {

// A count's factors: the product of its numbers, and its other factors ordered by their hash (a
// product's operands flattened), so that (2 * t) * n and 2 * (t * n) compare equal.
std::pair<int64_t, std::vector<UOpPtr>> factors_of(const SymShape& s) {
  int64_t known = 1;
  std::vector<UOpPtr> rest;
  std::function<void(const UOpPtr&)> collect = [&](const UOpPtr& u) {
    if (u->op() == Ops::MUL) {
      for (const UOpPtr& x : u->src()) collect(x);
      return;
    }
    SInt f(u);
    if (f.is_static()) known *= f.value();
    else rest.push_back(u);
  };
  for (const SInt& d : s) {
    if (d.is_static()) known *= d.value();
    else collect(d.uop());
  }
  std::sort(rest.begin(), rest.end(), [](const UOpPtr& a, const UOpPtr& b) { return a->hash() < b->hash(); });
  return {known, rest};
}

}  // namespace

bool same_numel(const SymShape& a, const SymShape& b) {
  if (sym_numel(a) == sym_numel(b)) return true;
  auto [ka, fa] = factors_of(a);
  auto [kb, fb] = factors_of(b);
  if (ka != kb || fa.size() != fb.size()) return false;
  for (size_t i = 0; i < fa.size(); ++i)
    if (fa[i] != fb[i]) return false;  // nodes are interned: equal expressions are one node
  return true;
}

SymShape to_sym(const Shape& s) { return SymShape(s.begin(), s.end()); }

void check_shape(const Shape& shape, const char* op) {
  for (int64_t d : shape)
    if (d < 0) throw ShapeError(std::string(op) + ": negative dimension in shape " + shape_to_string(shape));
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;  // empty: nothing to hold
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (elements > (int64_t{1} << 48) / d)  // no machine holds it
      throw ShapeError(std::string(op) + ": shape " + shape_to_string(shape) + " has more than 2^48 elements");
    elements *= d;
  }
}

Tensor tensor_from_bytes(const void* data, size_t nbytes, DType dtype, Shape shape) {
  check_shape(shape, "from_vector");
  size_t n = static_cast<size_t>(shape_numel(shape));
  if (n * static_cast<size_t>(dtype.itemsize()) != nbytes)
    throw ShapeError("from_vector: " + std::to_string(nbytes / dtype.itemsize()) + " values cannot fill shape " +
                     shape_to_string(shape) + " (" + std::to_string(n) + " elements)");
  Buffer b(dtype, n);
  b.copyin(data, nbytes);
  return Tensor(buffer_node(b, shape), shape);
}

// The buffer behind a realized tensor: its own, or for a symbolic one the buffer sized for its
// maximum that it is a shrunk view of.
static Buffer backing_buffer(const Tensor& realized) {
  UOpPtr u = realized.uop();
  while (u->op() != Ops::BUFFER) u = u->src(0);
  return buffer_of(*u);
}

std::vector<uint8_t> tensor_bytes(const Tensor& t, DType expected, const char* what) {
  bool bits_of_half = (t.dtype() == dtypes::float16 || t.dtype() == dtypes::bfloat16) && expected == dtypes::uint16;
  bool bool_as_bytes = t.dtype() == dtypes::bool_ && expected == dtypes::uint8;
  if (t.dtype() != expected && !bits_of_half && !bool_as_bytes)
    throw DTypeError(std::string(what) + ": the tensor is " + t.dtype().name() + ", not " + expected.name());
  Tensor r = t;
  r.realize();
  // The values are packed at the front of the buffer (one sized for the maximum, for a symbolic
  // tensor or one a host step sized).
  Buffer b = backing_buffer(r);
  auto elements = static_cast<size_t>(sym_numel(r.symbolic_shape()).value_at({}));
  std::vector<uint8_t> out(elements * static_cast<size_t>(b.dtype().itemsize()));
  if (!out.empty()) Buffer::view(b, 0, elements, b.dtype()).copyout(out.data(), out.size());
  return out;
}

}  // namespace detail

Tensor::Tensor() : Tensor(UOp::const_(dtypes::float32, 0.0), {}) {}

Tensor::Tensor(UOpPtr uop, Shape shape) : uop_(std::move(uop)), shape_(std::move(shape)) {
  LATHE_CHECK(uop_ != nullptr, "Tensor of a null node");
}

Tensor::Tensor(UOpPtr uop, Shape shape, std::vector<UOpPtr> symbolic)
    : uop_(std::move(uop)), shape_(std::move(shape)), sym_(std::move(symbolic)) {
  LATHE_CHECK(uop_ != nullptr, "Tensor of a null node");
  LATHE_CHECK(sym_.empty() || sym_.size() == shape_.size(), "symbolic dimensions do not match the shape");
  if (std::all_of(sym_.begin(), sym_.end(), [](const UOpPtr& d) { return d == nullptr; })) sym_.clear();
}

SymShape Tensor::symbolic_shape() const {
  SymShape out;
  for (size_t i = 0; i < shape_.size(); ++i)
    out.push_back(sym_.empty() || !sym_[i] ? SInt(shape_[i]) : SInt(sym_[i]));
  return out;
}

Tensor Tensor::from_buffer(Buffer buffer, Shape shape) {
  detail::check_shape(shape, "from_buffer");
  if (static_cast<size_t>(shape_numel(shape)) != buffer.size())
    throw ShapeError("from_buffer: a buffer of " + std::to_string(buffer.size()) + " elements cannot be viewed as " +
                     shape_to_string(shape));
  return Tensor(buffer_node(buffer, shape), shape);
}

Tensor Tensor::from_buffer(Buffer buffer, const SymShape& shape) {
  if (detail::is_static(shape)) return from_buffer(std::move(buffer), detail::max_shape(shape));
  Shape largest = detail::max_shape(shape);
  detail::check_shape(largest, "from_buffer");
  if (static_cast<size_t>(shape_numel(largest)) > buffer.size())
    throw ShapeError("from_buffer: a buffer of " + std::to_string(buffer.size()) + " elements cannot hold " + shape_to_string(shape) +
                     " at its largest, " + shape_to_string(largest));
  auto n = static_cast<int64_t>(buffer.size());
  Tensor flat(buffer_node(buffer, {n}), {n});
  return flat.shrink({{0, detail::sym_numel(shape)}}).reshape(shape);
}

int64_t Tensor::numel() const { return shape_numel(shape_); }

const Tensor& Tensor::label(const std::string& name) const {
  add_label(uop_, name);
  return *this;
}

Buffer Tensor::buffer() const { return uop_->op() == Ops::BUFFER ? buffer_of(*uop_) : Buffer(); }

bool Tensor::is_realized() const { return uop_->op() == Ops::BUFFER; }

bool detail::made_of_constants(const UOpPtr& u, std::unordered_map<const UOp*, bool>& memo) {
  return lathe::made_of_constants(u, is_constant_buffer, memo);
}

std::string Tensor::to_string() const {
  return "Tensor(shape=" + shape_to_string(symbolic_shape()) + ", dtype=" + dtype().name() + (is_realized() ? ")" : ", lazy)");
}

Tensor& Tensor::realize() {
  if (is_realized()) return *this;
  ExecutionPlan plan = prepare();
  plan.execute();
  const Buffer& out = *plan.output_buffer();
  if (!is_symbolic()) {
    uop_ = buffer_node(out, shape_);
    return *this;
  }
  // A size a host step decided takes this run's value; a bound variable's stays symbolic.
  SymShape shape = detail::with_values(symbolic_shape(), plan.variable_values());
  *this = detail::is_static(shape) ? detail::view_at(out, detail::max_shape(shape)) : from_buffer(out, shape);
  return *this;
}

ExecutionPlan Tensor::prepare() const { return prepare({*this}); }

ExecutionPlan Tensor::prepare(const std::vector<Tensor>& outputs) { return prepare(outputs, PrepareOptions{}); }

namespace {

// The device a graph runs on: its buffers' (all on one), else the default device (LATHE_DEVICE).
DeviceSpec device_of(const std::vector<UOpPtr>& roots) {
  std::optional<Buffer> first;
  std::unordered_set<const UOp*> seen;
  std::vector<const UOp*> stack;
  for (const UOpPtr& r : roots) stack.push_back(r.get());
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (!seen.insert(u).second) continue;
    if (u->op() == Ops::BUFFER) {
      Buffer b = buffer_of(*u);
      if (!first) first = b;
      else if (b.device() != first->device())
        throw Error("one computation reads buffers on two devices, " + first->device().to_string() + " (" + std::to_string(first->size()) + " x " +
                    first->dtype().name() + ") and " + b.device().to_string() + " (" + std::to_string(b.size()) + " x " + b.dtype().name() +
                    "): move one with Tensor::to");
    }
    for (const UOpPtr& s : u->src()) stack.push_back(s.get());
  }
  return first ? first->device() : DeviceSpec::default_device();
}

}  // namespace

DeviceSpec Tensor::device() const { return device_of({uop_}); }

Tensor Tensor::to(const std::string& device) const {
  DeviceSpec where = DeviceSpec::parse(device);
  Tensor r = *this;
  if (r.device() == where) return r;
  r.realize();
  Buffer src = detail::backing_buffer(r);
  Buffer moved(src.dtype(), src.size(), where);
  moved.copy_from(src);
  if (!is_symbolic()) return from_buffer(moved, shape_);
  return from_buffer(moved, symbolic_shape());
}

ExecutionPlan Tensor::prepare(const std::vector<Tensor>& outputs, const PrepareOptions& options) {
  std::vector<UOpPtr> roots;
  for (const Tensor& t : outputs) roots.push_back(t.uop());
  DeviceSpec device = device_of(roots);
  DefaultDeviceScope made_there(device);  // what the rules below make (constants) is made on the plan's device
  ScheduleContext context = schedule_context(device, options);
  roots = detail::attention_as_one_node(roots, context.target);
  // Convolutions rebuilt for the plan's Target, each rule over what the one before it made.
  Rebuilt rebuilt;
  for (auto* rule : {detail::transposed_phases_where_they_pay, detail::tap_groups_where_they_pay, detail::winograd_where_it_pays}) {
    Rebuilt step;
    roots = rule(roots, context.target, &step);
    rebuilt.then(step);
  }
  Schedule sched = create_schedule(roots, context);
  rebuilt.then(sched.becomes);  // the caller's nodes answer to what stands for them after the rules and the schedule
  sched.becomes = std::move(rebuilt);
  return PlanBuilder::build(std::move(sched), device, options);
}

// ---- broadcasting and binary ops ------------------------------------------------------------------

namespace detail {

Tensor broadcast_to(const Tensor& t, const Shape& shape) {
  if (t.is_symbolic()) return broadcast_to(t, to_sym(shape));
  if (t.shape() == shape) return t;
  Shape padded(shape.size() - t.shape().size(), 1);
  padded.insert(padded.end(), t.shape().begin(), t.shape().end());
  Tensor r = padded == t.shape() ? t : t.reshape(padded);
  return r.shape() == shape ? r : r.expand(shape);
}

Tensor broadcast_to(const Tensor& t, const SymShape& shape) {
  if (is_static(shape) && !t.is_symbolic()) return broadcast_to(t, max_shape(shape));
  SymShape mine = t.symbolic_shape();
  SymShape padded(shape.size() - mine.size(), SInt(1));
  padded.insert(padded.end(), mine.begin(), mine.end());
  Tensor r = padded.size() == mine.size() ? t : t.reshape(padded);
  bool same = true;
  for (size_t i = 0; i < shape.size(); ++i) same = same && padded[i] == shape[i];
  return same ? r : r.expand(shape);
}

SymShape broadcast_shapes(const SymShape& a, const SymShape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  SymShape out;
  for (size_t i = 0; i < n; ++i) {
    SInt da = i < n - a.size() ? SInt(1) : a[i - (n - a.size())];
    SInt db = i < n - b.size() ? SInt(1) : b[i - (n - b.size())];
    bool a_one = da.is_static() && da.value() == 1, b_one = db.is_static() && db.value() == 1;
    if (!(da == db) && !a_one && !b_one)
      throw ShapeError(std::string(op) + ": shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                       " cannot be broadcast together");
    out.push_back(a_one ? db : da);
  }
  return out;
}

Tensor constant_like(ConstValue value, DType dtype, const Tensor& like) {
  return broadcast_to(Tensor(UOp::const_(dtype, value), {}), like.symbolic_shape());
}

Tensor broadcast_alu(Ops op, std::vector<Tensor> operands, const char* name) {
  SymShape shape = operands[0].symbolic_shape();
  for (size_t i = 1; i < operands.size(); ++i) shape = broadcast_shapes(shape, operands[i].symbolic_shape(), name);
  for (Tensor& t : operands) t = broadcast_to(t, shape);
  return make_alu(op, std::move(operands));
}

Tensor make_alu(Ops op, std::vector<Tensor> srcs) {
  std::vector<UOpPtr> u;
  for (const Tensor& t : srcs) u.push_back(t.uop());
  const Tensor& like = srcs.at(op == Ops::WHERE ? 1 : 0);
  // A symbolic axis of any source is the axis of the result (the others broadcast to it).
  std::vector<UOpPtr> sym;
  for (const Tensor& t : srcs) {
    if (!t.is_symbolic() || t.ndim() != like.ndim()) continue;
    SymShape s = t.symbolic_shape();
    if (sym.empty()) sym.assign(s.size(), nullptr);
    for (size_t i = 0; i < s.size(); ++i)
      if (!sym[i] && !s[i].is_static()) sym[i] = s[i].uop();
  }
  return Tensor(UOp::alu(op, std::move(u)), like.shape(), std::move(sym));
}

}  // namespace detail

Tensor Tensor::scalar_like(const Tensor& like, double value, bool is_float) {
  DType dt = like.dtype();
  if (is_float && !dt.is_float()) dt = dtypes::default_float;
  if (!is_float && dt.is_bool()) dt = dtypes::default_int;
  return Tensor(UOp::const_(dt, value), {});
}

Tensor Tensor::binary(Ops op, const Tensor& other, const char* name) const {
  DType dt = least_upper_dtype({dtype(), other.dtype()});
  return detail::broadcast_alu(op, {cast(dt), other.cast(dt)}, name);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return a.binary(Ops::ADD, b, "add"); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.binary(Ops::SUB, b, "sub"); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.binary(Ops::MUL, b, "mul"); }

Tensor operator/(const Tensor& a, const Tensor& b) {
  // True division: integers divide as floats, as in numpy and tinygrad.
  if (!a.dtype().is_float() && !b.dtype().is_float())
    return a.cast(dtypes::default_float).binary(Ops::FDIV, b.cast(dtypes::default_float), "div");
  return a.binary(Ops::FDIV, b, "div");
}

Tensor operator<(const Tensor& a, const Tensor& b) { return a.binary(Ops::CMPLT, b, "lt"); }
Tensor operator>(const Tensor& a, const Tensor& b) { return b.binary(Ops::CMPLT, a, "gt"); }
Tensor operator<=(const Tensor& a, const Tensor& b) {
  detail::broadcast_shapes(a.symbolic_shape(), b.symbolic_shape(), "le");  // name this op in errors, not the gt inside
  return (a > b).logical_not();
}
Tensor operator>=(const Tensor& a, const Tensor& b) {
  detail::broadcast_shapes(a.symbolic_shape(), b.symbolic_shape(), "ge");
  return (a < b).logical_not();
}
Tensor operator==(const Tensor& a, const Tensor& b) { return a.binary(Ops::CMPEQ, b, "eq"); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return a.binary(Ops::CMPNE, b, "ne"); }

Tensor Tensor::unary(Ops op) const { return detail::make_alu(op, {*this}); }

Tensor Tensor::cast(DType dt) const {
  if (dt == dtype()) return *this;
  if (dt.is_ptr() || dt.count() != 1 || dt == dtypes::void_ || dt == dtypes::index)
    throw DTypeError("cast: cannot cast to " + dt.name());
  return Tensor(lathe::cast(uop_, dt), shape_, sym_);
}

Tensor Tensor::bitcast(DType dt) const {
  if (dt.is_ptr() || dt.count() != 1 || dt == dtypes::void_ || dt == dtypes::index)
    throw DTypeError("bitcast: cannot bitcast to " + dt.name());
  if (dt.itemsize() != dtype().itemsize())
    throw DTypeError("bitcast: " + dtype().name() + " and " + dt.name() + " differ in size");
  if (dt == dtype()) return *this;
  return Tensor(UOp::make(Ops::BITCAST, dt, {uop_}), shape_, sym_);
}

Tensor Tensor::contiguous() const { return Tensor(UOp::make(Ops::CONTIGUOUS, dtype(), {uop_}), shape_, sym_); }

Tensor detail::layout_copy(const Tensor& t) {
  return Tensor(UOp::make(Ops::CONTIGUOUS, t.dtype(), {t.uop()}, CopyArg{.layout = true}), t.shape(), sym_entries(t.symbolic_shape()));
}

}  // namespace lathe
