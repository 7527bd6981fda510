#include "support/settings.hpp"

#include <algorithm>
#include <cstdlib>

#include "lathe/error.hpp"
#include "lathe/info.hpp"

namespace lathe::settings {

const std::vector<Variable>& variables() {
  static const std::vector<Variable> all = {
      {"DEBUG", "once per process",
       "on stderr; 1: each kernel's name, time, GFLOP/s and GB/s at every execute; 2: also a schedule summary at "
       "prepare (each "
       "kernel's buffers, work and the optimizer's actions); 3: also each kernel's AST after the optimizer; 4: also "
       "each kernel's generated source; 5: also the kernel after every codegen step; 6: also each kernel's machine "
       "code (the LLVM backend's assembly)"},
      {"LATHE_DEVICE", "at every buffer made without a device",
       "the device tensors and buffers are made on, and so plans run on: CPU (default); EMU, the GPU emulator (GPU "
       "kernels run on the CPU); CUDA[:n], an NVIDIA GPU"},
      {"LATHE_CUDA_ARCH", "once per process",
       "the GPU architecture CUDA kernels are built for and EMU plans for (sm_80, sm_90, ...; default: the first "
       "GPU's, else sm_90; EMU: sm_80)"},
      {"LATHE_NVRTC", "once per process",
       "the path of NVRTC's library (default: libnvrtc.so.13, .so.12 or .so on the library path, else "
       "/usr/local/cuda/lib64)"},
      {"LATHE_EMU_NVRTC", "once per process",
       "LATHE_EMU_NVRTC=1: the GPU emulator also compiles each kernel's CUDA C for sm_80 and sm_90 and fails on an "
       "error or a spill"},
      {"LATHE_CUDA_GRAPH", "at a plan's first run on a GPU",
       "LATHE_CUDA_GRAPH=0: a plan on CUDA launches each kernel at every run, instead of replaying the CUDA Graph "
       "recorded when "
       "it ran twice with the same addresses (a plan of kernels alone, without variables)"},
      {"LATHE_THREADS", "once per process",
       "the most threads a CPU kernel is split across, the calling thread included (default: the hardware threads)"},
      {"LATHE_CPU_COMPILER", "at every kernel compile",
       "the CPU backend: llvm (LLVM's in-process JIT, the default where built with LLVM) or clang (a C compiler)"},
      {"LATHE_CPU_TARGET", "once per process",
       "the CPU kernels are compiled for (an LLVM/-march name; default native); a CPU this machine cannot run is "
       "refused, naming what it lacks"},
      {"LATHE_TARGET_SHAPE", "at every prepare",
       "the machine the optimizer plans for: a float32 lane count (4, 8, 16) or "
       "lanes=N,registers=N,l1=SIZE,l2=SIZE,l3=SIZE,memory=N (memory: bytes a cycle a thread; default: the CPU "
       "compiled for)"},
      {"LATHE_CC", "once per process", "the C compiler of the clang backend (default clang, else cc)"},
      {"LATHE_CACHE_DIR", "at every kernel compile",
       "where the on-disk caches live (default $XDG_CACHE_HOME/lathe, else ~/.cache/lathe)"},
      {"XDG_CACHE_HOME", "at every kernel compile", "the user's cache folder, the disk caches' default parent"},
      {"HOME", "at every kernel compile", "the user's home, for ~/.cache/lathe when XDG_CACHE_HOME is unset"},
      {"LATHE_CACHE", "at every kernel compile", "LATHE_CACHE=0 turns the on-disk caches off"},
      {"LATHE_CACHE_MB", "at every cache write", "the bound on each on-disk cache in MiB (default 1024)"},
      {"LATHE_POOL_MB", "once per process",
       "how many MiB of freed memory the allocator keeps for reuse (default 2048)"},
      {"LATHE_ARENA", "at every prepare",
       "LATHE_ARENA=0: each intermediate buffer gets its own memory instead of a place in the plan's arena"},
      {"LATHE_POISON", "at every prepare",
       "LATHE_POISON=1: each intermediate is filled with 0xFF bytes after its last use (lifetime errors show as NaN)"},
      {"LATHE_MOST_KERNEL_BYTES", "at every kernel compile",
       "the most bytes of generated code a kernel may have with the optimizer's actions (default 4194304, about 25x "
       "the largest kernel of the project's models); a larger one is built again without them, so no kernel keeps the "
       "compiler for minutes"},
      {"LATHE_TRACE", "once per process",
       "LATHE_TRACE=FILE: a Chrome trace of every kernel run of the process, written at exit"},
      {"BEAM", "at every prepare",
       "BEAM=N: each kernel's actions chosen by timing, the N fastest kept per round; stored on disk"},
      {"NOOPT", "at every prepare", "NOOPT=1 turns the optimizer's actions off"},
      {"LATHE_WINOGRAD", "at every prepare",
       "LATHE_WINOGRAD=0: 3x3 convolutions always by the direct method, never Winograd's F(4x4, 3x3) or F(2x2, 3x3) "
       "(F(4x4)'s float32 error is ~10x the direct one's); 1 (the default): by estimated cost; 4 or 2: F(4x4) or "
       "F(2x2) wherever it can compute one, to time each method (bench/winograd_prices.py)"},
      {"LATHE_VERIFY", "at every prepare",
       "LATHE_VERIFY=1 checks every kernel's graph between the codegen steps (on in debug builds unless 0)"},
  };
  return all;
}

}  // namespace lathe::settings

namespace lathe {

std::vector<EnvironmentVariable> environment_variables() {
  std::vector<EnvironmentVariable> out;
  for (const settings::Variable& v : settings::variables()) out.push_back({v.name, v.when, v.meaning});
  return out;
}

}  // namespace lathe

namespace lathe::settings {

bool declared(const std::string& name) {
  const std::vector<Variable>& all = variables();
  return std::any_of(all.begin(), all.end(), [&](const Variable& v) { return name == v.name; });
}

std::optional<std::string> text(const std::string& name) {
  if (!declared(name))
    throw InternalError("the environment variable " + name + " is read but not declared in support/settings.cpp");
  const char* v = std::getenv(name.c_str());
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool flag(const std::string& name, bool otherwise) {
  std::optional<std::string> v = text(name);
  return v ? std::atoi(v->c_str()) != 0 : otherwise;
}

int64_t number(const std::string& name, int64_t otherwise) {
  std::optional<std::string> v = text(name);
  if (!v) return otherwise;
  char* end = nullptr;
  long long n = std::strtoll(v->c_str(), &end, 10);
  return end == v->c_str() || *end ? otherwise : static_cast<int64_t>(n);
}

int debug_level() {
  static const int level = static_cast<int>(number("DEBUG", 0));
  return level;
}

}  // namespace lathe::settings
