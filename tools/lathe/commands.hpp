// The `lathe` subcommands, one file each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lathe::cli {

struct RunOptions {
  std::string model;                // empty: the built-in MLP
  std::vector<std::string> inputs;  // NAME=FILE (.npy or TensorProto .pb)
  std::vector<std::string> max_sizes;  // NAME=N: prepare once for named dimensions up to N
  std::string output_dir;           // writes NAME.npy per output when set
  int64_t batch = 64;               // of the built-in model's random input
  uint64_t seed = 0;
  int iters = 10;
  bool profile = false;
  std::string trace;                // writes a Chrome trace of the timed runs here when set
};

/// `lathe run`: builds, prepares and runs; prints each output's summary and the timings.
int run(const RunOptions& options);

struct BenchOptions {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE; the rest get seeded random data
  int iters = 20;
  bool json = false;
  bool profile = false;
  std::string trace;  // writes a Chrome trace of the timed runs here when set
};

/// `lathe bench`: prepare (compile) time, then min/median/max latency of the prepared plan.
int bench(const BenchOptions& options);

/// Runs ONNX backend-test cases (each DIR a case, or a folder of cases); prints PASS/FAIL/ERROR
/// per case and "N passed, M failed". Returns the exit status.
int test_onnx(const std::vector<std::string>& dirs, double rtol, double atol);

struct ServeOptions {
  std::string repository;  // NAME/VERSION/model.onnx, optional NAME/config.json (serve/repository.hpp)
  std::string host = "127.0.0.1";
  int port = 8000;         // 0: any free port (printed)
  int http_threads = 16;   // connections served at once
  int64_t max_request_bytes = int64_t{64} << 20;  // a larger request is answered 413
  int64_t max_queue = 64;  // requests waiting per model version; more are answered 503
};

/// `lathe serve`: the Open Inference Protocol (KServe v2) over HTTP for every model of a
/// repository, until SIGTERM or SIGINT, which let the requests in flight finish.
int serve(const ServeOptions& options);

}  // namespace lathe::cli
