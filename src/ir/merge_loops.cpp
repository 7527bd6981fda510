#include "ir/merge_loops.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/axis.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "ir/valid.hpp"

namespace lathe {
namespace {

// The pairs (outer, inner) that may merge, innermost first: consecutive output loops, and
// consecutive loops of the reductions, where every reduction over one runs over the other.
std::vector<std::pair<UOpPtr, UOpPtr>> candidates(const std::vector<UOpPtr>& order) {
  std::vector<UOpPtr> outputs;
  std::set<std::pair<const UOp*, const UOp*>> reduce_pairs;
  std::unordered_map<const UOp*, std::set<const UOp*>> reductions_of;  // a loop -> the REDUCEs over it
  for (const UOpPtr& u : order)
    if (u->op() == Ops::REDUCE)
      for (size_t i = 1; i < u->src().size(); ++i) reductions_of[u->src(i).get()].insert(u.get());
  std::vector<std::pair<UOpPtr, UOpPtr>> out;
  auto by_axis = [](const UOpPtr& a, const UOpPtr& b) { return axis_of(*a) < axis_of(*b); };
  for (const UOpPtr& u : order) {
    if (u->op() == Ops::RANGE && !reductions_of.count(u.get())) outputs.push_back(u);
    if (u->op() != Ops::REDUCE) continue;
    std::vector<UOpPtr> loops(u->src().begin() + 1, u->src().end());
    std::sort(loops.begin(), loops.end(), by_axis);
    for (size_t i = 0; i + 1 < loops.size(); ++i) {
      const UOpPtr &a = loops[i], &b = loops[i + 1];
      if (reductions_of[a.get()] == reductions_of[b.get()] && reduce_pairs.emplace(a.get(), b.get()).second) out.emplace_back(a, b);
    }
  }
  std::sort(outputs.begin(), outputs.end(), by_axis);
  for (size_t i = 0; i + 1 < outputs.size(); ++i) out.emplace_back(outputs[i], outputs[i + 1]);
  std::erase_if(out, [](const auto& p) { return !plain_loop(*p.first) || !plain_loop(*p.second); });
  std::sort(out.begin(), out.end(), [&](const auto& x, const auto& y) { return axis_of(*x.second) > axis_of(*y.second); });
  return out;
}

// `ast` with loops a (outer) and b (inner) replaced by one loop m: a = m / n, b = m % n, and m in
// every reduction's loop list where a was (b leaves the lists).
UOpPtr with_merged(const UOpPtr& ast, const std::vector<UOpPtr>& order, const UOpPtr& a, const UOpPtr& b, UOpPtr& m) {
  int64_t n = b->src(0)->vmax();
  m = make_range(UOp::index_const(a->src(0)->vmax() * n), axis_of(*a));
  UOpPtr listed = reduction_loop(order, *a) ? relist_reductions(ast, {{a.get(), {m}}, {b.get(), {}}}) : ast;
  return substitute(listed, {{a.get(), idiv(m, n)}, {b.get(), m % n}});
}

// `ast` with its first candidate pair merged that divides no more often; null when none does.
UOpPtr first_merge(const UOpPtr& ast) {
  std::vector<UOpPtr> order = toposort(ast);
  for (const auto& [a, b] : candidates(order)) {
    UOpPtr m;
    UOpPtr next = simplify_valid(simplify(with_merged(ast, order, a, b, m)));
    if (divisions_reading(toposort(next), {m.get()}) <= divisions_reading(order, {a.get(), b.get()})) return next;
  }
  return nullptr;
}

}  // namespace

bool plain_loop(const UOp& r) {
  return r.op() == Ops::RANGE && r.src(0)->is_const() && r.src(0)->vmax() >= 1 && axis_kind(r) == AxisKind::Loop;
}

bool reduction_loop(const std::vector<UOpPtr>& order, const UOp& range) {
  return std::any_of(order.begin(), order.end(), [&](const UOpPtr& u) {
    return u->op() == Ops::REDUCE && std::any_of(u->src().begin() + 1, u->src().end(), [&](const UOpPtr& s) { return s.get() == &range; });
  });
}

size_t divisions_reading(const std::vector<UOpPtr>& order, const std::set<const UOp*>& loops) {
  std::unordered_map<const UOp*, bool> reads;
  size_t n = 0;
  for (const UOpPtr& u : order) {
    bool r = loops.count(u.get()) > 0;
    for (const UOpPtr& s : u->src()) r = r || reads[s.get()];
    reads[u.get()] = r;
    n += r && (u->op() == Ops::IDIV || u->op() == Ops::MOD);
  }
  return n;
}

UOpPtr merge_adjacent_loops(const UOpPtr& ast) {
  UOpPtr cur = ast;
  while (UOpPtr next = first_merge(cur)) cur = next;
  return cur;
}

}  // namespace lathe
