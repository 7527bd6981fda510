// Builds an ExecutionPlan from a schedule: each kernel AST goes through the compile pipeline
// (simplify -> render -> compile -> load, through the kernel cache), then is bound to the plan's
// buffers as a PreparedKernel.
#pragma once

#include "lathe/plan.hpp"
#include "schedule/schedule.hpp"

namespace lathe {

class PlanBuilder {
 public:
  static ExecutionPlan build(const Schedule& schedule, const DeviceSpec& device);
};

/// The compile pipeline for one kernel AST, through the process-wide kernel cache.
std::shared_ptr<CachedKernel> compile_kernel(const UOpPtr& ast, const DeviceSpec& device);

}  // namespace lathe
