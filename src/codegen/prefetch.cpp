#include "codegen/prefetch.hpp"

#include <algorithm>
#include <cstdlib>

#include "ir/step.hpp"

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

// An index's terms (the operands of its ADDs) that are not constants, and the sum of those that are.
void split_terms(const UOpPtr& u, std::vector<const UOp*>& changing, int64_t& constant) {
  if (u->op() == Ops::ADD && u->dtype().is_index()) {
    split_terms(u->src(0), changing, constant);
    split_terms(u->src(1), changing, constant);
  } else if (u->op() == Ops::CONST) {
    constant += const_as_int(u->const_value());
  } else {
    changing.push_back(u.get());
  }
}

// The floor of a / b, for b > 0.
int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0 ? 1 : 0); }

// A whole multiple of every value of index term `t`: the constant of a product with one, else 1.
int64_t multiple_of(const UOp& t) {
  if (t.op() == Ops::MUL)
    for (const UOpPtr& s : t.src())
      if (s->op() == Ops::CONST) return std::abs(const_as_int(s->const_value()));
  return 1;
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
  std::vector<const UOp*> changing;
  int64_t constant = 0;
  split_terms(off, changing, constant);
  bool whole_lines = std::all_of(changing.begin(), changing.end(),
                                 [&](const UOp* t) { return multiple_of(*t) * elem_bytes % kCacheLineBytes == 0; });
  int64_t line = whole_lines ? floor_div(constant * elem_bytes, kCacheLineBytes) : constant;
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
