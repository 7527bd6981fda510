// A served model's counters, and all of them in Prometheus' text format (GET /metrics): requests
// that succeeded and failed, time spent queued and computing, runs and the batch sizes they took.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace lathe::serve {

struct ModelMetrics {
  std::string model, version;
  std::atomic<uint64_t> success{0}, failure{0};
  std::atomic<uint64_t> queue_us{0}, compute_us{0};  // summed over requests
  std::atomic<uint64_t> executions{0}, inferences{0};  // runs, and the batch rows they computed
  /// Runs by batch rows: at most 1, 2, 4, ..., 512, then any.
  static constexpr std::array<int64_t, 10> kBatchBuckets{1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  std::array<std::atomic<uint64_t>, kBatchBuckets.size() + 1> batch_runs{};

  void record_run(int64_t rows);
};

/// Every model's counters as Prometheus text, with the server's queue depth.
std::string prometheus_text(const std::vector<const ModelMetrics*>& models, int64_t queued);

}  // namespace lathe::serve
