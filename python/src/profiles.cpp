// KernelProfile: one kernel's time and work in one run, for Session.run(profile=) and
// Plan.execute(profile=True).
#include <pybind11/stl.h>

#include "bindings.hpp"

namespace lathe::python {

std::vector<KernelRecord> records_of(const std::vector<KernelProfile>& profile) {
  std::vector<KernelRecord> out;
  for (const KernelProfile& p : profile) {
    KernelRecord r;
    r.name = p.kernel ? p.kernel->entry_point : "";
    r.device = p.device;
    r.actions = p.kernel ? p.kernel->opts : "";
    r.ms = static_cast<double>(p.elapsed.count()) / 1e6;
    r.ops = p.work.ops;
    r.bytes = p.work.mem;
    r.gflops = p.gflops();
    r.gbps = p.gbps();
    if (p.prepared) r.labels = p.prepared->labels;
    out.push_back(std::move(r));
  }
  return out;
}

void bind_profiles(py::module_& m) {
  py::class_<KernelRecord>(m, "KernelProfile", "One kernel's run: its time and the work it did")
      .def_readonly("name", &KernelRecord::name, "the kernel's entry point")
      .def_readonly("device", &KernelRecord::device, "Where it ran (CPU, ...)")
      .def_readonly("ms", &KernelRecord::ms, "wall time in milliseconds")
      .def_readonly("ops", &KernelRecord::ops, "arithmetic operations on values (a multiply-add is two)")
      .def_readonly("bytes", &KernelRecord::bytes, "bytes of the buffers it read or wrote")
      .def_readonly("labels", &KernelRecord::labels, "what it computes: the labels (ONNX nodes) of the tensors fused into it")
      .def_readonly("actions", &KernelRecord::actions, "the optimizer's actions")
      .def_readonly("gflops", &KernelRecord::gflops, "Operations per nanosecond (GFLOP/s)")
      .def_readonly("gbps", &KernelRecord::gbps, "Bytes moved per nanosecond (GB/s)")
      .def("__repr__", [](const KernelRecord& r) {
        char text[160];
        std::snprintf(text, sizeof text, "%.3f ms, %.2f GFLOP/s, %.2f GB/s", r.ms, r.gflops, r.gbps);
        return "KernelProfile(" + r.name + ": " + text + ")";
      });
}

}  // namespace lathe::python
