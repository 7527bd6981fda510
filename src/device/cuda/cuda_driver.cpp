#include "device/cuda/cuda_driver.hpp"

#include <dlfcn.h>

namespace lathe {
namespace {

// The driver entry points lathe calls, as cuda.h declares them (CUresult is an int).
struct Driver {
  void* lib = nullptr;
  int (*init)(unsigned) = nullptr;
  int (*device_count)(int*) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*attribute)(int*, int, int) = nullptr;
  int (*error_name)(int, const char**) = nullptr;
  std::string failure;  // why it is unusable; empty: usable
};

std::string error_text(const Driver& d, int rc) {
  const char* name = nullptr;
  if (d.error_name && d.error_name(rc, &name) == 0 && name) return std::string(name) + " (" + std::to_string(rc) + ")";
  return "error " + std::to_string(rc);
}

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    r.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!r.lib) {
      const char* e = dlerror();
      r.failure = std::string("NVIDIA's driver library libcuda.so.1 did not load (") + (e ? e : "not found") + ")";
      return r;
    }
    r.init = reinterpret_cast<int (*)(unsigned)>(dlsym(r.lib, "cuInit"));
    r.device_count = reinterpret_cast<int (*)(int*)>(dlsym(r.lib, "cuDeviceGetCount"));
    r.device_get = reinterpret_cast<int (*)(int*, int)>(dlsym(r.lib, "cuDeviceGet"));
    r.attribute = reinterpret_cast<int (*)(int*, int, int)>(dlsym(r.lib, "cuDeviceGetAttribute"));
    r.error_name = reinterpret_cast<int (*)(int, const char**)>(dlsym(r.lib, "cuGetErrorName"));
    if (!r.init || !r.device_count || !r.device_get || !r.attribute) {
      r.failure = "libcuda.so.1 lacks the driver API lathe calls (cuInit, cuDeviceGetCount, cuDeviceGet, cuDeviceGetAttribute)";
      return r;
    }
    if (int rc = r.init(0); rc != 0) {
      r.failure = "cuInit failed: " + error_text(r, rc) + " (no GPU, or no driver for it)";
      return r;
    }
    int n = 0;
    if (int rc = r.device_count(&n); rc != 0 || n == 0) r.failure = rc ? "cuDeviceGetCount failed: " + error_text(r, rc) : "the driver sees no CUDA device";
    return r;
  }();
  return d;
}

}  // namespace

std::string cuda_unavailable() { return driver().failure; }

int cuda_device_arch(int index) {
  const Driver& d = driver();
  if (!d.failure.empty()) return 0;
  int dev = 0, major = 0, minor = 0;
  constexpr int kMajor = 75, kMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
  if (d.device_get(&dev, index) != 0 || d.attribute(&major, kMajor, dev) != 0 || d.attribute(&minor, kMinor, dev) != 0) return 0;
  return major * 10 + minor;
}

}  // namespace lathe
