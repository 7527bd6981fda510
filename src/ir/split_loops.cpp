#include "ir/split_loops.hpp"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "ir/merge_loops.hpp"
#include "ir/axis.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "ir/valid.hpp"

namespace lathe {
namespace {

// The (loop, n) pairs to try: each division by a constant n of an expression of one plain loop
// whose size n divides (and is not).
std::vector<std::pair<UOpPtr, int64_t>> candidates(const std::vector<UOpPtr>& order) {
  std::unordered_map<const UOp*, std::set<const UOp*>> loops;  // a node -> the loops it reads
  std::unordered_map<const UOp*, UOpPtr> range_of;
  std::set<std::pair<const UOp*, int64_t>> seen;
  std::vector<std::pair<UOpPtr, int64_t>> out;
  for (const UOpPtr& u : order) {
    std::set<const UOp*>& mine = loops[u.get()];
    for (const UOpPtr& s : u->src()) mine.insert(loops[s.get()].begin(), loops[s.get()].end());
    if (u->op() == Ops::RANGE) mine.insert(u.get()), range_of[u.get()] = u;
    if ((u->op() != Ops::IDIV && u->op() != Ops::MOD) || !u->src(1)->is_const()) continue;
    const std::set<const UOp*>& read = loops[u->src(0).get()];
    if (read.size() != 1 || !plain_loop(**read.begin())) continue;
    const UOpPtr& l = range_of[*read.begin()];
    int64_t n = u->src(1)->vmax(), size = l->src(0)->vmax();
    if (n > 1 && n < size && size % n == 0 && seen.emplace(l.get(), n).second) out.emplace_back(l, n);
  }
  return out;
}

// `ast` with loop l split into q (l's axis) and r (the next axis) of size n, l = q * n + r.
UOpPtr with_split(const UOpPtr& ast, const std::vector<UOpPtr>& order, const UOpPtr& l, int64_t n, UOpPtr& q, UOpPtr& r) {
  int64_t axis = axis_of(*l), size = l->src(0)->vmax();
  // Later loops move up one, the last first: a loop moved onto an axis still taken would be the
  // same node as the loop there (RANGEs are hash-consed by size and axis).
  std::vector<UOpPtr> later;
  for (const UOpPtr& u : order)
    if (u->op() == Ops::RANGE && axis_of(*u) > axis) later.push_back(u);
  std::sort(later.begin(), later.end(), [](const UOpPtr& a, const UOpPtr& b) { return axis_of(*a) > axis_of(*b); });
  UOpPtr moved = ast;
  for (const UOpPtr& u : later) {
    std::vector<int64_t> arg = u->arg_as<std::vector<int64_t>>();
    ++arg[0];
    moved = substitute(moved, {{u.get(), UOp::make(Ops::RANGE, u->dtype(), u->src(), std::move(arg))}});
  }
  q = make_range(UOp::index_const(size / n), axis);
  r = make_range(UOp::index_const(n), axis + 1);
  UOpPtr listed = reduction_loop(order, *l) ? relist_reductions(moved, {{l.get(), {q, r}}}) : moved;
  return substitute(listed, {{l.get(), q * n + r}});
}

// `ast` with its first candidate split that divides less often; null when none does.
UOpPtr first_split(const UOpPtr& ast) {
  std::vector<UOpPtr> order = toposort(ast);
  for (const auto& [l, n] : candidates(order)) {
    UOpPtr q, r;
    UOpPtr next = simplify_valid(simplify(with_split(ast, order, l, n, q, r)));
    if (divisions_reading(toposort(next), {q.get(), r.get()}) < divisions_reading(order, {l.get()})) return next;
  }
  return nullptr;
}

}  // namespace

UOpPtr split_divided_loops(const UOpPtr& ast) {
  UOpPtr cur = ast;
  while (UOpPtr next = first_split(cur)) cur = next;
  return cur;
}

}  // namespace lathe
