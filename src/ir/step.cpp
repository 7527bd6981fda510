#include "ir/step.hpp"

#include <algorithm>

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

std::optional<int64_t> step_along(const UOpPtr& x, const UOpPtr& r) {
  int64_t size = r->src(0)->vmax();
  if (size < 2 || !varies_with(x, r.get())) return 0;
  // The common case, a sum of multiples of r and of terms that do not vary with r: r's
  // coefficient, without building and simplifying the difference below.
  if (x->dtype().count() == 1 && x->dtype().is_int())
    if (std::optional<LinearForm> f = linear_form(x)) {
      int64_t step = 0;
      bool affine = true;
      for (const auto& [term, coefficient] : f->terms) {
        if (term == r) {
          step = coefficient;
        } else if (varies_with(term, r.get())) {
          affine = false;
          break;
        }
      }
      if (affine) return step;
    }
  UOpPtr at = UOp::variable("lathe.step", 0, size - 2);
  UOpPtr d = simplify(substitute(x, {{r.get(), at + 1}}) - substitute(x, {{r.get(), at}}));
  if (!d->is_const()) return std::nullopt;
  return const_as_int(d->const_value());
}

std::optional<int64_t> step_inside(const UOpPtr& x, const UOpPtr& r, const std::vector<UOpPtr>& ranges) {
  if (r->src(0)->vmax() < 3) return 0;
  auto at = [&](int64_t position) {
    Substitution fixed{{r.get(), UOp::index_const(position)}};
    for (const UOpPtr& o : ranges)
      if (o != r) fixed[o.get()] = UOp::index_const(std::min<int64_t>(1, o->src(0)->vmax() - 1));
    return substitute(x, fixed);
  };
  UOpPtr d = simplify(at(2) - at(1));
  if (!d->is_const()) return std::nullopt;
  return const_as_int(d->const_value());
}

namespace {
void add_index_terms(const UOpPtr& x, std::vector<UOpPtr>& out) {
  if (x->op() == Ops::ADD) {
    add_index_terms(x->src(0), out);
    add_index_terms(x->src(1), out);
  } else {
    out.push_back(x);
  }
}
}  // namespace

std::vector<UOpPtr> index_terms(const UOpPtr& x) {
  std::vector<UOpPtr> out;
  add_index_terms(x, out);
  return out;
}

}  // namespace lathe
