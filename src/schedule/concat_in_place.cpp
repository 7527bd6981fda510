#include "schedule/concat_in_place.hpp"

#include <algorithm>

#include "ir/merge_loops.hpp"
#include "ir/split_loops.hpp"
#include "ir/step.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "ir/valid.hpp"

namespace lathe {
namespace {

struct Run {
  ConcatPart part;
  int64_t end;
};

// Load `term` as one run of the output over loop `m` of `n` positions, or nothing.
std::optional<Run> run_of(const UOpPtr& term, const UOpPtr& m, int64_t n, DType dt) {
  if (term->op() != Ops::LOAD || term->dtype() != dt) return std::nullopt;
  const UOpPtr& idx = term->src(0);
  if (idx->op() != Ops::INDEX || idx->src().size() != 3 || idx->src(0)->op() != Ops::DEFINE_GLOBAL) return std::nullopt;
  std::optional<LinearForm> f = linear_form(idx->src(1));
  if (!f || f->terms.size() != 1 || f->terms[0].first != m || f->terms[0].second != 1) return std::nullopt;
  int64_t lo = 0, hi = n;
  for (const UOpPtr& leaf : and_leaves(idx->src(2))) {  // every leaf a constant bound on m
    std::optional<GateClause> c = as_clause(leaf);
    std::optional<LoopBound> b = c ? bound_on(*c, m) : std::nullopt;
    UOpPtr value = b ? simplify(b->value) : nullptr;
    if (!value || !value->is_const()) return std::nullopt;
    int64_t v = const_as_int(value->const_value());
    if (b->lower) lo = std::max(lo, v);
    else hi = std::min(hi, v);
  }
  if (lo != -f->constant || hi <= lo || idx->src(0)->dtype().ptr_size() != hi - lo) return std::nullopt;
  return Run{{static_cast<size_t>(idx->src(0)->arg_as<int64_t>()), lo}, hi};
}

}  // namespace

std::optional<std::vector<ConcatPart>> concatenated_parts(const UOpPtr& kernel) {
  // First, without simplifying, a cheap reject (every kernel of a plan is asked, also on a prepare
  // that finds its programs in the disk cache): one store, no reduction, at least two loads and
  // each gated. Simplifying adds neither a store nor a reduction, so the checks below need not.
  size_t gated_loads = 0, stores = 0;
  for (const UOpPtr& u : toposort(kernel)) {
    if (u->op() == Ops::REDUCE || u->op() == Ops::REDUCE_AXIS) return std::nullopt;
    stores += u->op() == Ops::STORE;
    if (u->op() != Ops::LOAD) continue;
    if (u->src(0)->op() != Ops::INDEX || u->src(0)->src().size() != 3) return std::nullopt;
    ++gated_loads;
  }
  if (stores != 1 || gated_loads < 2) return std::nullopt;
  // Its loops as the optimizer will see them (codegen/pipeline's shaping steps): a loop read only
  // through a division split, then adjacent loops merged, so the runs are ranges of one loop.
  UOpPtr ast = merge_adjacent_loops(split_divided_loops(simplify_valid(simplify(kernel))));
  if (ast->op() != Ops::SINK || ast->src(0)->op() != Ops::STORE) return std::nullopt;
  const UOpPtr& st = ast->src(0);
  const UOpPtr& idx = st->src(0);
  if (idx->op() != Ops::INDEX || idx->src().size() != 2 || idx->src(0)->op() != Ops::DEFINE_GLOBAL) return std::nullopt;
  const UOpPtr& m = idx->src(1);
  if (m->op() != Ops::RANGE || !m->src(0)->is_const()) return std::nullopt;
  for (const UOpPtr& u : toposort(ast))
    if ((u->op() == Ops::RANGE && u != m) || u->op() == Ops::DEFINE_VAR) return std::nullopt;
  int64_t n = const_as_int(m->src(0)->const_value());
  DType dt = st->src(1)->dtype();
  if (idx->src(0)->dtype().ptr_size() != n || dt.count() != 1) return std::nullopt;
  std::vector<UOpPtr> terms = index_terms(st->src(1));
  if (terms.size() < 2) return std::nullopt;
  std::vector<Run> runs;
  for (const UOpPtr& t : terms) {
    std::optional<Run> r = run_of(t, m, n, dt);
    if (!r || r->part.slot == static_cast<size_t>(idx->src(0)->arg_as<int64_t>())) return std::nullopt;
    runs.push_back(*r);
  }
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.part.offset < b.part.offset; });
  std::vector<ConcatPart> parts;
  int64_t at = 0;
  for (const Run& r : runs) {
    if (r.part.offset != at) return std::nullopt;
    for (const ConcatPart& p : parts)
      if (p.slot == r.part.slot) return std::nullopt;
    parts.push_back(r.part);
    at = r.end;
  }
  if (at != n) return std::nullopt;
  return parts;
}

}  // namespace lathe
