// A GPU's memory through NVIDIA's driver: cuMemAlloc'd blocks kept in a pool of freed ones by size
// (a fresh allocation costs far more than a kernel), copies with cuMemcpy (complete on return:
// they wait for the kernels queued before them) and fills with cuMemsetD8.
#pragma once

#include "device/device_memory.hpp"

namespace lathe {

/// CUDA device `index`'s memory; throws Error naming why where the device cannot be used.
DeviceMemory& cuda_memory(int index);

}  // namespace lathe
