#include "ir/valid.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "ir/alu.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/step.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

// The bounds the gate's clauses put on integer expressions: `x < c` caps x at c - 1, `!(x < c)`
// raises it to c.
std::unordered_map<const UOp*, std::pair<int64_t, int64_t>> bounds_from(const UOpPtr& gate) {
  std::unordered_map<const UOp*, std::pair<int64_t, int64_t>> out;
  for (const GateClause& g : gate_clauses(gate)) {
    if (!g.bound->is_const()) continue;
    const UOp* x = g.x.get();
    int64_t c = const_as_int(g.bound->const_value());
    auto [it, fresh] = out.try_emplace(x, x->vmin(), x->vmax());
    if (g.negated) it->second.first = std::max(it->second.first, c);
    else it->second.second = std::min(it->second.second, c - 1);
  }
  return out;
}

// A clause's sum, k times over, inside a bigger sum is replaced by k times its stand-in variable.
struct SumStandIn {
  LinearForm sum;
  UOpPtr var;
};

UOpPtr replace_sums(const UOpPtr& root, const std::vector<SumStandIn>& sums) {
  static const PatternMatcher pm({{UPat(Ops::ADD).named("s"), [](const Match& m) -> UOpPtr {
                                     const UOpPtr& s = m["s"];
                                     std::optional<LinearForm> f = linear_form(s);
                                     if (s->dtype() != dtypes::index || !f) return nullptr;
                                     for (const SumStandIn& e : m.ctx<const std::vector<SumStandIn>>()) {
                                       auto coeff = [&](const UOpPtr& t) -> int64_t {
                                         for (const auto& [u, c] : f->terms)
                                           if (u == t) return c;
                                         return 0;
                                       };
                                       const auto& [t0, a0] = e.sum.terms.front();
                                       int64_t b0 = coeff(t0);
                                       if (b0 == 0 || b0 % a0 != 0) continue;
                                       int64_t k = b0 / a0;
                                       bool all = std::all_of(e.sum.terms.begin(), e.sum.terms.end(),
                                                              [&](const auto& t) { return coeff(t.first) == k * t.second; });
                                       if (!all) continue;
                                       // k*(sum of terms) = k*(var - constant)
                                       std::erase_if(f->terms, [&](const auto& t) {
                                         return std::any_of(e.sum.terms.begin(), e.sum.terms.end(), [&](const auto& u) { return u.first == t.first; });
                                       });
                                       f->terms.emplace_back(e.var, k);
                                       f->constant -= k * e.sum.constant;
                                       return from_linear_form(*f, s->dtype());
                                     }
                                     return nullptr;
                                   }}});
  return graph_rewrite(root, pm, const_cast<std::vector<SumStandIn>*>(&sums));
}

// An address `offset` simplified where `gate` holds; null when the gate narrows nothing or nothing
// changes. Only addresses: the generated code computes both sides of a WHERE, so a value (or a
// nested load's gate) must stay right where its gate does not hold. A bounded loop index or
// variable, or any other bounded expression, is replaced by a stand-in variable with the
// narrower bounds (a bounded sum wherever it occurs inside a bigger sum), the address is
// simplified, and the stand-ins are replaced back.
UOpPtr simplify_under(const UOpPtr& gate, const UOpPtr& offset) {
  Substitution narrow, widen;
  std::vector<SumStandIn> sums;
  for (const auto& [x, b] : bounds_from(gate)) {
    if ((b.first <= x->vmin() && b.second >= x->vmax()) || b.first > b.second) continue;
    UOpPtr v = UOp::variable("valid" + std::to_string(x->id()), std::max(b.first, x->vmin()), std::min(b.second, x->vmax()));
    widen[v.get()] = x->ptr();
    std::optional<LinearForm> f = x->op() == Ops::ADD ? linear_form(x->ptr()) : std::nullopt;
    if (f && f->terms.size() > 1) sums.push_back({std::move(*f), v});
    else narrow[x] = v;
  }
  if (widen.empty()) return nullptr;
  UOpPtr x = substitute(offset, narrow);
  if (!sums.empty()) x = replace_sums(x, sums);
  UOpPtr out = simplify(substitute(simplify(x), widen));
  return out == offset ? nullptr : out;
}

// `gate` with each leaf simplified under the others: a leaf matters only where the others hold
// (a shifted window's mask `(2688a + 384b + c - 768) / 384 % 14 < 13` beside `768 <= c < 1152`,
// the concatenation's piece, is `(7a + b) % 14 < 13`). Null when no leaf changes.
UOpPtr simplify_leaves(const UOpPtr& gate) {
  std::vector<UOpPtr> leaves = and_leaves(gate);
  if (leaves.size() < 2) return nullptr;
  bool changed = false;
  auto compared = [](const UOpPtr& leaf) -> UOpPtr {
    std::optional<GateClause> c = as_clause(leaf);
    return c ? c->x : nullptr;
  };
  for (size_t k = 0; k < leaves.size(); ++k) {
    // Under the leaves that compare something else (one comparing the same expression, the other
    // half of `0 <= x < 13`, would only stand that expression in for a variable).
    UOpPtr others, x = compared(leaves[k]);
    for (size_t j = 0; j < leaves.size(); ++j)
      if (j != k && (!x || compared(leaves[j]) != x)) others = others ? logical_and(others, leaves[j]) : leaves[j];
    if (!others) continue;
    if (UOpPtr s = simplify_under(others, leaves[k])) leaves[k] = s, changed = true;
  }
  if (!changed) return nullptr;
  UOpPtr out;
  for (const UOpPtr& leaf : leaves) out = out ? logical_and(out, leaf) : leaf;
  return simplify(out);
}

// Whether every leaf of `g` is a leaf of `gate`: where g is false, so is gate.
bool implied_by(const UOpPtr& g, const UOpPtr& gate) {
  std::vector<UOpPtr> all = and_leaves(gate);
  for (const UOpPtr& leaf : and_leaves(g))
    if (std::find(all.begin(), all.end(), leaf) == all.end()) return false;
  return true;
}

const PatternMatcher& rules() {
  static const PatternMatcher pm({
      // where(g, load gated by g (and perhaps more), 0) is the load itself
      {UPat(Ops::WHERE).src({UPat::var("g"), UPat(Ops::LOAD).named("ld"), UPat::var("zero")}),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& idx = m["ld"]->src(0);
         return idx->src().size() == 3 && is_zero(m["zero"]) && implied_by(m["g"], idx->src(2)) ? m["ld"] : nullptr;
       }},
      {UPat(Ops::INDEX).named("i"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& i = m["i"];
         if (i->src().size() != 3) return nullptr;
         UOpPtr gate = simplify_leaves(i->src(2));
         UOpPtr off = simplify_under(gate ? gate : i->src(2), i->src(1));
         if (!gate && !off) return nullptr;
         return UOp::make(Ops::INDEX, i->dtype(), {i->src(0), off ? off : i->src(1), gate ? gate : i->src(2)});
       }},
  });
  return pm;
}

}  // namespace

std::vector<UOpPtr> and_leaves(const UOpPtr& gate) {
  std::vector<UOpPtr> out, stack{gate};
  while (!stack.empty()) {
    UOpPtr g = std::move(stack.back());
    stack.pop_back();
    if (g->op() != Ops::AND) {
      out.push_back(std::move(g));
      continue;
    }
    stack.push_back(g->src(1));
    stack.push_back(g->src(0));
  }
  return out;
}

std::optional<GateClause> as_clause(const UOpPtr& leaf) {
  bool negated = leaf->op() == Ops::CMPNE && leaf->src(1)->is_const() && leaf->src(1)->dtype().is_bool() && const_as_int(leaf->src(1)->const_value()) == 1;
  const UOpPtr& cmp = negated ? leaf->src(0) : leaf;
  if (cmp->op() != Ops::CMPLT || cmp->src(0)->dtype() != dtypes::index) return std::nullopt;
  return GateClause{leaf, cmp->src(0), cmp->src(1), negated};
}

std::vector<GateClause> gate_clauses(const UOpPtr& gate) {
  std::vector<GateClause> out;
  for (const UOpPtr& leaf : and_leaves(gate))
    if (std::optional<GateClause> c = as_clause(leaf)) out.push_back(std::move(*c));
  return out;
}

std::optional<LoopBound> bound_on(const GateClause& clause, const UOpPtr& r) {
  std::optional<LinearForm> f = linear_form(clause.x);
  if (!f) return std::nullopt;
  LinearForm rest{{}, f->constant};
  bool found = false;
  for (const auto& [t, k] : f->terms) {
    if (t == r && k == 1) found = true;
    else rest.terms.emplace_back(t, k);
  }
  if (!found) return std::nullopt;
  UOpPtr others = from_linear_form(rest, dtypes::index);
  if (varies_with(others, r.get())) return std::nullopt;  // r inside another term (r + r / 2): no bound on r alone
  return LoopBound{clause.negated, clause.bound - others};
}

UOpPtr simplify_valid(const UOpPtr& ast) { return graph_rewrite(ast, rules(), nullptr, Direction::TopDown); }

}  // namespace lathe
