#include "codegen/gate_bounds.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/alu.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "ir/valid.hpp"

namespace lathe {
namespace {

// A gate's comparisons by node id: a deterministic order for the bounds built from them.
using Atoms = std::map<uint64_t, GateClause>;

// A vector gate that is one scalar gate on every lane (a pool's window gate selecting between a
// vector of channels and -inf) holds the scalar's clauses.
void add_clauses(const UOpPtr& gate, Atoms& out) {
  if (UOpPtr one = splat_of(gate)) return add_clauses(one, out);
  if (gate->dtype().count() > 1) {  // a gate per lane (a masked load): its parts the same on every lane
    for (const UOpPtr& leaf : and_leaves(gate))
      if (UOpPtr one = splat_of(leaf)) add_clauses(one, out);
    return;
  }
  for (GateClause& c : gate_clauses(gate)) out.emplace(c.clause->id(), std::move(c));
}

Atoms intersect(const Atoms& a, const Atoms& b) {
  Atoms out;
  for (const auto& [id, u] : a)
    if (b.count(id)) out.emplace(id, u);
  return out;
}

bool is_identity(const UOpPtr& k, Ops op) {
  if (UOpPtr one = splat_of(k)) return is_identity(one, op);
  return k->is_const() && k == reduce_identity(op, k->dtype());
}

// The conditions under which v can differ from the identity of the reduction `op`: v is the
// identity wherever one of them is false.
class Unless {
 public:
  explicit Unless(Ops op) : op_(op) {}

  const Atoms& of(const UOpPtr& v) {
    if (auto it = memo_.find(v.get()); it != memo_.end()) return it->second;
    Atoms out;
    bool sum = op_ == Ops::ADD;
    switch (v->op()) {
      case Ops::LOAD:  // a gated load is 0 where its gate is false
        if (sum && v->src(0)->op() == Ops::INDEX && v->src(0)->src().size() == 3) add_clauses(v->src(0)->src(2), out);
        break;
      case Ops::WHERE:
        if (is_identity(v->src(2), op_)) {
          add_clauses(v->src(0), out);
          for (const auto& a : of(v->src(1))) out.insert(a);
        }
        break;
      case Ops::MUL:
        if (sum)
          for (size_t i = 0; i < 2; ++i)
            for (const auto& a : of(v->src(i))) out.insert(a);
        break;
      case Ops::CAST:
      case Ops::GEP:
        if (sum) out = of(v->src(0));
        break;
      case Ops::VECTORIZE:
      case Ops::ADD:
      case Ops::MAX:
        if (v->op() != Ops::VECTORIZE && v->op() != op_) break;
        out = of(v->src(0));
        for (size_t i = 1; i < v->src().size() && !out.empty(); ++i) out = intersect(out, of(v->src(i)));
        break;
      default: break;
    }
    return memo_.emplace(v.get(), std::move(out)).first->second;
  }

 private:
  Ops op_;
  std::unordered_map<const UOp*, Atoms> memo_;
};

class BoundFinder {
 public:
  explicit BoundFinder(std::unordered_set<const UOp*> loops) : loops_(std::move(loops)) {}

  // `c` as a bound on loop r (ir/valid's bound_on), its value free of every reduction loop.
  std::optional<LoopBound> bound(const GateClause& c, const UOpPtr& r) {
    std::optional<LoopBound> b = bound_on(c, r);
    return b && !in_loops(b->value) ? b : std::nullopt;
  }

 private:
  bool in_loops(const UOpPtr& e) {
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    bool in = loops_.count(e.get()) > 0;
    for (size_t i = 0; i < e->src().size() && !in; ++i) in = in_loops(e->src(i));
    memo_.emplace(e.get(), in);
    return in;
  }

  std::unordered_set<const UOp*> loops_;
  std::unordered_map<const UOp*, bool> memo_;
};

bool all_true(const UOpPtr& c) {
  if (UOpPtr one = splat_of(c)) return all_true(one);
  return c->is_const() && c->dtype().is_bool() && const_as_int(c->const_value()) == 1;
}

// What the bounds leave behind: ANDs with `true` drop out (symbolic_simple), and so do gates of
// `true` and selects on `true` on every lane.
UOpPtr drop_true(const UOpPtr& ast) {
  static const PatternMatcher pm =
      symbolic_simple() +
      PatternMatcher({{UPat(Ops::INDEX).src({UPat::var("b"), UPat::var("i"), UPat::cnst(1)}),
                       [](const Match& m) -> UOpPtr { return UOp::make(Ops::INDEX, m.root()->dtype(), {m["b"], m["i"]}, m.root()->arg()); }},
                      {UPat(Ops::WHERE).src({UPat(Ops::VECTORIZE).named("c"), UPat::var("t"), UPat::var()}),
                       [](const Match& m) -> UOpPtr { return all_true(m["c"]) ? m["t"] : nullptr; }}});
  return graph_rewrite(ast, pm);
}

}  // namespace

UOpPtr gates_as_loop_bounds(const UOpPtr& ast) {
  // Every reduction's loops, and for each loop the conditions all reductions over it share.
  std::map<uint64_t, std::pair<UOpPtr, Atoms>> shared;  // by the loop's id
  std::unordered_set<const UOp*> loops;
  std::map<Ops, Unless> unless;
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() != Ops::REDUCE) continue;
    Ops op = u->arg_as<Ops>();
    const Atoms& atoms = unless.try_emplace(op, op).first->second.of(u->src(0));
    for (size_t i = 1; i < u->src().size(); ++i) {
      const UOpPtr& r = u->src(i);
      loops.insert(r.get());
      auto [it, fresh] = shared.try_emplace(r->id(), r, atoms);
      if (!fresh) it->second.second = intersect(it->second.second, atoms);
    }
  }
  BoundFinder finder(loops);
  Substitution sub;
  LoopLists lists;
  UOpPtr yes = UOp::const_(dtypes::bool_, true);
  for (const auto& [id, entry] : shared) {
    const auto& [r, atoms] = entry;
    UOpPtr lo = UOp::index_const(0), hi = r->src(0);
    bool found = false;
    for (const auto& [aid, clause] : atoms) {
      std::optional<LoopBound> b = finder.bound(clause, r);
      if (!b) continue;
      if (b->lower) lo = max(lo, b->value);
      else hi = min(hi, b->value);
      sub[clause.clause.get()] = yes;
      found = true;
    }
    if (!found) continue;
    lo = simplify(lo), hi = simplify(hi);
    UOpPtr inner = UOp::make(Ops::RANGE, dtypes::index, {simplify(max(hi - lo, UOp::index_const(0)))}, r->arg());
    sub[r.get()] = inner + lo;
    lists[r.get()] = {inner};  // a reduction lists the new loop itself
  }
  if (sub.empty()) return ast;
  return drop_true(substitute(relist_reductions(ast, lists), sub));
}

}  // namespace lathe
