#include "device/cpu/cpu_backend.hpp"

#include "codegen/render_c.hpp"
#include "device/cpu/c_compiler.hpp"
#ifdef LATHE_HAS_LLVM
#include "codegen/render_llvm.hpp"
#include "device/cpu/llvm_jit.hpp"
#endif

namespace lathe {

std::vector<Backend> cpu_backends() {
  std::vector<Backend> backends;
#ifdef LATHE_HAS_LLVM  // first: the default where lathe was built with LLVM
  backends.push_back(Backend{"CPU", "llvm",
                             []() -> const Renderer& {
                               static const LlvmRenderer r;
                               return r;
                             },
                             []() -> const Compiler& { return LlvmCompiler::get(); },
                             [](const CompiledSpec& compiled, const ProgramSpec& spec) {
                               LlvmCompiler::get().check_runs_here();
                               return load_llvm_program(compiled, spec.var_names.size(), spec.global_size.has_value(),
                                                        spec.shared_scratch);
                             },
                             [](int) -> DeviceMemory& { return host_memory(); },
                             {}});
#endif
  backends.push_back(Backend{"CPU", "clang",
                             []() -> const Renderer& {
                               static const CRenderer r;
                               return r;
                             },
                             []() -> const Compiler& { return CCompiler::get(); },
                             [](const CompiledSpec& compiled, const ProgramSpec& spec) {
                               CCompiler::get().check_runs_here();
                               return load_cpu_program(compiled, spec.var_names.size(), spec.global_size.has_value(),
                                                       spec.shared_scratch);
                             },
                             [](int) -> DeviceMemory& { return host_memory(); },
                             {}});
  return backends;
}

}  // namespace lathe
