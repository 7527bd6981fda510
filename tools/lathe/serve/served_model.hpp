// One version of a model behind the server: `instance_count` plans, each prepared once for every
// size up to the configured maxima, and a queue they take requests from. With dynamic batching,
// an instance that takes a request also takes those that arrive within the delay (and fit the
// same sizes but axis 0), up to max_batch_size rows, runs them as one batch, and splits the
// outputs back (Triton's dynamic batcher); the plan rebinds its batch variable, compiling nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lathe/plan.hpp"
#include "tools/lathe/serve/metrics.hpp"
#include "tools/lathe/serve/protocol.hpp"
#include "tools/lathe/serve/repository.hpp"

namespace lathe::serve {

struct ServeLimits {
  int64_t max_queue = 64;                    // requests waiting per model version: more are answered 503
  int64_t most_elements = int64_t{1} << 28;  // in one input: more is 413
};

class ServedModel {
 public:
  /// Loads and prepares `path` (every instance); throws lathe::Error naming the model for a model
  /// lathe cannot run or a named input dimension without a maximum.
  ServedModel(const std::string& name, int64_t version, const std::string& path, const ModelConfig& config, const ServeLimits& limits,
              const PrepareOptions& options);
  ~ServedModel();
  ServedModel(const ServedModel&) = delete;
  ServedModel& operator=(const ServedModel&) = delete;

  const std::string& name() const;
  const std::string& version() const;
  /// The model's metadata response (JSON): name, versions, platform, inputs and outputs with
  /// their datatypes and shapes (-1 for a dimension sized at run time).
  std::string metadata_json(const std::vector<std::string>& versions) const;
  /// Runs `request` (checked against the model's inputs first) and returns the outputs it asks
  /// for. Throws RequestError: 400 naming the input or output at fault, 503 when the queue is full
  /// or the server is stopping, 500 for a failure inside the run.
  std::vector<OutputTensor> infer(const InferRequest& request);
  const ModelMetrics& metrics() const;
  /// Counts a request refused before it reached the model (malformed) among its failures.
  void count_refused();
  int64_t queued() const;
  /// Finishes the queued requests, then refuses new ones (503).
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace lathe::serve
