// Builds an ExecutionPlan from a schedule: each kernel AST is compiled for the plan's device
// (compile_kernel.hpp, through the kernel cache), then bound to the plan's buffers as a
// PreparedKernel; views share their base's memory.
#pragma once

#include "lathe/plan.hpp"
#include "schedule/schedule.hpp"

namespace lathe {

class PlanBuilder {
 public:
  static ExecutionPlan build(const Schedule& schedule, const DeviceSpec& device, const PrepareOptions& options = {});
};

}  // namespace lathe
