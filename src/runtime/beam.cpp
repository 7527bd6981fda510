#include "runtime/beam.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

#include "device/backend.hpp"
#include "device/disk_cache.hpp"
#include "ir/axis.hpp"
#include "lathe/error.hpp"
#include "opt/action.hpp"
#include "runtime/compile_kernel.hpp"
#include "runtime/progress.hpp"
#include "support/settings.hpp"

namespace lathe {
namespace {

// Part of every stored choice's key: bump it when the actions or the code they make change, so
// choices timed on older code are searched again.
constexpr const char* kFormat = "beam 4";  // 2: adjacent loops merged, 3: divided loops split before the search (axes renumbered), 4: LOCAL, tensor cores
constexpr int kRounds = 4;             // action lists of at most this many actions beyond the start
constexpr size_t kChildrenPerRound = 24;  // the best candidates' children first
constexpr double kNotWorthIt = 20e-6;     // a kernel this fast keeps the heuristics' actions
constexpr double kBetter = 0.99;        // a candidate must be 1% faster to count as found
constexpr int64_t kGroupMaxOutputs = 1024;  // GROUP is tried on kernels of at most this many outputs

struct Candidate {
  std::vector<Opt> opts;
  std::shared_ptr<CachedKernel> kernel;
  double seconds = 0;
};

// The fastest of a few runs, after a warm-up; runs repeat until 20 ms are spent or 10 runs. Only
// the launch is timed, by the device's clock: its arguments are bound once, before.
double time_kernel(const CachedKernel& kernel, const PreparedKernel& bound) {
  BoundLaunch launch = bind_launch(kernel, bound);
  launch();
  double best = 1e30, spent = 0;
  for (int i = 0; i < 10 && (i < 3 || spent < 0.02); ++i) {
    double s = std::chrono::duration<double>(launch.timed()).count();  // the device's time: a GPU's launch returns early
    best = std::min(best, s);
    spent += s;
  }
  return best;
}

// Every action list one action longer than `opts` that applies to `ast`.
// On a GPU (`blocks`: its Target launches blocks of threads), an output loop may also take a
// block of its own (LOCAL).
std::vector<std::vector<Opt>> children(const UOpPtr& ast, const std::vector<Opt>& opts, int max_threads, bool blocks) {
  UOpPtr cur;
  try {
    cur = apply_opts(ast, opts);
  } catch (const OptError&) {
    return {};
  }
  bool threaded = std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOp::THREAD || o.op == OptOp::GROUP; });
  std::vector<Opt> moves, local_moves;
  std::vector<Loop> loops = kernel_loops(cur);
  std::vector<int64_t> outputs;
  int64_t output_count = 1;
  for (const Loop& l : loops)
    if (!l.reduce) output_count *= l.size;
  for (const Loop& l : loops) {
    if (l.kind != AxisKind::Loop) continue;
    if (!l.reduce) outputs.push_back(l.axis);  // a symbolic loop can still swap or take threads
    if (l.symbolic) continue;
    // Grouping pays for few outputs and a long reduction; with many outputs, threads take an output loop.
    if (l.reduce && !threaded && max_threads > 1 && output_count <= kGroupMaxOutputs) moves.push_back({OptOp::GROUP, l.axis, max_threads});
    for (int64_t n : {2, 3, 4, 7, 8, 16})
      if (n <= l.size && l.size % n == 0) moves.push_back({l.reduce ? OptOp::UNROLL : OptOp::UPCAST, l.axis, n});
    // (a grouped reduction's block is its group: no LOCAL beside a GROUP)
    if (blocks && !l.reduce && !threaded)
      for (int64_t n : {32, 64, 128})
        if (n <= 2 * l.size) local_moves.push_back({OptOp::LOCAL, l.axis, n});
  }
  for (size_t i = 0; i + 1 < outputs.size(); ++i) moves.push_back({OptOp::SWAP, outputs[i], outputs[i + 1]});
  if (!threaded && max_threads > 1 && !outputs.empty()) moves.push_back({OptOp::THREAD, outputs.front(), max_threads});
  moves.insert(moves.end(), local_moves.begin(), local_moves.end());  // last: the round's places go to the others first
  std::vector<std::vector<Opt>> out;
  for (const Opt& m : moves) {
    std::vector<Opt> next = opts;
    // Threads stay last: they split whatever loop is outermost (or grouped) when the rest is done.
    auto t = std::find_if(next.begin(), next.end(), [](const Opt& o) { return o.op == OptOp::THREAD || o.op == OptOp::GROUP; });
    next.insert(t, m);
    try {
      apply_opts(ast, next);
    } catch (const OptError&) {
      continue;
    }
    out.push_back(std::move(next));
  }
  return out;
}

std::string disk_path(const PreparedKernel& bound, const DeviceSpec& device, const PrepareOptions& options) {
  std::string dir = cache_dir();
  if (dir.empty()) return "";
  const Backend& backend = find_backend(device, options.compiler);
  KernelOptions ko = kernel_options(options);
  std::string key = std::string(kFormat) + "|" + std::to_string(bound.ast->hash()) + "|" + device.to_string() + "|" + backend.compiler + "|" +
                    backend.compile().identity() + "|threads " + std::to_string(ko.target.threads);
  return dir + "/beam/" + cache_key(key);
}

std::optional<std::vector<Opt>> load_choice(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  try {
    return parse_opts(line);
  } catch (const OptError&) {
    return std::nullopt;  // a damaged entry is searched again
  }
}

void store_choice(const std::string& path, const std::vector<Opt>& opts) {
  if (!path.empty()) write_file_atomically(path, to_string(opts) + "\n");  // whole, with another process at once
}

}  // namespace

int beam_width(const PrepareOptions& options) {
  if (options.beam) return std::max(0, *options.beam);
  return static_cast<int>(std::max<int64_t>(0, settings::number("BEAM", 0)));
}

std::shared_ptr<CachedKernel> beam_search(const PreparedKernel& bound, const DeviceSpec& device, const PrepareOptions& options,
                                          int width, const std::string& label) {
  if (kernel_info(*bound.ast).builds_own_loops) return bound.kernel;  // no actions to search
  std::string path = disk_path(bound, device, options);
  if (std::optional<std::vector<Opt>> stored = load_choice(path)) {
    if (to_string(*stored) == bound.kernel->opts) return bound.kernel;  // the heuristics' choice: compiled already
    try {
      return compile_kernel(bound.ast, device, options, *stored);
    } catch (const Error&) {
      // no longer fits this kernel or compiler: search again
    }
  }
  UOpPtr ast = optimizer_input(bound.ast);
  int max_threads = kernel_options(options).target.threads;
  bool blocks = find_backend(device, options.compiler).compile().target().has_local;
  // Candidates compile all at once, then are timed one by one (a timing has the machine to itself).
  auto evaluate = [&](const std::vector<std::vector<Opt>>& lists) {
    std::vector<KernelRequest> requests;
    for (const std::vector<Opt>& opts : lists) requests.push_back({bound.ast, opts});
    std::vector<std::exception_ptr> errors;
    std::vector<std::shared_ptr<CachedKernel>> kernels = compile_kernels(requests, device, options, {}, &errors);
    std::vector<Candidate> out;
    for (size_t i = 0; i < lists.size(); ++i)
      if (kernels[i]) out.push_back({lists[i], kernels[i], time_kernel(*kernels[i], bound)});  // one that fails is no candidate
    return out;
  };
  // The start: the kernel the plan has (the heuristics' actions), and none.
  std::vector<Candidate> beam{{parse_opts(bound.kernel->opts), bound.kernel, time_kernel(*bound.kernel, bound)}};
  if (beam.front().seconds >= kNotWorthIt) {
    for (Candidate& c : evaluate({{}})) beam.push_back(std::move(c));
    auto faster = [](const Candidate& a, const Candidate& b) { return a.seconds < b.seconds; };
    std::sort(beam.begin(), beam.end(), faster);
    std::set<std::string> seen;
    for (const Candidate& c : beam) seen.insert(to_string(c.opts));
    size_t tried = beam.size();
    ProgressLine progress(std::chrono::milliseconds(0));
    auto show = [&] {
      char best[32];
      std::snprintf(best, sizeof best, "%.1f us", beam.front().seconds * 1e6);
      progress.show("BEAM " + label + " " + bound.kernel->entry_point + ": " + std::to_string(tried) + " candidates, best " + best +
                    " [" + to_string(beam.front().opts) + "]");
    };
    show();
    for (int round = 0; round < kRounds; ++round) {
      std::vector<std::vector<Opt>> next;
      for (const Candidate& c : beam)
        for (std::vector<Opt>& child : children(ast, c.opts, max_threads, blocks))
          if (next.size() < kChildrenPerRound && seen.insert(to_string(child)).second) next.push_back(std::move(child));
      if (next.empty()) break;
      std::vector<Candidate> found = evaluate(next);
      tried += found.size();
      double best = beam.front().seconds;
      beam.insert(beam.end(), found.begin(), found.end());
      std::sort(beam.begin(), beam.end(), faster);
      if (beam.size() > static_cast<size_t>(width)) beam.resize(static_cast<size_t>(width));
      show();
      if (beam.front().seconds > best * kBetter) break;
    }
  }
  store_choice(path, beam.front().opts);  // a kernel too fast to search keeps the heuristics' choice, stored too
  return beam.front().kernel;
}

}  // namespace lathe
