#include "device/cuda/gpu_target.hpp"

#include <cctype>

#include "lathe/error.hpp"

namespace lathe {

Target gpu_target(int sm) {
  if (sm < 75) throw Error("GPU architecture sm_" + std::to_string(sm) + " is older than CUDA 13 builds for (sm_75 and newer)");
  Target t;
  t.vector_bytes = 16;       // a thread's widest load; the register tile reads it as 4 float lanes
  t.vector_registers = 16;   // 8 accumulators of 4 floats a thread: 32 of its registers, occupancy kept
  t.threads = 1;             // a kernel's parallelism is its grid, not host threads
  t.l1_bytes = int64_t{192} << 10;                       // L1 + shared memory per multiprocessor
  t.l2_bytes = t.l1_bytes;
  t.l3_bytes = sm >= 90 ? int64_t{50} << 20 : int64_t{40} << 20;  // the device's L2, shared by all
  t.native_transcendentals = true;  // exp2f, log2f, sinf are hardware approximations or short sequences
  t.widest_vector = 1;              // the renderer spells scalars
  t.has_local = true;
  t.shared_bytes = int64_t{48} << 10;
  t.local_max = {1024, 1024, 64};
  t.local_total_max = 1024;
  t.global_max = {2147483647, 65535, 65535};
  if (sm >= 80) {
    t.tensor_cores[0] = TensorCore{16, 8, 16, dtypes::float16, dtypes::float32};
    t.tensor_cores[1] = TensorCore{16, 8, 16, dtypes::bfloat16, dtypes::float32};
  }
  return t;
}

int parse_gpu_arch(const std::string& text) {
  std::string digits;
  size_t i = text.rfind("sm_", 0) == 0 ? 3 : 0;
  for (; i < text.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) digits += text[i];
    else if (!(text[i] == '.' && digits.size() == 1)) digits.clear(), i = text.size();
  }
  if (digits.size() < 2 || digits.size() > 3) throw Error("'" + text + "' is not a GPU architecture (sm_80, 90, 8.6, ...)");
  return std::stoi(digits);
}

}  // namespace lathe
