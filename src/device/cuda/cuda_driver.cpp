#include "device/cuda/cuda_driver.hpp"

#include <dlfcn.h>

#include <deque>
#include <mutex>

#include "lathe/error.hpp"

namespace lathe {
namespace {

struct Loaded {
  CudaDriver api;
  std::string failure;  // why it is unusable; empty: usable
};

// Looks `name` up into `fn`; records the first missing one.
template <class Fn>
void bind(void* lib, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn && missing.empty()) missing = name;
}

const Loaded& loaded() {
  static const Loaded& d = *[] {  // leaked: programs and buffers may outlive static destruction
    auto* made = new Loaded;
    Loaded& r = *made;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);  // kept open for the process
    if (!lib) {
      const char* e = dlerror();
      r.failure = std::string("NVIDIA's driver library libcuda.so.1 did not load (") + (e ? e : "not found") + ")";
      return made;
    }
    CudaDriver& a = r.api;
    std::string missing;
    bind(lib, "cuGetErrorName", a.error_name, missing);
    bind(lib, "cuInit", a.init, missing);
    bind(lib, "cuDeviceGetCount", a.device_count, missing);
    bind(lib, "cuDeviceGet", a.device_get, missing);
    bind(lib, "cuDeviceGetAttribute", a.attribute, missing);
    bind(lib, "cuDeviceGetName", a.device_name, missing);
    bind(lib, "cuDevicePrimaryCtxRetain", a.primary_ctx_retain, missing);
    bind(lib, "cuCtxSetCurrent", a.ctx_set_current, missing);
    bind(lib, "cuCtxSynchronize", a.ctx_synchronize, missing);
    bind(lib, "cuMemAlloc_v2", a.mem_alloc, missing);
    bind(lib, "cuMemFree_v2", a.mem_free, missing);
    bind(lib, "cuMemcpyHtoD_v2", a.memcpy_htod, missing);
    bind(lib, "cuMemcpyDtoH_v2", a.memcpy_dtoh, missing);
    bind(lib, "cuMemcpyDtoD_v2", a.memcpy_dtod, missing);
    bind(lib, "cuMemsetD8_v2", a.memset_d8, missing);
    bind(lib, "cuModuleLoadData", a.module_load_data, missing);
    bind(lib, "cuModuleGetFunction", a.module_get_function, missing);
    bind(lib, "cuModuleUnload", a.module_unload, missing);
    bind(lib, "cuLaunchKernel", a.launch_kernel, missing);
    bind(lib, "cuEventCreate", a.event_create, missing);
    bind(lib, "cuEventRecord", a.event_record, missing);
    bind(lib, "cuEventSynchronize", a.event_synchronize, missing);
    bind(lib, "cuEventElapsedTime", a.event_elapsed, missing);
    bind(lib, "cuEventDestroy_v2", a.event_destroy, missing);
    std::string optional;  // a driver without graphs still runs kernels
    bind(lib, "cuStreamCreate", a.stream_create, optional);
    bind(lib, "cuStreamDestroy_v2", a.stream_destroy, optional);
    bind(lib, "cuStreamBeginCapture_v2", a.stream_begin_capture, optional);
    bind(lib, "cuStreamEndCapture", a.stream_end_capture, optional);
    bind(lib, "cuGraphInstantiateWithFlags", a.graph_instantiate, optional);
    bind(lib, "cuGraphLaunch", a.graph_launch, optional);
    bind(lib, "cuGraphExecDestroy", a.graph_exec_destroy, optional);
    bind(lib, "cuGraphDestroy", a.graph_destroy, optional);
    if (!missing.empty()) {
      r.failure = "libcuda.so.1 lacks " + missing + ", which lathe calls (a driver older than CUDA 11?)";
      return made;
    }
    if (int rc = a.init(0); rc != 0) {
      r.failure = "cuInit failed: " + a.error_text(rc) + " (no GPU, or no driver for it)";
      return made;
    }
    int n = 0;
    if (int rc = a.device_count(&n); rc != 0 || n == 0) r.failure = rc ? "cuDeviceGetCount failed: " + a.error_text(rc) : "the driver sees no CUDA device";
    return made;
  }();
  return d;
}

}  // namespace

std::string CudaDriver::error_text(int rc) const {
  const char* name = nullptr;
  if (error_name && error_name(rc, &name) == 0 && name) return std::string(name) + " (" + std::to_string(rc) + ")";
  return "error " + std::to_string(rc);
}

void CudaDriver::check(int rc, const std::string& what) const {
  if (rc != 0) throw Error(what + " failed: " + error_text(rc));
}

std::string cuda_unavailable() { return loaded().failure; }

void*& cuda_capture_stream() {
  thread_local void* stream = nullptr;
  return stream;
}

const CudaDriver& cuda_driver() {
  const Loaded& d = loaded();
  if (!d.failure.empty()) throw Error("CUDA is unavailable: " + d.failure);
  return d.api;
}

int cuda_device_arch(int index) {
  const Loaded& d = loaded();
  if (!d.failure.empty()) return 0;
  int dev = 0, major = 0, minor = 0;
  constexpr int kMajor = 75, kMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
  if (d.api.device_get(&dev, index) != 0 || d.api.attribute(&major, kMajor, dev) != 0 || d.api.attribute(&minor, kMinor, dev) != 0) return 0;
  return major * 10 + minor;
}

void CudaDevice::use() const { cuda_driver().check(cuda_driver().ctx_set_current(context), "cuCtxSetCurrent on CUDA:" + std::to_string(index)); }

const CudaDevice& cuda_device(int index) {
  static std::mutex mu;
  static auto& devices = *new std::deque<CudaDevice>;  // a deque: references stay valid as devices are added; never freed (memories refer to them)
  const CudaDriver& api = cuda_driver();
  std::lock_guard<std::mutex> lock(mu);
  for (const CudaDevice& d : devices)
    if (d.index == index) return d;
  int n = 0;
  api.check(api.device_count(&n), "cuDeviceGetCount");
  if (index < 0 || index >= n) throw Error("no device CUDA:" + std::to_string(index) + " (the driver sees " + std::to_string(n) + ")");
  CudaDevice d;
  d.index = index;
  api.check(api.device_get(&d.handle, index), "cuDeviceGet(" + std::to_string(index) + ")");
  api.check(api.primary_ctx_retain(&d.context, d.handle), "cuDevicePrimaryCtxRetain on CUDA:" + std::to_string(index));
  d.arch = cuda_device_arch(index);
  char name[256] = {};
  if (api.device_name(name, sizeof name, d.handle) == 0) d.name = name;
  // Its own stream, so launches can be recorded (the default stream cannot be); flags 0: it waits
  // for the default stream's copies and they for it, so copies and launches stay in order.
  if (api.graphs() && (api.ctx_set_current(d.context) != 0 || api.stream_create(&d.stream, 0) != 0)) d.stream = nullptr;
  devices.push_back(std::move(d));
  return devices.back();
}

}  // namespace lathe
