#include "codegen/launch_grid.hpp"

#include <algorithm>

#include "codegen/parallelize.hpp"
#include "ir/axis.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "opt/action.hpp"

namespace lathe {
namespace {

const char* const kBlockIndex[3] = {"gidx0", "gidx1", "gidx2"};
const char* const kThreadIndex[3] = {"lidx0", "lidx1", "lidx2"};

UOpPtr launch_index(const char* name, int64_t size) {
  return UOp::make(Ops::SPECIAL, dtypes::index, {UOp::index_const(size)}, std::string(name));
}

int64_t power_of_two_covering(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// The output loops that become launch indices, innermost first: ordinary and Local loops outside
// every reduction, whose size depends on no other loop and which every store depends on (a store
// that did not would run once per thread of that loop instead of once); the Local ones first,
// then the innermost others, three at most.
std::vector<UOpPtr> launchable_loops(const UOpPtr& ast) {
  std::vector<std::vector<UOpPtr>> stores;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::STORE) stores.push_back(toposort(u));
  auto in_every_store = [&](const UOpPtr& r) {
    for (const std::vector<UOpPtr>& s : stores)
      if (std::find(s.begin(), s.end(), r) == s.end()) return false;
    return true;
  };
  std::vector<UOpPtr> loops;
  for (const Loop& l : kernel_loops(ast)) {
    const UOpPtr& u = l.range;
    if (l.reduce || (l.kind != AxisKind::Loop && l.kind != AxisKind::Local && l.kind != AxisKind::Warp) || !in_every_store(u)) continue;
    bool independent = true;
    for (const UOpPtr& s : toposort(u->src(0))) independent &= s->op() != Ops::RANGE;
    if (independent && u->src(0)->vmax() > 1) loops.push_back(u);
  }
  // A warp's lanes first (dimension x, always), then Local loops, then the innermost others.
  auto rank = [](const UOpPtr& r) { return axis_kind(*r) == AxisKind::Warp ? 0 : axis_kind(*r) == AxisKind::Local ? 1 : 2; };
  std::sort(loops.begin(), loops.end(), [&](const UOpPtr& a, const UOpPtr& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : axis_of(*a) > axis_of(*b);
  });
  if (loops.size() > 3) loops.resize(3);
  std::sort(loops.begin(), loops.end(), [&](const UOpPtr& a, const UOpPtr& b) {
    return (rank(a) == 0) != (rank(b) == 0) ? rank(a) == 0 : axis_of(*a) > axis_of(*b);
  });
  return loops;
}

// `ast` with its loops of `kind` ordinary ones again: Local loops a grid does not take, a Group
// loop (a reduction) no block can share.
UOpPtr as_ordinary(const UOpPtr& ast, AxisKind kind) {
  Substitution plain;
  for (const Loop& l : kernel_loops(ast))
    if (l.kind == kind) plain[l.range.get()] = make_range(l.range->src(0), l.axis);
  return plain.empty() ? ast : substitute(ast, plain);
}

}  // namespace

GridLaunch launch_on_grid(const UOpPtr& ast, const Target& target) {
  GridLaunch out{ast};
  if (!target.has_local) return out;
  Substitution moved;
  UOpPtr inside;  // whether this thread stands for a position of every launched loop (null: all do)
  // A grouped reduction's threads are its block (dimension x): the output loops take blocks alone.
  // The heuristic groups only what can be placed; a GROUP that cannot (BEAM's, a narrower GPU's)
  // runs ungrouped.
  UOpPtr group = loop_of_kind(ast, AxisKind::Group);
  int64_t group_threads = group ? thread_count(*group) : 1;
  if (group_threads > std::min<int64_t>(target.local_total_max, target.local_max[0])) return launch_on_grid(as_ordinary(ast, AxisKind::Group), target);
  // A grouped reduction's block is its group: Local loops are ordinary ones there.
  UOpPtr kernel = group ? as_ordinary(ast, AxisKind::Local) : ast;
  std::vector<UOpPtr> loops = launchable_loops(kernel);
  // A warp's lanes are x in blocks of exactly 32; a Local loop's block is the count it names,
  // where the Target's blocks hold it; the other loops share what is left of kThreadsPerBlock.
  if (loop_of_kind(kernel, AxisKind::Warp) && (loops.empty() || axis_kind(*loops[0]) != AxisKind::Warp))
    throw InternalError("a warp's lanes are not launched: some store does not depend on them");
  std::vector<int64_t> asked(loops.size(), 0);
  int64_t local_threads = 1;
  for (size_t d = 0; d < loops.size(); ++d)
    if (axis_kind(*loops[d]) == AxisKind::Warp) {
      if (d != 0 || loops[d]->src(0)->vmax() != kWarpLanes || target.local_max[0] < kWarpLanes)
        throw InternalError("a warp's lanes must be a GPU's threadIdx.x in blocks of " + std::to_string(kWarpLanes));
      asked[d] = kWarpLanes;
      local_threads = kWarpLanes;
    }
  for (size_t d = 0; d < loops.size(); ++d)
    if (axis_kind(*loops[d]) == AxisKind::Local) {
      int64_t n = thread_count(*loops[d]);
      if (n > target.local_max[d] || local_threads * n > target.local_total_max) continue;  // too large: the default block
      asked[d] = n;
      local_threads *= n;
    }
  int64_t threads_left = group ? 1 : std::max<int64_t>(1, std::min(kThreadsPerBlock, target.local_total_max) / local_threads);
  for (size_t d = 0; d < loops.size(); ++d) {
    const UOpPtr& loop = loops[d];
    int64_t n = loop->src(0)->vmax();
    int64_t block = asked[d] ? asked[d] : std::min({power_of_two_covering(n), threads_left, std::max<int64_t>(1, target.local_max[d])});
    if (!asked[d]) threads_left /= block;
    int64_t blocks = std::min((n + block - 1) / block, std::max<int64_t>(1, target.global_max[d]));
    int64_t threads = blocks * block;
    UOpPtr thread = launch_index(kBlockIndex[d], blocks);  // a block of one thread needs no thread index
    if (block > 1) thread = thread * block + launch_index(kThreadIndex[d], block);
    if (n <= threads) {  // one position a thread: those past the end read and write nothing
      moved[loop.get()] = thread;
      if (!loop->src(0)->is_const() || n < threads) inside = inside ? logical_and(inside, lt(thread, loop->src(0))) : lt(thread, loop->src(0));
    } else {  // a chunk a thread, in a loop bounded by the end, nested where the loop was
      Chunk part = chunk_of(loop->src(0), thread, threads);
      moved[loop.get()] = part.start + make_range(part.mine, axis_of(*loop));
    }
    out.global[d] = static_cast<size_t>(blocks);
    out.local[d] = static_cast<size_t>(block);
  }
  if (moved.empty() && !group) {
    out.ast = as_ordinary(kernel, AxisKind::Local);
    return out;
  }
  UOpPtr lowered = as_ordinary(substitute(kernel, moved), AxisKind::Local);  // a Local loop not launched stays a loop
  if (inside) {  // every access of a buffer gated on the thread standing for a position
    Substitution gated;
    for (const UOpPtr& i : toposort(lowered))
      if (i->op() == Ops::INDEX && i->src(0)->op() == Ops::DEFINE_GLOBAL)
        gated[i.get()] = UOp::make(Ops::INDEX, i->dtype(), {i->src(0), i->src(1), i->src().size() == 3 ? logical_and(i->src(2), inside) : inside});
    lowered = substitute(lowered, gated);
  }
  if (group) {
    // The output loops left in each thread (beyond the three launched) each take a row of
    // partials: of a size known now, and within the block's shared memory. (The reduction's own
    // loops may have any size.)
    for (const Loop& l : kernel_loops(lowered))
      if (!l.reduce && l.symbolic) return launch_on_grid(as_ordinary(ast, AxisKind::Group), target);
    lowered = split_group_in_block(lowered, launch_index(kThreadIndex[0], group_threads));
    out.local[0] = static_cast<size_t>(group_threads);
    int64_t scratch = 0;
    for (const UOpPtr& u : toposort(lowered))
      if (u->op() == Ops::DEFINE_LOCAL) scratch += u->dtype().ptr_size() * u->dtype().base().itemsize();
    if (scratch > target.shared_bytes) return launch_on_grid(as_ordinary(ast, AxisKind::Group), target);
  }
  out.ast = simplify(lowered);
  return out;
}

}  // namespace lathe
