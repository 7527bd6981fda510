#include "codegen/prefetch.hpp"

#include <algorithm>

#include "ir/step.hpp"

namespace lathe {

std::unordered_set<const UOp*> accumulating_loops(const std::vector<UOpPtr>& program) {
  std::unordered_set<const UOp*> out;
  std::vector<const UOp*> open;
  for (const UOpPtr& u : program) {
    if (u->op() == Ops::RANGE) open.push_back(u.get());
    if (u->op() == Ops::END)
      for (const UOpPtr& r : u->src()) open.erase(std::remove(open.begin(), open.end(), r.get()), open.end());
    if (u->op() == Ops::STORE && u->src(0)->src(0)->op() == Ops::DEFINE_REG && !open.empty()) out.insert(open.back());
  }
  return out;
}

std::optional<int64_t> prefetch_distance(const UOp& load, const UOpPtr& innermost, const std::unordered_set<const UOp*>& accumulating,
                                         int64_t elem_bytes) {
  const UOpPtr& idx = load.src(0);
  if (load.dtype().count() == 1 || idx->src().size() == 3 || idx->src(0)->op() != Ops::DEFINE_GLOBAL || !innermost ||
      !accumulating.count(innermost.get()) || elem_bytes <= 0)
    return std::nullopt;
  const UOpPtr& off = idx->src(1);
  std::optional<int64_t> step = step_along(off, innermost);
  if (!step || *step <= 0) return std::nullopt;
  int64_t bytes = *step * elem_bytes;
  if (bytes < kLineBytes || bytes > kMostPrefetchedStep) return std::nullopt;
  if (off->vmax() - off->vmin() < kLeastPrefetchedSpan / elem_bytes) return std::nullopt;  // stays in a core's caches
  return (kPrefetchBytes + bytes - 1) / bytes * *step;
}

}  // namespace lathe
