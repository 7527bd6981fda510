// The fusion budget: a plan executes at most 1.5x the ALU operations of its graph evaluated node
// by node (each node computed once). Fusion is allowed to recompute cheap work, never to multiply
// it. A failure names the kernel with the largest excess over the graph nodes it computes.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "codegen/transcendental.hpp"
#include "ir/toposort.hpp"
#include "lathe/lathe.hpp"
#include "runtime/plan_builder.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/create_schedule.hpp"

namespace lathe::test {

inline constexpr double kWorkBudget = 1.5;

// The ALU operations exp2, log2 or sin costs where kernels compute it as a polynomial (float32
// and the 16-bit floats, computed in float32): the ops of its decomposition.
inline int64_t transcendental_ops(Ops op) {
  UOpPtr buf = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(AddrSpace::Global, 1), {}, int64_t{0});
  UOpPtr x = UOp::make(Ops::LOAD, dtypes::float32, {UOp::make(Ops::INDEX, buf->dtype(), {buf, UOp::index_const(0)})});
  int64_t n = 0;
  for (const UOpPtr& u : toposort(decompose_transcendentals(UOp::alu(op, {x})))) n += is_alu(u->op());
  return n;
}

// The ALU operations of one graph node evaluated once: an elementwise op per element (a
// transcendental as its polynomial's), a reduction's accumulate per input element, movement ops
// none; attention what its softmax (a max, a subtraction, an exp2 and a sum per score, a division
// per output) and its product with the values (a multiply-add per score and value position) take.
inline int64_t node_ops(const UOp& u, const Schedule& s) {
  if (u.op() == Ops::REDUCE_AXIS) return shape_numel(s.shapes.at(u.src(0).get()));
  if (u.op() == Ops::ATTENTION) {
    int64_t scores = shape_numel(s.shapes.at(u.src(0).get())), values = s.shapes.at(u.src(1).get()).back();
    return scores * (3 + transcendental_ops(Ops::EXP2) + 2 * values) + shape_numel(s.shapes.at(&u));
  }
  if (!is_alu(u.op())) return 0;
  int64_t per = u.op() == Ops::MULACC ? 2 : 1;
  bool polynomial = (u.op() == Ops::EXP2 || u.op() == Ops::LOG2 || u.op() == Ops::SIN) && u.dtype().scalar() != dtypes::float64;
  if (polynomial) {
    static const int64_t exp2 = transcendental_ops(Ops::EXP2), log2 = transcendental_ops(Ops::LOG2), sin = transcendental_ops(Ops::SIN);
    per = u.op() == Ops::EXP2 ? exp2 : u.op() == Ops::LOG2 ? log2 : sin;
  }
  return shape_numel(s.shapes.at(&u)) * per;
}

inline int64_t graph_ops(const std::vector<UOpPtr>& outputs, const Schedule& s) {
  int64_t total = 0;
  for (const UOpPtr& u : toposort(UOp::make(Ops::SINK, dtypes::void_, outputs)))
    if (u->op() != Ops::SINK) total += node_ops(*u, s);
  return total;
}

struct BudgetReport {
  int64_t graph = 0, plan = 0;
  size_t kernels = 0;
  std::string worst;    // the kernel with the largest excess, and its numbers
  std::string missing;  // stored nodes no kernel stores (other than concatenations written in place)
};

/// Schedules and prepares `outputs`, then compares executed ops with the graph's.
inline BudgetReport work_budget(const std::vector<Tensor>& outputs) {
  std::vector<UOpPtr> roots;
  for (const Tensor& t : outputs) roots.push_back(t.uop());
  Schedule s = create_schedule(roots, default_schedule_context());
  ExecutionPlan plan = PlanBuilder::build(s, DeviceSpec{});
  BudgetReport r;
  r.graph = graph_ops(s.outputs, s);  // the graph as scheduled (schedule/reader_layout may rebuild it)
  r.plan = plan.estimated_work().ops;
  std::unordered_set<const UOp*> stored;
  for (const ScheduleItem& item : s.items) stored.insert(item.bufs[0].get());
  std::vector<const PreparedKernel*> kernels = plan.prepared_kernels();
  r.kernels = kernels.size();
  // Buffers the plan's parts write in place: the bases of views some kernel writes.
  std::unordered_set<size_t> written, joined;
  for (const PreparedOp& op : plan.prepared_ops())
    if (const auto* k = std::get_if<PreparedKernel>(&op))
      for (size_t pos : k->output_indices) written.insert(k->buffer_indices[pos]);
  for (const PreparedOp& op : plan.prepared_ops())
    if (const auto* v = std::get_if<PreparedBufferView>(&op); v && written.count(v->view)) joined.insert(v->base);
  std::unordered_map<uint64_t, const PreparedKernel*> kernel_of;  // by the node it stores
  for (const PreparedKernel* pk : kernels) kernel_of[pk->id] = pk;
  int64_t worst_excess = -1;
  for (const ScheduleItem& item : s.items) {
    if (item.is_view()) continue;  // a view: no kernel
    auto found = kernel_of.find(item.bufs[0]->id());
    if (found == kernel_of.end()) {  // only a concatenation the plan wrote in place runs no kernel
      auto b = plan.ast_to_buffer_map().find(item.bufs[0]->id());
      if (b == plan.ast_to_buffer_map().end() || !joined.count(b->second)) r.missing += " " + std::to_string(item.bufs[0]->id());
      continue;
    }
    const PreparedKernel* pk = found->second;
    // The graph nodes this kernel computes: those under its root that no other kernel stores.
    int64_t own = 0;
    for (const UOpPtr& u : toposort(item.bufs[0], [&](const UOp& x) { return &x == item.bufs[0].get() || !stored.count(&x); }))
      if (u == item.bufs[0] || !stored.count(u.get())) own += node_ops(*u, s);
    int64_t excess = pk->work.ops - own;
    if (excess > worst_excess) {
      worst_excess = excess;
      r.worst = pk->kernel->entry_point + " executes " + std::to_string(pk->work.ops) + " ops for graph nodes of " +
                std::to_string(own);
    }
  }
  return r;
}

#define EXPECT_WITHIN_WORK_BUDGET(outputs)                                                                         \
  do {                                                                                                             \
    ::lathe::test::BudgetReport r_ = ::lathe::test::work_budget(outputs);                                          \
    EXPECT_LE(static_cast<double>(r_.plan), ::lathe::test::kWorkBudget * static_cast<double>(r_.graph))           \
        << "the plan (" << r_.kernels << " kernels) executes " << r_.plan << " ALU ops, its graph " << r_.graph      \
        << "; the largest excess: " << r_.worst;                                                                   \
    EXPECT_EQ(r_.missing, "") << "nodes scheduled for a kernel that the plan does not run";                      \
  } while (0)

}  // namespace lathe::test
