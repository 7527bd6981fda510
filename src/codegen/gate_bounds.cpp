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

namespace lathe {
namespace {

// Conditions by node id: a deterministic order for the bounds built from them.
using Atoms = std::map<uint64_t, UOpPtr>;

void conjuncts(const UOpPtr& g, Atoms& out) {
  if (g->op() == Ops::AND && g->dtype().is_bool()) {
    conjuncts(g->src(0), out);
    conjuncts(g->src(1), out);
  } else if (!(g->is_const() && g->dtype().is_bool())) {
    out.emplace(g->id(), g);
  }
}

Atoms intersect(const Atoms& a, const Atoms& b) {
  Atoms out;
  for (const auto& [id, u] : a)
    if (b.count(id)) out.emplace(id, u);
  return out;
}

bool is_identity(const UOpPtr& k, Ops op) {
  if (k->op() == Ops::VECTORIZE)
    return std::all_of(k->src().begin(), k->src().end(), [&](const UOpPtr& s) { return s == k->src(0); }) && is_identity(k->src(0), op);
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
        if (sum && v->src(0)->op() == Ops::INDEX && v->src(0)->src().size() == 3) conjuncts(v->src(0)->src(2), out);
        break;
      case Ops::WHERE:
        if (is_identity(v->src(2), op_)) {
          conjuncts(v->src(0), out);
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

void terms_of(const UOpPtr& e, std::vector<UOpPtr>& out) {
  if (e->op() == Ops::ADD) {
    terms_of(e->src(0), out);
    terms_of(e->src(1), out);
  } else {
    out.push_back(e);
  }
}

struct Bound {
  bool lower;   // r >= value (else r < value)
  UOpPtr value;
};

class BoundFinder {
 public:
  explicit BoundFinder(std::unordered_set<const UOp*> loops) : loops_(std::move(loops)) {}

  // `atom` as a bound on loop r: (r + rest < c) or NOT(r + rest < c), rest and c outside every
  // reduction loop.
  std::optional<Bound> bound(const UOpPtr& atom, const UOpPtr& r) {
    bool lower = atom->op() == Ops::CMPNE && atom->src(1)->is_const() && atom->src(1)->dtype().is_bool() &&
                 const_as_int(atom->src(1)->const_value()) != 0;
    const UOpPtr& cmp = lower ? atom->src(0) : atom;
    if (cmp->op() != Ops::CMPLT || cmp->src(0)->dtype() != dtypes::index || in_loops(cmp->src(1))) return std::nullopt;
    std::vector<UOpPtr> terms;
    terms_of(cmp->src(0), terms);
    UOpPtr rest;
    int seen = 0;
    for (const UOpPtr& t : terms) {
      if (t == r) ++seen;
      else if (in_loops(t)) return std::nullopt;
      else rest = rest ? rest + t : t;
    }
    if (seen != 1) return std::nullopt;
    return Bound{lower, rest ? cmp->src(1) - rest : cmp->src(1)};
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

// What the bounds leave behind: gates of `true` and ANDs with `true` drop out.
UOpPtr drop_true(const UOpPtr& ast) {
  static const PatternMatcher pm({
      {UPat(Ops::AND).src_any_order({UPat::var("x"), UPat::cvar("t", dtypes::bool_)}),
       [](const Match& m) -> UOpPtr { return const_as_int(m["t"]->const_value()) ? m["x"] : m["t"]; }},
      {UPat(Ops::INDEX).src({UPat::var("b"), UPat::var("i"), UPat::cvar("t", dtypes::bool_)}),
       [](const Match& m) -> UOpPtr {
         return const_as_int(m["t"]->const_value()) ? UOp::make(Ops::INDEX, m.root()->dtype(), {m["b"], m["i"]}, m.root()->arg()) : nullptr;
       }},
      {UPat(Ops::WHERE).src({UPat::cvar("t", dtypes::bool_), UPat::var("a"), UPat::var("b")}),
       [](const Match& m) -> UOpPtr { return const_as_int(m["t"]->const_value()) ? m["a"] : m["b"]; }},
  });
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
  Substitution sub, loop_of;  // loop_of: a loop's shifted index -> the new loop
  UOpPtr yes = UOp::const_(dtypes::bool_, true);
  for (const auto& [id, entry] : shared) {
    const auto& [r, atoms] = entry;
    UOpPtr lo = UOp::index_const(0), hi = r->src(0);
    bool found = false;
    for (const auto& [aid, atom] : atoms) {
      std::optional<Bound> b = finder.bound(atom, r);
      if (!b) continue;
      if (b->lower) lo = max(lo, b->value);
      else hi = min(hi, b->value);
      sub[atom.get()] = yes;
      found = true;
    }
    if (!found) continue;
    lo = simplify(lo), hi = simplify(hi);
    UOpPtr inner = UOp::make(Ops::RANGE, dtypes::index, {simplify(max(hi - lo, UOp::index_const(0)))}, r->arg());
    UOpPtr shifted = inner + lo;
    sub[r.get()] = shifted;
    loop_of[shifted.get()] = inner;
  }
  if (sub.empty()) return ast;
  // A reduction lists its loops: there the shifted index is the new loop itself.
  static const PatternMatcher relist({{UPat(Ops::REDUCE), [](const Match& m) -> UOpPtr {
                                         const auto& loops = m.ctx<const Substitution>();
                                         std::vector<UOpPtr> src = m.root()->src();
                                         bool changed = false;
                                         for (size_t i = 1; i < src.size(); ++i)
                                           if (auto it = loops.find(src[i].get()); it != loops.end()) src[i] = it->second, changed = true;
                                         return changed ? UOp::make(Ops::REDUCE, m.root()->dtype(), std::move(src), m.root()->arg()) : nullptr;
                                       }}});
  return drop_true(graph_rewrite(substitute(ast, sub), relist, const_cast<Substitution*>(&loop_of)));
}

}  // namespace lathe
