#include "codegen/integer_division.hpp"

#include "ir/substitute.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

bool may_be(const UOp& u, int64_t v) { return u.vmin() <= v && v <= u.vmax(); }

// `u` (an IDIV or MOD of x by d) with d replaced by 1 where it is 0 or -1, and the result there
// written out.
UOpPtr defined(const UOpPtr& u) {
  const UOpPtr &x = u->src(0), &d = u->src(1);
  bool minus_one = !u->dtype().is_unsigned() && may_be(*d, -1);
  UOpPtr zero = UOp::const_(d->dtype(), int64_t{0}), one = UOp::const_(d->dtype(), int64_t{1});
  UOpPtr is_zero = eq(d, zero), is_minus_one = minus_one ? eq(d, UOp::const_(d->dtype(), int64_t{-1})) : nullptr;
  UOpPtr bad = minus_one ? logical_or(is_zero, is_minus_one) : is_zero;
  UOpPtr safe = where(bad, one, d);
  if (u->op() == Ops::MOD) return where(bad, zero, x % safe);
  UOpPtr q = where(is_zero, zero, idiv(x, safe));
  return minus_one ? where(is_minus_one, zero - x, q) : q;
}

}  // namespace

UOpPtr define_integer_division(const UOpPtr& ast) {
  Substitution map;
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() != Ops::IDIV && u->op() != Ops::MOD) continue;
    if (u->dtype().is_float() || u->dtype().count() != 1) continue;
    const UOp& d = *u->src(1);
    if (may_be(d, 0) || (!u->dtype().is_unsigned() && may_be(d, -1))) map[u.get()] = defined(u);
  }
  return map.empty() ? ast : substitute(ast, map);
}

}  // namespace lathe
