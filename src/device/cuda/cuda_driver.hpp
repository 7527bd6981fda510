// NVIDIA's driver, loaded at run time (dlopen("libcuda.so.1")): lathe links no CUDA library, so it
// builds and runs where there is none, and says why CUDA is unavailable where it is. The entry
// points lathe calls are kept in one table (CudaDriver); a device is used through its primary
// context, made current on the calling thread before each call (CudaDevice::use).
#pragma once

#include <cstdint>
#include <string>

namespace lathe {

/// Why no CUDA device can run kernels in this process (the library missing, cuInit's error, no
/// device), or empty when one can.
std::string cuda_unavailable();

/// The compute capability of CUDA device `index` (90 for an H100), or 0 where the driver cannot say.
int cuda_device_arch(int index);

/// The driver's entry points, as cuda.h declares them (CUresult is an int; handles are pointers;
/// device addresses are 64-bit integers).
struct CudaDriver {
  using Ptr = unsigned long long;  // CUdeviceptr
  int (*init)(unsigned) = nullptr;
  int (*device_count)(int*) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*attribute)(int*, int, int) = nullptr;
  int (*device_name)(char*, int, int) = nullptr;
  int (*error_name)(int, const char**) = nullptr;
  int (*primary_ctx_retain)(void**, int) = nullptr;
  int (*ctx_set_current)(void*) = nullptr;
  int (*ctx_synchronize)() = nullptr;
  int (*mem_alloc)(Ptr*, size_t) = nullptr;
  int (*mem_free)(Ptr) = nullptr;
  int (*memcpy_htod)(Ptr, const void*, size_t) = nullptr;
  int (*memcpy_dtoh)(void*, Ptr, size_t) = nullptr;
  int (*memcpy_dtod)(Ptr, Ptr, size_t) = nullptr;
  int (*memset_d8)(Ptr, unsigned char, size_t) = nullptr;
  int (*module_load_data)(void**, const void*) = nullptr;
  int (*module_get_function)(void**, void*, const char*) = nullptr;
  int (*module_unload)(void*) = nullptr;
  int (*launch_kernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**) = nullptr;
  int (*event_create)(void**, unsigned) = nullptr;
  int (*event_record)(void*, void*) = nullptr;
  int (*event_synchronize)(void*) = nullptr;
  int (*event_elapsed)(float*, void*, void*) = nullptr;
  int (*event_destroy)(void*) = nullptr;
  // Streams and graphs (CUDA 11.4 and newer): a plan's launches recorded once and replayed as one.
  // Optional: without them, launches go to the default stream and nothing is recorded.
  int (*stream_create)(void**, unsigned) = nullptr;
  int (*stream_destroy)(void*) = nullptr;
  int (*stream_begin_capture)(void*, int) = nullptr;
  int (*stream_end_capture)(void*, void**) = nullptr;
  int (*graph_instantiate)(void**, void*, unsigned long long) = nullptr;
  int (*graph_launch)(void*, void*) = nullptr;
  int (*graph_exec_destroy)(void*) = nullptr;
  int (*graph_destroy)(void*) = nullptr;

  /// Whether the driver can record launches into a graph and replay it.
  bool graphs() const {
    return stream_create && stream_destroy && stream_begin_capture && stream_end_capture && graph_instantiate && graph_launch && graph_exec_destroy && graph_destroy;
  }

  /// Throws Error "`what` failed: CUDA_ERROR_... (n)" unless `rc` is CUDA_SUCCESS.
  void check(int rc, const std::string& what) const;
  /// "CUDA_ERROR_OUT_OF_MEMORY (2)".
  std::string error_text(int rc) const;
};

/// The stream this thread's launches go to while it records a plan (CudaMemory::record): one of
/// the recording's own, so the device's stream, which other threads launch into, is never
/// capturing. Null: the device's stream.
void*& cuda_capture_stream();

/// The loaded driver; throws Error saying why CUDA is unavailable (cuda_unavailable()).
const CudaDriver& cuda_driver();

/// One GPU, through its primary context.
struct CudaDevice {
  int index = 0;
  int handle = 0;          // CUdevice
  void* context = nullptr; // its primary context
  int arch = 0;            // compute capability, 90 for sm_90
  std::string name;        // "NVIDIA H100 80GB HBM3"
  void* stream = nullptr;  // where lathe launches (one that waits for the default stream's copies); null: the default stream
  /// Makes the device's context current on this thread (every driver call goes to it).
  void use() const;
};

/// CUDA device `index`, its context retained on first use; throws Error naming why it cannot be
/// used (CUDA unavailable, no such device).
const CudaDevice& cuda_device(int index);

}  // namespace lathe
