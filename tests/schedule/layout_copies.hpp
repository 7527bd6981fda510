// What a schedule stores for its readers' layouts, planned for a Target of a given width: the
// layout rules' tests (column_blocks_test, channel_blocks_test) ask it of one graph at several.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/toposort.hpp"
#include "lathe/lathe.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/create_schedule.hpp"
#include "schedule/reader_layout.hpp"

namespace lathe::test {

/// The default schedule context with `lanes` float32 lanes (and `constant`, where given).
inline ScheduleContext planned_for(int lanes, IsConstantBuffer constant = nullptr) {
  ScheduleContext c = default_schedule_context();
  c.target.vector_bytes = 4 * lanes;
  if (constant) c.constant = std::move(constant);
  return c;
}

/// The schedule's graph of `ys` under `context`.
inline Schedule scheduled(const std::vector<Tensor>& ys, const ScheduleContext& context) {
  std::vector<UOpPtr> roots;
  for (const Tensor& y : ys) roots.push_back(y.uop());
  return create_schedule(roots, context);
}

/// What the schedule of `ys` stores in layout copies: each copy's shape and dtype.
inline std::vector<std::pair<Shape, DType>> copies(const std::vector<Tensor>& ys, const ScheduleContext& context) {
  Schedule s = scheduled(ys, context);
  std::vector<std::pair<Shape, DType>> out;
  for (const UOpPtr& u : toposort(UOp::make(Ops::SINK, dtypes::void_, s.outputs)))
    if (is_layout_copy(*u)) out.emplace_back(s.shapes.at(u.get()), u->dtype());
  return out;
}
inline std::vector<std::pair<Shape, DType>> copies(const Tensor& y, const ScheduleContext& context) {
  return copies(std::vector<Tensor>{y}, context);
}

/// `y` computed by a plan prepared for `lanes` float32 lanes, one thread.
inline std::vector<float> run(const Tensor& y, int lanes) {
  ExecutionPlan plan = Tensor::prepare({y}, {.threads = 1, .shape = TargetShape::parse(std::to_string(lanes))});
  plan.execute();
  return plan.output_buffer()->to_vector<float>();
}

}  // namespace lathe::test
