#include "device/cuda/cuda_backend.hpp"

#include "codegen/render_cuda.hpp"
#include "device/cuda/cuda_driver.hpp"
#include "device/cuda/cuda_memory.hpp"
#include "device/cuda/cuda_program.hpp"
#include "device/cuda/emulator.hpp"
#include "device/cuda/gpu_target.hpp"
#include "device/cuda/nvrtc.hpp"
#include "lathe/error.hpp"
#include "support/settings.hpp"

namespace lathe {
namespace {

// The architecture CUDA kernels are built for: LATHE_CUDA_ARCH, else the first GPU's, else sm_90.
int cuda_arch() {
  if (auto arch = settings::text("LATHE_CUDA_ARCH")) return parse_gpu_arch(*arch);
  int sm = cuda_device_arch(0);
  return sm ? sm : 90;
}

}  // namespace

std::vector<Backend> cuda_backends() {
  return {Backend{"CUDA", "nvrtc",
                  []() -> const Renderer& {
                    static const CudaRenderer r;
                    return r;
                  },
                  []() -> const Compiler& {
                    static const NvrtcCompiler c(cuda_arch());
                    return c;
                  },
                  [](const CompiledSpec& compiled, const ProgramSpec& spec) -> std::unique_ptr<Program> {
                    if (std::string why = cuda_unavailable(); !why.empty())
                      throw Error("device " + spec.device.to_string() + " cannot run kernel " + spec.name + ": " + why);
                    return load_cuda_program(compiled, spec);
                  },
                  [](int index) -> DeviceMemory& {
                    if (std::string why = cuda_unavailable(); !why.empty())
                      throw Error("device CUDA:" + std::to_string(index) + " cannot hold buffers: " + why);
                    return cuda_memory(index);
                  },
                  [](int index) -> std::string {
                    if (std::string why = cuda_unavailable(); !why.empty()) return "unavailable: " + why;
                    try {
                      const CudaDevice& gpu = cuda_device(index);
                      return gpu.name + " (sm_" + std::to_string(gpu.arch) + ")";
                    } catch (const Error& e) {
                      return std::string("unavailable: ") + e.what();
                    }
                  }},
          gpu_emulator_backend()};
}

}  // namespace lathe
