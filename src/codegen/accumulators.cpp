#include "codegen/accumulators.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "codegen/half_arithmetic.hpp"
#include "ir/pattern.hpp"
#include "ir/alu.hpp"
#include "ir/rewrite.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

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
  std::vector<UOpPtr> own(red->src().begin() + 1, red->src().end()), around;
  // The accumulator starts afresh inside every loop its value or its own loops' bounds depend on
  // (a loop bounded by its gates, codegen/gate_bounds, ends where the output position says).
  auto add_around = [&](const UOpPtr& from) {
    for (const UOpPtr& r : live_ranges(from))
      if (std::find(own.begin(), own.end(), r) == own.end() && std::find(around.begin(), around.end(), r) == around.end())
        around.push_back(r);
  };
  add_around(x);
  for (const UOpPtr& r : own) add_around(r->src(0));
  // 16-bit floats accumulate in float, rounded once when the result is used.
  DType out = red->dtype(), dt = accumulator_dtype(out);
  bool widen = dt != out;
  Ops op = red->arg_as<Ops>();
  UOpPtr init = reduce_identity(op, dt.scalar());
  if (dt.count() > 1) init = UOp::make(Ops::VECTORIZE, dt, std::vector<UOpPtr>(static_cast<size_t>(dt.count()), init));
  std::vector<UOpPtr> reg_src{init};
  reg_src.insert(reg_src.end(), around.begin(), around.end());
  UOpPtr reg = UOp::make(Ops::DEFINE_REG, dt.ptr(AddrSpace::Reg, 1), std::move(reg_src), ctx.next_reg++);
  UOpPtr slot = UOp::make(Ops::INDEX, reg->dtype(), {reg, UOp::index_const(0)});
  UOpPtr acc = UOp::make(Ops::LOAD, dt, {slot, own.back()});
  UOpPtr update = UOp::make(Ops::STORE, dtypes::void_, {slot, UOp::alu(op, {acc, widen ? cast(x, dt) : x})});
  std::vector<UOpPtr> end_src{update};
  end_src.insert(end_src.end(), own.begin(), own.end());
  UOpPtr end = UOp::make(Ops::END, dtypes::void_, std::move(end_src));
  UOpPtr result = UOp::make(Ops::LOAD, dt, {slot, end});
  return widen ? cast(result, out) : result;
}

// The ENDs of `ast` by the loops they close.
std::map<std::vector<const UOp*>, std::vector<UOpPtr>> ends_by_loops(const UOpPtr& ast) {
  std::map<std::vector<const UOp*>, std::vector<UOpPtr>> by_loops;
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() != Ops::END) continue;
    std::vector<const UOp*> loops;
    for (size_t i = 1; i < u->src().size(); ++i) loops.push_back(u->src(i).get());
    by_loops[loops].push_back(u);
  }
  return by_loops;
}

// The accumulator an END of `lower` updates (numbered `first` or later); null for another END.
UOpPtr accumulator_of(const UOpPtr& end, int64_t first) {
  const UOpPtr& update = end->src(0);
  if (update->op() != Ops::STORE || update->src(0)->op() != Ops::INDEX) return nullptr;
  const UOpPtr& reg = update->src(0)->src(0);
  return reg->op() == Ops::DEFINE_REG && reg->arg_as<int64_t>() >= first ? reg : nullptr;
}

}  // namespace

UOpPtr lower_reductions(const UOpPtr& ast) {
  static const PatternMatcher pm({{UPat(Ops::REDUCE), lower}});
  Ctx ctx;
  // Registers a kernel defines itself (codegen/attention) keep their numbers.
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::DEFINE_REG) ctx.next_reg = std::max(ctx.next_reg, u->arg_as<int64_t>() + 1);
  int64_t first = ctx.next_reg;
  UOpPtr lowered = graph_rewrite(ast, pm, &ctx);
  // Reductions over the same loops (the unrolled copies of one, siblings) share those loops: one
  // END closes them after every update. The shared loops then run inside every loop around any
  // of them, so each accumulator starts afresh inside all of those: an unrolled copy whose value
  // does not depend on an outer loop that its sibling's does (a window's divisor where a gate
  // folded away for the upper lanes) would otherwise keep adding across that loop's iterations.
  Substitution widened;
  for (auto& [loops, ends] : ends_by_loops(lowered)) {
    if (ends.size() < 2) continue;
    std::vector<UOpPtr> regs, around;
    for (const UOpPtr& e : ends)
      if (UOpPtr reg = accumulator_of(e, first)) regs.push_back(reg);
    for (const UOpPtr& reg : regs)
      for (size_t i = 1; i < reg->src().size(); ++i)
        if (std::find(around.begin(), around.end(), reg->src(i)) == around.end()) around.push_back(reg->src(i));
    for (const UOpPtr& reg : regs) {
      if (reg->src().size() == around.size() + 1) continue;
      std::vector<UOpPtr> src{reg->src(0)};
      src.insert(src.end(), around.begin(), around.end());
      widened[reg.get()] = UOp::make(Ops::DEFINE_REG, reg->dtype(), std::move(src), reg->arg());
    }
  }
  if (!widened.empty()) lowered = substitute(lowered, widened);
  Substitution merged;
  for (auto& [loops, ends] : ends_by_loops(lowered)) {
    if (ends.size() < 2) continue;
    std::vector<UOpPtr> updates;
    for (const UOpPtr& e : ends) updates.push_back(e->src(0));
    std::vector<UOpPtr> src{UOp::make(Ops::NOOP, dtypes::void_, std::move(updates))};
    src.insert(src.end(), ends[0]->src().begin() + 1, ends[0]->src().end());
    UOpPtr end = UOp::make(Ops::END, dtypes::void_, std::move(src));
    for (const UOpPtr& e : ends) merged[e.get()] = end;
  }
  return substitute(lowered, merged);
}

UOpPtr fold_accumulators_into_wmma(const UOpPtr& ast) {
  // A WMMA whose C is zeros, and the update of each element's accumulator.
  auto zero_c = [](const UOpPtr& w) {
    UOpPtr c = splat_of(w->src(2));
    return c && is_zero(c);
  };
  struct Four {
    UOpPtr store[4], acc[4];
  };
  std::unordered_map<const UOp*, Four> by_wmma;
  std::vector<UOpPtr> order;  // the WMMAs, as met
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() != Ops::STORE || u->src(0)->op() != Ops::INDEX || u->src(0)->src(0)->op() != Ops::DEFINE_REG) continue;
    const UOpPtr& sum = u->src(1);
    if (sum->op() != Ops::ADD || sum->src(0)->op() != Ops::LOAD || sum->src(0)->src(0) != u->src(0) || sum->src(1)->op() != Ops::GEP) continue;
    const UOpPtr& w = sum->src(1)->src(0);
    if (w->op() != Ops::WMMA || !zero_c(w)) continue;
    int64_t i = sum->src(1)->arg_as<int64_t>();
    auto [it, fresh] = by_wmma.try_emplace(w.get());
    if (fresh) order.push_back(w);
    if (it->second.store[i]) continue;  // (one accumulator an element)
    it->second.store[i] = u, it->second.acc[i] = sum->src(0);
  }
  Substitution folded;
  for (const UOpPtr& w : order) {
    const Four& f = by_wmma.at(w.get());
    if (!f.store[0] || !f.store[1] || !f.store[2] || !f.store[3]) continue;
    UOpPtr c = UOp::make(Ops::VECTORIZE, w->src(2)->dtype(), {f.acc[0], f.acc[1], f.acc[2], f.acc[3]});
    UOpPtr with_c = UOp::make(Ops::WMMA, w->dtype(), {w->src(0), w->src(1), c, w->src(3)}, w->arg());
    for (int64_t i = 0; i < 4; ++i) {
      std::vector<UOpPtr> src = f.store[i]->src();
      src[1] = UOp::make(Ops::GEP, w->dtype().scalar(), {with_c}, i);
      folded[f.store[i].get()] = UOp::make(Ops::STORE, f.store[i]->dtype(), std::move(src), f.store[i]->arg());
    }
  }
  return folded.empty() ? ast : substitute(ast, folded);
}

}  // namespace lathe
