#include "device/cpu/cpu_backend.hpp"

#include "codegen/parallelize.hpp"
#include "codegen/render_c.hpp"
#include "device/cpu/c_compiler.hpp"

namespace lathe {

std::vector<Backend> cpu_backends() {
  Backend c{"CPU", "clang",
            []() -> const Renderer& {
              static const CRenderer r;
              return r;
            },
            []() -> const Compiler& { return CCompiler::get(); },
            [](const CompiledSpec& compiled, const ProgramSpec& spec) {
              return load_cpu_program(compiled, spec.var_names.size(), spec.global_size.has_value(), has_shared_scratch(spec.ast));
            }};
  return {c};
}

}  // namespace lathe
