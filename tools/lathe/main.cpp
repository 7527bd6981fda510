// The `lathe` command line.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"
#include "tools/lathe/commands.hpp"

namespace {

int run_info() {
  std::cout << "lathe " << lathe::kVersion << "\n";
  std::cout << "ops: " << lathe::kNumOps << "\n";
  std::cout << "dtypes:";
  for (lathe::DType d : lathe::dtypes::all()) std::cout << " " << d.name();
  std::cout << "\n";
  std::cout << "device: " << lathe::device_status() << "\n";
  std::cout << "target: " << lathe::planned_target() << "\n";
  std::vector<std::string> onnx_ops = lathe::onnx::supported_ops();
  std::cout << "onnx operators (" << onnx_ops.size() << "):";
  for (const std::string& op : onnx_ops) std::cout << " " << op;
  std::cout << "\n";
  std::cout << "code generation steps:";
  for (const std::string& step : lathe::pipeline_steps()) std::cout << "\n  " << step;
  std::cout << "\nenvironment variables:";
  for (const lathe::EnvironmentVariable& v : lathe::environment_variables())
    std::cout << "\n  " << v.name << " (read " << v.when << "): " << v.meaning;
  std::cout << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lathe: a C++20 ML compiler in the tinygrad tradition"};
  app.require_subcommand(1);
  CLI::App* info = app.add_subcommand("info", "Print the version and what this build supports");

  lathe::cli::RunOptions ro;
  std::string device;
  CLI::App* run = app.add_subcommand("run", "Run an ONNX model, or with no model the built-in MLP, end to end");
  run->add_option("MODEL", ro.model, "An .onnx file (default: the built-in 784-512-512-10 MLP on random data)");
  run->add_option("--input", ro.inputs, "NAME=FILE, a .npy or TensorProto .pb file (repeatable); others get seeded random data");
  run->add_option("--output-dir", ro.output_dir, "Write each output as NAME.npy here");
  run->add_option("--max-size", ro.max_sizes,
                  "NAME=N (repeatable): prepare once for every size of the named input dimension up to N, "
                  "then run the inputs at their own sizes (random inputs take N)");
  run->add_option("--batch", ro.batch, "Batch size of the built-in model's random input")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  run->add_option("--seed", ro.seed, "Seed of random weights and inputs");
  run->add_option("--iters", ro.iters, "How many times to run the prepared plan")->check(CLI::Range(1, 1000000));
  run->add_flag("--profile", ro.profile, "Print a table per kernel: median time, share, GFLOP/s, GB/s, actions, ONNX nodes");
  run->add_option("--trace", ro.trace, "Write a Chrome trace (Perfetto, chrome://tracing) of the timed runs to this file");

  CLI::App* test_onnx = app.add_subcommand("test-onnx", "Run ONNX backend-test cases (model.onnx + test_data_set_*)");
  std::vector<std::string> test_dirs;
  double rtol = 1e-3, atol = 1e-7;
  test_onnx->add_option("DIR", test_dirs, "A case folder, or a folder of case folders")->required();
  test_onnx->add_option("--rtol", rtol, "Relative tolerance (default 1e-3, as the ONNX backend runner)");
  test_onnx->add_option("--atol", atol, "Absolute tolerance (default 1e-7)");
  lathe::cli::BenchOptions bo;
  int threads = 0;
  CLI::App* bench = app.add_subcommand("bench", "Time an ONNX model's prepared plan");
  bench->add_option("MODEL", bo.model, "An .onnx file (default: the built-in 784-512-512-10 MLP on a random batch of 64)");
  bench->add_option("--iters", bo.iters, "Timed runs (default 20)")->check(CLI::Range(1, 1000000));
  bench->add_option("--input", bo.inputs, "NAME=FILE, a .npy or TensorProto .pb file (repeatable); others get seeded random data");
  bench->add_option("--threads", threads, "Kernel threads (LATHE_THREADS)")->check(CLI::Range(1, 1024));
  bench->add_flag("--json", bo.json, "Print one JSON object: load_ms, compile_ms, min_ms, median_ms, max_ms, kernels, gflop, memory");
  bench->add_flag("--profile", bo.profile, "Print a table per kernel: median time, share, GFLOP/s, GB/s, actions, ONNX nodes");
  bench->add_option("--trace", bo.trace, "Write a Chrome trace (Perfetto, chrome://tracing) of the timed runs to this file");
  lathe::cli::ServeOptions so;
  double max_request_mb = 64;
  CLI::App* serve = app.add_subcommand("serve", "Serve a model repository over HTTP: the Open Inference Protocol (KServe v2)");
  serve->add_option("REPOSITORY", so.repository, "A folder of NAME/VERSION/model.onnx, each NAME with an optional config.json")->required();
  serve->add_option("--host", so.host, "Address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)");
  serve->add_option("--port", so.port, "Port (default 8000; 0 picks a free one and prints it)")->check(CLI::Range(0, 65535));
  serve->add_option("--threads", threads, "Kernel threads (LATHE_THREADS)")->check(CLI::Range(1, 1024));
  serve->add_option("--http-threads", so.http_threads, "Connections served at once (default 16)")->check(CLI::Range(1, 4096));
  serve->add_option("--max-request-mb", max_request_mb, "Largest request body in MiB; larger ones get 413 (default 64)")->check(CLI::Range(0.001, 65536.0));
  serve->add_option("--max-queue", so.max_queue, "Requests waiting per model version; more get 503 (default 64)")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  std::string compiler;
  for (CLI::App* command : {run, test_onnx, bench, serve}) {
    command->add_option("--device", device, "Device to plan and run on: CPU, EMU (the GPU emulator), CUDA[:n]; LATHE_DEVICE (default CPU)");
    command->add_option("--compiler", compiler,
                        "CPU kernel compiler: llvm (LLVM's JIT in process, the default in a build with LLVM) or clang "
                        "(a C compiler subprocess); LATHE_CPU_COMPILER");
  }
  CLI11_PARSE(app, argc, argv);
  // Backends are looked up when kernels are compiled, which is after this.
  if (!compiler.empty()) setenv("LATHE_CPU_COMPILER", compiler.c_str(), 1);
  // Plans read their device at prepare; an unknown name is refused here, naming it.
  if (!device.empty()) {
    try {
      setenv("LATHE_DEVICE", lathe::DeviceSpec::parse(device).to_string().c_str(), 1);
    } catch (const lathe::Error& e) {
      std::cerr << "lathe: --device: " << e.what() << "\n";
      return 1;
    }
  }
  // The thread pool reads LATHE_THREADS when it starts, which is after this.
  if (threads > 0) setenv("LATHE_THREADS", std::to_string(threads).c_str(), 1);
  try {
    if (*info) return run_info();
    if (*run) {
      return lathe::cli::run(ro);
    }
    if (*test_onnx) return lathe::cli::test_onnx(test_dirs, rtol, atol);
    if (*bench) return lathe::cli::bench(bo);
    if (*serve) {
      so.max_request_bytes = static_cast<int64_t>(max_request_mb * 1024 * 1024);
      return lathe::cli::serve(so);
    }
  } catch (const std::exception& e) {  // lathe::Error, and anything else (bad_alloc...): a message, never an abort
    std::cerr << "lathe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
