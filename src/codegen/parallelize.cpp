#include "codegen/parallelize.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "codegen/accumulators.hpp"
#include "codegen/estimates.hpp"
#include "codegen/linearize.hpp"
#include "ir/axis.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

// The outermost output loop: not a reduction's, not upcast, smallest axis; null when none.
UOpPtr outermost_loop(const UOpPtr& ast) {
  std::set<const UOp*> reduce_ranges;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::REDUCE)
      for (size_t i = 1; i < u->src().size(); ++i) reduce_ranges.insert(u->src(i).get());
  UOpPtr best;
  for (const UOpPtr& u : toposort(ast)) {
    if (u->op() != Ops::RANGE || reduce_ranges.count(u.get()) || is_upcast_range(*u)) continue;
    if (!best || axis_of(*u) < axis_of(*best)) best = u;
  }
  return best;
}

}  // namespace

int choose_threads(const UOpPtr& ast, int max_threads) {
  if (max_threads <= 1) return 1;
  UOpPtr outer = outermost_loop(ast);
  int64_t n = outer ? outer->src(0)->vmax() : 0;
  if (n < 2) return 1;
  // Waking the pool costs microseconds: worth it from about 2^18 operations (a load counts as one).
  Estimates e = count_work(linearize(lower_reductions(ast)));
  int64_t work = e.ops->vmax() + e.index_ops->vmax() + e.lds->vmax() / 4;
  if (work < (int64_t{1} << 18)) return 1;
  return static_cast<int>(std::min<int64_t>(max_threads, n));
}

UOpPtr split_for_threads(const UOpPtr& ast, int threads) {
  if (threads <= 1) return ast;
  UOpPtr outer = outermost_loop(ast);
  if (!outer) return ast;
  UOpPtr n = outer->src(0);
  UOpPtr core = UOp::make(Ops::SPECIAL, dtypes::index, {UOp::index_const(threads)}, std::string("core_id"));
  UOpPtr chunk = simplify(idiv(n + (threads - 1), UOp::index_const(threads)));
  UOpPtr start = simplify(core * chunk);
  UOpPtr mine = simplify(min(chunk, n - start));  // the last cores may get less, or nothing
  UOpPtr inner = make_range(mine, axis_of(*outer), axis_kind(*outer));
  PatternMatcher swap({{UPat(Ops::RANGE).named("r"), [&](const Match& m) -> UOpPtr {
                          return m["r"] == outer ? start + inner : nullptr;
                        }}});
  return simplify(graph_rewrite(ast, swap, nullptr, Direction::TopDown));
}

}  // namespace lathe
