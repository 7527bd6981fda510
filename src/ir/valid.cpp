#include "ir/valid.hpp"

#include <unordered_map>

#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

using Substitution = std::unordered_map<const UOp*, UOpPtr>;

UOpPtr substitute(const UOpPtr& root, const Substitution& map) {
  static const PatternMatcher pm({{UPat(), [](const Match& m) -> UOpPtr {
                                     const auto& mp = m.ctx<const Substitution>();
                                     auto it = mp.find(m.root().get());
                                     return it == mp.end() ? nullptr : it->second;
                                   }}});
  return graph_rewrite(root, pm, const_cast<Substitution*>(&map), Direction::TopDown);
}

bool is_index_leaf(const UOp& u) { return u.op() == Ops::RANGE || u.op() == Ops::DEFINE_VAR; }

// The bounds the gate's clauses put on loop indices and variables: `x < c` caps x at c - 1,
// `!(x < c)` (spelled `(x < c) != true`) raises it to c.
std::unordered_map<const UOp*, std::pair<int64_t, int64_t>> bounds_from(const UOpPtr& gate) {
  std::unordered_map<const UOp*, std::pair<int64_t, int64_t>> out;
  std::vector<const UOp*> stack{gate.get()};
  while (!stack.empty()) {
    const UOp* g = stack.back();
    stack.pop_back();
    if (g->op() == Ops::AND) {
      stack.push_back(g->src(0).get());
      stack.push_back(g->src(1).get());
      continue;
    }
    bool negated = g->op() == Ops::CMPNE && g->src(1)->is_const() && g->src(1)->dtype().is_bool() && const_as_int(g->src(1)->const_value()) == 1;
    const UOp* cmp = negated ? g->src(0).get() : g;
    if (cmp->op() != Ops::CMPLT || !is_index_leaf(*cmp->src(0)) || !cmp->src(1)->is_const()) continue;
    const UOp* x = cmp->src(0).get();
    int64_t c = const_as_int(cmp->src(1)->const_value());
    auto [it, fresh] = out.try_emplace(x, x->vmin(), x->vmax());
    if (negated) it->second.first = std::max(it->second.first, c);
    else it->second.second = std::min(it->second.second, c - 1);
  }
  return out;
}

// An address `offset` simplified where `gate` holds; null when the gate narrows nothing or nothing
// changes. Only addresses: the generated code computes both sides of a WHERE, so a value (or a
// nested load's gate) must stay right where its gate does not hold.
UOpPtr simplify_under(const UOpPtr& gate, const UOpPtr& offset) {
  Substitution narrow, widen;
  for (const auto& [x, b] : bounds_from(gate)) {
    if ((b.first <= x->vmin() && b.second >= x->vmax()) || b.first > b.second) continue;
    UOpPtr v = UOp::variable("valid" + std::to_string(x->id()), b.first, b.second);
    narrow[x] = v;
    widen[v.get()] = x->ptr();
  }
  if (narrow.empty()) return nullptr;
  UOpPtr out = substitute(simplify(substitute(offset, narrow)), widen);
  return out == offset ? nullptr : out;
}

bool is_zero(const UOpPtr& u) { return u->is_const() && const_as_double(u->const_value()) == 0.0; }

const PatternMatcher& rules() {
  static const PatternMatcher pm({
      // where(g, load gated by g, 0) is the load itself
      {UPat(Ops::WHERE).src({UPat::var("g"), UPat(Ops::LOAD).named("ld"), UPat::var("zero")}),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& idx = m["ld"]->src(0);
         return idx->src().size() == 3 && idx->src(2) == m["g"] && is_zero(m["zero"]) ? m["ld"] : nullptr;
       }},
      {UPat(Ops::INDEX).named("i"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& i = m["i"];
         if (i->src().size() != 3) return nullptr;
         UOpPtr off = simplify_under(i->src(2), i->src(1));
         return off ? UOp::make(Ops::INDEX, i->dtype(), {i->src(0), off, i->src(2)}) : nullptr;
       }},
  });
  return pm;
}

}  // namespace

UOpPtr simplify_valid(const UOpPtr& ast) { return graph_rewrite(ast, rules(), nullptr, Direction::TopDown); }

}  // namespace lathe
