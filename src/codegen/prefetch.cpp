#include "codegen/prefetch.hpp"

#include <algorithm>

#include "ir/step.hpp"
#include "ir/symbolic.hpp"

namespace lathe {

namespace {

// The loops of a linearized program that a reduction accumulates in: a store to a register (an
// accumulator) is in their body, not in a loop nested in it.
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

}  // namespace

Prefetcher::Prefetcher(const std::vector<UOpPtr>& program) : accumulating_(accumulating_loops(program)) {
  std::unordered_map<const UOp*, std::set<Line>> lines;
  std::vector<UOpPtr> open;
  for (const UOpPtr& u : program) {
    if (u->op() == Ops::RANGE) open.push_back(u);
    if (u->op() == Ops::END)
      for (const UOpPtr& r : u->src()) open.erase(std::remove(open.begin(), open.end(), r), open.end());
    if (u->op() == Ops::LOAD && !open.empty())
      if (auto s = streamed(*u, open.back())) lines[open.back().get()].insert(s->first);
  }
  for (const auto& [loop, ls] : lines) lines_[loop] = ls.size();
}

std::optional<std::pair<Prefetcher::Line, int64_t>> Prefetcher::streamed(const UOp& load,
                                                                         const UOpPtr& innermost) const {
  const UOpPtr& idx = load.src(0);
  if (load.dtype().count() == 1 || idx->src().size() == 3 || idx->src(0)->op() != Ops::DEFINE_GLOBAL || !innermost ||
      !accumulating_.count(innermost.get()))
    return std::nullopt;
  int64_t elem_bytes = idx->src(0)->dtype().base().itemsize();  // an element in memory (a bool's byte)
  if (elem_bytes <= 0) return std::nullopt;
  const UOpPtr& off = idx->src(1);
  std::optional<int64_t> step = step_along(off, innermost);
  if (!step || *step <= 0) return std::nullopt;
  int64_t bytes = *step * elem_bytes;
  if (bytes < kCacheLineBytes || bytes > kMostPrefetchedStep) return std::nullopt;
  if (off->vmax() - off->vmin() < kLeastPrefetchedSpan / elem_bytes) return std::nullopt;  // stays in a core's caches
  // The address as coefficients of its changing terms and a constant; one that is not linear is a
  // term of its own, not whole lines (only a load at the same address shares its line).
  std::vector<std::pair<const UOp*, int64_t>> changing;
  int64_t constant = 0;
  bool whole_lines = false;
  if (std::optional<LinearForm> f = linear_form(off)) {
    for (const auto& [term, coefficient] : f->terms) changing.emplace_back(term.get(), coefficient);
    constant = f->constant;
    whole_lines = std::all_of(changing.begin(), changing.end(),
                              [&](const auto& t) { return t.second * elem_bytes % kCacheLineBytes == 0; });
  } else {
    changing.emplace_back(off.get(), 1);
  }
  int64_t line = whole_lines ? floordiv(constant * elem_bytes, kCacheLineBytes) : constant;
  std::sort(changing.begin(), changing.end());
  return std::pair{Line{innermost.get(), idx->src(0).get(), std::move(changing), whole_lines, line},
                   (kPrefetchBytes + bytes - 1) / bytes * *step};
}

std::optional<int64_t> Prefetcher::distance(const UOp& load, const UOpPtr& innermost) {
  std::optional<std::pair<Line, int64_t>> s = streamed(load, innermost);
  if (!s) return std::nullopt;
  auto lines = lines_.find(innermost.get());
  if (lines == lines_.end() || lines->second < kLeastSharedLines) return s->second;  // one line a step: each load asks
  if (!asked_.insert(s->first).second) return std::nullopt;                          // its line is asked for already
  return s->second;
}

}  // namespace lathe
