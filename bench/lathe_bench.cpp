// lathe's benchmarks (Google Benchmark). bench/compare.py runs them beside numpy, PyTorch and
// the machine's limits measured in the same run.
#include <benchmark/benchmark.h>

#include "lathe/lathe.hpp"

namespace {

using lathe::Tensor;

// The dispatch overhead of execute(): a plan of 100 kernels over 16 floats each, so the time is
// almost all launching. Reported per kernel.
void BM_Dispatch100Kernels(benchmark::State& state) {
  Tensor x = Tensor::rand({16}, 1);
  Tensor y = x;
  for (int i = 0; i < 100; ++i) y = (y + 1.0f).contiguous();
  lathe::ExecutionPlan plan = y.prepare();
  size_t kernels = plan.prepared_kernels().size();
  if (kernels != 100) state.SkipWithError("expected a plan of 100 kernels");
  for (auto _ : state) plan.execute();
  state.counters["kernels"] = static_cast<double>(kernels);
  state.counters["ns_per_kernel"] = benchmark::Counter(static_cast<double>(kernels) * state.iterations(),
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Dispatch100Kernels)->Unit(benchmark::kMicrosecond);

// a*b+1 over 16M floats: 12 bytes of traffic per element (two reads, one write).
void BM_MulAdd16M(benchmark::State& state) {
  const int64_t n = 16 << 20;
  Tensor a = Tensor::rand({n}, 1), b = Tensor::rand({n}, 2);
  lathe::ExecutionPlan plan = (a * b + 1.0f).prepare();
  plan.execute();
  for (auto _ : state) plan.execute();
  state.SetBytesProcessed(state.iterations() * n * 12);
}
BENCHMARK(BM_MulAdd16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// relu(a*b+c)*0.5 over 16M floats: one fused kernel, 16 bytes per element.
void BM_FusedChain16M(benchmark::State& state) {
  const int64_t n = 16 << 20;
  Tensor a = Tensor::rand({n}, 1), b = Tensor::rand({n}, 2), c = Tensor::rand({n}, 3);
  lathe::ExecutionPlan plan = ((a * b + c).relu() * 0.5f).prepare();
  if (plan.prepared_kernels().size() != 1) state.SkipWithError("the chain did not fuse into one kernel");
  plan.execute();
  for (auto _ : state) plan.execute();
  state.SetBytesProcessed(state.iterations() * n * 16);
}
BENCHMARK(BM_FusedChain16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// A 3x3 convolution's weight (512 x 512 x 3 x 3) laid out in blocks of 32 output channels,
// (16, 4608, 32): a transposing copy, each stored vector gathered from 32 rows 18 KB apart (what
// a plan does once, at prepare, for every large convolution's weight). 8 bytes per element; the
// 19 MB it moves fit a large L3, so its rate can pass STREAM's.
void BM_WeightToChannelBlocks(benchmark::State& state) {
  Tensor w = Tensor::rand({512, 4608}, 1);
  lathe::ExecutionPlan plan = w.reshape({16, 32, 4608}).permute({0, 2, 1}).contiguous().prepare();
  plan.execute();
  for (auto _ : state) plan.execute();
  state.SetBytesProcessed(state.iterations() * 512 * 4608 * 8);
}
BENCHMARK(BM_WeightToChannelBlocks)->Unit(benchmark::kMillisecond)->UseRealTime();

// sum of 16M floats: 4 bytes per element.
void BM_Sum16M(benchmark::State& state) {
  const int64_t n = 16 << 20;
  Tensor a = Tensor::rand({n}, 1);
  lathe::ExecutionPlan plan = a.sum().prepare();
  plan.execute();
  for (auto _ : state) plan.execute();
  state.SetBytesProcessed(state.iterations() * n * 4);
}
BENCHMARK(BM_Sum16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// softmax over rows of 4096x4096.
void BM_Softmax4096(benchmark::State& state) {
  Tensor x = Tensor::rand({4096, 4096}, 1);
  lathe::ExecutionPlan plan = x.softmax(1).prepare();
  plan.execute();
  for (auto _ : state) plan.execute();
  state.SetBytesProcessed(state.iterations() * 4096 * 4096 * 8);
}
BENCHMARK(BM_Softmax4096)->Unit(benchmark::kMillisecond)->UseRealTime();

// n x n matmul: 2*n^3 FLOP.
void BM_Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = Tensor::rand({n, n}, 1), b = Tensor::rand({n, n}, 2);
  lathe::ExecutionPlan plan = a.matmul(b).prepare();
  plan.execute();
  for (auto _ : state) plan.execute();
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Matmul)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// n x n matmul at a GPU's size, in float32 (range 1 = 32) or float16 (16): what scripts/gpu-check.sh
// puts beside PyTorch on the same GPU (LATHE_DEVICE=CUDA). bench/compare.py leaves BM_Gpu* out.
void BM_GpuMatmul(benchmark::State& state) {
  if (lathe::DeviceSpec::default_device().type == "CPU") {
    state.SkipWithError("a GPU's workload: run with LATHE_DEVICE=CUDA (or EMU)");
    return;
  }
  const int64_t n = state.range(0);
  lathe::DType dt = state.range(1) == 16 ? lathe::dtypes::float16 : lathe::dtypes::float32;
  Tensor a = Tensor::rand({n, n}, 1).cast(dt).realize(), b = Tensor::rand({n, n}, 2).cast(dt).realize();
  lathe::ExecutionPlan plan = a.matmul(b).prepare();
  plan.execute();
  for (auto _ : state) plan.execute();
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * n * n * n * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GpuMatmul)->Args({4096, 32})->Args({4096, 16})->Unit(benchmark::kMillisecond)->UseRealTime();

// A convolution with bias, padding 1: (batch, c, hw, hw) -> (batch, o, hw, hw), kernel k x k,
// `groups` groups. The weight is a model's (constant): its layout is prepared once.
void conv_bench(benchmark::State& state, int64_t batch, int64_t c, int64_t o, int64_t hw, int64_t k, int64_t groups) {
  Tensor x = Tensor::rand({batch, c, hw, hw}, 1);
  Tensor w = Tensor::rand({o, c / groups, k, k}, 2).realize(), bias = Tensor::rand({o}, 3).realize();
  w.buffer().set_constant();
  bias.buffer().set_constant();
  lathe::ExecutionPlan plan = x.conv2d(w, bias, {1, 1}, {k / 2, k / 2}, {1, 1}, groups).prepare();
  plan.execute();
  for (auto _ : state) plan.execute();
  double flop = 2.0 * batch * o * hw * hw * (c / groups) * k * k;
  state.counters["GFLOPs"] = benchmark::Counter(flop * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.SetBytesProcessed(state.iterations() * 4 * batch * hw * hw * (c + o));
}
void BM_Conv3x3(benchmark::State& state) { conv_bench(state, 8, 64, 64, 56, 3, 1); }
void BM_ConvDepthwise3x3(benchmark::State& state) { conv_bench(state, 8, 64, 64, 56, 3, 64); }
void BM_Conv1x1(benchmark::State& state) { conv_bench(state, 8, 64, 256, 56, 1, 1); }
BENCHMARK(BM_Conv3x3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ConvDepthwise3x3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Conv1x1)->Unit(benchmark::kMillisecond)->UseRealTime();

// layernorm over the last axis of 4096 x 1024 (no affine): 8 bytes per element.
void BM_Layernorm4096x1024(benchmark::State& state) {
  Tensor x = Tensor::rand({4096, 1024}, 1);
  lathe::ExecutionPlan plan = x.layernorm({1}).prepare();
  plan.execute();
  for (auto _ : state) plan.execute();
  state.SetBytesProcessed(state.iterations() * 4096 * 1024 * 8);
}
BENCHMARK(BM_Layernorm4096x1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// Causal self-attention of (1, heads 8, seq, 64): QK^T and PV are 2 * 2 * 8 * seq^2 * 64 FLOP
// (a causal kernel need only do half); the arena counter is the plan's intermediate memory.
void BM_CausalAttention(benchmark::State& state) {
  const int64_t seq = state.range(0);
  Tensor q = Tensor::rand({1, 8, seq, 64}, 1), k = Tensor::rand({1, 8, seq, 64}, 2), v = Tensor::rand({1, 8, seq, 64}, 3);
  lathe::ExecutionPlan plan = q.scaled_dot_product_attention(k, v, true).prepare();
  plan.execute();
  for (auto _ : state) plan.execute();
  double flop = 4.0 * 8 * static_cast<double>(seq) * static_cast<double>(seq) * 64;
  state.counters["GFLOPs"] = benchmark::Counter(flop * state.iterations() / 1e9, benchmark::Counter::kIsRate);
  state.counters["arena_MB"] = static_cast<double>(plan.memory_stats().arena_bytes) / 1e6;
  state.counters["kernels"] = static_cast<double>(plan.prepared_kernels().size());
}
BENCHMARK(BM_CausalAttention)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();

// Rebinding a variable costs a bounds check and a refresh of the kernels' values, not a compile:
// execute_with_vars beside execute of the same plan (a KV-cache style shrink, 4096 x 64 rows).
lathe::ExecutionPlan vars_plan() {
  lathe::Variable n("n", 1, 4096);
  Tensor cache = Tensor::rand({4096, 64}, 1);
  Tensor q = Tensor::rand({1, 64}, 2);
  return q.matmul(cache.shrink({{0, n.bind(1024)}, {0, 64}}).transpose(0, 1)).softmax(-1).prepare();
}

void BM_Execute(benchmark::State& state) {
  lathe::ExecutionPlan plan = vars_plan();
  for (auto _ : state) plan.execute();
}
BENCHMARK(BM_Execute)->Unit(benchmark::kMicrosecond);

void BM_ExecuteWithVars(benchmark::State& state) {
  lathe::ExecutionPlan plan = vars_plan();
  int64_t v = 1024;
  for (auto _ : state) {
    plan.execute_with_vars({{"n", v}});
    v = v == 1024 ? 1023 : 1024;  // alternate so every call really rebinds
  }
}
BENCHMARK(BM_ExecuteWithVars)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
