#include "opt/upcast.hpp"

#include <unordered_map>
#include <unordered_set>

#include "ir/axis.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"

namespace lathe {
namespace {

constexpr int64_t kColumns = 32;  // outputs per row of the tile: two AVX-512 vectors of float
constexpr int64_t kRows = 4;

// Whether `range` appears in `index` as a plain addend (stride 1).
bool unit_stride(const UOpPtr& index, const UOp* range) {
  std::vector<const UOp*> stack{index.get()};
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (u == range) return true;
    if (u->op() == Ops::ADD)
      for (const UOpPtr& s : u->src()) stack.push_back(s.get());
  }
  return false;
}

bool depends_on(const UOpPtr& u, const UOp* range) {
  for (const UOpPtr& x : toposort(u))
    if (x.get() == range) return true;
  return false;
}

}  // namespace

UOpPtr apply_upcast(const UOpPtr& ast) {
  std::vector<UOpPtr> order = toposort(ast);
  std::vector<UOpPtr> reduces, loads, ranges;
  for (const UOpPtr& u : order) {
    if (u->op() == Ops::REDUCE) reduces.push_back(u);
    if (u->op() == Ops::RANGE) ranges.push_back(u);
    if (is_upcast_range(*u)) return ast;  // already upcast
  }
  if (reduces.size() != 1) return ast;
  const UOpPtr& red = reduces[0];
  std::unordered_set<const UOp*> reduce_ranges;
  for (size_t i = 1; i < red->src().size(); ++i) reduce_ranges.insert(red->src(i).get());
  for (const UOpPtr& u : toposort(red->src(0)))
    if (u->op() == Ops::LOAD) loads.push_back(u);
  if (loads.empty()) return ast;

  // Columns: the innermost output axis some load inside the reduction reads with stride 1.
  const UOp* col = nullptr;
  for (const UOpPtr& r : ranges) {
    if (reduce_ranges.count(r.get()) || !r->src(0)->is_const() || r->src(0)->vmax() % kColumns != 0) continue;
    bool contiguous = false;
    for (const UOpPtr& l : loads) contiguous |= unit_stride(l->src(0)->src(1), r.get());
    if (contiguous && (!col || axis_of(*r) > axis_of(*col))) col = r.get();
  }
  if (!col) return ast;
  // Rows: another output axis that some load inside the reduction does not depend on.
  const UOp* row = nullptr;
  for (const UOpPtr& r : ranges) {
    if (r.get() == col || reduce_ranges.count(r.get()) || !r->src(0)->is_const() || r->src(0)->vmax() % kRows != 0)
      continue;
    bool reused = false;
    for (const UOpPtr& l : loads) reused |= !depends_on(l, r.get());
    if (reused && depends_on(red, r.get()) && (!row || axis_of(*r) > axis_of(*row))) row = r.get();
  }

  int64_t next_axis = 0;
  for (const UOpPtr& r : ranges) next_axis = std::max(next_axis, axis_of(*r) + 1);
  Substitution map;
  auto split = [&](const UOp* r, int64_t n) {
    UOpPtr outer = UOp::make(Ops::RANGE, dtypes::index, {UOp::index_const(r->src(0)->vmax() / n)},
                             std::vector<int64_t>{axis_of(*r)});
    UOpPtr inner = make_range(UOp::index_const(n), next_axis++, AxisKind::Upcast);
    map[r] = outer * n + inner;
  };
  if (row) split(row, kRows);
  split(col, kColumns);
  return simplify(substitute(ast, map));
}

}  // namespace lathe
