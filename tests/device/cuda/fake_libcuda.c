/* A stand-in for NVIDIA's driver (libcuda.so.1) for the tests of lathe's CUDA runtime on machines
 * without a GPU: two devices of compute capability 8.0 whose memory is host memory, modules that
 * load any ELF image (a CUBIN is one), launches that run nothing but are recorded, and events
 * that always measure half a millisecond.
 * Streams can capture launches into graphs, whose replays record each launch as a launch. As in
 * the driver, a capture on a blocking stream (flags 0) makes the default stream's copies and
 * fills fail. Only the entry points lathe calls, with cuda.h's
 * signatures (CUresult is an int). fake_cuda_* let a test read what was asked of it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kInvalidDevice = 101, kInvalidImage = 200, kNotFound = 500, kNotSupported = 801,
       kCaptureImplicit = 906 };
static int blocking_captures = 0;      /* blocking streams capturing now: the default stream may not be used */
static int blocking_captures_ever = 0; /* captures begun on a blocking stream */
enum { kDevices = 2, kMostParams = 16 };
static const size_t kMemoryLimit = (size_t)1 << 32; /* an allocation larger than this fails */

typedef unsigned long long Ptr;

static int live_allocations = 0, allocations = 0, launches = 0;
/* Live allocations, so that an address the driver never gave out (a host pointer where a device
 * pointer belongs) is refused as a real driver would fault on it. */
enum { kMostLive = 4096 };
static struct { uintptr_t at; size_t size; } live[kMostLive];
static int is_device_range(Ptr p, size_t n) {
  for (int i = 0; i < kMostLive; ++i)
    if (live[i].size && p >= live[i].at && p + n <= live[i].at + live[i].size) return 1;
  return 0;
}
static int params_to_read = 0; /* a real driver knows a kernel's parameters from its image; the test says */
static _Thread_local void* current = 0; /* as the driver's: a context is current per thread */
static struct {
  char name[128];
  unsigned grid[3], block[3];
  void* context;
  uint64_t params[kMostParams]; /* the first 8 bytes of each parameter */
} last;

int cuGetErrorName(int rc, const char** name) {
  switch (rc) {
    case kSuccess: *name = "CUDA_SUCCESS"; return 0;
    case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; return 0;
    case kOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
    case kInvalidDevice: *name = "CUDA_ERROR_INVALID_DEVICE"; return 0;
    case kInvalidImage: *name = "CUDA_ERROR_INVALID_IMAGE"; return 0;
    case kNotFound: *name = "CUDA_ERROR_NOT_FOUND"; return 0;
    default: return kInvalidValue;
  }
}
/* NVRTC opens the driver too and asks for its private tables: there are none here. */
int cuGetExportTable(const void** table, const void* id) {
  (void)id;
  *table = 0;
  return kNotSupported;
}
int cuInit(unsigned flags) { return flags == 0 ? kSuccess : kInvalidValue; }
int cuDeviceGetCount(int* n) { *n = kDevices; return kSuccess; }
int cuDeviceGet(int* dev, int index) {
  if (index < 0 || index >= kDevices) return kInvalidDevice;
  *dev = index;
  return kSuccess;
}
int cuDeviceGetAttribute(int* value, int attribute, int dev) {
  if (dev < 0 || dev >= kDevices) return kInvalidDevice;
  if (attribute == 75) *value = 8;      /* compute capability major */
  else if (attribute == 76) *value = 0; /* minor */
  else return kInvalidValue;
  return kSuccess;
}
int cuDeviceGetName(char* name, int len, int dev) {
  if (dev < 0 || dev >= kDevices || len < 16) return kInvalidValue;
  strcpy(name, "lathe fake GPU");
  return kSuccess;
}
static char contexts[kDevices];
int cuDevicePrimaryCtxRetain(void** ctx, int dev) {
  if (dev < 0 || dev >= kDevices) return kInvalidDevice;
  *ctx = &contexts[dev];
  return kSuccess;
}
int cuCtxSetCurrent(void* ctx) { current = ctx; return kSuccess; }
int cuCtxSynchronize(void) { return current ? kSuccess : kInvalidValue; }

int cuMemAlloc_v2(Ptr* p, size_t n) {
  if (!current) return kInvalidValue;
  if (n == 0) return kInvalidValue;
  if (n > kMemoryLimit) return kOutOfMemory;
  void* m = aligned_alloc(256, (n + 255) / 256 * 256);
  if (!m) return kOutOfMemory;
  int slot = 0;
  while (slot < kMostLive && live[slot].size) ++slot;
  if (slot == kMostLive) { /* more than it can check: refused, never silently unchecked */
    free(m);
    return kOutOfMemory;
  }
  live[slot].at = (uintptr_t)m, live[slot].size = n;
  ++live_allocations;
  ++allocations;
  *p = (Ptr)(uintptr_t)m;
  return kSuccess;
}
int cuMemFree_v2(Ptr p) {
  for (int i = 0; i < kMostLive; ++i)
    if (live[i].size && live[i].at == p) live[i].size = 0;
  free((void*)(uintptr_t)p);
  --live_allocations;
  return kSuccess;
}
int cuMemcpyHtoD_v2(Ptr dst, const void* src, size_t n) {
  if (blocking_captures) return kCaptureImplicit;
  if (!current || !is_device_range(dst, n)) return kInvalidValue;
  memcpy((void*)(uintptr_t)dst, src, n);
  return kSuccess;
}
int cuMemcpyDtoH_v2(void* dst, Ptr src, size_t n) {
  if (blocking_captures) return kCaptureImplicit;
  if (!current || !is_device_range(src, n)) return kInvalidValue;
  memcpy(dst, (const void*)(uintptr_t)src, n);
  return kSuccess;
}
int cuMemcpyDtoD_v2(Ptr dst, Ptr src, size_t n) {
  if (blocking_captures) return kCaptureImplicit;
  if (!current || !is_device_range(dst, n) || !is_device_range(src, n)) return kInvalidValue;
  memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n);
  return kSuccess;
}
int cuMemsetD8_v2(Ptr dst, unsigned char v, size_t n) {
  if (blocking_captures) return kCaptureImplicit;
  if (!current || !is_device_range(dst, n)) return kInvalidValue;
  memset((void*)(uintptr_t)dst, v, n);
  return kSuccess;
}

typedef struct { char name[128]; } Function;
int cuModuleLoadData(void** module, const void* image) {
  if (!current) return kInvalidValue;
  if (memcmp(image, "\177ELF", 4) != 0) return kInvalidImage; /* a CUBIN is an ELF file */
  *module = malloc(1);
  return kSuccess;
}
int cuModuleGetFunction(void** fn, void* module, const char* name) {
  (void)module;
  if (strlen(name) >= sizeof(((Function*)0)->name)) return kNotFound;
  Function* f = malloc(sizeof(Function)); /* kept: a test's handful */
  strcpy(f->name, name);
  *fn = f;
  return kSuccess;
}
int cuModuleUnload(void* module) {
  if (!current) return kInvalidValue; /* a module belongs to a context, which must be current */
  free(module);
  return kSuccess;
}
/* One launch as cuLaunchKernel was given it, its parameters' first 8 bytes read then (as a
 * captured launch keeps the values it was given). */
typedef struct {
  Function* fn;
  unsigned grid[3], block[3];
  void* context;
  uint64_t params[kMostParams];
} Launch;
static void run_launch(const Launch* l) {
  strcpy(last.name, l->fn->name);
  memcpy(last.grid, l->grid, sizeof last.grid);
  memcpy(last.block, l->block, sizeof last.block);
  last.context = l->context;
  memcpy(last.params, l->params, sizeof last.params);
  ++launches;
}

/* Streams: a capturing one collects launches into its graph instead of running them. */
enum { kMostCaptured = 256 };
typedef struct {
  Launch launches[kMostCaptured];
  int count;
  int broken; /* more launches than it holds: the capture fails, as an unsupported call would */
} Graph;
typedef struct {
  Graph* capturing;
  unsigned flags;
} Stream;
static int graph_launches = 0, captured = 0, live_graphs = 0;

int cuLaunchKernel(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared, void* stream,
                   void** params, void** extra) {
  (void)shared, (void)extra;
  if (!current || !fn || gx * gy * gz == 0 || bx * by * bz == 0 || bx * by * bz > 1024) return kInvalidValue;
  Launch l = {(Function*)fn, {gx, gy, gz}, {bx, by, bz}, current, {0}};
  for (int i = 0; params && i < params_to_read && i < kMostParams; ++i) memcpy(&l.params[i], params[i], 8);
  Graph* g = stream ? ((Stream*)stream)->capturing : 0;
  if (!g) {
    run_launch(&l);
    return kSuccess;
  }
  if (g->count == kMostCaptured) {
    g->broken = 1;
    return kNotSupported;
  }
  g->launches[g->count++] = l;
  ++captured;
  return kSuccess;
}
int cuStreamCreate(void** stream, unsigned flags) {
  if (!current || flags > 1) return kInvalidValue; /* CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING */
  Stream* s = calloc(1, sizeof(Stream));
  if (!s) return kOutOfMemory;
  s->flags = flags;
  *stream = s;
  return kSuccess;
}
int cuStreamDestroy_v2(void* stream) {
  Stream* s = stream;
  if (!s || s->capturing) return kInvalidValue;
  free(s);
  return kSuccess;
}
int cuStreamBeginCapture_v2(void* stream, int mode) {
  Stream* s = stream;
  if (!current || !s || s->capturing || mode < 0 || mode > 2) return kInvalidValue;
  s->capturing = calloc(1, sizeof(Graph));
  if (!s->capturing) return kOutOfMemory;
  if (s->flags == 0) ++blocking_captures, ++blocking_captures_ever;
  return kSuccess;
}
int cuStreamEndCapture(void* stream, void** graph) {
  Stream* s = stream;
  if (!s || !s->capturing) return kInvalidValue;
  Graph* g = s->capturing;
  s->capturing = 0;
  if (s->flags == 0) --blocking_captures;
  if (g->broken) {
    free(g);
    *graph = 0;
    return kNotSupported;
  }
  *graph = g;
  ++live_graphs;
  return kSuccess;
}
/* The executable graph is a copy of the graph, which the caller may destroy at once. */
int cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
  if (!graph || flags != 0) return kInvalidValue;
  Graph* copy = malloc(sizeof(Graph));
  if (!copy) return kOutOfMemory;
  memcpy(copy, graph, sizeof(Graph));
  *exec = copy;
  ++live_graphs;
  return kSuccess;
}
int cuGraphLaunch(void* exec, void* stream) {
  (void)stream;
  if (!current || !exec) return kInvalidValue;
  const Graph* g = exec;
  for (int i = 0; i < g->count; ++i) run_launch(&g->launches[i]);
  ++graph_launches;
  return kSuccess;
}
int cuGraphExecDestroy(void* exec) {
  free(exec);
  --live_graphs;
  return kSuccess;
}
int cuGraphDestroy(void* graph) {
  free(graph);
  --live_graphs;
  return kSuccess;
}
int cuEventCreate(void** e, unsigned flags) { (void)flags; *e = malloc(1); return kSuccess; }
int cuEventRecord(void* e, void* stream) { (void)stream; return e ? kSuccess : kInvalidValue; }
int cuEventSynchronize(void* e) { return e ? kSuccess : kInvalidValue; }
int cuEventElapsedTime(float* ms, void* start, void* end) {
  if (!start || !end) return kInvalidValue;
  *ms = 0.5f;
  return kSuccess;
}
int cuEventDestroy_v2(void* e) { free(e); return kSuccess; }

/* What a test sets and reads. */
void fake_cuda_read_params(int n) { params_to_read = n; }
int fake_cuda_live_allocations(void) { return live_allocations; }
int fake_cuda_allocations(void) { return allocations; }
int fake_cuda_launches(void) { return launches; }
const char* fake_cuda_last_kernel(void) { return last.name; }
const unsigned* fake_cuda_last_grid(void) { return last.grid; }
const unsigned* fake_cuda_last_block(void) { return last.block; }
const uint64_t* fake_cuda_last_params(void) { return last.params; }
int fake_cuda_last_device(void) { return last.context ? (int)((char*)last.context - contexts) : -1; }
int fake_cuda_graph_launches(void) { return graph_launches; }
int fake_cuda_captured_launches(void) { return captured; }
int fake_cuda_live_graphs(void) { return live_graphs; }
int fake_cuda_blocking_captures(void) { return blocking_captures_ever; }
