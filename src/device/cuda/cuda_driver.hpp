// NVIDIA's driver, loaded at run time (dlopen("libcuda.so.1")): lathe links no CUDA library, so it
// builds and runs where there is none, and says why CUDA is unavailable where it is.
#pragma once

#include <string>

namespace lathe {

/// Why no CUDA device can run kernels in this process (the library missing, cuInit's error, no
/// device), or empty when one can.
std::string cuda_unavailable();

/// The compute capability of CUDA device `index` (90 for an H100), or 0 where the driver cannot say.
int cuda_device_arch(int index);

}  // namespace lathe
