#include "runtime/memory_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "device/allocator.hpp"
#include "runtime/compile_kernel.hpp"
#include "runtime/plan_impl.hpp"
#include "support/settings.hpp"

namespace lathe {
namespace {

size_t align_up(size_t n, size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

// The buffers an operation reads or writes, by index.
std::vector<size_t> touched_by(const PreparedOp& op) {
  if (const auto* k = std::get_if<PreparedKernel>(&op)) return k->buffer_indices;
  if (const auto* c = std::get_if<PreparedCopy>(&op)) return {c->src, c->dst};
  if (const auto* v = std::get_if<PreparedBufferView>(&op)) return {v->base, v->view};
  return std::get<PreparedCustom>(op).buffer_indices;
}

}  // namespace

bool arena_enabled(const PrepareOptions& options) { return options.share_memory.value_or(settings::flag("LATHE_ARENA", true)); }
bool poison_enabled(const PrepareOptions& options) { return options.poison.value_or(settings::flag("LATHE_POISON", false)); }

std::vector<size_t> place_by_lifetime(const std::vector<Lifetime>& buffers, size_t alignment, size_t& arena_bytes) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  std::vector<size_t> offset(buffers.size(), 0);
  std::vector<size_t> placed;
  arena_bytes = 0;
  for (size_t i : order) {
    const Lifetime& b = buffers[i];
    // The placed buffers alive with this one, by offset; take the lowest gap that fits.
    std::vector<size_t> alive;
    for (size_t p : placed)
      if (buffers[p].first <= b.last && b.first <= buffers[p].last && buffers[p].bytes > 0) alive.push_back(p);
    std::sort(alive.begin(), alive.end(), [&](size_t x, size_t y) { return offset[x] < offset[y]; });
    size_t at = 0;
    for (size_t p : alive) {
      if (at + b.bytes <= offset[p]) break;
      at = std::max(at, align_up(offset[p] + buffers[p].bytes, alignment));
    }
    offset[i] = at;
    arena_bytes = std::max(arena_bytes, at + b.bytes);
    placed.push_back(i);
  }
  return offset;
}

void plan_memory(ExecutionPlan::Impl& impl, bool share, bool poison) {
  // Every buffer's root: the buffer whose memory it is (a view's base, followed to the end).
  std::vector<size_t> root(impl.buffers.size());
  std::iota(root.begin(), root.end(), size_t{0});
  for (const PreparedOp& op : impl.ops)
    if (const auto* v = std::get_if<PreparedBufferView>(&op)) root[v->view] = root[v->base];

  // What a folded kernel writes, itself or through a view, and execute() reads must outlive every
  // execute(): the plan's constants, in memory of their own. What only other folded kernels read
  // (a weight scaled by its batch norm, then laid out in blocks) is an intermediate of the
  // prepare-time run, which comes before every execute(): it shares the arena with the rest.
  std::unordered_set<size_t> read_by_execute, kept;
  for (size_t i : impl.executed)
    if (!std::holds_alternative<PreparedBufferView>(impl.ops[i]))  // a view reads nothing
      for (size_t b : touched_by(impl.ops[i])) read_by_execute.insert(root[b]);
  for (size_t i : impl.folded)
    for (size_t b : touched_by(impl.ops[i]))
      if (read_by_execute.count(root[b])) kept.insert(root[b]);
  std::erase_if(impl.intermediates, [&](size_t b) { return kept.count(b) > 0; });

  // The operations in the order they run: the folded ones (at prepare, and again before an
  // execute() after a buffer they read was handed out for writing), then execute()'s.
  std::vector<size_t> steps = impl.folded;
  steps.insert(steps.end(), impl.executed.begin(), impl.executed.end());
  std::unordered_map<size_t, size_t> slot;  // buffer index -> position in impl.intermediates
  for (size_t s = 0; s < impl.intermediates.size(); ++s) slot[impl.intermediates[s]] = s;
  std::vector<Lifetime> lifetimes(impl.intermediates.size());
  std::vector<bool> seen(impl.intermediates.size(), false);
  for (size_t s = 0; s < impl.intermediates.size(); ++s) lifetimes[s].bytes = impl.buffers[impl.intermediates[s]].nbytes();
  for (size_t step = 0; step < steps.size(); ++step)
    for (size_t b : touched_by(impl.ops[steps[step]]))
      if (auto it = slot.find(root[b]); it != slot.end()) {
        Lifetime& l = lifetimes[it->second];
        if (!seen[it->second]) l.first = step, seen[it->second] = true;
        l.last = step;
      }
  // A buffer no operation touches lives after everything (it shares memory only with its kind).
  for (size_t s = 0; s < lifetimes.size(); ++s)
    if (!seen[s]) lifetimes[s].first = lifetimes[s].last = steps.size();

  MemoryStats& m = impl.memory;
  m = MemoryStats{};
  std::vector<size_t> live(steps.size() + 1, 0);
  for (const Lifetime& l : lifetimes) {
    m.intermediate_bytes += detail::host_alloc_size(l.bytes);  // what each would take as a buffer of its own
    for (size_t step = l.first; step <= l.last; ++step) live[step] += l.bytes;
  }
  m.peak_live_bytes = *std::max_element(live.begin(), live.end());
  std::unordered_set<size_t> intermediate(impl.intermediates.begin(), impl.intermediates.end());
  for (size_t b = 0; b < impl.buffers.size(); ++b) {
    if (impl.buffers[b].is_view() || intermediate.count(b)) continue;
    (impl.buffers[b].is_constant() || kept.count(b) ? m.constant_bytes : m.io_bytes) += impl.buffers[b].nbytes();
  }
  std::vector<size_t> offset = place_by_lifetime(lifetimes, 64, m.arena_bytes);
  if (!share) {
    m.arena_bytes = m.intermediate_bytes;
  } else if (!impl.intermediates.empty()) {
    impl.arena = Buffer(dtypes::uint8, m.arena_bytes, impl.device);
    for (size_t s = 0; s < impl.intermediates.size(); ++s) {
      Buffer& b = impl.buffers[impl.intermediates[s]];
      b = Buffer::view(impl.arena, offset[s], b.size(), b.dtype());
    }
    // Views of intermediates again, in creation order, so a view of a view sees its new base.
    for (const PreparedOp& op : impl.ops)
      if (const auto* v = std::get_if<PreparedBufferView>(&op); v && slot.count(root[v->base])) {
        Buffer& b = impl.buffers[v->view];
        b = Buffer::view(impl.buffers[v->base], v->offset_bytes, b.size(), b.dtype());
      }
    for (PreparedOp& op : impl.ops)
      if (auto* k = std::get_if<PreparedKernel>(&op))
        for (size_t pos = 0; pos < k->buffer_indices.size(); ++pos) k->buffer_ids[pos] = impl.buffers[k->buffer_indices[pos]].id();
  }
  impl.poison_after.clear();
  if (poison) {
    impl.poison_after.resize(impl.ops.size());
    for (size_t s = 0; s < impl.intermediates.size(); ++s)
      if (seen[s]) impl.poison_after[steps[lifetimes[s].last]].push_back(impl.intermediates[s]);
  }
}

}  // namespace lathe
