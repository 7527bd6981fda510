// ExecutionPlan::execute must not touch the heap: counted by replacing operator new in this
// test program (every allocation through new, std::function, std::vector, ...).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "device/thread_pool.hpp"
#include "lathe/lathe.hpp"

// Each replacement frees with std::free what it allocated with std::malloc or std::aligned_alloc;
// g++ 12 at -O1 sees only the operators' names once they are inlined, and warns that they do not
// pair (-Wmismatched-new-delete).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<bool> g_counting{false};
std::atomic<size_t> g_news{0};
}  // namespace

void* operator new(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, std::align_val_t a) {
  if (g_counting.load(std::memory_order_relaxed)) g_news.fetch_add(1, std::memory_order_relaxed);
  size_t align = static_cast<size_t>(a);
  if (void* p = std::aligned_alloc(align, (n + align - 1) / align * align)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every form this program
// allocates with must be one it frees with.
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try { return operator new(n); } catch (...) { return nullptr; }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return operator new(n, std::nothrow); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  try { return operator new(n, a); } catch (...) { return nullptr; }
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return operator new(n, a, std::nothrow); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace lathe {
namespace {

TEST(ExecuteHotPath, RunsWithoutHeapAllocations) {
  // A threaded elementwise kernel, a tiled matmul and softmax's reductions in one plan.
  Tensor x = Tensor::rand({512, 512}, 1), w = Tensor::rand({512, 64}, 2);
  ExecutionPlan plan = Tensor::prepare({(x * 2.0f + 1.0f).relu(), x.matmul(w).softmax(-1)});
  bool threaded = false;
  for (const PreparedKernel* k : plan.prepared_kernels())
    threaded |= !k->kernel->var_names.empty() && k->kernel->var_names.back() == "core_id";
  ASSERT_TRUE(threaded || detail::kernel_threads() == 1) << "the plan should contain a threaded kernel";
  plan.execute();  // warm: the thread pool starts on first use
  g_news = 0;
  g_counting = true;
  for (int i = 0; i < 10; ++i) plan.execute();
  g_counting = false;
  EXPECT_EQ(g_news.load(), 0u);
}

}  // namespace
}  // namespace lathe
