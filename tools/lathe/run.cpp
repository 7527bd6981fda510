// `lathe run`: an ONNX model (or the built-in MLP) end to end, with inputs from files or seeded
// random data, a summary of each output, and optional per-kernel times.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"
#include "lathe/trace.hpp"
#include "tools/lathe/commands.hpp"
#include "tools/lathe/npy.hpp"
#include "tools/lathe/report.hpp"

namespace lathe::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The built-in default model: a 784-512-512-10 MLP classifier (ReLU, softmax) with seeded
// random weights, over a seeded random batch.
Tensor default_model(int64_t batch, uint64_t seed) {
  Tensor x = Tensor::rand({batch, 784}, seed);
  auto linear = [&](const Tensor& in, int64_t fan_in, int64_t fan_out, uint64_t s) {
    Tensor w = Tensor::randn({fan_in, fan_out}, s) * static_cast<float>(1.0 / std::sqrt(static_cast<double>(fan_in)));
    return in.matmul(w) + Tensor::zeros({fan_out});
  };
  Tensor h1 = linear(x, 784, 512, seed + 1).relu();
  Tensor h2 = linear(h1, 512, 512, seed + 2).relu();
  return linear(h2, 512, 10, seed + 3).softmax(-1);
}

void print_summary(const std::string& name, const Tensor& t) {
  std::vector<double> v = t.cast(dtypes::float64).to_vector<double>();
  double sum = 0, lo = v.empty() ? 0 : v[0], hi = lo;
  for (double f : v) sum += f, lo = std::min(lo, f), hi = std::max(hi, f);
  std::printf("output %s: shape %s, dtype %s, mean %.6g, min %.6g, max %.6g, first [", name.c_str(),
              shape_to_string(t.shape()).c_str(), t.dtype().name().c_str(), v.empty() ? 0.0 : sum / static_cast<double>(v.size()), lo, hi);
  for (size_t i = 0; i < std::min<size_t>(5, v.size()); ++i) std::printf("%s%.6g", i ? ", " : "", v[i]);
  std::printf("%s]\n", v.size() > 5 ? ", ..." : "");
}

Tensor read_input(const std::string& file) {
  if (file.size() > 3 && file.substr(file.size() - 3) == ".pb") return onnx::load_tensor_pb(file);
  return read_npy(file);
}

// Seeded data for an input not given: uniform [0, 1) floats, small integers, alternating bools.
// A named dimension takes its size from `sizes`, else 1.
Tensor random_input(const onnx::ValueInfo& in, uint64_t seed, const std::map<std::string, int64_t>& sizes) {
  Shape shape;
  for (size_t i = 0; i < in.dims.size(); ++i) {
    auto named = sizes.find(in.dim_params[i]);
    shape.push_back(in.dims[i].value_or(named != sizes.end() ? named->second : 1));
  }
  Tensor r = Tensor::rand(shape, seed);
  if (in.dtype.is_float()) return r.cast(in.dtype);
  if (in.dtype.is_bool()) return r < 0.5f;
  return (r * 10.0f).cast(in.dtype);
}

// Milliseconds of `iters` calls of `step`, sorted; recorded into `trace` when it names a file.
std::vector<double> timed_runs(int iters, const std::function<void()>& step, const std::string& trace) {
  if (!trace.empty()) start_trace(trace);
  std::vector<double> times;
  for (int i = 0; i < std::max(1, iters); ++i) {
    auto t0 = Clock::now();
    step();
    times.push_back(ms_since(t0));
  }
  if (!trace.empty()) std::fprintf(stderr, "lathe: wrote %zu kernel runs to the trace %s\n", stop_trace(), trace.c_str());
  std::sort(times.begin(), times.end());
  return times;
}

// Seeded random data for every model input not in `inputs` (announced on stderr when `say`); a
// name in `inputs` that the model lacks is an error naming its inputs.
void fill_missing_inputs(const onnx::Model& model, std::map<std::string, Tensor>& inputs, uint64_t seed,
                         const std::map<std::string, int64_t>& sizes, bool say) {
  std::vector<std::string> given;
  for (const auto& [name, t] : inputs) given.push_back(name);
  model.check_input_names(given);
  for (const onnx::ValueInfo& in : model.inputs()) {
    if (inputs.count(in.name)) continue;
    if (say) std::fprintf(stderr, "lathe: input '%s' not given: using seeded random %s data\n", in.name.c_str(), in.dtype.name().c_str());
    inputs.insert_or_assign(in.name, random_input(in, seed++, sizes));
  }
}

// Inputs from NAME=FILE specs (.npy or TensorProto .pb).
std::map<std::string, Tensor> read_inputs(const std::vector<std::string>& specs) {
  std::map<std::string, Tensor> inputs;
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos) throw Error("--input takes NAME=FILE, not '" + spec + "'");
    inputs.insert_or_assign(spec.substr(0, eq), read_input(spec.substr(eq + 1)));
  }
  return inputs;
}

void write_outputs(const RunOptions& o, const std::vector<std::string>& names, const std::vector<Tensor>& outs) {
  for (size_t i = 0; i < outs.size(); ++i) {
    print_summary(names[i], outs[i]);
    if (!o.output_dir.empty()) {
      std::filesystem::create_directories(o.output_dir);
      write_npy((std::filesystem::path(o.output_dir) / (names[i] + ".npy")).string(), outs[i]);
    }
  }
}

// --max-size: one PreparedModel for every size up to the maxima, run on the inputs as given.
int run_prepared(const RunOptions& o, const onnx::Model& model, const std::map<std::string, int64_t>& max_sizes,
                 const std::map<std::string, Tensor>& inputs) {
  auto t0 = Clock::now();
  onnx::PreparedModel pm = model.prepare(max_sizes);
  double prepare_ms = ms_since(t0);
  std::vector<Tensor> outs;
  std::vector<double> times = timed_runs(o.iters, [&] { outs = pm.run(inputs); }, o.trace);
  std::string sizes;
  for (const auto& [name, v] : pm.sizes()) sizes += (sizes.empty() ? "" : ", ") + name + " = " + std::to_string(v);
  std::printf("prepared once for");
  for (const auto& [name, max] : max_sizes) std::printf(" %s in [1, %lld]", name.c_str(), static_cast<long long>(max));
  std::printf("; ran with %s\n", sizes.c_str());
  if (!pm.rebuilds_because().empty()) std::printf("built again for each input (a plan kept per input sizes and deciding values): %s\n", pm.rebuilds_because().c_str());
  std::vector<std::string> names;
  for (const onnx::ValueInfo& out : model.outputs()) names.push_back(out.name);
  write_outputs(o, names, outs);
  std::printf("kernels: %zu, prepare %.1f ms, run min %.3f ms, median %.3f ms over %zu runs (inputs and outputs copied)\n",
              pm.plan().prepared_kernels().size(), prepare_ms, times.front(), times[times.size() / 2], times.size());
  print_memory(pm.plan());
  if (o.profile) print_profile(pm.plan(), o.iters);
  return 0;
}

}  // namespace

int bench(const BenchOptions& o) {
  std::map<std::string, Tensor> inputs = read_inputs(o.inputs);
  auto loading = Clock::now();  // parsing and building the graph: with prepare, what ORT's session creation does
  std::vector<Tensor> outputs;
  if (o.model.empty()) {
    if (!inputs.empty()) throw Error("--input '" + inputs.begin()->first + "': the built-in MLP takes no inputs (give a model)");
    outputs.push_back(default_model(64, 0));
  } else {
    onnx::Model model = onnx::Model::load(o.model);
    fill_missing_inputs(model, inputs, 0, {}, false);
    outputs = model.build(inputs);
  }
  double load_ms = ms_since(loading);
  auto t0 = Clock::now();
  ExecutionPlan plan = Tensor::prepare(outputs);
  double compile_ms = ms_since(t0);
  plan.execute();  // warm-up
  std::vector<double> times = timed_runs(o.iters, [&] { plan.execute(); }, o.trace);
  double lo = times.front(), med = times[times.size() / 2], hi = times.back();
  size_t kernels = plan.prepared_kernels().size();
  double gflop = static_cast<double>(plan.estimated_work().ops) / 1e9;
  if (o.json) {
    std::string codegen = "[", backend = "[";
    std::set<const CachedKernel*> seen;  // each compiled kernel once, however often the plan launches it
    for (const CachedKernel& k : plan.kernels()) {
      if (!seen.insert(&k).second) continue;
      codegen += (codegen.size() > 1 ? ", " : "") + std::to_string(k.codegen_ms);
      backend += (backend.size() > 1 ? ", " : "") + std::to_string(k.compile_ms);
    }
    std::printf("{\"load_ms\": %.3f, \"compile_ms\": %.3f, \"min_ms\": %.4f, \"median_ms\": %.4f, \"max_ms\": %.4f, \"kernels\": %zu, \"iters\": %zu, "
                "\"gflop\": %.6f, \"distinct_kernels\": %zu, \"kernel_codegen_ms\": %s], \"kernel_compile_ms\": %s], %s}\n",
                load_ms, compile_ms, lo, med, hi, kernels, times.size(), gflop, seen.size(), codegen.c_str(), backend.c_str(),
                memory_json(plan).c_str());
  } else {
    std::printf("%s: %zu kernels, %.3f GFLOP, load %.1f ms, compile %.1f ms, latency min %.3f ms, median %.3f ms, max %.3f ms over %zu runs\n",
                o.model.empty() ? "built-in MLP" : o.model.c_str(), kernels, gflop, load_ms, compile_ms, lo, med, hi, times.size());
    print_memory(plan);
  }
  if (o.profile) print_profile(plan, o.iters);
  return 0;
}

int run(const RunOptions& o) {
  std::vector<std::string> names;
  std::vector<Tensor> outputs;
  if (o.model.empty()) {
    if (!o.inputs.empty()) throw Error("--input '" + o.inputs.front() + "': the built-in MLP takes no inputs (give a model)");
    std::fprintf(stderr, "lathe: no model given: running the built-in MLP (784-512-512-10) on a random batch of %lld\n",
                 static_cast<long long>(o.batch));
    outputs.push_back(default_model(o.batch, o.seed));
    names.push_back("probs");
  } else {
    onnx::Model model = onnx::Model::load(o.model);
    std::map<std::string, Tensor> inputs = read_inputs(o.inputs);
    std::map<std::string, int64_t> max_sizes;
    for (const std::string& spec : o.max_sizes) {
      size_t eq = spec.find('=');
      char* end = nullptr;
      errno = 0;
      long long v = eq == std::string::npos ? 0 : std::strtoll(spec.c_str() + eq + 1, &end, 10);
      if (eq == std::string::npos || end == spec.c_str() + eq + 1 || *end != '\0' || v < 1 || errno == ERANGE)
        throw Error("--max-size takes NAME=N with N >= 1, not '" + spec + "'");
      max_sizes[spec.substr(0, eq)] = v;
    }
    fill_missing_inputs(model, inputs, o.seed, max_sizes, true);
    if (!max_sizes.empty()) return run_prepared(o, model, max_sizes, inputs);
    outputs = model.build(inputs);
    for (const onnx::ValueInfo& out : model.outputs()) names.push_back(out.name);
  }
  auto t0 = Clock::now();
  ExecutionPlan plan = Tensor::prepare(outputs);
  double prepare_ms = ms_since(t0);
  std::vector<double> times = timed_runs(o.iters, [&] { plan.execute(); }, o.trace);
  std::vector<Tensor> outs;
  for (size_t i = 0; i < outputs.size(); ++i) outs.push_back(outputs[i].read_from(plan, i));
  write_outputs(o, names, outs);
  std::printf("kernels: %zu, prepare %.1f ms, run min %.3f ms, median %.3f ms over %zu runs\n", plan.prepared_kernels().size(),
              prepare_ms, times.front(), times[times.size() / 2], times.size());
  print_memory(plan);
  if (o.profile) print_profile(plan, o.iters);
  return 0;
}

}  // namespace lathe::cli
