// Times one kernel under several action lists, interleaved: the largest kernel (by operations) of
// a matmul's or a convolution's plan, compiled with each list given (or the heuristics') and
// launched on the plan's buffers. For tuning the optimizer on a new CPU: rounds alternate the
// lists, so a shared machine's swings fall on all of them.
//
//   lathe_kernel_actions matmul M K N [--rounds R] [ACTIONS...]
//   lathe_kernel_actions conv C H W K KSIZE [--rounds R] [ACTIONS...]   (batch 1, stride 1, an odd
//     KSIZE padded to the input's size; the weight is not a constant here, so a 3x3 is always
//     direct: Winograd transforms constants only)
//
// ACTIONS is a list as DEBUG=2 prints it ("UPCAST(1, 8) UPCAST(1, 2) THREAD(0, 2)"); "heuristic"
// (the default when none is given) is the optimizer's own. Each round takes 7 samples of at least
// 20 ms of the device's time per list (`BoundLaunch::timed`, as BEAM reads it); a list's figure
// is the median over the rounds of each round's median.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "lathe/lathe.hpp"
#include "opt/action.hpp"
#include "runtime/compile_kernel.hpp"

namespace {

using lathe::Tensor;

int64_t positive(const char* text, const char* what) {
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (!end || *end || v <= 0) throw lathe::Error(std::string(what) + " must be a positive integer, not '" + text + "'");
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int run(int argc, char** argv) {
  const std::string usage =
      "usage: lathe_kernel_actions matmul M K N [--rounds R] [ACTIONS...]\n"
      "       lathe_kernel_actions conv C H W K KSIZE [--rounds R] [ACTIONS...]\n";
  if (argc < 2 || (std::string(argv[1]) != "matmul" && std::string(argv[1]) != "conv")) throw lathe::Error(usage);
  bool conv = std::string(argv[1]) == "conv";
  int sizes = conv ? 5 : 3;
  if (argc < 2 + sizes) throw lathe::Error(usage);
  std::vector<int64_t> s;
  const char* const matmul_names[] = {"M", "K", "N"};
  const char* const conv_names[] = {"C", "H", "W", "K", "KSIZE"};
  for (int i = 0; i < sizes; ++i) s.push_back(positive(argv[2 + i], conv ? conv_names[i] : matmul_names[i]));
  if (conv && s[4] % 2 == 0)
    throw lathe::Error("KSIZE must be odd (padded to the input's size), not " + std::to_string(s[4]));
  int rounds = 3;
  std::vector<std::string> lists;
  for (int i = 2 + sizes; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rounds") {
      if (++i == argc) throw lathe::Error("--rounds needs a count");
      rounds = static_cast<int>(positive(argv[i], "--rounds"));
    } else {
      lists.push_back(a);
    }
  }
  if (lists.empty()) lists.push_back("heuristic");

  Tensor out;
  double flop = 0;
  if (conv) {
    int64_t c = s[0], h = s[1], w = s[2], k = s[3], ks = s[4];
    out = Tensor::rand({1, c, h, w}, 1).conv2d(Tensor::rand({k, c, ks, ks}, 2), std::nullopt, {1, 1}, {ks / 2, ks / 2});
    flop = 2.0 * static_cast<double>(c) * static_cast<double>(k) * static_cast<double>(ks * ks) *
           static_cast<double>(out.shape()[2]) * static_cast<double>(out.shape()[3]);
  } else {
    out = Tensor::rand({s[0], s[1]}, 1).matmul(Tensor::rand({s[1], s[2]}, 2));
    flop = 2.0 * static_cast<double>(s[0]) * static_cast<double>(s[1]) * static_cast<double>(s[2]);
  }
  lathe::ExecutionPlan plan = out.prepare();
  plan.execute();
  const lathe::PreparedKernel* largest = nullptr;
  for (const auto* p : plan.prepared_kernels())
    if (!largest || p->work.ops > largest->work.ops) largest = p;
  if (!largest) throw lathe::Error("the plan has no kernel");

  std::vector<std::shared_ptr<lathe::CachedKernel>> kernels;
  std::vector<lathe::BoundLaunch> launches;
  for (const std::string& l : lists) {
    std::optional<std::vector<lathe::Opt>> opts;
    if (l != "heuristic") opts = lathe::parse_opts(l);
    kernels.push_back(lathe::compile_kernel(largest->ast, largest->device, {}, opts));
    launches.push_back(lathe::bind_launch(*kernels.back(), *largest));
  }
  std::vector<std::vector<double>> seconds(launches.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < launches.size(); ++i) {
      launches[i]();
      std::vector<double> samples;
      for (int q = 0; q < 7; ++q) {
        int n = 0;
        double elapsed = 0;
        do {
          elapsed += std::chrono::duration<double>(launches[i].timed()).count();
          ++n;
        } while (elapsed < 0.02);
        samples.push_back(elapsed / n);
      }
      seconds[i].push_back(median(samples));
    }
  std::printf("%s (%.3f GFLOP), %d rounds, ms per round, then the median\n", kernels.front()->entry_point.c_str(),
              flop / 1e9, rounds);
  for (size_t i = 0; i < launches.size(); ++i) {
    double m = median(seconds[i]);
    std::printf("%s\n ", kernels[i]->opts.empty() ? "(no actions)" : kernels[i]->opts.c_str());
    for (double t : seconds[i]) std::printf(" %.3f", t * 1e3);
    std::printf("  -> %.3f ms, %.1f GFLOP/s\n", m * 1e3, flop / m / 1e9);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lathe_kernel_actions: %s\n", e.what());
    return 2;
  }
}
