#include "codegen/estimates.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "codegen/linearize.hpp"
#include "ir/pattern.hpp"
#include "ir/rewrite.hpp"
#include "ir/symbolic.hpp"
#include "ir/substitute.hpp"
#include "ir/toposort.hpp"
#include "opt/tensor_core.hpp"

namespace lathe {
namespace {

// A GPU's block or thread index of more positions than this is counted as its first position
// times its size (summing thousands of blocks cost more than rendering the kernel): exact for
// work the same at every position; the tail's idle threads are counted as working, and a loop
// bounded by the position (a gate-bounded reduction) at the first position's bound. Profiles and
// traces read it. A CPU's core ids are always summed: their work differs by core, and they are few.
constexpr int64_t kMostGpuPositionsSummed = 64;

// A count of one launch (a threaded loop's trip count may depend on the core id), summed over
// every launch index: what all cores together do.
UOpPtr all_launches(const UOpPtr& count, const std::vector<UOpPtr>& launches) {
  static const PatternMatcher at({{UPat(Ops::SPECIAL).named("s"), [](const Match& m) -> UOpPtr {
                                     const auto& c = m.ctx<const std::pair<const UOp*, int64_t>>();
                                     return m["s"].get() == c.first ? UOp::index_const(c.second) : nullptr;
                                   }}});
  UOpPtr total = simplify(count);
  for (const UOpPtr& s : launches) {
    int64_t positions = s->src(0)->vmax();
    if (positions > kMostGpuPositionsSummed && s->arg_as<std::string>() != "core_id") {
      std::pair<const UOp*, int64_t> first{s.get(), 0};
      total = simplify(graph_rewrite(total, at, &first) * positions);
      continue;
    }
    UOpPtr sum = UOp::index_const(0);
    for (int64_t i = 0; i < positions; ++i) {
      std::pair<const UOp*, int64_t> ctx{s.get(), i};
      sum = sum + graph_rewrite(total, at, &ctx);
    }
    total = simplify(sum);
  }
  return total;
}

constexpr int64_t kMostPositionsSummed = int64_t{1} << 16;

// How many times the body of a loop over [0, `end`) runs, inside loops that run `outer` times: end
// times that; where the end depends on one enclosing loop of at most 2^16 positions (a causal
// attention's blocks of keys, up to its tile's last query; a loop bounded by its gates,
// codegen/gate_bounds), its sum over that loop's positions times the other loops' trips; where
// it depends on more, its largest value.
UOpPtr trips_inside(const UOpPtr& outer, const UOpPtr& end) {
  std::vector<UOpPtr> loops;
  for (const UOpPtr& s : toposort(end))
    if (s->op() == Ops::RANGE) loops.push_back(s);
  if (loops.empty()) return simplify(outer * end);
  int64_t n = loops.size() == 1 ? loops[0]->src(0)->vmax() : 0;
  if (n < 1 || n > kMostPositionsSummed) return simplify(outer * UOp::index_const(end->vmax()));
  UOpPtr sum = UOp::index_const(0);
  for (int64_t i = 0; i < n; ++i) sum = sum + substitute(end, {{loops[0].get(), UOp::index_const(i)}});
  return simplify(idiv(outer * simplify(sum), UOp::index_const(n)));
}

// Counts per trip count: each count added to its trips' total, one product per distinct trip
// count summed at the end (a sum node per instruction made a large kernel's estimate cost more
// than rendering it).
class Tally {
 public:
  void add(const UOpPtr& trips, int64_t count) {
    auto [it, fresh] = index_.try_emplace(trips.get(), terms_.size());
    if (fresh) terms_.emplace_back(trips, 0);
    terms_[it->second].second += count;
  }
  UOpPtr sum() const {
    UOpPtr s = UOp::index_const(0);
    for (const auto& [trips, count] : terms_) s = s + trips * count;
    return s;
  }

 private:
  std::vector<std::pair<UOpPtr, int64_t>> terms_;  // in the order first seen
  std::unordered_map<const UOp*, size_t> index_;
};

}  // namespace

Estimates count_work(const std::vector<UOpPtr>& program) {
  // What computes addresses and gates: everything under an access's index, each node visited once.
  std::unordered_set<const UOp*> addressing;
  std::vector<const UOp*> todo;
  for (const UOpPtr& u : program) {
    if (u->op() != Ops::LOAD && u->op() != Ops::STORE) continue;
    const UOpPtr& idx = u->src(0);
    for (size_t i = 1; i < idx->src().size(); ++i) todo.push_back(idx->src(i).get());
  }
  while (!todo.empty()) {
    const UOp* n = todo.back();
    todo.pop_back();
    if (!addressing.insert(n).second) continue;
    for (const UOpPtr& s : n->src()) todo.push_back(s.get());
  }
  Tally ops, index_ops;
  std::map<int64_t, std::pair<Tally, UOpPtr>> per_buffer;  // slot -> (bytes moved, buffer size)
  std::vector<UOpPtr> trips{UOp::index_const(1)};
  for (const UOpPtr& u : program) {
    const UOpPtr& n = trips.back();
    if (u->op() == Ops::RANGE) {
      trips.push_back(trips_inside(n, u->src(0)));
    } else if (u->op() == Ops::END) {
      for (const UOpPtr& s : u->src())
        if (s->op() == Ops::RANGE) trips.pop_back();
    } else if (u->op() == Ops::LOAD || u->op() == Ops::STORE) {
      const UOpPtr& buf = u->src(0)->src(0);
      if (buf->op() != Ops::DEFINE_GLOBAL) continue;
      DType elem = buf->dtype().base();
      auto& [moved, size] = per_buffer[buf->arg_as<int64_t>()];
      int lanes = (u->op() == Ops::LOAD ? u->dtype() : u->src(1)->dtype()).count();  // a vector access moves every lane
      moved.add(n, elem.itemsize() * lanes);
      if (buf->dtype().ptr_size() >= 0) size = UOp::index_const(buf->dtype().ptr_size() * elem.itemsize());
    } else if (u->op() == Ops::WMMA) {  // a thread's share of a warp's 16 x 8 x 16 multiply-adds
      ops.add(n, 2 * kTensorCoreM * kTensorCoreN * kTensorCoreK / kWarpLanes);
    } else if (is_alu(u->op())) {
      int64_t count = (u->op() == Ops::MULACC ? 2 : 1) * u->dtype().count();
      (addressing.count(u.get()) ? index_ops : ops).add(n, count);
    }
  }
  // The launch indices: inline nodes (SPECIAL among them) are not listed, but sit under listed ones.
  std::vector<UOpPtr> launches;
  std::unordered_set<const UOp*> seen;
  std::vector<UOpPtr> under;
  for (const UOpPtr& u : program) under.insert(under.end(), u->src().begin(), u->src().end());
  while (!under.empty()) {
    UOpPtr n = std::move(under.back());
    under.pop_back();
    if (!is_inline(n->op()) || !seen.insert(n.get()).second) continue;
    if (n->op() == Ops::SPECIAL) launches.push_back(n);
    under.insert(under.end(), n->src().begin(), n->src().end());
  }
  UOpPtr lds = UOp::index_const(0), mem = lds;
  for (auto& [slot, b] : per_buffer) {
    UOpPtr moved = all_launches(b.first.sum(), launches);
    lds = lds + moved;
    mem = mem + (b.second ? min(moved, b.second) : moved);
  }
  return {all_launches(ops.sum(), launches), all_launches(index_ops.sum(), launches), simplify(lds), simplify(mem)};
}

}  // namespace lathe
