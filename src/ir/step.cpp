#include "ir/step.hpp"

#include <algorithm>
#include <unordered_map>

#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {

bool varies_with(const UOpPtr& u, const UOp* r) {
  auto outside_reductions_over_r = [r](const UOp& n) {
    return n.op() != Ops::REDUCE ||
           std::none_of(n.src().begin() + 1, n.src().end(), [r](const UOpPtr& s) { return s.get() == r; });
  };
  for (const UOpPtr& n : toposort(u, outside_reductions_over_r))
    if (n.get() == r) return true;
  return false;
}

namespace {

using Steps = std::unordered_map<const UOp*, std::optional<int64_t>>;

// x's step along r where x is r, a constant, or sums and constant multiples of such terms and of
// terms that do not vary with r: the coefficient of r, read off the graph (nothing where x is not
// of that form, or a step overflows).
std::optional<int64_t> linear_step(const UOpPtr& x, const UOp* r, Steps& memo) {
  if (x.get() == r) return 1;
  if (x->op() == Ops::CONST) return 0;
  if (auto it = memo.find(x.get()); it != memo.end()) return it->second;
  std::optional<int64_t> step;
  int64_t out = 0;
  auto both = [&](auto combine) -> std::optional<int64_t> {
    std::optional<int64_t> a = linear_step(x->src(0), r, memo);
    if (!a) return std::nullopt;
    std::optional<int64_t> b = linear_step(x->src(1), r, memo);
    if (!b || combine(*a, *b, &out)) return std::nullopt;
    return out;
  };
  if (x->op() == Ops::ADD) {
    step = both([](int64_t a, int64_t b, int64_t* o) { return __builtin_add_overflow(a, b, o); });
  } else if (x->op() == Ops::SUB) {
    step = both([](int64_t a, int64_t b, int64_t* o) { return __builtin_sub_overflow(a, b, o); });
  } else if (x->op() == Ops::NEG) {
    std::optional<int64_t> a = linear_step(x->src(0), r, memo);
    if (a && !__builtin_sub_overflow(int64_t{0}, *a, &out)) step = out;
  } else if (x->op() == Ops::MUL && (x->src(0)->is_const() || x->src(1)->is_const())) {
    bool first = x->src(0)->is_const();
    std::optional<int64_t> a = linear_step(x->src(first ? 1 : 0), r, memo);
    if (a && !__builtin_mul_overflow(*a, const_as_int(x->src(first ? 0 : 1)->const_value()), &out)) step = out;
  } else if (!varies_with(x, r)) {
    step = 0;
  }
  memo.emplace(x.get(), step);
  return step;
}

}  // namespace

std::optional<int64_t> step_along(const UOpPtr& x, const UOpPtr& r) {
  int64_t size = r->src(0)->vmax();
  if (size < 2 || !varies_with(x, r.get())) return 0;
  // The common case, an affine index, without building and simplifying the difference below.
  if (x->dtype().count() == 1 && (x->dtype().is_index() || x->dtype().is_int())) {
    Steps memo;
    if (std::optional<int64_t> step = linear_step(x, r.get(), memo)) return step;
  }
  UOpPtr at = UOp::variable("lathe.step", 0, size - 2);
  UOpPtr d = simplify(substitute(x, {{r.get(), at + 1}}) - substitute(x, {{r.get(), at}}));
  if (!d->is_const()) return std::nullopt;
  return const_as_int(d->const_value());
}

}  // namespace lathe
