#include "device/cuda/cuda_program.hpp"

#include "device/cuda/cuda_driver.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

class CudaProgram final : public Program {
 public:
  CudaProgram(const CompiledSpec& compiled, const ProgramSpec& spec)
      : device_(cuda_device(spec.device.index)),
        api_(cuda_driver()),
        name_(compiled.name),
        grid_(spec.global_size.value_or(LaunchSize{1, 1, 1})),
        block_(spec.local_size.value_or(LaunchSize{1, 1, 1})),
        buffers_(spec.buf_count) {
    for (const std::string& v : spec.var_names) vars_ += is_launch_index(v) ? 0 : 1;  // launch indices are the GPU's own
    if (compiled.bytes.empty()) throw Error("kernel " + name_ + " has no CUBIN to load on " + spec.device.to_string());
    std::vector<uint8_t> image = compiled.bytes;
    if (image.back() != 0) image.push_back(0);  // PTX text must end in a NUL; a CUBIN ignores it
    device_.use();
    api_.check(api_.module_load_data(&module_, image.data()),
               "loading kernel " + name_ + " (sm_" + std::to_string(device_.arch) + ") on " + spec.device.to_string());
    int rc = api_.module_get_function(&function_, module_, name_.c_str());
    if (rc != 0) {
      (void)api_.module_unload(module_);
      api_.check(rc, "finding kernel " + name_ + " in its module");
    }
  }
  ~CudaProgram() override {
    if (!module_) return;
    try {
      device_.use();  // the module belongs to the device's context, which may not be this thread's
    } catch (const Error&) {
      return;  // the context is gone (process exit): so is the module
    }
    (void)api_.module_unload(module_);
  }

  void execute(void* const* buffers, const int64_t* vals, const LaunchSize&, const std::optional<LaunchSize>&) const override {
    launch(buffers, vals);
  }

  std::chrono::nanoseconds execute_timed(void* const* buffers, const int64_t* vals, const LaunchSize&, const std::optional<LaunchSize>&) const override {
    device_.use();
    void* start = nullptr;
    void* end = nullptr;
    api_.check(api_.event_create(&start, 0), "cuEventCreate");
    if (int rc = api_.event_create(&end, 0); rc != 0) {
      (void)api_.event_destroy(start);
      api_.check(rc, "cuEventCreate");
    }
    float ms = 0;
    int rc = api_.event_record(start, device_.stream);
    if (rc == 0) {
      try {
        launch(buffers, vals);
      } catch (...) {
        (void)api_.event_destroy(start);
        (void)api_.event_destroy(end);
        throw;
      }
      rc = api_.event_record(end, device_.stream);
    }
    if (rc == 0) rc = api_.event_synchronize(end);
    if (rc == 0) rc = api_.event_elapsed(&ms, start, end);
    (void)api_.event_destroy(start);
    (void)api_.event_destroy(end);
    api_.check(rc, "timing kernel " + name_);
    return std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(ms) * 1e6));
  }

 private:
  void launch(void* const* buffers, const int64_t* vals) const {
    for (int d = 0; d < 3; ++d)
      if (grid_[d] == 0 || block_[d] == 0) return;  // nothing to compute (a zero-sized output); the driver would refuse it
    // cuLaunchKernel takes the address of each parameter: the buffers' addresses, then the variables.
    void* params[kMostParams];
    size_t n = 0;
    for (size_t i = 0; i < buffers_ && n < kMostParams; ++i) params[n++] = const_cast<void**>(&buffers[i]);
    for (size_t i = 0; i < vars_ && n < kMostParams; ++i) params[n++] = const_cast<int64_t*>(&vals[i]);
    if (n != buffers_ + vars_) throw Error("kernel " + name_ + " takes more than " + std::to_string(kMostParams) + " parameters");
    device_.use();
    api_.check(api_.launch_kernel(function_, static_cast<unsigned>(grid_[0]), static_cast<unsigned>(grid_[1]), static_cast<unsigned>(grid_[2]),
                                  static_cast<unsigned>(block_[0]), static_cast<unsigned>(block_[1]), static_cast<unsigned>(block_[2]), 0,
                                  cuda_capture_stream() ? cuda_capture_stream() : device_.stream, params, nullptr),
               "launching kernel " + name_);
  }

  static constexpr size_t kMostParams = 256;
  const CudaDevice& device_;
  const CudaDriver& api_;
  std::string name_;
  LaunchSize grid_, block_;
  size_t buffers_ = 0, vars_ = 0;
  void* module_ = nullptr;
  void* function_ = nullptr;
};

}  // namespace

std::unique_ptr<Program> load_cuda_program(const CompiledSpec& compiled, const ProgramSpec& spec) {
  return std::make_unique<CudaProgram>(compiled, spec);
}

}  // namespace lathe
