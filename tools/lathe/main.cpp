// The `lathe` command line.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "lathe/lathe.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

int run_info() {
  std::cout << "lathe " << lathe::kVersion << "\n";
  std::cout << "ops: " << lathe::kNumOps << "\n";
  std::cout << "dtypes:";
  for (lathe::DType d : lathe::dtypes::all()) std::cout << " " << d.name();
  std::cout << "\n";
  std::cout << "device: " << lathe::DeviceSpec::default_device().to_string() << "\n";
  return 0;
}

// The built-in default model: a 784-512-512-10 MLP classifier (ReLU, softmax) with seeded
// random weights, over a seeded random batch.
lathe::Tensor default_model(int64_t batch, uint64_t seed) {
  using lathe::Tensor;
  Tensor x = Tensor::rand({batch, 784}, seed);
  auto linear = [&](const Tensor& in, int64_t fan_in, int64_t fan_out, uint64_t s) {
    Tensor w = Tensor::randn({fan_in, fan_out}, s) * static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in)));
    Tensor b = Tensor::zeros({fan_out});
    return in.matmul(w) + b;
  };
  Tensor h1 = linear(x, 784, 512, seed + 1).relu();
  Tensor h2 = linear(h1, 512, 512, seed + 2).relu();
  return linear(h2, 512, 10, seed + 3).softmax(-1);
}

void print_summary(const std::string& name, const lathe::Buffer& out, const lathe::Shape& shape) {
  std::vector<float> v = out.to_vector<float>();
  double sum = 0, lo = v.empty() ? 0 : v[0], hi = lo;
  for (float f : v) sum += f, lo = std::min<double>(lo, f), hi = std::max<double>(hi, f);
  std::printf("output %s: shape %s, dtype %s, mean %.6g, min %.6g, max %.6g, first [", name.c_str(),
              lathe::shape_to_string(shape).c_str(), out.dtype().name().c_str(), v.empty() ? 0.0 : sum / v.size(), lo, hi);
  for (size_t i = 0; i < std::min<size_t>(5, v.size()); ++i) std::printf("%s%.6g", i ? ", " : "", v[i]);
  std::printf("%s]\n", v.size() > 5 ? ", ..." : "");
}

int run_default(int64_t batch, uint64_t seed, int iters, bool profile) {
  std::fprintf(stderr, "lathe: no model given: running the built-in MLP (784-512-512-10) on a random batch of %lld\n",
               static_cast<long long>(batch));
  lathe::Tensor probs = default_model(batch, seed);
  auto t0 = Clock::now();
  lathe::ExecutionPlan plan = probs.prepare();
  double prepare_ms = ms_since(t0);
  std::vector<double> times;
  for (int i = 0; i < std::max(1, iters); ++i) {
    auto t1 = Clock::now();
    plan.execute();
    times.push_back(ms_since(t1));
  }
  std::sort(times.begin(), times.end());
  print_summary("probs", *plan.output_buffer(), probs.shape());
  std::printf("kernels: %zu, prepare %.1f ms, run min %.3f ms, median %.3f ms over %zu runs\n",
              plan.prepared_kernels().size(), prepare_ms, times.front(), times[times.size() / 2], times.size());
  if (profile) {
    for (const lathe::KernelProfile& p : plan.execute_profiled())
      std::printf("  %-36s %10.3f us  (%zu buffers)\n", p.kernel->entry_point.c_str(), p.elapsed.count() / 1e3, p.num_buffers);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lathe: a C++20 ML compiler in the tinygrad tradition"};
  app.require_subcommand(1);
  CLI::App* info = app.add_subcommand("info", "Print the version and what this build supports");
  CLI::App* run = app.add_subcommand("run", "Run the built-in default model (an MLP on random data) end to end");
  int64_t batch = 64;
  uint64_t seed = 0;
  int iters = 10;
  bool profile = false;
  run->add_option("--batch", batch, "Batch size of the random input")->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  run->add_option("--seed", seed, "Seed of the weights and the input");
  run->add_option("--iters", iters, "How many times to run the prepared plan")->check(CLI::Range(1, 1000000));
  run->add_flag("--profile", profile, "Print per-kernel times");
  CLI11_PARSE(app, argc, argv);
  try {
    if (*info) return run_info();
    if (*run) return run_default(batch, seed, iters, profile);
  } catch (const lathe::Error& e) {
    std::cerr << "lathe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
