#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "lathe/lathe.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

std::vector<float> iota_data(size_t n, float start = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TEST(ExecutionPlan, PreparesWithoutRunningAndRunsManyTimesWithNewData) {
  Tensor a = Tensor::from_vector(iota_data(6), {2, 3});
  Tensor b = Tensor::from_vector(iota_data(3, 1), {3});
  Tensor c = (a * b).sum({1});
  ExecutionPlan plan = c.prepare();
  Buffer* in = plan.buffer_mut_by_id(a.uop_id());
  ASSERT_NE(in, nullptr);
  for (int round = 0; round < 5; ++round) {
    std::vector<float> data(6);
    for (size_t i = 0; i < 6; ++i) data[i] = static_cast<float>(round * 10 + static_cast<int>(i));
    in->copyin(data.data(), data.size() * 4);
    plan.execute();
    std::vector<float> want(2, 0.0f);
    for (int r = 0; r < 2; ++r)
      for (int k = 0; k < 3; ++k) want[r] += data[r * 3 + k] * static_cast<float>(k + 1);
    EXPECT_EQ(plan.output_buffer()->to_vector<float>(), want) << "round " << round;
  }
}

// A loop's hand-off without copies: the input's and the output's memory swapped, each run
// reads what the last wrote (x, 2x + 1, 4x + 3, ...) at no copy. A buffer the plan does not have,
// and buffers of another size or dtype, are refused, and nothing changes.
TEST(ExecutionPlan, SwappedBuffersHandTheOutputToTheInput) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 5, 7}, {5});
  Tensor y = x * 2.0f + 1.0f;
  ExecutionPlan plan = y.prepare();
  const std::vector<Buffer>& all = plan.buffers();
  size_t in = static_cast<size_t>(std::find(all.begin(), all.end(), x.buffer()) - all.begin());
  size_t out = static_cast<size_t>(plan.output_buffer() - all.data());
  ASSERT_LT(in, all.size());
  std::vector<float> want{1, 2, 3, 5, 7};
  for (int step = 0; step < 4; ++step) {
    plan.execute();
    for (float& v : want) v = 2 * v + 1;
    std::vector<float> got = plan.output_buffer()->to_vector<float>();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 * want[i]) << "step " << step;
    ASSERT_TRUE(plan.swap_buffers(out, in));
  }
  EXPECT_FALSE(plan.swap_buffers(in, all.size()));  // no such buffer
  Tensor w = Tensor::from_vector(std::vector<float>{1, 2, 3, 5, 7}, {5});
  ExecutionPlan sum = (w * 2.0f).sum().prepare();  // an output of one element
  ExecutionPlan cast = (w * 2.0f).cast(dtypes::int32).prepare();  // and one of another dtype
  for (ExecutionPlan* p : {&sum, &cast}) {
    const std::vector<Buffer>& bs = p->buffers();
    size_t win = static_cast<size_t>(std::find(bs.begin(), bs.end(), w.buffer()) - bs.begin());
    size_t wout = static_cast<size_t>(p->output_buffer() - bs.data());
    ASSERT_LT(win, bs.size());
    std::vector<float> before = bs[win].to_vector<float>();
    EXPECT_FALSE(p->swap_buffers(wout, win));
    EXPECT_EQ(p->buffers()[win].to_vector<float>(), before);  // nothing changed
  }
}

// On a GPU, a plan of kernels alone records its launches once two runs in a row launched the same
// addresses, and replays them after (a CUDA Graph; the emulator records as a GPU's driver does,
// each launch with the addresses and values it was given). Each replay computes from what the
// buffers hold at that run; a moved buffer is launched, not replayed, and then recorded again.
TEST(ExecutionPlan, AGpuPlanReplaysItsLaunchesWithEachRunsData) {
  test::ScopedEnv emu("LATHE_DEVICE", "EMU");
  Tensor x = Tensor::from_vector(std::vector<float>(6, 0.0f), {3, 2});
  ExecutionPlan plan = (x * 2.0f + 1.0f).softmax(1).prepare();
  ASSERT_GE(plan.prepared_kernels().size(), 2u);
  const std::vector<Buffer>& bs = plan.buffers();
  size_t in = static_cast<size_t>(std::find(bs.begin(), bs.end(), x.buffer()) - bs.begin());
  size_t out = static_cast<size_t>(plan.output_buffer() - bs.data());
  ASSERT_LT(in, bs.size());
  auto expect_softmax_of = [&](const std::vector<float>& v, const std::string& what) {
    std::vector<float> got = plan.output_buffer()->to_vector<float>();
    for (size_t r = 0; r < 3; ++r) {
      double a = 2.0 * v[2 * r] + 1, b = 2.0 * v[2 * r + 1] + 1, m = std::max(a, b);
      double ea = std::exp(a - m), eb = std::exp(b - m);
      EXPECT_NEAR(got[2 * r], ea / (ea + eb), 1e-5) << what << ", row " << r;
      EXPECT_NEAR(got[2 * r + 1], eb / (ea + eb), 1e-5) << what << ", row " << r;
    }
  };
  auto run_with = [&](const std::vector<float>& v) {
    plan.buffer_at_mut(in)->copyin(v.data(), v.size() * sizeof(float));
    plan.execute();
  };
  for (int run = 0; run < 4; ++run) {
    std::vector<float> v{1.0f * run, 2, -1, 0.5f * run, 3, -2.0f * run};
    run_with(v);
    EXPECT_EQ(plan.replayed_last_run(), run >= 1) << "run " << run;
    expect_softmax_of(v, "run " + std::to_string(run));
  }
  std::vector<float> last = plan.output_buffer()->to_vector<float>();
  ASSERT_TRUE(plan.swap_buffers(out, in));  // the last output is the next input
  plan.execute();
  EXPECT_FALSE(plan.replayed_last_run()) << "new addresses: launched";
  expect_softmax_of(last, "after the swap");
  for (int run = 0; run < 2; ++run) {
    std::vector<float> v{-3, 1.0f * run, 4, 4, 0, 1};
    run_with(v);
    EXPECT_TRUE(plan.replayed_last_run()) << "recorded again, run " << run;
    expect_softmax_of(v, "recorded again, run " + std::to_string(run));
  }
  (void)plan.execute_profiled();
  EXPECT_FALSE(plan.replayed_last_run()) << "a profiled run times each kernel";
  test::ScopedEnv off("LATHE_CUDA_GRAPH", "0");
  ExecutionPlan unrecorded = (x * 2.0f + 1.0f).softmax(1).prepare();
  for (int run = 0; run < 3; ++run) unrecorded.execute();
  EXPECT_FALSE(unrecorded.replayed_last_run()) << "LATHE_CUDA_GRAPH=0";
}

// A GPU plan with a variable replays too: a size it runs at is recorded once two runs in a row
// launch it, and the last two sizes' recordings are kept, each replaying with its own values.
TEST(ExecutionPlan, AGpuPlanWithAVariableReplaysTheSizesItRunsAt) {
  test::ScopedEnv emu("LATHE_DEVICE", "EMU");
  Variable n("n", 1, 40);
  std::vector<float> xs(40 * 8);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 13) - 6;
  Tensor x = Tensor::from_vector(xs, {40, 8});
  ExecutionPlan plan = (x.shrink({{0, n.bind(10)}, {0, 8}}) * 2.0f).sum({0}).prepare();
  // (size, replayed): the first sight of a size launches, the second records and replays; 5 and 9
  // alternate from their recordings; 17 pushes out 5's, so 5 is launched again
  std::vector<std::pair<int64_t, bool>> runs{{5, false}, {5, true}, {9, false}, {9, true}, {5, true}, {9, true},
                                             {17, false}, {17, true}, {5, false}, {5, true}, {9, false}};
  for (size_t r = 0; r < runs.size(); ++r) {
    auto [rows, replayed] = runs[r];
    plan.execute_with_vars({{"n", rows}});
    EXPECT_EQ(plan.replayed_last_run(), replayed) << "run " << r << ", n=" << rows;
    std::vector<float> got = plan.output_buffer()->to_vector<float>();
    for (int c = 0; c < 8; ++c) {
      float want = 0;
      for (int64_t i = 0; i < rows; ++i) want += xs[i * 8 + c] * 2.0f;
      EXPECT_NEAR(got[c], want, 1e-4) << "run " << r << ", n=" << rows << ", column " << c;
    }
  }
}

// What swapping would break is refused, each beside a buffer of its size: a constant (a weight's
// memory stays the weight's), two inputs no op writes (nothing would fill what moved), and an
// intermediate in the arena (a view of it); what may swap still does.
TEST(ExecutionPlan, SwapsThatWouldBreakThePlanAreRefused) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {5, 2});
  Tensor u = Tensor::from_vector(std::vector<float>{5, 4, 3, 2, 1, 0, 1, 2, 3, 4}, {5, 2});
  Tensor w = Tensor::from_vector(std::vector<float>{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, {5, 2});
  w.buffer().set_constant();
  Tensor y = ((x + u) * w).softmax(1);  // an intermediate in the arena between its kernels
  ExecutionPlan plan = y.prepare();
  const std::vector<Buffer>& bs = plan.buffers();
  auto index = [&](const Buffer& b) { return static_cast<size_t>(std::find(bs.begin(), bs.end(), b) - bs.begin()); };
  size_t out = static_cast<size_t>(plan.output_buffer() - bs.data());
  size_t xi = index(x.buffer()), ui = index(u.buffer()), wi = index(w.buffer());
  ASSERT_LT(xi, bs.size());
  ASSERT_LT(ui, bs.size());
  ASSERT_LT(wi, bs.size());
  EXPECT_FALSE(plan.swap_buffers(out, wi)) << "a constant";
  EXPECT_FALSE(plan.swap_buffers(xi, ui)) << "neither written by the run";
  size_t views = 0;
  for (size_t i = 0; i < bs.size(); ++i)
    if (bs[i].is_view() && bs[i].nbytes() == bs[out].nbytes()) {
      ++views;
      EXPECT_FALSE(plan.swap_buffers(out, i)) << "a view, " << i;
    }
  EXPECT_GE(views, 1u);  // the plan has one to refuse
  EXPECT_TRUE(plan.swap_buffers(out, xi));  // and what may swap still does
}

TEST(ExecutionPlan, ExecuteAllocatesAndCompilesNothing) {
  Tensor x = Tensor::rand({64, 64}, 3);
  ExecutionPlan plan = (x.softmax(1) * 2.0f).prepare();
  plan.execute();
  AllocatorStats alloc = allocator_stats();
  KernelCacheStats cache = kernel_cache_stats();
  for (int i = 0; i < 20; ++i) plan.execute();
  EXPECT_EQ(allocator_stats().allocations, alloc.allocations);
  EXPECT_EQ(allocator_stats().reuses, alloc.reuses);
  EXPECT_EQ(kernel_cache_stats().compiles, cache.compiles);
  EXPECT_EQ(kernel_cache_stats().hits, cache.hits);
}

TEST(ExecutionPlan, PreparedKernelsDescribeTheirBuffers) {
  Tensor x = Tensor::rand({16, 8}, 1);
  Tensor y = (x.contiguous() * 2.0f).softmax(1);  // an input's contiguous copy: at least two kernels
  ExecutionPlan plan = y.prepare();
  std::vector<const PreparedKernel*> ks = plan.prepared_kernels();
  ASSERT_GE(ks.size(), 2u);
  for (const PreparedKernel* k : ks) {
    ASSERT_NE(k->kernel, nullptr);
    EXPECT_EQ(k->buffer_indices.size(), k->kernel->globals.size());
    EXPECT_EQ(k->buffer_ptrs.size(), k->buffer_indices.size());
    EXPECT_EQ(k->buffer_ids.size(), k->buffer_indices.size());
    EXPECT_EQ(k->output_indices, (std::vector<size_t>{0}));
    EXPECT_EQ(k->vals.size(), k->kernel->var_names.size());
    EXPECT_EQ(k->device.to_string(), "CPU");
    for (size_t i = 0; i < k->buffer_indices.size(); ++i) {
      const Buffer& b = plan.buffers()[k->buffer_indices[i]];
      EXPECT_EQ(k->buffer_ptrs[i], reinterpret_cast<uintptr_t>(b.data()));
      EXPECT_EQ(k->buffer_ids[i], b.id());
    }
  }
  // Every kernel after the first depends on one that wrote what it reads.
  for (size_t i = 1; i < ks.size(); ++i) EXPECT_FALSE(ks[i]->dependencies.empty()) << "kernel " << i;
  EXPECT_EQ(plan.prepared_ops().size(), ks.size());
  EXPECT_EQ(plan.kernels().size(), ks.size());
  EXPECT_EQ(plan.output_buffer_idx(), ks.back()->buffer_indices[0]);
}

// A kernel reading a view of another kernel's output waits for that kernel.
TEST(ExecutionPlan, ReadersOfAViewDependOnTheWriterOfItsBase) {
  Tensor x = Tensor::rand({8, 8}, 1);
  Tensor y = (x * 2.0f).contiguous();  // a view of the stored x * 2
  ExecutionPlan plan = (y.permute({1, 0}) + 1.0f).prepare();
  std::vector<const PreparedKernel*> ks = plan.prepared_kernels();
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[1]->dependencies, std::vector<uint64_t>{ks[0]->id});
}

TEST(ExecutionPlan, ProfilesOneEntryPerKernel) {
  Tensor x = Tensor::rand({32, 32}, 1);
  ExecutionPlan plan = x.softmax(0).prepare();
  std::vector<KernelProfile> prof = plan.execute_profiled();
  ASSERT_EQ(prof.size(), plan.prepared_kernels().size());
  for (size_t i = 0; i < prof.size(); ++i) {
    EXPECT_EQ(prof[i].kernel, plan.prepared_kernels()[i]->kernel);
    EXPECT_EQ(prof[i].device, "CPU");
    EXPECT_EQ(prof[i].num_buffers, plan.prepared_kernels()[i]->buffer_indices.size());
    EXPECT_GT(prof[i].elapsed.count(), 0);
  }
}

TEST(ExecutionPlan, SeveralOutputsInOrder) {
  Tensor x = Tensor::from_vector(iota_data(4), {4});
  ExecutionPlan plan = Tensor::prepare({x * 2.0f, x + 1.0f, x.sum()});
  plan.execute();
  ASSERT_EQ(plan.num_outputs(), 3u);
  EXPECT_EQ(plan.output_buffer_at(0)->to_vector<float>(), (std::vector<float>{0, 2, 4, 6}));
  EXPECT_EQ(plan.output_buffer_at(1)->to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(plan.output_buffer_at(2)->to_vector<float>(), (std::vector<float>{6}));
  EXPECT_EQ(plan.output_buffers().size(), 3u);
  EXPECT_EQ(plan.output_buffer_at(3), nullptr);
}

TEST(ExecutionPlan, BuffersByAstIdAndIndex) {
  Tensor x = Tensor::from_vector(iota_data(8), {8});
  Tensor y = (x * 2.0f).contiguous() + 1.0f;
  ExecutionPlan plan = y.prepare();
  plan.execute();
  EXPECT_EQ(plan.buffer(x.uop_id())->to_vector<float>(), iota_data(8));
  EXPECT_EQ(plan.buffer(y.uop_id())->to_vector<float>()[3], 7.0f);
  EXPECT_EQ(plan.buffer(123456789), nullptr);
  EXPECT_EQ(plan.ast_to_buffer_map().size(), plan.buffers().size());
  EXPECT_NE(plan.buffer_at_mut(0), nullptr);
  EXPECT_EQ(plan.buffer_at_mut(plan.buffers().size()), nullptr);
  EXPECT_EQ(plan.buffers_mut().size(), plan.buffers().size());
  EXPECT_EQ(plan.device().to_string(), "CPU");
}

TEST(ExecutionPlan, ReleasedIntermediatesComeBackOnTheNextRun) {
  Tensor x = Tensor::from_vector(iota_data(8), {8});
  Tensor y = (x * 2.0f).contiguous() + 1.0f;
  ExecutionPlan plan = y.prepare();
  plan.execute();
  std::vector<uint64_t> released;
  plan.release_intermediate_buffers([&](uint64_t id) { released.push_back(id); });
  EXPECT_EQ(released.size(), 1u);
  EXPECT_TRUE(plan.output_buffer()->is_allocated());
  plan.execute();
  EXPECT_EQ(plan.output_buffer()->to_vector<float>()[7], 15.0f);
  std::vector<uint64_t> all;
  plan.release_all_buffers([&](uint64_t id) { all.push_back(id); });
  EXPECT_EQ(all.size(), plan.buffers().size());
}

TEST(ExecutionPlan, UnknownVariableIsAnError) {
  Tensor x = Tensor::rand({4}, 1);
  ExecutionPlan plan = (x + 1.0f).prepare();
  try {
    plan.execute_with_vars({{"nope", 3}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos);
  }
}

TEST(ExecutionPlan, RealizeReusesPooledMemory) {
  Tensor x = Tensor::rand({1 << 16}, 1);
  (x * 2.0f).realize();  // warm the pool with this size
  AllocatorStats before = allocator_stats();
  for (int i = 0; i < 5; ++i) (x * 3.0f).realize();
  EXPECT_EQ(allocator_stats().allocations, before.allocations);
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

TEST(ExecutionPlan, ReleasingIntermediatesKeepsTheMemoryAnOutputViews) {
  // A large sum splits into partials and a reduce whose result the scalar output views.
  const int64_t n = 1 << 18;
  Tensor x = Tensor::ones({n}).contiguous();
  ExecutionPlan plan = x.sum().prepare();
  plan.execute();
  plan.release_intermediate_buffers({});
  EXPECT_TRUE(plan.output_buffer()->is_allocated());
  EXPECT_EQ(plan.output_buffer()->to_vector<float>()[0], static_cast<float>(n));
  plan.execute();
  EXPECT_EQ(plan.output_buffer()->to_vector<float>()[0], static_cast<float>(n));
}

}  // namespace
}  // namespace lathe
