// Checks a plan's memory plan from the outside: any two buffers whose memory overlaps are never
// touched by the same run of execute() at overlapping times, unless one is a view of the other or
// the caller keeps both (inputs, outputs, constants).
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <set>

#include "lathe/plan.hpp"

namespace lathe::testing {

inline void expect_no_live_overlap(const ExecutionPlan& plan) {
  const std::vector<Buffer>& buffers = plan.buffers();
  const std::vector<PreparedOp>& ops = plan.prepared_ops();
  std::vector<size_t> root(buffers.size());
  std::iota(root.begin(), root.end(), size_t{0});
  for (const PreparedOp& op : ops)
    if (const auto* v = std::get_if<PreparedBufferView>(&op)) root[v->view] = root[v->base];
  // Lifetime of each root over the ops execute() runs (kernels folded at prepare run no more).
  std::map<size_t, std::pair<size_t, size_t>> life;
  size_t step = 0;
  for (const PreparedOp& op : ops) {
    std::vector<size_t> touched;
    if (const auto* k = std::get_if<PreparedKernel>(&op)) {
      if (k->constant) continue;
      touched = k->buffer_indices;
    } else if (const auto* c = std::get_if<PreparedCopy>(&op)) {
      touched = {c->src, c->dst};
    } else if (const auto* f = std::get_if<PreparedCustom>(&op)) {
      touched = f->buffer_indices;
    }
    for (size_t b : touched) {
      auto [it, fresh] = life.try_emplace(root[b], step, step);
      it->second.second = step;
    }
    ++step;
  }
  std::set<size_t> outputs;
  for (const Buffer* o : plan.output_buffers())
    for (size_t b = 0; b < buffers.size(); ++b)
      if (buffers[b] == *o) outputs.insert(root[b]);
  for (auto a = life.begin(); a != life.end(); ++a)
    for (auto b = std::next(a); b != life.end(); ++b) {
      const Buffer &x = buffers[a->first], &y = buffers[b->first];
      auto* xs = static_cast<const char*>(x.data());
      auto* ys = static_cast<const char*>(y.data());
      bool memory = x.nbytes() && y.nbytes() && xs < ys + y.nbytes() && ys < xs + x.nbytes();
      bool time = a->second.first <= b->second.second && b->second.first <= a->second.second;
      EXPECT_FALSE(memory && time) << "buffers " << a->first << " and " << b->first << " share memory while both are live";
      if (memory) {  // outputs never share
        EXPECT_FALSE(outputs.count(a->first)) << "output buffer " << a->first << " shares memory";
        EXPECT_FALSE(outputs.count(b->first)) << "output buffer " << b->first << " shares memory";
      }
    }
}

}  // namespace lathe::testing
