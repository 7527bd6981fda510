#include "onnx/size_values.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "ir/symbolic.hpp"
#include "ir/eval.hpp"
#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

// The followed tensors of the graph being built on this thread, by node (kept alive with it).
struct Followed {
  std::unordered_map<const UOp*, std::pair<UOpPtr, SymShape>> values;
  std::unordered_map<std::string, Tensor> decided;  // a host step's size -> its value as a scalar
  std::unordered_map<std::string, int> names;       // how often each size name was given
};
thread_local Followed* followed = nullptr;
thread_local int depth = 0;

constexpr int64_t kMostElements = 16;  // shapes and counts, not data


// Input i's elements: followed, or known now and small.
std::optional<SymShape> values_of(const OpContext& c, size_t i) {
  if (!c.has(i)) return std::nullopt;
  const Tensor& t = c.value(i).is_tensor() ? c.value(i).tensor() : Tensor();
  if (!c.value(i).is_tensor() || !(t.dtype().is_int() || t.dtype() == dtypes::bool_) || t.is_symbolic()) return std::nullopt;
  if (auto v = size_values_of(t)) return v;
  if (t.numel() > kMostElements || !c.known_at_build(t)) return std::nullopt;
  SymShape out;
  for (int64_t x : t.cast(dtypes::int64).to_vector<int64_t>()) out.emplace_back(x);
  return out;
}

// Elementwise over the inputs (two, or any number for Max, Min and Sum) with numpy broadcasting
// of one element.
std::optional<SymShape> elementwise(const OpContext& c, const std::function<SInt(const SInt&, const SInt&)>& f) {
  std::optional<SymShape> acc = values_of(c, 0);
  for (size_t k = 1; acc && k < c.num_inputs(); ++k) {
    auto b = values_of(c, k);
    const SymShape& a = *acc;
    if (!b || (a.size() != b->size() && a.size() != 1 && b->size() != 1)) return std::nullopt;
    SymShape out;
    for (size_t i = 0; i < std::max(a.size(), b->size()); ++i) out.push_back(f(a[a.size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]));
    acc = std::move(out);
  }
  return c.num_inputs() >= 2 ? acc : std::nullopt;
}

std::optional<SymShape> fold(const OpContext& c, const std::function<SInt(const SInt&, const SInt&)>& f) {
  auto a = values_of(c, 0);
  if (!a || a->empty()) return std::nullopt;
  SInt acc = (*a)[0];
  for (size_t i = 1; i < a->size(); ++i) acc = f(acc, (*a)[i]);
  return SymShape{acc};
}

using Rule = std::function<std::optional<SymShape>(const OpContext&)>;

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table = [] {
    std::map<std::string, Rule> r;
    Rule same = [](const OpContext& c) { return values_of(c, 0); };
    for (const char* op : {"Identity", "Squeeze", "Unsqueeze", "Reshape", "Flatten"}) r[op] = same;
    // A cast keeps sizes as they are into int64 or int32 (sizes fit), makes each 0 or 1 into bool
    // (decided where the size's range excludes 0), and is not followed into narrower types.
    Rule cast = [](const OpContext& c) -> std::optional<SymShape> {
      DType to = c.op() == "CastLike" ? c.value(1).dtype() : dtype_from_onnx(static_cast<int32_t>(c.attr_i("to", 0)), c.where());
      auto v = values_of(c, 0);
      if (!v) return std::nullopt;
      if (to == dtypes::int64 || to == dtypes::int32) {
        for (const SInt& d : *v)
          if (d.min() < INT32_MIN || d.max() > INT32_MAX) return to == dtypes::int64 ? v : std::nullopt;
        return v;
      }
      if (to != dtypes::bool_) return std::nullopt;
      SymShape out;
      for (const SInt& d : *v) {
        if (!d.is_static() && d.min() <= 0 && d.max() >= 0) return std::nullopt;
        out.emplace_back(d.is_static() ? (d.value() != 0 ? 1 : 0) : 1);
      }
      return out;
    };
    r["Cast"] = cast;
    r["CastLike"] = cast;
    r["Concat"] = [](const OpContext& c) -> std::optional<SymShape> {
      SymShape out;
      for (size_t i = 0; i < c.num_inputs(); ++i) {
        if (!c.has(i) || !c.value(i).is_tensor() || c.value(i).tensor().ndim() > 1) return std::nullopt;  // vectors joined end to end
        auto v = values_of(c, i);
        if (!v) return std::nullopt;
        out.insert(out.end(), v->begin(), v->end());
      }
      return out;
    };
    r["Gather"] = [](const OpContext& c) -> std::optional<SymShape> {
      auto data = values_of(c, 0);
      if (!data || c.value(0).tensor().ndim() != 1 || !c.has(1) || !c.known_at_build(c.in(1)) || c.in(1).numel() > kMostElements)
        return std::nullopt;
      SymShape out;
      auto n = static_cast<int64_t>(data->size());
      for (int64_t i : c.ints(1)) {
        if (i < 0) i += n;
        if (i < 0 || i >= n) return std::nullopt;
        out.push_back((*data)[static_cast<size_t>(i)]);
      }
      return out;
    };
    r["Slice"] = [](const OpContext& c) -> std::optional<SymShape> {
      auto data = values_of(c, 0);
      if (c.opset() < 10 || c.num_inputs() < 3 || !data || c.value(0).tensor().ndim() != 1) return std::nullopt;  // starts and ends as inputs
      if (!c.known_at_build(c.in(1)) || !c.known_at_build(c.in(2)) || (c.has(3) && !c.known_at_build(c.in(3))) ||
          (c.has(4) && !c.known_at_build(c.in(4))))
        return std::nullopt;
      auto n = static_cast<int64_t>(data->size());
      int64_t start = c.int_at0(1), end = c.int_at0(2), step = c.has(4) ? c.int_at0(4) : 1;
      if (step != 1) return std::nullopt;
      start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
      end = std::clamp<int64_t>(end < 0 ? end + n : end, start, n);
      return SymShape(data->begin() + start, data->begin() + end);
    };
    r["ReduceMin"] = [](const OpContext& c) { return fold(c, size_min); };
    r["ReduceMax"] = [](const OpContext& c) { return fold(c, size_max); };
    r["ReduceSum"] = [](const OpContext& c) { return fold(c, [](const SInt& a, const SInt& b) { return a + b; }); };
    r["ReduceProd"] = [](const OpContext& c) { return fold(c, [](const SInt& a, const SInt& b) { return a * b; }); };
    r["Add"] = [](const OpContext& c) { return elementwise(c, [](const SInt& a, const SInt& b) { return a + b; }); };
    r["Sub"] = [](const OpContext& c) { return elementwise(c, [](const SInt& a, const SInt& b) { return a - b; }); };
    r["Mul"] = [](const OpContext& c) { return elementwise(c, [](const SInt& a, const SInt& b) { return a * b; }); };
    r["Sum"] = [](const OpContext& c) { return elementwise(c, [](const SInt& a, const SInt& b) { return a + b; }); };
    r["Div"] = [](const OpContext& c) { return elementwise(c, [](const SInt& a, const SInt& b) { return size_quotient(a, b); }); };
    r["Min"] = [](const OpContext& c) { return elementwise(c, size_min); };
    // Comparisons of sizes decided the same at every size (a dimension of 1 tested for being 1).
    auto compare = [](bool (*f)(int64_t, int64_t)) -> Rule {
      return [f](const OpContext& c) -> std::optional<SymShape> {
        auto a = values_of(c, 0), b = values_of(c, 1);
        if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return std::nullopt;
        SymShape out;
        for (size_t i = 0; i < std::max(a->size(), b->size()); ++i) {
          const SInt &x = (*a)[a->size() == 1 ? 0 : i], &y = (*b)[b->size() == 1 ? 0 : i];
          // Decided for numbers, and for ranges that do not meet (a size against -1): every value
          // in them answers the same.
          if (!(x.is_static() && y.is_static()) && !(x.max() < y.min() || y.max() < x.min())) return std::nullopt;
          out.emplace_back(f(x.min(), y.min()) ? 1 : 0);
        }
        return out;
      };
    };
    r["Where"] = [](const OpContext& c) -> std::optional<SymShape> {
      auto cond = values_of(c, 0), a = values_of(c, 1), b = values_of(c, 2);
      if (!cond || !a || !b) return std::nullopt;
      size_t n = std::max({cond->size(), a->size(), b->size()});
      for (const SymShape* v : {&*cond, &*a, &*b})
        if (v->size() != 1 && v->size() != n) return std::nullopt;
      SymShape out;
      for (size_t i = 0; i < n; ++i) {
        auto at = [&](const SymShape& v) -> const SInt& { return v[v.size() == 1 ? 0 : i]; };
        if (!at(*cond).is_static()) return std::nullopt;
        out.push_back(at(*cond).value() != 0 ? at(*a) : at(*b));
      }
      return out;
    };
    r["ConstantOfShape"] = [](const OpContext& c) -> std::optional<SymShape> {
      auto shape = values_of(c, 0);
      if (!shape || shape->size() > 1 || (shape->size() == 1 && !(*shape)[0].is_static())) return std::nullopt;
      int64_t n = shape->empty() ? 1 : (*shape)[0].value(), v = 0;
      if (n > kMostElements) return std::nullopt;
      if (c.has_attr("value")) {
        Tensor t = c.attr_t("value");
        if (!t.dtype().is_int() || t.numel() != 1) return std::nullopt;
        v = t.cast(dtypes::int64).to_vector<int64_t>()[0];
      }
      return SymShape(static_cast<size_t>(n), SInt(v));
    };
    r["Equal"] = compare([](int64_t x, int64_t y) { return x == y; });
    r["Less"] = compare([](int64_t x, int64_t y) { return x < y; });
    r["Greater"] = compare([](int64_t x, int64_t y) { return x > y; });
    r["LessOrEqual"] = compare([](int64_t x, int64_t y) { return x <= y; });
    r["GreaterOrEqual"] = compare([](int64_t x, int64_t y) { return x >= y; });
    r["Max"] = [](const OpContext& c) { return elementwise(c, size_max); };
    return r;
  }();
  return table;
}

}  // namespace

SInt size_min(const SInt& a, const SInt& b) {
  if (a.is_static() && b.is_static()) return std::min(a.value(), b.value());
  if (a.max() <= b.min()) return a;
  if (b.max() <= a.min()) return b;
  return SInt(0) - size_max(SInt(0) - a, SInt(0) - b);
}

namespace {

// The factors of a product of sizes (a MUL tree), constants multiplied into one.
void factors_of(const UOpPtr& e, std::vector<UOpPtr>& out, int64_t& constant) {
  if (e->op() == Ops::MUL) {
    factors_of(e->src(0), out, constant);
    factors_of(e->src(1), out, constant);
  } else if (e->is_const()) {
    constant *= const_as_int(e->const_value());
  } else {
    out.push_back(e);
  }
}

}  // namespace

SInt size_quotient(const SInt& a, const SInt& b, bool zero_cancels) {
  if (a.is_static() && b.is_static()) return b.value() == 0 ? SInt(0) : SInt(a.value() / b.value());
  if (b.is_static() && b.value() == 1) return a;
  if (b.is_static() && b.value() == 0) return 0;  // as for numbers
  // A product over some of its own factors (n*364 / n, a -1 beside a symbolic size): what is left.
  std::vector<UOpPtr> top, bottom;
  int64_t top_constant = 1, bottom_constant = 1;
  factors_of(a.uop(), top, top_constant);
  factors_of(b.uop(), bottom, bottom_constant);
  bool cancels = bottom_constant != 0 && top_constant % bottom_constant == 0;
  for (const UOpPtr& f : bottom) {
    auto it = std::find(top.begin(), top.end(), f);  // nodes are interned: equal expressions are one node
    if (it == top.end() || (f->vmin() <= 0 && !zero_cancels)) {  // a factor that may be 0 does not cancel (0 * 364 / 0)
      cancels = false;
      break;
    }
    top.erase(it);
  }
  if (cancels) {
    SInt left = top_constant / bottom_constant;
    for (const UOpPtr& f : top) left = left * SInt(f);
    return left;
  }
  return SInt(UOp::make(Ops::IDIV, dtypes::index, {a.uop(), b.uop()}));
}

SInt size_max(const SInt& a, const SInt& b) {
  if (a.is_static() && b.is_static()) return std::max(a.value(), b.value());
  if (a.min() >= b.max()) return a;
  if (b.min() >= a.max()) return b;
  return SInt(UOp::make(Ops::MAX, dtypes::index, {a.uop(), b.uop()}));
}

std::string own_size_name(const std::string& name) {
  if (!followed) return name;
  int n = followed->names[name]++;
  return n == 0 ? name : name + "_" + std::to_string(n + 1);
}

void note_decided_sizes(const HostStep& step, const Tensor& values) {
  if (!followed) return;
  for (size_t i = 0; i < step.sizes.size(); ++i)
    followed->decided.insert_or_assign(step.sizes[i].name(), values.slice(0, static_cast<int64_t>(i), static_cast<int64_t>(i) + 1).reshape(Shape{}));
}

namespace {

Tensor expression_tensor(const UOpPtr& e) {
  auto sources = [&](size_t i) { return expression_tensor(e->src(i)); };
  switch (e->op()) {
    case Ops::CONST: return Tensor::full({}, const_as_int(e->const_value()), dtypes::int64);
    case Ops::DEFINE_VAR:
      if (followed)
        if (auto it = followed->decided.find(e->arg_as<VarArg>().name); it != followed->decided.end()) return it->second;
      throw Error("the size " + e->arg_as<VarArg>().name + " has no value to compute with while the graph is built");
    case Ops::BIND: return Tensor(UOp::make(Ops::CAST, dtypes::int64, {e}), Shape{});  // a bound input size, rebound as the plan runs
    case Ops::ADD: return sources(0) + sources(1);
    case Ops::SUB: return sources(0) - sources(1);
    case Ops::MUL: return sources(0) * sources(1);
    case Ops::MAX: return sources(0).maximum(sources(1));
    case Ops::IDIV: return sources(0).idiv(sources(1));
    case Ops::MOD: return sources(0) - sources(0).idiv(sources(1)) * sources(1);
    case Ops::NEG: return sources(0).neg();
    default: break;
  }
  throw Error("a size (" + to_string(*e) + ") that cannot be computed as a tensor");
}

}  // namespace

Tensor size_as_tensor(const SInt& size) {
  if (size.is_static()) return Tensor::full({}, size.value(), dtypes::int64);
  return expression_tensor(size.uop());
}

Tensor after_decided_sizes(const Tensor& t, const SymShape& sizes) {
  if (!followed || followed->decided.empty()) return t;
  Tensor out = t;
  std::unordered_set<std::string> seen;
  for (const SInt& d : sizes) {
    if (d.is_static()) continue;
    for (const VarArg& v : free_variables(d.uop())) {
      if (!seen.insert(v.name).second) continue;
      auto it = followed->decided.find(v.name);
      if (it == followed->decided.end()) continue;
      // min(size, 0) is 0 (a size is never negative), read from the step's output: no rewrite
      // can drop it, and adding it changes no value.
      Tensor zero = it->second.minimum(Tensor::zeros({}, dtypes::int64));
      out = out.dtype() == dtypes::bool_ ? out.logical_or(zero != Tensor::zeros({}, dtypes::int64)) : out + zero.cast(out.dtype());
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> static_size_values(const Tensor& t) {
  std::optional<SymShape> v = size_values_of(t);
  if (!v) return std::nullopt;
  std::vector<int64_t> out;
  for (const SInt& d : *v) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

std::optional<SymShape> size_values_of(const Tensor& t) {
  if (!followed) return std::nullopt;
  auto it = followed->values.find(t.uop().get());
  if (it == followed->values.end()) return std::nullopt;
  return it->second.second;
}

void note_size_values(const Tensor& t, SymShape values) {
  if (!followed || static_cast<int64_t>(values.size()) != t.numel()) return;
  followed->values[t.uop().get()] = {t.uop(), std::move(values)};
}

void follow_size_values(const OpContext& c, const std::vector<Value>& outs) {
  if (!followed || outs.empty() || !outs[0].is_tensor()) return;
  const Tensor& out = outs[0].tensor();
  if (!(out.dtype().is_int() || out.dtype() == dtypes::bool_) || out.is_symbolic() || out.numel() > kMostElements) return;
  auto rule = rules().find(c.op());
  if (rule == rules().end()) return;
  // Only where an input is followed: what is made of constants alone is folded as usual.
  bool any = false;
  for (size_t i = 0; i < c.num_inputs() && !any; ++i) any = c.has(i) && c.value(i).is_tensor() && size_values_of(c.value(i).tensor());
  if (!any) return;
  if (std::optional<SymShape> v = rule->second(c)) note_size_values(out, std::move(*v));
}

SizeValuesScope::SizeValuesScope() {
  if (depth++ == 0) followed = new Followed;
}

SizeValuesScope::~SizeValuesScope() {
  if (--depth == 0) {
    delete followed;
    followed = nullptr;
  }
}

}  // namespace lathe::onnx::detail
