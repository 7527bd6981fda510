// The Target kernels are planned for: the device's backend's (device/cpu/cpu_target for CPUs)
// with the shape and threads a prepare asks for. The schedule, the optimizer, the code generator
// and the layouts the Tensor front end picks all read this one.
#pragma once

#include "lathe/device.hpp"
#include "lathe/plan.hpp"
#include "lathe/target.hpp"
#include "schedule/create_schedule.hpp"

namespace lathe {

/// The shape `options` asks for: `options.shape`, else LATHE_TARGET_SHAPE parsed, else all unset.
/// Throws Error naming LATHE_TARGET_SHAPE when its text is not a shape.
TargetShape target_shape(const PrepareOptions& options);

/// `backend` (a backend's own Target) with the shape and threads `options` asks for (else
/// LATHE_TARGET_SHAPE and LATHE_THREADS).
Target planning_target(const Target& backend, const PrepareOptions& options);

/// The Target kernels for `device` are planned for under `options`: its backend's (the one
/// `options.compiler` names, else the device's first), as planning_target above.
Target planning_target(const DeviceSpec& device, const PrepareOptions& options);

/// planning_target(the default device, default options): what a plain prepare plans for.
Target default_planning_target();

/// What a schedule for `device` under `options` is planned for: planning_target's Target, and the
/// device's registry telling which buffers hold constants.
ScheduleContext schedule_context(const DeviceSpec& device, const PrepareOptions& options);
/// schedule_context(the default device, default options).
ScheduleContext default_schedule_context();

}  // namespace lathe
