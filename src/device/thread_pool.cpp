#include "device/thread_pool.hpp"
#include "support/settings.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace lathe::detail {
namespace {

// How long a worker that finished its share waits awake for the next job.
constexpr std::chrono::microseconds kSpin{200};

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// One parallel_for call. It lives on the caller's stack, so the caller waits until every worker
// that joined it has left before returning.
struct Job {
  IndexFn fn;
  size_t n;
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::atomic<int> joined{0};
};

class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }

  bool try_run(size_t n, IndexFn fn) {
    std::unique_lock<std::mutex> busy(run_mu_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    Job job{fn, n};
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &job;
      generation_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    drain(job);
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = nullptr;  // no worker joins from now on
    }
    while (job.done.load(std::memory_order_acquire) != n || job.joined.load(std::memory_order_acquire) != 0)
      std::this_thread::yield();
    return true;
  }

 private:
  static void drain(Job& job) {
    for (size_t i; (i = job.next.fetch_add(1)) < job.n;) {
      job.fn(i);
      job.done.fetch_add(1, std::memory_order_release);
    }
  }

  void work() {
    uint64_t seen = 0;
    while (true) {
      // Spin a while before sleeping: a model's kernels come back to back, and waking a sleeping
      // thread costs more than a small kernel's whole share (an LSTM step took twice as long on
      // two threads as on one).
      auto until = std::chrono::steady_clock::now() + kSpin;
      while (generation_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < until) pause();
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || (generation_.load(std::memory_order_relaxed) != seen && job_); });
      if (stop_) return;
      seen = generation_.load(std::memory_order_relaxed);
      Job* job = job_;
      job->joined.fetch_add(1, std::memory_order_acq_rel);
      lock.unlock();
      drain(*job);
      job->joined.fetch_sub(1, std::memory_order_acq_rel);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_, run_mu_;
  std::condition_variable cv_;
  Job* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  bool stop_ = false;
};

ThreadPool& pool() {
  static ThreadPool p(kernel_threads());
  return p;
}

}  // namespace

int kernel_threads() {
  static const int n = [] {
    if (int64_t n = settings::number("LATHE_THREADS", 0); n > 0) return static_cast<int>(n);
    unsigned hw = std::thread::hardware_concurrency();
    return hw ? static_cast<int>(hw) : 1;
  }();
  return n;
}

void parallel_for(size_t n, IndexFn fn) {
  if (n <= 1 || kernel_threads() <= 1 || !pool().try_run(n, fn)) {
    for (size_t i = 0; i < n; ++i) fn(i);
  }
}

}  // namespace lathe::detail
