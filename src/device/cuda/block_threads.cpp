#include "device/cuda/block_threads.hpp"

#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "ir/axis.hpp"
#include "lathe/error.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LATHE_FIBERS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define LATHE_FIBERS_ASAN 1
#endif
#ifdef LATHE_FIBERS_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#include <sys/mman.h>
#include <unistd.h>

namespace lathe {
namespace {

// A thread's stack: what a kernel's frame needs, with room (its pages are touched only as used).
constexpr size_t kStackBytes = size_t{256} << 10;

enum class At { Ready, Barrier, Warp, Done };

struct Fiber {
  ucontext_t context;
  At at = At::Ready;
  long long kind = 0;
  const float* a = nullptr;
  const float* b = nullptr;
  float* cd = nullptr;
  long long result = 0;
  void* fake_stack = nullptr;  // AddressSanitizer's, while the fiber is switched out
};

struct Block {
  ucontext_t scheduler;
  std::vector<Fiber> threads;
  int64_t current = 0;
  const std::function<void(int64_t)>* body = nullptr;
  std::exception_ptr failure;
  void* fake_stack = nullptr;
  const void* scheduler_stack = nullptr;
  size_t scheduler_stack_bytes = 0;
};

// A thread's stack, with a page below it that faults (a kernel that overflows its stack stops
// there rather than writing over the heap).
class Stack {
 public:
  Stack() {
    guard_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* p = mmap(nullptr, guard_ + kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw Error("GPU emulator: no memory for a thread's stack");
    if (mprotect(p, guard_, PROT_NONE) != 0) {
      munmap(p, guard_ + kStackBytes);
      throw Error("GPU emulator: cannot guard a thread's stack");
    }
    base_ = static_cast<char*>(p);
  }
  ~Stack() { munmap(base_, guard_ + kStackBytes); }
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
  char* bottom() const { return base_ + guard_; }
  bool abandoned = false;  // a block stopped with threads on it: under ASan, its frames' marks stay

 private:
  char* base_ = nullptr;
  size_t guard_ = 0;
};

thread_local Block* running = nullptr;
thread_local std::vector<std::unique_ptr<Stack>> stacks;  // reused by the next block on this CPU thread

// Switches from the context saved in `from` to `to`, whose stack is [bottom, bottom + bytes): the
// sanitizer is told of each switch, or it would take the other stack for an overflow.
void switch_context(ucontext_t* from, const ucontext_t* to, void** fake_stack, const void* bottom, size_t bytes) {
#ifdef LATHE_FIBERS_ASAN
  __sanitizer_start_switch_fiber(fake_stack, bottom, bytes);
#else
  (void)fake_stack, (void)bottom, (void)bytes;
#endif
  swapcontext(from, to);
#ifdef LATHE_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(*fake_stack, nullptr, nullptr);
#endif
}

void to_scheduler(Fiber& f) {
  Block& b = *running;
  switch_context(&f.context, &b.scheduler, &f.fake_stack, b.scheduler_stack, b.scheduler_stack_bytes);
}

void thread_main() {
  Block& b = *running;
#ifdef LATHE_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &b.scheduler_stack, &b.scheduler_stack_bytes);
#endif
  int64_t me = b.current;
  try {
    (*b.body)(me);
  } catch (...) {
    if (!b.failure) b.failure = std::current_exception();
  }
  Fiber& f = b.threads[me];
  f.at = At::Done;
#ifdef LATHE_FIBERS_ASAN
  __sanitizer_start_switch_fiber(nullptr, b.scheduler_stack, b.scheduler_stack_bytes);  // this stack is done with
#endif
  swapcontext(&f.context, &b.scheduler);  // never resumed
}

long long sync_hook(long long kind, const float* a, const float* b, float* cd) {
  if (!running) {
    std::fprintf(stderr, "lathe: a GPU kernel met its block's threads outside the emulator's block runner\n");
    std::abort();
  }
  Fiber& f = running->threads[running->current];
  f.at = kind == kBlockBarrier ? At::Barrier : At::Warp;
  f.kind = kind, f.a = a, f.b = b, f.cd = cd;
  to_scheduler(f);
  return f.result;
}

// The warp of `lanes` (its 32 threads, in lane order): D = A B + C from their fragments.
void multiply_add(Fiber* lanes) {
  float A[16][16], B[16][8], C[16][8];
  for (int lane = 0; lane < kWarpLanes; ++lane) {
    int g = lane >> 2, q = lane & 3;
    const Fiber& t = lanes[lane];
    for (int i = 0; i < 8; ++i) A[g + 8 * ((i >> 1) & 1)][q * 2 + (i & 1) + 8 * (i >> 2)] = t.a[i];
    for (int i = 0; i < 4; ++i) B[q * 2 + (i & 1) + 8 * (i >> 1)][g] = t.b[i];
    for (int i = 0; i < 4; ++i) C[g + 8 * (i >> 1)][q * 2 + (i & 1)] = t.cd[i];
  }
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n)
      for (int k = 0; k < 16; ++k) C[m][n] += A[m][k] * B[k][n];
  for (int lane = 0; lane < kWarpLanes; ++lane) {
    int g = lane >> 2, q = lane & 3;
    for (int i = 0; i < 4; ++i) lanes[lane].cd[i] = C[g + 8 * (i >> 1)][q * 2 + (i & 1)];
  }
}

std::string block_error(int64_t n, const std::string& what) { return "GPU emulator: a block of " + std::to_string(n) + " threads " + what; }

// Lets go the warps whose 32 threads all wait at a multiply-add; whether any did.
bool release_warps(Block& b) {
  int64_t n = static_cast<int64_t>(b.threads.size());
  bool any = false;
  for (int64_t w = 0; w * kWarpLanes < n; ++w) {
    int64_t waiting = 0;
    for (int64_t l = w * kWarpLanes; l < std::min(n, (w + 1) * kWarpLanes); ++l) waiting += b.threads[l].at == At::Warp;
    if (waiting == 0) continue;
    if ((w + 1) * kWarpLanes > n) throw Error(block_error(n, "reached a warp's matrix multiply-add: it needs whole warps of " + std::to_string(kWarpLanes)));
    if (waiting < kWarpLanes) continue;
    Fiber* lanes = &b.threads[w * kWarpLanes];
    for (int64_t l = 1; l < kWarpLanes; ++l)
      if (lanes[l].kind != lanes[0].kind) throw Error(block_error(n, "has warp " + std::to_string(w) + " multiply-adding two kinds of inputs at once"));
    multiply_add(lanes);
    for (int64_t l = 0; l < kWarpLanes; ++l) lanes[l].at = At::Ready, lanes[l].result = 0;
    any = true;
  }
  return any;
}

// `f` set to run thread_main on `stack` (a function of its own: getcontext returns twice).
[[gnu::noinline]] void start_fiber(Fiber& f, Stack& s) {
#ifdef LATHE_FIBERS_ASAN
  if (s.abandoned) __asan_unpoison_memory_region(s.bottom(), kStackBytes);  // what the abandoned block's frames left poisoned
#endif
  s.abandoned = false;
  char* stack = s.bottom();
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = stack;
  f.context.uc_stack.ss_size = kStackBytes;
  f.context.uc_link = nullptr;
  makecontext(&f.context, thread_main, 0);
}

}  // namespace

SyncHook block_sync_hook() { return &sync_hook; }

void run_block_threads(int64_t threads, const std::function<void(int64_t)>& body) {
  if (threads < 1) return;
  if (running) throw InternalError("GPU emulator: a block's threads started another block's (their stacks are in use)");
  Block b;
  b.threads.resize(static_cast<size_t>(threads));
  b.body = &body;
  while (stacks.size() < b.threads.size()) stacks.push_back(std::make_unique<Stack>());
  for (int64_t t = 0; t < threads; ++t) start_fiber(b.threads[t], *stacks[t]);
  running = &b;
  struct Done {
    int64_t threads;
    bool finished = false;
    ~Done() {
      running = nullptr;
      if (!finished)
        for (int64_t t = 0; t < threads; ++t) stacks[t]->abandoned = true;
    }
  } done_all{threads};
  for (;;) {
    for (int64_t t = 0; t < threads; ++t) {
      if (b.threads[t].at != At::Ready) continue;
      b.current = t;
      switch_context(&b.scheduler, &b.threads[t].context, &b.fake_stack, stacks[t]->bottom(), kStackBytes);
      if (b.failure) std::rethrow_exception(b.failure);
    }
    if (release_warps(b)) continue;
    int64_t done = 0, barrier = 0;
    for (const Fiber& f : b.threads) done += f.at == At::Done, barrier += f.at == At::Barrier;
    if (done == threads) {
      done_all.finished = true;
      return;
    }
    if (done + barrier < threads) throw Error(block_error(threads, "has warps whose threads wait at different points (a multiply-add some lanes never reach)"));
    if (done > 0) throw Error(block_error(threads, "has " + std::to_string(done) + " threads that left the kernel while " + std::to_string(barrier) + " wait at its barrier"));
    for (int64_t t = 0; t < threads; ++t) b.threads[t].at = At::Ready, b.threads[t].result = t;
  }
}

}  // namespace lathe
