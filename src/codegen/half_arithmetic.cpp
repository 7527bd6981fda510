#include "codegen/half_arithmetic.hpp"

#include <algorithm>

#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"

namespace lathe {
namespace {


UOpPtr widen(const Match& m) {
  const UOpPtr& u = m.root();
  bool any = is_16bit_float(u->dtype()) ||
             std::any_of(u->src().begin(), u->src().end(), [](const UOpPtr& s) { return is_16bit_float(s->dtype()); });
  if (!any) return nullptr;
  std::vector<UOpPtr> src;
  for (const UOpPtr& s : u->src()) src.push_back(is_16bit_float(s->dtype()) ? cast(s, dtypes::float32.vec(s->dtype().count())) : s);
  DType out = is_16bit_float(u->dtype()) ? dtypes::float32.vec(u->dtype().count()) : u->dtype();
  UOpPtr wide = UOp::make(u->op(), out, std::move(src), u->arg());
  return out == u->dtype() ? wide : cast(wide, u->dtype());
}

}  // namespace

UOpPtr round_half_arithmetic(const UOpPtr& ast) {
  static const PatternMatcher pm({{UPat::alu(), widen}});
  return graph_rewrite(ast, pm);
}

}  // namespace lathe
