// CUDA C -> PTX and CUBIN with NVIDIA's runtime compiler, loaded with dlopen: lathe builds and
// runs without the CUDA toolkit, and says why it cannot compile GPU kernels where NVRTC is
// missing. NVRTC (LATHE_NVRTC, else libnvrtc.so.13, .so.12 or .so on the library path, else
// /usr/local/cuda/lib64) compiles for a real architecture (sm_90), which gives the CUBIN the
// driver loads as it is and ptxas's report of registers and spills; and, when asked, PTX for a
// virtual one (compute_90), which a newer GPU's driver can still compile.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device/backend.hpp"

namespace lathe {

/// One kernel compiled for one architecture, with what ptxas said of it.
struct NvrtcOutput {
  std::vector<uint8_t> cubin;
  std::string ptx;
  std::string log;           // NVRTC's and ptxas's messages
  int registers = -1;        // per thread (-1: ptxas did not say)
  int64_t spill_bytes = 0;   // spill stores + loads
  int64_t stack_bytes = 0;   // the stack frame
};

class Nvrtc {
 public:
  /// The process's NVRTC, loaded on first use; null where none loads, with why in `*why`.
  static const Nvrtc* get(std::string* why = nullptr);
  /// "13.0".
  const std::string& version() const { return version_; }
  /// `src` (a CUDA C translation unit) for compute capability `sm`: the CUBIN and ptxas's report,
  /// and (a second compile) the PTX unless `ptx` is false. Throws CompileError with NVRTC's log,
  /// naming `name`, when it does not compile.
  NvrtcOutput compile(const std::string& src, const std::string& name, int sm, bool ptx = true) const;

  struct Api;

 private:
  explicit Nvrtc(std::shared_ptr<const Api> api);
  std::shared_ptr<const Api> api_;
  std::string version_;
};

/// The CUDA backend's compiler: a ProgramSpec's CUDA C -> CUBIN bytes (CompiledSpec::bytes) for
/// compute capability `sm`, its source kept beside them; assembly() is the PTX.
class NvrtcCompiler final : public Compiler {
 public:
  /// Throws CompileError saying why where NVRTC does not load.
  explicit NvrtcCompiler(int sm);
  const std::string& identity() const override { return identity_; }
  CompiledSpec compile(const ProgramSpec& spec) const override;
  std::string assembly(const ProgramSpec& spec) const override;
  Target target() const override;
  int sm() const { return sm_; }

 private:
  const Nvrtc* nvrtc_;
  int sm_;
  std::string identity_;
};

}  // namespace lathe
