#include "runtime/planning_target.hpp"

#include "device/backend.hpp"
#include "device/buffer_registry.hpp"
#include "device/thread_pool.hpp"
#include "lathe/info.hpp"
#include "support/settings.hpp"

namespace lathe {

TargetShape target_shape(const PrepareOptions& o) {
  if (o.shape) return *o.shape;
  std::optional<std::string> text = settings::text("LATHE_TARGET_SHAPE");
  if (!text) return {};
  try {
    return TargetShape::parse(*text);
  } catch (const Error& e) {
    throw Error(std::string("LATHE_TARGET_SHAPE: ") + e.what());
  }
}

Target planning_target(const Target& backend, const PrepareOptions& o) {
  if (backend.has_local) return backend;  // a GPU: its grid is its parallelism; a CPU's shape does not apply
  Target t = backend.with(target_shape(o));
  t.threads = o.threads.value_or(detail::kernel_threads());
  return t;
}

Target planning_target(const DeviceSpec& device, const PrepareOptions& o) {
  return planning_target(find_backend(device, o.compiler).compile().target(), o);
}

Target default_planning_target() { return planning_target(DeviceSpec::default_device(), PrepareOptions{}); }

ScheduleContext schedule_context(const DeviceSpec& device, const PrepareOptions& options) {
  return ScheduleContext{planning_target(device, options), is_constant_buffer};
}

ScheduleContext default_schedule_context() { return schedule_context(DeviceSpec::default_device(), PrepareOptions{}); }

std::string planned_target() {
  Target t = default_planning_target();
  if (t.has_local)
    return "a GPU: blocks of up to " + std::to_string(t.local_total_max) + " threads, " + std::to_string(t.shared_bytes >> 10) +
           " KB of shared memory a block, " + std::to_string(t.vector_bytes) + "-byte loads a thread, L2 " + std::to_string(t.l3_bytes >> 20) + " MB" +
           (t.tensor_cores[0].m ? ", tensor cores" : "");
  std::string shape = settings::text("LATHE_TARGET_SHAPE").value_or("");
  return std::to_string(t.lanes(dtypes::float32)) + " float32 lanes (" + std::to_string(t.vector_bytes) +
         "-byte vectors) x " + std::to_string(t.vector_registers) + " registers, L1 " +
         std::to_string(t.l1_bytes >> 10) + " KB, L2 " + std::to_string(t.l2_bytes >> 10) + " KB, L3 " +
         std::to_string(t.l3_bytes >> 20) + " MB, memory " + std::to_string(t.memory_bytes_per_cycle) +
         " bytes a cycle a thread, " + std::to_string(t.threads) + " threads" +
         (shape.empty() ? "" : " (LATHE_TARGET_SHAPE=" + shape + ")");
}

}  // namespace lathe
