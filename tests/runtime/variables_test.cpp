// Symbolic variables: one compiled plan serves every value of its variables.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "ir/toposort.hpp"
#include "lathe/lathe.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/create_schedule.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::grid_data;

std::vector<float> head(const Buffer* b, size_t n) {
  std::vector<float> all = b->to_vector<float>();
  return std::vector<float>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
}

// `plan` (an (N, C, H, W) output, N the variable "b") run at each of `batches`, every element
// against want(n, c, i, j) within `tolerance` (0: exactly).
void expect_each_batch(ExecutionPlan& plan, std::initializer_list<int64_t> batches, int64_t c, int64_t h, int64_t w, double tolerance,
                       const std::function<double(int64_t, int64_t, int64_t, int64_t)>& want) {
  for (int64_t batch : batches) {
    plan.execute_with_vars({{"b", batch}});
    std::vector<float> got = head(plan.output_buffer(), static_cast<size_t>(batch * c * h * w));
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < h; ++i)
          for (int64_t j = 0; j < w; ++j)
            ASSERT_NEAR(got[static_cast<size_t>(((n * c + ch) * h + i) * w + j)], want(n, ch, i, j), tolerance)
                << "b=" << batch << " at " << n << "," << ch << "," << i << "," << j;
  }
}

TEST(Variables, IssueExampleRunsEveryValueWithoutRecompiling) {
  Variable n("n", 1, 64);
  std::vector<float> xs = grid_data(64 * 8, 1);
  Tensor x = Tensor::from_vector(xs, {64, 8});
  Tensor y = (x.shrink({{0, n.bind(10)}, {0, 8}}) * 2.0f).sum({0});
  ExecutionPlan plan = y.prepare();
  size_t compiles = kernel_cache_stats().compiles;
  for (int64_t v : {1, 2, 3, 4, 5, 12, 19, 26, 33, 40, 47, 54, 61, 63, 64}) {
    plan.execute_with_vars({{"n", v}});
    std::vector<float> want(8, 0.0f);
    for (int64_t r = 0; r < v; ++r)
      for (int c = 0; c < 8; ++c) want[c] += xs[r * 8 + c] * 2.0f;
    std::vector<float> got = plan.output_buffer()->to_vector<float>();
    for (int c = 0; c < 8; ++c) ASSERT_NEAR(got[c], want[c], 1e-4) << "n=" << v << " col " << c;
  }
  plan.execute_with_vars({{"n", 64}});
  EXPECT_EQ(kernel_cache_stats().compiles, compiles);
  std::vector<KernelProfile> prof = plan.execute_with_vars_profiled({{"n", 5}});
  EXPECT_EQ(prof.size(), plan.prepared_kernels().size());
  ASSERT_EQ(plan.prepared_kernels()[0]->runtime_vars.size(), 1u);
  EXPECT_EQ(plan.prepared_kernels()[0]->runtime_vars[0].name, "n");
  EXPECT_EQ(plan.prepared_kernels()[0]->kernel->var_names.front(), "n");
}

TEST(Variables, FiftyValuesCompileNothingNew) {
  Variable n("n", 1, 128);
  Tensor x = Tensor::rand({128, 16}, 3);
  ExecutionPlan plan = (x.shrink({{0, n.bind(7)}, {0, 16}}).exp() + 1.0f).sum({0}).prepare();
  plan.execute();
  size_t compiles = kernel_cache_stats().compiles;
  for (int64_t v = 1; v <= 50; ++v) plan.execute_with_vars({{"n", v * 2}});
  EXPECT_EQ(kernel_cache_stats().compiles, compiles);
}

TEST(Variables, TheBoundValueIsTheFirstBinding) {
  Variable n("n", 1, 16);
  std::vector<float> xs = grid_data(16, 2);
  Tensor x = Tensor::from_vector(xs, {16});
  Tensor s = x.shrink({{0, n.bind(3)}}).sum();
  EXPECT_NEAR(s.item<float>(), xs[0] + xs[1] + xs[2], 1e-5);
  ExecutionPlan plan = s.prepare();
  plan.execute();
  EXPECT_NEAR(plan.output_buffer()->to_vector<float>()[0], xs[0] + xs[1] + xs[2], 1e-5);
}

TEST(Variables, OutOfRangeAndUnknownNamesAreErrorsThatChangeNothing) {
  Variable n("n", 2, 8);
  Tensor x = Tensor::from_vector(grid_data(8, 5), {8});  // no zeros: every n gives a different sum
  ExecutionPlan plan = x.shrink({{0, n.bind(4)}}).sum().prepare();
  plan.execute();
  std::vector<float> before = plan.output_buffer()->to_vector<float>();
  for (int64_t bad : {1, 9, -5}) {
    try {
      plan.execute_with_vars({{"n", bad}});
      FAIL() << bad;
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("'n'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("[2, 8]"), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(plan.execute_with_vars({{"m", 3}}), Error);
  EXPECT_THROW(plan.execute_with_vars({{"n", 3}, {"n", 100}}), Error);  // checked before applying any
  EXPECT_EQ(plan.output_buffer()->to_vector<float>(), before);
  plan.execute();  // still bound to 4
  EXPECT_EQ(plan.output_buffer()->to_vector<float>(), before);
  EXPECT_THROW(n.bind(9), Error);
}

TEST(Variables, TwoVariablesOverAGridIncludingTheirBounds) {
  Variable rows("rows", 1, 12), cols("cols", 1, 10);
  std::vector<float> xs = grid_data(12 * 10, 4);
  Tensor x = Tensor::from_vector(xs, {12, 10});
  Tensor part = x.shrink({{0, rows.bind(2)}, {0, cols.bind(3)}});
  Tensor total = (part * part).sum({1}).max();  // max over rows of the row sums of squares
  ExecutionPlan plan = total.prepare();
  size_t compiles = kernel_cache_stats().compiles;
  for (int64_t r : {1, 2, 5, 12})
    for (int64_t c : {1, 4, 10}) {
      plan.execute_with_vars({{"rows", r}, {"cols", c}});
      float want = -INFINITY;
      for (int64_t i = 0; i < r; ++i) {
        float acc = 0;
        for (int64_t j = 0; j < c; ++j) acc += xs[i * 10 + j] * xs[i * 10 + j];
        want = std::max(want, acc);
      }
      ASSERT_NEAR(plan.output_buffer()->to_vector<float>()[0], want, 1e-4) << r << "x" << c;
    }
  // Values not given keep their binding.
  plan.execute_with_vars({{"rows", 3}});
  float want = -INFINITY;
  for (int64_t i = 0; i < 3; ++i) {
    float acc = 0;
    for (int64_t j = 0; j < 10; ++j) acc += xs[i * 10 + j] * xs[i * 10 + j];
    want = std::max(want, acc);
  }
  EXPECT_NEAR(plan.output_buffer()->to_vector<float>()[0], want, 1e-4);
  EXPECT_EQ(kernel_cache_stats().compiles, compiles);
}

TEST(Variables, AttentionOverTheFirstNPositionsOfAKvCache) {
  const int64_t max_len = 32, d = 8;
  Variable n("n", 1, max_len);
  std::vector<float> ks = grid_data(max_len * d, 5), vs = grid_data(max_len * d, 6), qs = grid_data(d, 7);
  Tensor k_cache = Tensor::from_vector(ks, {max_len, d}), v_cache = Tensor::from_vector(vs, {max_len, d});
  Tensor q = Tensor::from_vector(qs, {1, d});
  SInt len = n.bind(4);
  Tensor k = k_cache.shrink({{0, len}, {0, d}}), v = v_cache.shrink({{0, len}, {0, d}});
  Tensor out = q.scaled_dot_product_attention(k, v);
  ExecutionPlan plan = out.prepare();
  for (int64_t t : {1, 4, 9, 31, 32}) {
    plan.execute_with_vars({{"n", t}});
    std::vector<double> scores(t);
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < t; ++j) {
      double s = 0;
      for (int64_t c = 0; c < d; ++c) s += static_cast<double>(qs[c]) * ks[j * d + c];
      scores[j] = s / std::sqrt(static_cast<double>(d));
      mx = std::max(mx, scores[j]);
    }
    for (double& s : scores) sum += (s = std::exp(s - mx));
    std::vector<float> got = plan.output_buffer()->to_vector<float>();
    for (int64_t c = 0; c < d; ++c) {
      double want = 0;
      for (int64_t j = 0; j < t; ++j) want += scores[j] / sum * vs[j * d + c];
      ASSERT_NEAR(got[c], want, 1e-4) << "n=" << t << " c=" << c;
    }
  }
}

TEST(Variables, SymbolicBatchOfAMatmulWithBias) {
  const int64_t max_b = 16, k = 12, m = 32;
  Variable b("b", 1, max_b);
  std::vector<float> xs = grid_data(max_b * k, 8), ws = grid_data(k * m, 9), bs = grid_data(m, 10);
  Tensor x = Tensor::from_vector(xs, {max_b, k}).shrink({{0, b.bind(3)}, {0, k}});
  Tensor y = (x.matmul(Tensor::from_vector(ws, {k, m})) + Tensor::from_vector(bs, {m})).relu();
  EXPECT_EQ(y.symbolic_shape()[0].to_string(), "b=3");
  EXPECT_EQ(y.shape()[0], max_b);  // the maximum, which the buffer is sized for
  ExecutionPlan plan = y.prepare();
  EXPECT_EQ(plan.output_buffer()->size(), static_cast<size_t>(max_b * m));
  for (int64_t rows : {1, 3, 16}) {
    plan.execute_with_vars({{"b", rows}});
    std::vector<float> got = head(plan.output_buffer(), static_cast<size_t>(rows * m));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double want = bs[j];
        for (int64_t x2 = 0; x2 < k; ++x2) want += static_cast<double>(xs[i * k + x2]) * ws[x2 * m + j];
        ASSERT_NEAR(got[i * m + j], std::max(want, 0.0), 1e-4) << "b=" << rows;
      }
  }
}

// A depthwise convolution (its channel-block path) over a symbolic batch: one plan, run at
// batches 1, 2 and 4, against plain loops.
TEST(Variables, SymbolicBatchOfADepthwiseConvolution) {
  const int64_t max_b = 4, c = 16, h = 5, w = 6;
  Variable b("b", 1, max_b);
  std::vector<float> xs = grid_data(max_b * c * h * w, 12), ws = grid_data(c * 9, 13);
  Tensor x = Tensor::from_vector(xs, {max_b, c, h, w}).shrink({{0, b.bind(2)}, {0, c}, {0, h}, {0, w}});
  Tensor y = x.conv2d(Tensor::from_vector(ws, {c, 1, 3, 3}), std::nullopt, {1, 1}, {1, 1}, {1, 1}, c);
  EXPECT_EQ(y.symbolic_shape()[0].to_string(), "b=2");
  ExecutionPlan plan = y.prepare();
  expect_each_batch(plan, {1, 2, 4}, c, h, w, 1e-4, [&](int64_t n, int64_t ch, int64_t i, int64_t j) {
    double want = 0;
    for (int64_t ki = 0; ki < 3; ++ki)
      for (int64_t kj = 0; kj < 3; ++kj) {
        int64_t yi = i + ki - 1, xj = j + kj - 1;
        if (yi >= 0 && yi < h && xj >= 0 && xj < w) want += static_cast<double>(xs[((n * c + ch) * h + yi) * w + xj]) * ws[ch * 9 + ki * 3 + kj];
      }
    return want;
  });
}

// A max pool of a computed input over a symbolic batch (a model exported with a dynamic batch)
// reads its input in channel blocks, as at a fixed batch (before, it pooled one lane at a time):
// one plan, run at batches 1, 3 and 4, against plain loops.
TEST(Variables, SymbolicBatchOfAMaxPoolReadsChannelBlocks) {
  test::ScopedTargetShape shape("16");  // the graph stores 16-channel blocks, as expected below, on any CPU
  const int64_t max_b = 4, c = 32, h = 9, w = 7;
  Variable b("b", 1, max_b);
  std::vector<float> xs = grid_data(max_b * c * h * w, 14);
  Tensor x = (Tensor::from_vector(xs, {max_b, c, h, w}).shrink({{0, b.bind(2)}, {0, c}, {0, h}, {0, w}}) * 2.0f).relu();
  Tensor y = x.max_pool2d({3, 3}, std::make_pair(int64_t{2}, int64_t{2}), {1, 1});
  EXPECT_EQ(y.symbolic_shape()[0].to_string(), "b=2");
  Schedule sched = create_schedule({y.uop()}, default_schedule_context());
  int blocked = 0;
  for (const ScheduleItem& item : sched.items) {
    const Shape& s = sched.shapes.at(item.bufs[0].get());
    blocked += !item.is_view() && s.size() == 5 && s.back() == 16;
  }
  EXPECT_EQ(blocked, 1) << "the pooled input stored in channel blocks";
  ExecutionPlan plan = y.prepare();
  expect_each_batch(plan, {1, 3, 4}, c, 5, 4, 0, [&](int64_t n, int64_t ch, int64_t i, int64_t j) {
    float want = -INFINITY;
    for (int64_t ki = 0; ki < 3; ++ki)
      for (int64_t kj = 0; kj < 3; ++kj) {
        int64_t yi = i * 2 + ki - 1, xj = j * 2 + kj - 1;
        if (yi >= 0 && yi < h && xj >= 0 && xj < w) want = std::max(want, std::max(0.0f, 2.0f * xs[((n * c + ch) * h + yi) * w + xj]));
      }
    return want;
  });
}

// Reshaping a tensor whose outermost axis is symbolic (an image batch flattened and padded, as
// an ONNX input reaches a convolution's padded copy) takes no remainder by the symbolic size: the
// kernel has no MOD (it was one 64-bit remainder per element), and the values are the padded
// image's at batches 1 and 3.
TEST(Variables, ReshapingASymbolicBatchTakesNoRemainder) {
  const int64_t max_b = 3, c = 2, h = 4, w = 5;
  Variable b("b", 1, max_b);
  std::vector<float> xs = grid_data(max_b * c * h * w, 15);
  Tensor x = Tensor::from_vector(xs, {max_b * c * h * w}).shrink({{0, (b.bind(2) * (c * h * w))}});
  Tensor y = (x.reshape({b.bind(2), SInt(c), SInt(h), SInt(w)}) + 1.0f).pad({{0, 0}, {0, 0}, {1, 1}, {2, 0}});
  Schedule sched = create_schedule({y.uop()}, default_schedule_context());
  for (const ScheduleItem& item : sched.items)
    for (const UOpPtr& u : toposort(item.ast)) EXPECT_NE(u->op(), Ops::MOD) << to_string(*u);
  ExecutionPlan plan = y.prepare();
  expect_each_batch(plan, {1, 3}, c, h + 2, w + 2, 0, [&](int64_t n, int64_t ch, int64_t i, int64_t j) {
    bool inside = i >= 1 && i <= h && j >= 2;
    return inside ? xs[((n * c + ch) * h + (i - 1)) * w + (j - 2)] + 1.0f : 0.0f;
  });
}

TEST(Variables, MeanAndSoftmaxOverASymbolicAxis) {
  Variable n("n", 1, 20);
  std::vector<float> xs = grid_data(3 * 20, 11);
  Tensor x = Tensor::from_vector(xs, {3, 20}).shrink({{0, 3}, {0, n.bind(6)}});
  ExecutionPlan mean_plan = x.mean({1}).prepare();
  ExecutionPlan soft_plan = x.softmax(1).prepare();
  for (int64_t t : {1, 6, 20}) {
    mean_plan.execute_with_vars({{"n", t}});
    soft_plan.execute_with_vars({{"n", t}});
    std::vector<float> means = mean_plan.output_buffer()->to_vector<float>();
    std::vector<float> soft = head(soft_plan.output_buffer(), static_cast<size_t>(3 * t));
    for (int r = 0; r < 3; ++r) {
      double sum = 0, mx = -INFINITY, z = 0;
      for (int64_t c = 0; c < t; ++c) sum += xs[r * 20 + c], mx = std::max<double>(mx, xs[r * 20 + c]);
      ASSERT_NEAR(means[r], sum / t, 1e-5) << "n=" << t;
      for (int64_t c = 0; c < t; ++c) z += std::exp(xs[r * 20 + c] - mx);
      for (int64_t c = 0; c < t; ++c) ASSERT_NEAR(soft[r * t + c], std::exp(xs[r * 20 + c] - mx) / z, 1e-5) << "n=" << t;
    }
  }
}

TEST(Variables, SymbolicShapesInCreationReshapeAndExpand) {
  Variable n("n", 1, 10);
  SInt len = n.bind(4);
  Tensor e = Tensor::empty({len, 8});
  EXPECT_EQ(e.shape(), (Shape{10, 8}));
  EXPECT_FALSE(e.is_realized());  // a packed view of the front of a buffer sized for n = 10
  EXPECT_EQ(e.prepare().output_buffer()->size(), 80u);
  Tensor ones = Tensor::ones({len, 3});
  Tensor row = Tensor::from_vector(std::vector<float>{1, 2, 3}, {1, 3});
  Tensor grid = (ones + row.expand({len, 3})).reshape({len * 3});
  std::vector<float> got = grid.to_vector<float>();
  EXPECT_EQ(got, (std::vector<float>{2, 3, 4, 2, 3, 4, 2, 3, 4, 2, 3, 4}));
  Tensor padded = Tensor::ones({len}).pad({{SInt(1), len}}, 0.0);  // 1 + n + n elements
  EXPECT_EQ(padded.to_vector<float>(), (std::vector<float>{0, 1, 1, 1, 1, 0, 0, 0, 0}));
}

// Two symbolic axes merged into one (2, n, m) -> (2, n * m), and back, whatever order the
// counts were multiplied in: values against the static reshape at several sizes.
TEST(Variables, MergingTwoSymbolicAxesKeepsTheElementCount) {
  Variable n("n", 1, 4), m("m", 1, 5);
  SInt a = n.bind(4), b = m.bind(5);
  Tensor x = Tensor::arange(0, 40, 1, dtypes::float32).reshape({2, 4, 5}).shrink({{0, 2}, {0, a}, {0, b}}).contiguous();
  ExecutionPlan merged = x.reshape({SInt(2), a * b}).prepare();
  ExecutionPlan back = x.reshape({SInt(2), a * b}).reshape({SInt(2), a, b}).prepare();
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 2}, {4, 5}}) {
    merged.execute_with_vars({{"n", rows}, {"m", cols}});
    back.execute_with_vars({{"n", rows}, {"m", cols}});
    std::vector<float> want;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) want.push_back(static_cast<float>(r * 20 + i * 5 + j));
    std::vector<float> got = merged.output_buffer()->to_vector<float>(), round = back.output_buffer()->to_vector<float>();
    got.resize(want.size());
    round.resize(want.size());
    EXPECT_EQ(got, want) << rows << "x" << cols;
    EXPECT_EQ(round, want) << rows << "x" << cols;
  }
  EXPECT_THROW(x.reshape({a * b}), ShapeError);  // half the elements
}

TEST(Variables, MismatchedSymbolicShapesAreShapeErrors) {
  Variable n("n", 1, 10);
  Tensor a = Tensor::ones({10, 2}).shrink({{0, n.bind(3)}, {0, 2}});
  Tensor b = Tensor::ones({10, 2});
  EXPECT_THROW(a + b, ShapeError);
  EXPECT_THROW(a.reshape({SInt(5), SInt(2)}), ShapeError);
  EXPECT_THROW(a.slice(0, 0, 2), ShapeError);
}

}  // namespace
}  // namespace lathe

namespace lathe {
namespace {

TEST(Variables, UnsupportedSymbolicAxesAreClearErrors) {
  Variable n("n", 1, 10);
  Tensor a = Tensor::ones({10}).shrink({{0, n.bind(3)}});
  EXPECT_THROW(a.cumsum(0), ShapeError);
  EXPECT_THROW(a.slice(0, 1, 2), ShapeError);
}

TEST(Variables, ArgmaxOverASymbolicAxis) {
  Variable n("n", 1, 8);
  Tensor x = Tensor::from_vector(std::vector<float>{1, 5, 2, 9, 3, 4, 0, 7}, {8});
  ExecutionPlan plan = x.shrink({{0, n.bind(3)}}).argmax().prepare();
  for (auto [len, want] : std::vector<std::pair<int64_t, int32_t>>{{1, 0}, {3, 1}, {4, 3}, {8, 3}}) {
    plan.execute_with_vars({{"n", len}});
    EXPECT_EQ(plan.output_buffer()->to_vector<int32_t>()[0], want) << "n=" << len;
  }
}

}  // namespace
}  // namespace lathe
