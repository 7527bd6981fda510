#include "codegen/accumulators.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ir/axis.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

UOpPtr identity(Ops op, DType d) {
  if (op == Ops::ADD) return UOp::const_(d, int64_t{0});
  if (op == Ops::MUL) return UOp::const_(d, int64_t{1});
  if (d.is_float()) return UOp::const_(d, -std::numeric_limits<double>::infinity());
  return UOp::const_(d, d.min());
}

// The ranges a node's value depends on: every RANGE under it, except those an END closes.
std::vector<UOpPtr> live_ranges(const UOpPtr& u) {
  std::unordered_set<const UOp*> closed;
  std::vector<UOpPtr> out;
  for (const UOpPtr& n : toposort(u))
    if (n->op() == Ops::END)
      for (const UOpPtr& s : n->src())
        if (s->op() == Ops::RANGE) closed.insert(s.get());
  for (const UOpPtr& n : toposort(u))
    if (n->op() == Ops::RANGE && !closed.count(n.get())) out.push_back(n);
  return out;
}

struct Ctx {
  int64_t next_reg = 0;
};

UOpPtr lower(const Match& m) {
  const UOpPtr& red = m.root();
  Ctx& ctx = m.ctx<Ctx>();
  const UOpPtr& x = red->src(0);
  std::vector<UOpPtr> own(red->src().begin() + 1, red->src().end());
  std::vector<UOpPtr> upcasts, around;
  for (const UOpPtr& r : live_ranges(x)) {
    if (std::find(own.begin(), own.end(), r) != own.end()) continue;
    (is_upcast_range(*r) ? upcasts : around).push_back(r);
  }
  std::sort(upcasts.begin(), upcasts.end(), [](const UOpPtr& a, const UOpPtr& b) { return axis_of(*a) < axis_of(*b); });
  int64_t size = 1;
  UOpPtr flat = UOp::index_const(0);
  for (const UOpPtr& u : upcasts) {
    int64_t n = u->src(0)->vmax();
    flat = flat * n + u;
    size *= n;
  }
  flat = simplify(flat);
  // 16-bit floats accumulate in float, rounded once when the result is used.
  DType out = red->dtype();
  bool widen = out.scalar() == dtypes::float16 || out.scalar() == dtypes::bfloat16;
  DType dt = widen ? dtypes::float32 : out;
  Ops op = red->arg_as<Ops>();
  std::vector<UOpPtr> reg_src{identity(op, dt)};
  reg_src.insert(reg_src.end(), around.begin(), around.end());
  UOpPtr reg = UOp::make(Ops::DEFINE_REG, dt.ptr(AddrSpace::Reg, size), std::move(reg_src), ctx.next_reg++);
  UOpPtr slot = UOp::make(Ops::INDEX, reg->dtype(), {reg, flat});
  UOpPtr acc = UOp::make(Ops::LOAD, dt, {slot, own.back()});
  UOpPtr update = UOp::make(Ops::STORE, dtypes::void_, {slot, UOp::alu(op, {acc, widen ? cast(x, dt) : x})});
  std::vector<UOpPtr> end_src{update};
  end_src.insert(end_src.end(), own.begin(), own.end());
  UOpPtr end = UOp::make(Ops::END, dtypes::void_, std::move(end_src));
  UOpPtr result = UOp::make(Ops::LOAD, dt, {slot, end});
  return widen ? cast(result, out) : result;
}

}  // namespace

UOpPtr lower_reductions(const UOpPtr& ast) {
  static const PatternMatcher pm({{UPat(Ops::REDUCE), lower}});
  Ctx ctx;
  return graph_rewrite(ast, pm, &ctx);
}

}  // namespace lathe
