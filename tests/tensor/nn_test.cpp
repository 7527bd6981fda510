// Compound ops against plain C++ loops: matmul (batched, broadcasting), softmax, log_softmax,
// layernorm, conv2d (stride, padding, dilation, groups), pooling, attention; and their kernel counts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "codegen/test_kernels.hpp"
#include "ir/step.hpp"
#include "ir/toposort.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/blocks.hpp"
#include "schedule/create_schedule.hpp"
#include "schedule/shape.hpp"
#include "tensor/conv_reference.hpp"
#include "tensor/reference.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe {
namespace {

using test::ConvArgs;
using test::conv_ref;
using test::data;
using test::f32;
using test::matmul_ref;

constexpr double kRtol = 1e-5, kAtol = 1e-5;

// ---- matmul -------------------------------------------------------------------------------------

TEST(NnMatmul, TwoD) {
  auto a = data(12, 1), b = data(20, 2);
  Tensor c = f32(a, {3, 4}).matmul(f32(b, {4, 5}));
  EXPECT_EQ(c.shape(), (Shape{3, 5}));
  EXPECT_ALLCLOSE(c.to_vector<float>(), matmul_ref(a, b, 1, false, false, 3, 4, 5), kRtol, kAtol);
}

TEST(NnMatmul, VectorCases) {
  auto a = data(4, 3), b = data(20, 4), v = data(5, 5);
  Tensor vm = f32(a, {4}).matmul(f32(b, {4, 5}));
  EXPECT_EQ(vm.shape(), (Shape{5}));
  EXPECT_ALLCLOSE(vm.to_vector<float>(), matmul_ref(a, b, 1, false, false, 1, 4, 5), kRtol, kAtol);
  Tensor mv = f32(b, {4, 5}).matmul(f32(v, {5}));
  EXPECT_EQ(mv.shape(), (Shape{4}));
  EXPECT_ALLCLOSE(mv.to_vector<float>(), matmul_ref(b, v, 1, false, false, 4, 5, 1), kRtol, kAtol);
  Tensor vv = f32(v, {5}).dot(f32(v, {5}));
  EXPECT_EQ(vv.shape(), Shape{});
  EXPECT_ALLCLOSE(vv.to_vector<float>(), matmul_ref(v, v, 1, false, false, 1, 5, 1), kRtol, kAtol);
}

TEST(NnMatmul, Batched) {
  auto a = data(24, 6), b = data(40, 7);
  Tensor c = f32(a, {2, 3, 4}).matmul(f32(b, {2, 4, 5}));
  EXPECT_EQ(c.shape(), (Shape{2, 3, 5}));
  EXPECT_ALLCLOSE(c.to_vector<float>(), matmul_ref(a, b, 2, true, true, 3, 4, 5), kRtol, kAtol);
}

TEST(NnMatmul, BroadcastsBatchAxes) {
  auto a = data(24, 8), b = data(3 * 4 * 2, 9);
  // (2, 1, 3, 4) @ (3, 4, 2) -> (2, 3, 3, 2)
  Tensor c = f32(a, {2, 1, 3, 4}).matmul(f32(b, {3, 4, 2}));
  ASSERT_EQ(c.shape(), (Shape{2, 3, 3, 2}));
  std::vector<double> ref;
  for (int x = 0; x < 2; ++x)
    for (int y = 0; y < 3; ++y) {
      std::vector<float> am(a.begin() + x * 12, a.begin() + x * 12 + 12), bm(b.begin() + y * 8, b.begin() + y * 8 + 8);
      auto r = matmul_ref(am, bm, 1, false, false, 3, 4, 2);
      ref.insert(ref.end(), r.begin(), r.end());
    }
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, kRtol, kAtol);
  std::vector<float> b0(b.begin(), b.begin() + 8);
  Tensor d = f32(a, {2, 3, 4}).matmul(f32(b0, {4, 2}));  // one matrix against a batch
  EXPECT_EQ(d.shape(), (Shape{2, 3, 2}));
  EXPECT_ALLCLOSE(d.to_vector<float>(), matmul_ref(a, b0, 2, true, false, 3, 4, 2), kRtol, kAtol);
}

TEST(NnMatmul, TransposedInputs) {
  auto a = data(12, 10), b = data(20, 11);
  Tensor c = f32(a, {4, 3}).transpose().matmul(f32(b, {5, 4}).transpose());
  auto at = test::permute_ref(a, {4, 3}, {1, 0}), bt = test::permute_ref(b, {5, 4}, {1, 0});
  EXPECT_ALLCLOSE(c.to_vector<float>(), matmul_ref(at, bt, 1, false, false, 3, 4, 5), kRtol, kAtol);
}

TEST(NnMatmul, SlicedAndFlippedInputs) {
  auto a = data(30, 12), b = data(16, 13);
  Tensor ta = f32(a, {5, 6}).slice(1, 0, 6, 2).flip({0});  // (5, 3)
  Tensor tb = f32(b, {4, 4}).shrink({{1, 4}, {0, 4}});     // (3, 4)
  std::vector<float> av, bv;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) av.push_back(a[(4 - i) * 6 + 2 * j]);
  for (int i = 1; i < 4; ++i)
    for (int j = 0; j < 4; ++j) bv.push_back(b[i * 4 + j]);
  EXPECT_ALLCLOSE(ta.matmul(tb).to_vector<float>(), matmul_ref(av, bv, 1, false, false, 5, 3, 4), kRtol, kAtol);
}

TEST(NnMatmul, ExpandedInput) {
  auto a = data(4, 14), b = data(12, 15);
  Tensor ta = f32(a, {1, 4}).expand({3, 4});
  std::vector<float> av;
  for (int i = 0; i < 3; ++i) av.insert(av.end(), a.begin(), a.end());
  EXPECT_ALLCLOSE(ta.matmul(f32(b, {4, 3})).to_vector<float>(), matmul_ref(av, b, 1, false, false, 3, 4, 3), kRtol, kAtol);
}

TEST(NnMatmul, SizeOneAndSizeZeroDims) {
  auto a = data(4, 16), b = data(4, 17);
  Tensor c = f32(a, {1, 4}).matmul(f32(b, {4, 1}));
  EXPECT_EQ(c.shape(), (Shape{1, 1}));
  EXPECT_ALLCLOSE(c.to_vector<float>(), matmul_ref(a, b, 1, false, false, 1, 4, 1), kRtol, kAtol);
  Tensor z = Tensor::ones({3, 0}).matmul(Tensor::ones({0, 2}));
  EXPECT_EQ(z.shape(), (Shape{3, 2}));
  EXPECT_ALLCLOSE(z.to_vector<float>(), std::vector<float>(6, 0.0f), 0, 0);
  Tensor e = Tensor::ones({0, 3}).matmul(Tensor::ones({3, 2}));
  EXPECT_EQ(e.shape(), (Shape{0, 2}));
  EXPECT_TRUE(e.to_vector<float>().empty());
}

TEST(NnMatmul, Int32Exact) {
  auto a = test::int_data<int32_t>(12, 18, -100, 100), b = test::int_data<int32_t>(8, 19, -100, 100);
  Tensor c = Tensor::from_vector(a, {6, 2}).matmul(Tensor::from_vector(b, {2, 4}));
  EXPECT_EQ(c.dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(c.to_vector<int32_t>(), matmul_ref(a, b, 1, false, false, 6, 2, 4));
}

TEST(NnMatmul, Int8AccumulatesInInt32) {
  std::vector<int8_t> a(64, 100), b(64, 100);
  Tensor c = Tensor::from_vector(a, {1, 64}).matmul(Tensor::from_vector(b, {64, 1}));
  EXPECT_EQ(c.dtype(), dtypes::int32);
  EXPECT_EQ(c.item<int32_t>(), 640000);
}

TEST(NnMatmul, Float64) {
  std::vector<double> a, b;
  for (int i = 0; i < 12; ++i) a.push_back(1.0 / (i + 3));
  for (int i = 0; i < 12; ++i) b.push_back(std::sqrt(i + 1.0));
  Tensor c = Tensor::from_vector(a, {3, 4}).matmul(Tensor::from_vector(b, {4, 3}));
  EXPECT_ALLCLOSE(c.to_vector<double>(), matmul_ref(a, b, 1, false, false, 3, 4, 3), 1e-14, 1e-14);
}

TEST(NnMatmul, Float16LooseTolerance) {
  auto a = data(32, 20, -1, 1), b = data(32, 21, -1, 1);
  Tensor ha = f32(a, {4, 8}).cast(dtypes::float16), hb = f32(b, {8, 4}).cast(dtypes::float16);
  auto ra = test::as_f32(ha), rb = test::as_f32(hb);
  Tensor c = ha.matmul(hb);
  EXPECT_EQ(c.dtype(), dtypes::float16);
  EXPECT_ALLCLOSE(test::as_f32(c), matmul_ref(ra, rb, 1, false, false, 4, 8, 4), 1e-2, 1e-2);
}

// 16-bit matmuls at sizes a GPU gives its tensor cores (opt/tensor_core): tiles of 16 x 8 x 16,
// padded ones, a batch, both operands along the reduction. On every device, against float32 on
// the same 16-bit values, within the output's rounding (its float16 or bfloat16 ulp).
TEST(NnMatmul, Float16AndBfloat16AtTensorCoreSizes) {
  struct Case {
    int64_t batch, m, k, n;
    bool transposed;
  };
  for (DType t : {dtypes::float16, dtypes::bfloat16})
    for (const Case& c : {Case{1, 64, 48, 32, false}, Case{1, 37, 53, 29, false}, Case{3, 20, 40, 24, false}, Case{2, 32, 64, 16, true}}) {
      auto a = data(c.batch * c.m * c.k, 26, -1, 1), b = data(c.batch * c.k * c.n, 27, -1, 1);
      Tensor ha = f32(a, {c.batch, c.m, c.k}).cast(t);
      Tensor hb = c.transposed ? f32(b, {c.batch, c.n, c.k}).cast(t).transpose() : f32(b, {c.batch, c.k, c.n}).cast(t);
      std::vector<double> want = matmul_ref(test::as_f32(ha), test::as_f32(hb.contiguous()), c.batch, true, true, c.m, c.k, c.n);
      Tensor out = ha.matmul(hb);
      EXPECT_EQ(out.dtype(), t);
      double ulp = t == dtypes::float16 ? 1.0 / 1024 : 1.0 / 128;
      EXPECT_ALLCLOSE(test::as_f32(out), want, ulp, 4 * ulp) << t.name() << " " << c.batch << "x" << c.m << "x" << c.k << "x" << c.n;
    }
}

TEST(NnMatmul, LargerSquare) {
  auto a = data(64 * 48, 22), b = data(48 * 32, 23);
  Tensor c = f32(a, {64, 48}).matmul(f32(b, {48, 32}));
  EXPECT_ALLCLOSE(c.to_vector<float>(), matmul_ref(a, b, 1, false, false, 64, 48, 32), 1e-4, 1e-4);
}

// A right operand of 1000 columns (no block of 16 divides them) is stored in blocks of 16 padded
// with zeros to 1008; the padded columns are computed and never stored.
TEST(NnMatmul, ColumnsStoredInPaddedBlocks) {
  auto a = data(64 * 300, 24), b = data(300 * 1000, 25);
  Tensor c = f32(a, {64, 300}).matmul(f32(b, {300, 1000}));
  EXPECT_ALLCLOSE(c.to_vector<float>(), matmul_ref(a, b, 1, false, false, 64, 300, 1000), 1e-4, 1e-4);
  // Integers are padded the same way (their padded lanes' zeros are computed, never stored).
  std::vector<int32_t> ai(64 * 300), bi(300 * 1000);
  for (size_t i = 0; i < ai.size(); ++i) ai[i] = static_cast<int32_t>(i % 7) - 3;
  for (size_t i = 0; i < bi.size(); ++i) bi[i] = static_cast<int32_t>(i % 5) - 2;
  std::vector<int32_t> got = Tensor::from_vector(ai, {64, 300}).matmul(Tensor::from_vector(bi, {300, 1000})).to_vector<int32_t>();
  for (int64_t i = 0; i < 64; i += 21)
    for (int64_t j = 0; j < 1000; j += 37) {
      int64_t want = 0;
      for (int64_t k = 0; k < 300; ++k) want += int64_t{ai[static_cast<size_t>(i * 300 + k)]} * bi[static_cast<size_t>(k * 1000 + j)];
      EXPECT_EQ(got[static_cast<size_t>(i * 1000 + j)], want) << i << " " << j;
    }
  // Dividing by the product, fused: the padded lanes divide by their zeros (and real lanes may
  // too), which is defined (codegen/integer_division) rather than a SIGFPE.
  Tensor p = Tensor::from_vector(ai, {64, 300}).matmul(Tensor::from_vector(bi, {300, 1000}));
  std::vector<int32_t> q = detail::broadcast_alu(Ops::IDIV, {Tensor::full({64, 1000}, int64_t{1000}, dtypes::int32), p}, "idiv").to_vector<int32_t>();
  for (size_t i = 0; i < q.size(); i += 97) EXPECT_EQ(q[i], got[i] == 0 ? 0 : 1000 / got[i]) << i;
}

// A constant weight (a model's Linear) under an activation of 7 x 7 rows of 384 features, as in
// ConvNeXt's last stage: each matrix of the weight meets 49 rows (the activation's batch axes
// count), and its copy in column blocks is made at prepare, so it is stored in blocks from fewer
// rows than a weight computed each run. The plan holds the copy, its columns padded to the block;
// a weight that is not constant is read in place at these rows. Values are those of plain loops.
TEST(NnMatmul, ConstantWeightUnderBatchedRowsIsStoredInColumnBlocks) {
  int64_t k = 384, n = 1001;  // no block divides 1001: the copy's columns are padded
  auto x = data(49 * k, 28), w = data(k * n, 29);
  int64_t blk = blocks_for(default_planning_target()).stored(n);  // what the schedule stores for a plain prepare
  ASSERT_GT(blk, 0);
  size_t blocked = static_cast<size_t>(k * ((n + blk - 1) / blk * blk));
  auto holds_blocked_copy = [&](const ExecutionPlan& plan) {
    for (const Buffer& b : plan.buffers())
      if (b.size() == blocked) return true;
    return false;
  };
  for (bool constant : {true, false}) {
    Tensor weight = f32(w, {k, n});
    if (constant) weight.buffer().set_constant();
    Tensor y = f32(x, {1, 7, 7, k}).matmul(weight);
    EXPECT_EQ(holds_blocked_copy(y.prepare()), constant) << (constant ? "constant" : "computed") << " weight";
    EXPECT_ALLCLOSE(y.to_vector<float>(), matmul_ref(x, w, 1, false, false, 49, k, n), 1e-4, 1e-4);
  }
}

// Attention's scores over 8 heads of 32 features, Q @ K^T: K^T reads K across its rows, so each
// head's K is copied once into column blocks (a kernel of its own, K being an input here) and
// the product runs in vectors along the keys. The heads count in the product's size: per head it
// is small. Values are those of plain loops.
// Each head's product (2^21 multiply-adds) is far below the size from which K is stored in column
// blocks (2^24); the 12 heads together (1.5 x 2^24) are above it, clear of the threshold.
TEST(NnMatmul, BatchedProductWithATransposedOperandStoresItInColumnBlocks) {
  int64_t heads = 12, m = 128, n = 512, k = 32;
  auto q = data(heads * m * k, 26), kt = data(heads * n * k, 27);
  Tensor keys = f32(kt, {heads, n, k});
  Tensor c = f32(q, {heads, m, k}).matmul(keys.transpose(-1, -2));
  EXPECT_EQ(c.prepare().prepared_kernels().size(), 2u) << "the copy of K in blocks, the product";
  std::vector<float> kt_t(kt.size());  // K^T as (heads, k, n), for the reference
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j) kt_t[static_cast<size_t>((h * k + j) * n + i)] = kt[static_cast<size_t>((h * n + i) * k + j)];
  EXPECT_ALLCLOSE(c.to_vector<float>(), matmul_ref(q, kt_t, heads, true, true, m, k, n), 1e-4, 1e-4);
}

// ---- softmax / log_softmax / layernorm -----------------------------------------------------------------

/// softmax over `axis` of a (rows, cols) matrix (axis 1: per row, axis 0: per column).
std::vector<double> softmax_ref(const std::vector<float>& x, int64_t rows, int64_t cols, int axis, bool log) {
  std::vector<double> out(x.size());
  int64_t outer = axis == 1 ? rows : cols, inner = axis == 1 ? cols : rows;
  auto at = [&](int64_t o, int64_t i) { return axis == 1 ? o * cols + i : i * cols + o; };
  for (int64_t o = 0; o < outer; ++o) {
    double m = -1e300, s = 0;
    for (int64_t i = 0; i < inner; ++i) m = std::max(m, double(x[at(o, i)]));
    for (int64_t i = 0; i < inner; ++i) s += std::exp(x[at(o, i)] - m);
    for (int64_t i = 0; i < inner; ++i) out[at(o, i)] = log ? x[at(o, i)] - m - std::log(s) : std::exp(x[at(o, i)] - m) / s;
  }
  return out;
}

TEST(NnSoftmax, LastAxis) {
  auto x = data(35, 30, -5, 5);
  Tensor s = f32(x, {5, 7}).softmax();
  EXPECT_ALLCLOSE(s.to_vector<float>(), softmax_ref(x, 5, 7, 1, false), 1e-4, 1e-6);
}

TEST(NnSoftmax, FirstAxis) {
  auto x = data(35, 31, -5, 5);
  Tensor s = f32(x, {5, 7}).softmax(0);
  EXPECT_ALLCLOSE(s.to_vector<float>(), softmax_ref(x, 5, 7, 0, false), 1e-4, 1e-6);
}

TEST(NnSoftmax, LargeValuesAreStable) {
  std::vector<float> x{1000, 1001, 1002, -1000, -1001, -1002};
  Tensor s = f32(x, {2, 3}).softmax();
  EXPECT_ALLCLOSE(s.to_vector<float>(), softmax_ref(x, 2, 3, 1, false), 1e-4, 1e-6);
}

TEST(NnSoftmax, IntInputIsFloat32) {
  Tensor s = Tensor::from_vector(std::vector<int32_t>{1, 2, 3}).softmax();
  EXPECT_EQ(s.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(s.to_vector<float>(), softmax_ref({1, 2, 3}, 1, 3, 1, false), 1e-4, 1e-6);
}

TEST(NnSoftmax, TransposedInputAndSizeOneAxis) {
  auto x = data(12, 32, -3, 3);
  Tensor s = f32(x, {3, 4}).transpose().softmax(-1);  // softmax over the original axis 0
  auto ref = softmax_ref(x, 3, 4, 0, false);
  EXPECT_ALLCLOSE(s.to_vector<float>(), test::permute_ref(ref, {3, 4}, {1, 0}), 1e-4, 1e-6);
  EXPECT_ALLCLOSE(f32(x, {12, 1}).softmax().to_vector<float>(), std::vector<float>(12, 1.0f), 1e-6, 1e-6);
}

// float32 probabilities below the smallest normal number are stored as 0, so nothing that reads
// them multiplies subnormal numbers (x86's slow path); the others are the exact ones. e^-88 / sum
// is subnormal (6e-39), e^-87 / sum is not (1.6e-38). Float64 keeps its tiny values.
TEST(NnSoftmax, SubnormalFloat32ProbabilitiesAreZero) {
  std::vector<float> x{0.0f, -100.0f, -88.0f, -87.0f, -50.0f, -1e30f};
  std::vector<float> p = f32(x, {1, 6}).softmax().to_vector<float>();
  std::vector<double> ref = softmax_ref(x, 1, 6, 1, false);
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_NE(std::fpclassify(p[i]), FP_SUBNORMAL) << i << ": " << p[i];
    if (ref[i] < std::numeric_limits<float>::min()) EXPECT_EQ(p[i], 0.0f) << i;
    else EXPECT_NEAR(p[i], ref[i], 1e-5 * ref[i]) << i;
  }
  EXPECT_GT(p[3], 0.0f) << "e^-87: the smallest normal number's neighbour, kept";
  std::vector<double> p64 = f32(x, {1, 6}).cast(dtypes::float64).softmax().to_vector<double>();
  EXPECT_GT(p64[1], 0.0) << "e^-100 in float64";
}

TEST(NnSoftmax, Float64) {
  std::vector<double> x{0.1, 0.2, 0.7, -3.0};
  double m = 0.7, s = 0;
  for (double v : x) s += std::exp(v - m);
  std::vector<double> ref;
  for (double v : x) ref.push_back(std::exp(v - m) / s);
  EXPECT_ALLCLOSE(Tensor::from_vector(x).softmax().to_vector<double>(), ref, 1e-12, 1e-14);
}

TEST(NnLogSoftmax, BothAxes) {
  auto x = data(35, 33, -5, 5);
  EXPECT_ALLCLOSE(f32(x, {5, 7}).log_softmax().to_vector<float>(), softmax_ref(x, 5, 7, 1, true), 1e-4, 1e-5);
  EXPECT_ALLCLOSE(f32(x, {5, 7}).log_softmax(0).to_vector<float>(), softmax_ref(x, 5, 7, 0, true), 1e-4, 1e-5);
}

TEST(NnLogSoftmax, LargeValuesAreFinite) {
  std::vector<float> x{1000, 0, -1000};
  EXPECT_ALLCLOSE(f32(x, {3}).log_softmax().to_vector<float>(), softmax_ref(x, 1, 3, 1, true), 1e-4, 1e-4);
}

std::vector<double> layernorm_ref(const std::vector<float>& x, int64_t rows, int64_t cols, double eps) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int64_t c = 0; c < cols; ++c) m += x[r * cols + c];
    m /= cols;
    for (int64_t c = 0; c < cols; ++c) v += (x[r * cols + c] - m) * (x[r * cols + c] - m);
    v /= cols;
    for (int64_t c = 0; c < cols; ++c) out.push_back((x[r * cols + c] - m) / std::sqrt(v + eps));
  }
  return out;
}

TEST(NnLayernorm, LastAxis) {
  auto x = data(48, 34, -3, 5);
  EXPECT_ALLCLOSE(f32(x, {6, 8}).layernorm().to_vector<float>(), layernorm_ref(x, 6, 8, 1e-5), 1e-4, 1e-5);
}

TEST(NnLayernorm, TwoAxesAndCustomEps) {
  auto x = data(60, 35);
  // normalising over the last two axes of (3, 4, 5) is a per-row layernorm of (3, 20).
  Tensor l = f32(x, {3, 4, 5}).layernorm({-2, -1}, 0.1);
  EXPECT_EQ(l.shape(), (Shape{3, 4, 5}));
  EXPECT_ALLCLOSE(l.to_vector<float>(), layernorm_ref(x, 3, 20, 0.1), 1e-4, 1e-5);
}

TEST(NnLayernorm, PermutedInput) {
  auto x = data(48, 36);
  Tensor l = f32(x, {8, 6}).transpose().layernorm();
  EXPECT_ALLCLOSE(l.to_vector<float>(), layernorm_ref(test::permute_ref(x, {8, 6}, {1, 0}), 6, 8, 1e-5), 1e-4, 1e-5);
}

// ---- conv2d -----------------------------------------------------------------------------------------

Tensor check_conv(const ConvArgs& a, uint64_t seed) {
  auto x = data(static_cast<size_t>(a.n * a.c * a.h * a.w), seed);
  auto w = data(static_cast<size_t>(a.o * (a.c / a.groups) * a.kh * a.kw), seed + 100);
  auto b = data(static_cast<size_t>(a.o), seed + 200);
  std::optional<Tensor> bias;
  if (a.bias) bias = f32(b, {a.o});
  Tensor in = f32(x, {a.n, a.c, a.h, a.w});
  if (a.computed) {
    in = in * 2.0f;
    for (float& v : x) v *= 2.0f;
  }
  Tensor out = in.conv2d(f32(w, {a.o, a.c / a.groups, a.kh, a.kw}), bias, a.stride, a.padding, a.dilation, a.groups);
  int64_t oh = 0, ow = 0;
  auto ref = conv_ref(x, w, b, a, oh, ow);
  EXPECT_EQ(out.shape(), (Shape{a.n, a.o, oh, ow}));
  // Blocks of channels (of a computed input, or a stored one copied into them) sum in another
  // order; float32's rounding grows with the terms summed.
  double terms = static_cast<double>(a.c / a.groups * a.kh * a.kw);
  double tol = 1e-4 * std::max(1.0, terms / 256);
  EXPECT_ALLCLOSE(out.to_vector<float>(), ref, tol, tol);
  return out;
}

// The operations a plan computing `y` runs, over its kernels.
int64_t plan_ops(const Tensor& y) {
  int64_t n = 0;
  // One core of 8 lanes, whatever this machine has: which convolutions the plan splits by groups
  // of taps is the Target's choice (tensor/tap_groups.hpp).
  ExecutionPlan plan = Tensor::prepare({y}, {.threads = 1, .shape = TargetShape::parse("8")});
  for (const PreparedKernel* k : plan.prepared_kernels()) n += k->work.ops;
  return n;
}

bool in_blocks(const Shape& s, int64_t lanes) { return s.size() == 5 && s.back() == lanes; }

// The block a convolution's input of `c` channels (a group's) is stored in at `lanes` lanes (a
// cache line or the lanes: tests/schedule/blocks_test.cpp checks which).
int64_t block_of(int64_t lanes, int64_t c) {
  Target t;
  t.vector_bytes = static_cast<int>(4 * lanes);
  return blocks_for(t).convolution_input(c);
}

// How many kernels computing `t` store an activation of its graph (an (N, C, H, W) node) in channel
// blocks of `lanes`, (N, C/B, H, W, B). (Not a weight stored in blocks of output channels,
// (O/B, C, KH, KW, B), which has the same rank.)
size_t blocked_stores(const Tensor& t, int64_t lanes = 16) {
  std::set<Shape> activations;
  for (const auto& [node, shape] : graph_shapes(t.uop()))
    if (shape.size() == 4) activations.insert(shape);
  Schedule sched = create_schedule({t.uop()}, default_schedule_context());
  size_t n = 0;
  for (const ScheduleItem& item : sched.items) {
    const Shape& s = sched.shapes.at(item.bufs[0].get());
    n += !item.is_view() && in_blocks(s, lanes) && activations.count(Shape{s[0], s[1] * s[4], s[2], s[3]});
  }
  return n;
}

// How many stored values of `t`'s schedule are written as runs of a concatenation stored in
// channel blocks of `lanes` (schedule/buffer_assignment): the join then needs no kernel.
size_t runs_of_blocked_joins(const Tensor& t, int64_t lanes = 16) {
  Schedule sched = create_schedule({t.uop()}, default_schedule_context());
  size_t n = 0;
  for (const auto& [node, p] : sched.placements)
    n += p.kind == Placement::Kind::concatenation_run && in_blocks(sched.shapes.at(node), lanes) && in_blocks(sched.shapes.at(p.base.get()), lanes);
  return n;
}

TEST(NnConv2d, Basic3x3) { check_conv({.n = 1, .c = 2, .h = 6, .w = 5, .o = 3, .kh = 3, .kw = 3}, 40); }
TEST(NnConv2d, WithBias) { check_conv({.n = 2, .c = 3, .h = 5, .w = 5, .o = 4, .kh = 3, .kw = 2, .bias = true}, 41); }
TEST(NnConv2d, Stride) { check_conv({.n = 1, .c = 2, .h = 7, .w = 8, .o = 2, .kh = 3, .kw = 3, .stride = {2, 3}}, 42); }
TEST(NnConv2d, Padding) { check_conv({.n = 1, .c = 1, .h = 4, .w = 4, .o = 2, .kh = 3, .kw = 3, .padding = {1, 2}}, 43); }
TEST(NnConv2d, Dilation) { check_conv({.n = 1, .c = 2, .h = 7, .w = 7, .o = 2, .kh = 3, .kw = 2, .dilation = {2, 3}}, 44); }
TEST(NnConv2d, Groups) { check_conv({.n = 2, .c = 4, .h = 5, .w = 5, .o = 6, .kh = 3, .kw = 3, .groups = 2, .bias = true}, 45); }
TEST(NnConv2d, Depthwise) { check_conv({.n = 1, .c = 3, .h = 5, .w = 4, .o = 3, .kh = 2, .kw = 2, .groups = 3}, 46); }
TEST(NnConv2d, OneByOne) { check_conv({.n = 2, .c = 3, .h = 3, .w = 3, .o = 5, .kh = 1, .kw = 1}, 47); }
// Whether a kernel of `t`'s schedule stores an (n, c, h, w) image, in channel blocks or not.
bool stores_image(const Tensor& t, int64_t n, int64_t c, int64_t h, int64_t w) {
  Schedule sched = create_schedule({t.uop()}, default_schedule_context());
  for (const ScheduleItem& item : sched.items) {
    const Shape& s = sched.shapes.at(item.bufs[0].get());
    if (!item.is_view() &&
        (s == Shape{n, c, h, w} || (s.size() == 5 && s[0] == n && s[1] * s[4] == c && s[2] == h && s[3] == w)))
      return true;
  }
  return false;
}

// A 1x1 filter with a stride computes at stride 1 over a stored copy of the pixels it reads (the
// output's size, its input's channels), with the plain loops' values: a stored or a computed
// input, padded, with a bias, groups, a batch, strides the image does not divide, and a stride past
// a one-pixel image.
TEST(NnConv2d, OneByOneWithAStride) {
  for (ConvArgs a :
       {ConvArgs{.n = 2, .c = 3, .h = 7, .w = 5, .o = 5, .kh = 1, .kw = 1, .stride = {2, 2}, .bias = true},
        ConvArgs{.n = 1, .c = 32, .h = 13, .w = 11, .o = 64, .kh = 1, .kw = 1, .stride = {3, 2}, .computed = true},
        ConvArgs{.n = 2,
        .c = 16,
        .h = 6,
        .w = 9,
        .o = 32,
        .kh = 1,
        .kw = 1,
        .stride = {1, 4},
        .padding = {1, 2},
        .groups = 2,
        .bias = true},
        ConvArgs{.n = 1, .c = 8, .h = 1, .w = 1, .o = 4, .kh = 1, .kw = 1, .stride = {2, 2}, .computed = true}}) {
    Tensor y = check_conv(a, static_cast<uint64_t>(49 + a.c));
    EXPECT_TRUE(stores_image(y, a.n, a.c, y.shape()[2], y.shape()[3])) << a.c << " channels, " << a.h << "x" << a.w;
  }
}

TEST(NnConv2d, Everything) {
  check_conv({.n = 2, .c = 4, .h = 9, .w = 8, .o = 4, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {2, 1}, .dilation = {2, 1}, .groups = 2, .bias = true}, 48);
}

// Convolutions with many input channels and few multiply-adds per input element read their
// padding through gates (no padded copy: one kernel fewer), the window loops bounded where the
// taps leave the image: every stride, padding, dilation, odd and one-pixel sizes, a batch, groups.
TEST(NnConv2d, ThroughItsPaddingWithoutACopy) {
  check_conv({.n = 1, .c = 16, .h = 7, .w = 5, .o = 16, .kh = 3, .kw = 3, .padding = {1, 1}}, 61);
  check_conv({.n = 2, .c = 8, .h = 13, .w = 11, .o = 32, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1}, .bias = true}, 62);
  check_conv({.n = 1, .c = 24, .h = 1, .w = 1, .o = 8, .kh = 3, .kw = 3, .padding = {1, 1}}, 63);
  check_conv({.n = 1, .c = 16, .h = 9, .w = 17, .o = 24, .kh = 5, .kw = 3, .stride = {1, 2}, .padding = {2, 1}, .dilation = {2, 1}}, 64);
  check_conv({.n = 1, .c = 32, .h = 6, .w = 3, .o = 16, .kh = 3, .kw = 3, .padding = {3, 2}, .groups = 2, .bias = true}, 65);
  check_conv({.n = 1, .c = 8, .h = 37, .w = 29, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}}, 66);
  // A stored input with few multiply-adds per element (16 outputs x 3 taps, too few to copy it into
  // channel blocks, and 16 outputs fill a block at every target shape) is read where it lies; with
  // 1024 output channels (3072 per element) the convolution reads a padded copy instead.
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  Tensor x = f32(data(16 * 25, 67), {1, 16, 5, 5});
  for (int lanes : {4, 8, 16}) {
    test::ScopedTargetShape shape(std::to_string(lanes));
    Tensor y = x.conv2d(f32(data(16 * 16 * 3, 68), {16, 16, 3, 1}), std::nullopt, {1, 1}, {1, 0});
    Tensor copied = x.conv2d(f32(data(1024 * 16 * 3, 69), {1024, 16, 3, 1}), std::nullopt, {1, 1}, {1, 0});
    EXPECT_EQ(test::kernel_count(y) + 1, test::kernel_count(copied)) << "the padded copy is a kernel of its own, at " << lanes << " lanes";
  }
}

// A computed input with whole blocks of 16 channels per group is stored in channel blocks,
// (N, C/16, H, W, 16), by the kernel that computes it, and read on the split view: through its
// padding, strided, dilated, grouped, a 1x1 image, a batch; with many multiply-adds per input
// element it reads an unblocked padded copy instead.
TEST(NnConv2d, ComputedInputInChannelBlocks) {
  test::ScopedTargetShape shape("16");  // the blocks are one register of 16 float32
  auto blocked = [](const ConvArgs& a, uint64_t seed) { return blocked_stores(check_conv(a, seed)); };
  EXPECT_EQ(blocked({.n = 1, .c = 16, .h = 7, .w = 5, .o = 24, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 80), 1u);
  EXPECT_EQ(blocked({.n = 2, .c = 32, .h = 9, .w = 11, .o = 32, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1}, .bias = true, .computed = true}, 81), 1u);
  EXPECT_EQ(blocked({.n = 1, .c = 16, .h = 9, .w = 17, .o = 24, .kh = 5, .kw = 3, .stride = {1, 2}, .padding = {2, 1}, .dilation = {2, 1}, .computed = true}, 83), 1u);
  EXPECT_EQ(blocked({.n = 1, .c = 48, .h = 1, .w = 1, .o = 16, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 84), 1u);
  // Not in blocks: too few multiply-adds per pixel (384), a padded copy (256 outputs), 24 channels.
  EXPECT_EQ(blocked({.n = 1, .c = 32, .h = 6, .w = 7, .o = 48, .kh = 1, .kw = 1, .groups = 2, .computed = true}, 82), 0u);
  EXPECT_EQ(blocked({.n = 1, .c = 16, .h = 5, .w = 6, .o = 256, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 85), 0u);
  EXPECT_EQ(blocked({.n = 1, .c = 24, .h = 5, .w = 6, .o = 32, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 86), 0u);
}

// A stored input (a graph's input) whose elements each feed at least 64 multiply-adds (output
// channels x taps / stride area), with output channels that fill a vector, is copied into channel
// blocks for a large convolution, as a computed one is stored in them: through its padding,
// strided, a batch; with fewer, or channels the block does not divide, it is read where it lies.
// Every value matches plain loops.
TEST(NnConv2d, StoredInputCopiedIntoChannelBlocks) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  for (int64_t lanes : {8, 16}) {
    test::ScopedTargetShape shape(std::to_string(lanes));
    SCOPED_TRACE(std::to_string(lanes) + " lanes");
    auto blocked = [&](const ConvArgs& a, uint64_t seed) { return blocked_stores(check_conv(a, seed), block_of(lanes, a.c / a.groups)); };
    EXPECT_EQ(blocked({.n = 1, .c = 16, .h = 7, .w = 5, .o = 24, .kh = 3, .kw = 3, .padding = {1, 1}}, 90), 1u);
    EXPECT_EQ(blocked({.n = 2, .c = 32, .h = 9, .w = 11, .o = 64, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1}, .bias = true}, 91), 1u);
    EXPECT_EQ(blocked({.n = 1, .c = 16, .h = 13, .w = 1, .o = 64, .kh = 1, .kw = 1}, 92), 1u);
    EXPECT_EQ(blocked({.n = 1, .c = 32, .h = 6, .w = 7, .o = 48, .kh = 1, .kw = 1}, 93), 0u) << "48 per element";
    EXPECT_EQ(blocked({.n = 1, .c = 16, .h = 7, .w = 5, .o = 4, .kh = 3, .kw = 3, .padding = {1, 1}}, 94), 0u) << "36 per element";
    EXPECT_EQ(blocked({.n = 1, .c = 20, .h = 5, .w = 6, .o = 32, .kh = 3, .kw = 3, .padding = {1, 1}}, 95), 0u) << "20 channels";
    EXPECT_EQ(blocked({.n = 1, .c = 16, .h = 7, .w = 5, .o = 8, .kh = 3, .kw = 3, .padding = {1, 1}}, 96), lanes == 8 ? 1u : 0u)
        << "8 output channels fill a vector at 8 lanes, half of one at 16";
  }
}

// The channel blocks follow the target planned for: at 4, 8 and 16 float32 lanes, a computed input
// whose channels the lanes divide is stored in blocks of a 64-byte line where 16 divides them, else
// of the lanes (24 channels: at 4 and 8 lanes, not at 16), a max pool reads it in them, a
// concatenation of convolutions is one of blocks, and every value matches plain loops.
TEST(NnConv2d, ChannelBlocksFollowTheTarget) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  for (int64_t lanes : {4, 8, 16}) {
    test::ScopedTargetShape shape(std::to_string(lanes));
    SCOPED_TRACE(std::to_string(lanes) + " lanes");
    auto blocked = [&](const ConvArgs& a, uint64_t seed) { return blocked_stores(check_conv(a, seed), block_of(lanes, a.c / a.groups)); };
    EXPECT_EQ(blocked({.n = 1, .c = 24, .h = 5, .w = 6, .o = 32, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 120), lanes == 16 ? 0u : 1u);
    EXPECT_EQ(blocked({.n = 2, .c = 32, .h = 9, .w = 11, .o = 40, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1}, .bias = true, .computed = true}, 121), 1u);
    EXPECT_EQ(blocked({.n = 1, .c = 48, .h = 1, .w = 1, .o = 1000, .kh = 3, .kw = 3, .padding = {1, 1}, .computed = true}, 122), 1u);
    check_conv({.n = 1, .c = 40, .h = 7, .w = 6, .o = 40, .kh = 3, .kw = 3, .stride = {2, 1}, .padding = {1, 1}, .groups = 40, .bias = true}, 123);
    check_conv({.n = 1, .c = 12, .h = 5, .w = 5, .o = 12, .kh = 3, .kw = 3, .padding = {1, 1}, .groups = 12}, 124);
    auto x = data(2 * 24 * 9 * 7, 125);
    Tensor p = (f32(x, {2, 24, 9, 7}) * 2.0f).max_pool2d({3, 3}, std::make_pair(int64_t{2}, int64_t{2}), {1, 1});
    for (float& v : x) v *= 2.0f;
    // 24 channels are pooled in blocks of half a register where a whole one does not divide them
    // (16 lanes: blocks of 8, as the depthwise convolutions after such a pool read them).
    EXPECT_EQ(blocked_stores(p, lanes == 16 ? 8 : lanes), 1u);
    EXPECT_ALLCLOSE(p.to_vector<float>(), test::pool_ref(x, 48, 9, 7, 3, 3, 2, 2, 1, 1, true), 0, 0);
    Tensor in = f32(data(16 * 25, 126), {1, 16, 5, 5}) * 2.0f;
    Tensor a = in.conv2d(f32(data(16 * 16, 127), {16, 16, 1, 1})).relu();
    Tensor b = in.conv2d(f32(data(32 * 16 * 9, 128), {32, 16, 3, 3}), std::nullopt, {1, 1}, {1, 1}).relu();
    Tensor w = f32(data(16 * 48, 129), {16, 48, 1, 1});
    Tensor y = Tensor::cat({a, b}, 1).conv2d(w);
    EXPECT_EQ(blocked_stores(y, 16), 3u) << "the computed input and each part, in blocks of a line";
    EXPECT_EQ(runs_of_blocked_joins(y, 16), 2u) << "each part writes its run of the join, in blocks";
    Tensor plain = Tensor::cat({f32(a.to_vector<float>(), a.shape()), f32(b.to_vector<float>(), b.shape())}, 1);
    std::vector<float> wy = plain.conv2d(w).to_vector<float>();
    EXPECT_ALLCLOSE(y.to_vector<float>(), std::vector<double>(wy.begin(), wy.end()), 1e-4, 1e-4);
  }
}

// A convolution over a blocked input sums the channels within a block innermost, after the
// window's taps, reading its weight along that loop as one run: in the kernel, the reduction's
// last loop is the block's 16 channels and the weight's address steps by one block of output
// channels along it (a weight stored as (O/B, C/16, KH, KW, 16, B)).
TEST(NnConv2d, BlockedInputSumsTheChannelsOfABlockInnermost) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  test::ScopedTargetShape shape("16");  // the blocks are one register of 16 float32
  Tensor x = f32(data(32 * 35, 87), {1, 32, 7, 5}) * 2.0f;
  Tensor w = f32(data(32 * 32 * 9, 88), {32, 32, 3, 3});
  w.buffer().set_constant();
  UOpPtr ast = test::kernel_ast(x.conv2d(w, std::nullopt, {1, 1}, {1, 1}));
  const UOp* reduce = nullptr;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::REDUCE) reduce = u.get();
  ASSERT_NE(reduce, nullptr);
  ASSERT_EQ(reduce->src().size(), 5u) << "blocks, kernel rows, kernel columns, channels in a block";
  const UOpPtr& inner = reduce->src().back();
  EXPECT_EQ(inner->src(0)->vmax(), 16);
  bool weight_steps_by_a_block = false;
  for (const UOpPtr& u : toposort(ast))
    if (u->op() == Ops::INDEX && u->src(0)->dtype().ptr_size() == 32 * 32 * 9)
      weight_steps_by_a_block = step_along(u->src(1), inner) == std::optional<int64_t>{32};
  EXPECT_TRUE(weight_steps_by_a_block);
}

// A residual block: h = relu(conv(2x)) feeds the next convolution (in blocks) and the residual
// sum (as it is): it is stored once, in blocks, and the sum reads the blocks.
TEST(NnConv2d, ResidualReadOfABlockedActivation) {
  ConvArgs a{.n = 1, .c = 16, .h = 6, .w = 5, .o = 16, .kh = 3, .kw = 3, .padding = {1, 1}};
  auto x = data(16 * 30, 90), w1 = data(16 * 16 * 9, 91), w2 = data(16 * 16 * 9, 92);
  Tensor h = (f32(x, {1, 16, 6, 5}) * 2.0f).conv2d(f32(w1, {16, 16, 3, 3}), std::nullopt, {1, 1}, {1, 1}).relu();
  Tensor y = h.conv2d(f32(w2, {16, 16, 3, 3}), std::nullopt, {1, 1}, {1, 1}) + h;
  for (float& v : x) v *= 2.0f;
  int64_t oh = 0, ow = 0;
  std::vector<double> hr = conv_ref(x, w1, {}, a, oh, ow);
  std::vector<float> hf;
  for (double v : hr) hf.push_back(static_cast<float>(std::max(v, 0.0)));
  std::vector<double> want = conv_ref(hf, w2, {}, a, oh, ow);
  for (size_t i = 0; i < want.size(); ++i) want[i] += hf[i];
  EXPECT_ALLCLOSE(y.to_vector<float>(), want, 1e-4, 1e-4);
}

// Convolutions' results joined along their channels and read by a convolution (a SqueezeNet fire
// module): each part is stored in blocks by its own kernel and the join is one of blocks. The
// values are those of the plain join of the stored parts.
TEST(NnConv2d, ConcatenatedConvolutionsInChannelBlocks) {
  test::ScopedTargetShape shape("16");  // the blocks are one register of 16 float32
  Tensor x = f32(data(16 * 25, 93), {1, 16, 5, 5}) * 2.0f;
  Tensor a = x.conv2d(f32(data(16 * 16, 94), {16, 16, 1, 1})).relu();
  Tensor b = x.conv2d(f32(data(32 * 16 * 9, 95), {32, 16, 3, 3}), std::nullopt, {1, 1}, {1, 1}).relu();
  Tensor w = f32(data(16 * 48, 96), {16, 48, 1, 1});
  Tensor joined = Tensor::cat({a, b}, 1);
  Tensor y = joined.conv2d(w);
  EXPECT_EQ(blocked_stores(y), 3u) << "the computed input and each part, in blocks";
  EXPECT_EQ(runs_of_blocked_joins(y), 2u) << "each part writes its run of the join, in blocks: no joining kernel";
  Tensor plain = Tensor::cat({f32(a.to_vector<float>(), a.shape()), f32(b.to_vector<float>(), b.shape())}, 1);
  std::vector<float> want = plain.to_vector<float>();
  std::vector<double> want_d(want.begin(), want.end());
  EXPECT_ALLCLOSE(joined.to_vector<float>(), want_d, 1e-5, 1e-5);  // the parts' kernels sum in their own orders
  std::vector<float> wy = f32(want, plain.shape()).conv2d(w).to_vector<float>();
  EXPECT_ALLCLOSE(y.to_vector<float>(), std::vector<double>(wy.begin(), wy.end()), 1e-4, 1e-4);
}

// Output channels no block of 16 divides (1000 classes, 136) are stored padded with zeros to
// blocks of 16: the kernel's channel loop is padded to whole vectors, its padded lanes read the
// weight's zeros and are never stored.
TEST(NnConv2d, OutputChannelsInPaddedBlocks) {
  check_conv({.n = 1, .c = 32, .h = 3, .w = 5, .o = 1000, .kh = 1, .kw = 1, .bias = true}, 70);
  check_conv({.n = 2, .c = 8, .h = 5, .w = 4, .o = 136, .kh = 3, .kw = 3, .padding = {1, 1}}, 71);
  check_conv({.n = 1, .c = 32, .h = 7, .w = 7, .o = 120, .kh = 1, .kw = 1, .stride = {2, 2}, .groups = 2, .bias = true}, 72);
}

// Depthwise convolutions whose channels split into blocks of 8, 16 or 32 read their input and
// weight in channel blocks (their own vector path): every stride, padding and dilation, odd
// sizes, a batch, and a window as large as the padded input.
TEST(NnConv2d, DepthwiseInChannelBlocks) {
  check_conv({.n = 1, .c = 8, .h = 5, .w = 7, .o = 8, .kh = 3, .kw = 3, .padding = {1, 1}, .groups = 8}, 51);
  check_conv({.n = 2, .c = 16, .h = 13, .w = 11, .o = 16, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1}, .groups = 16, .bias = true}, 52);
  check_conv({.n = 1, .c = 48, .h = 9, .w = 10, .o = 48, .kh = 5, .kw = 5, .stride = {2, 1}, .padding = {2, 2}, .groups = 48, .bias = true}, 53);
  check_conv({.n = 1, .c = 32, .h = 7, .w = 6, .o = 32, .kh = 3, .kw = 2, .padding = {0, 1}, .dilation = {2, 3}, .groups = 32}, 54);
  check_conv({.n = 1, .c = 64, .h = 1, .w = 1, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}, .groups = 64}, 55);
  check_conv({.n = 1, .c = 24, .h = 4, .w = 3, .o = 24, .kh = 4, .kw = 3, .groups = 24}, 56);
}

// Convolutions with few multiply-adds per pixel (a 3-channel stem, groups of 4 or 8 channels)
// read a weight stored with its output channels innermost, so a vector of output channels is one
// load per tap: odd sizes, strides, padding, a batch, channel counts no vector divides.
TEST(NnConv2d, FewChannelsAndSmallGroups) {
  check_conv({.n = 1, .c = 3, .h = 17, .w = 15, .o = 8, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1}, .bias = true}, 70);
  check_conv({.n = 1, .c = 3, .h = 9, .w = 13, .o = 16, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1}}, 71);
  check_conv({.n = 1, .c = 64, .h = 9, .w = 11, .o = 64, .kh = 3, .kw = 3, .padding = {1, 1}, .groups = 8}, 72);
  check_conv({.n = 2, .c = 48, .h = 13, .w = 7, .o = 48, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1}, .groups = 6, .bias = true}, 73);
  check_conv({.n = 1, .c = 32, .h = 5, .w = 5, .o = 32, .kh = 3, .kw = 3, .padding = {1, 1}, .groups = 8}, 74);
  check_conv({.n = 1, .c = 5, .h = 7, .w = 9, .o = 7, .kh = 5, .kw = 5, .padding = {2, 2}}, 75);
  check_conv({.n = 1, .c = 12, .h = 1, .w = 1, .o = 20, .kh = 3, .kw = 3, .padding = {1, 1}}, 76);
  check_conv({.n = 1, .c = 24, .h = 6, .w = 5, .o = 24, .kh = 1, .kw = 1, .groups = 3}, 77);
}

// Taps that read only padding for every output position are dropped (a dilated convolution on a
// small map, as an atrous pyramid's rate 24 on 14x14): values against plain loops when only the
// centre tap is left, when the rows start inside the image (no padding before, rows skipped),
// when the padding left is uneven, for a 1x1 image, a depthwise convolution, and when no tap
// reads the image at all (the bias alone); and the centre-only convolution does a 1x1's work.
TEST(NnConv2d, TapsThatReadOnlyPaddingAreDropped) {
  Tensor centre = check_conv({.n = 1, .c = 16, .h = 5, .w = 6, .o = 32, .kh = 3, .kw = 3, .padding = {6, 6}, .dilation = {6, 6}, .bias = true}, 90);
  check_conv({.n = 2, .c = 3, .h = 3, .w = 9, .o = 5, .kh = 2, .kw = 3, .padding = {1, 1}, .dilation = {3, 1}}, 91);
  check_conv({.n = 1, .c = 8, .h = 6, .w = 6, .o = 8, .kh = 3, .kw = 3, .stride = {4, 4}, .padding = {5, 5}, .dilation = {4, 4}, .computed = true}, 92);
  check_conv({.n = 1, .c = 4, .h = 1, .w = 1, .o = 6, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true}, 93);
  check_conv({.n = 1, .c = 16, .h = 4, .w = 4, .o = 16, .kh = 3, .kw = 3, .padding = {4, 4}, .dilation = {4, 4}, .groups = 16}, 94);
  check_conv({.n = 1, .c = 4, .h = 1, .w = 1, .o = 3, .kh = 2, .kw = 2, .padding = {2, 2}, .dilation = {3, 3}, .bias = true}, 95);
  Tensor one = f32(data(16 * 30, 90), {1, 16, 5, 6}).conv2d(f32(data(32 * 16, 190), {32, 16, 1, 1}), f32(data(32, 290), {32}));
  EXPECT_LT(plan_ops(centre), 2 * plan_ops(one));
}

// A convolution whose side taps read the image for a few output positions each (an atrous
// pyramid at rate 12 on a 14x14 map: 82% of its multiply-adds read padding) is, in a plan for one
// core of 8 lanes (prepare's tap-group rule, tensor/tap_groups.hpp), a sum of parts,
// each a group of taps over the positions where they read the image. Values against plain loops:
// a computed input and a bias; uneven kernel, stride and dilation per axis with odd sizes and a
// batch; groups; output positions where no tap reads the image (the bias alone). Each plan does
// under half the whole kernel's work (the pyramid: about that of the taps reading the image).
TEST(NnConv2d, TapsReadingTheImageAtFewPositionsAreSummedByGroup) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  // The work of the whole kernel for `y`: a multiply and an add per output, input channel and tap.
  auto whole = [](const Tensor& y, int64_t cg, int64_t taps) { return 2 * static_cast<int64_t>(y.numel()) * cg * taps; };
  Tensor aspp = check_conv({.n = 1, .c = 128, .h = 14, .w = 14, .o = 128, .kh = 3, .kw = 3, .padding = {12, 12}, .dilation = {12, 12},
                            .bias = true, .computed = true}, 100);
  int64_t reading = 2 * (2 + 14 + 2) * (2 + 14 + 2) * 128 * 128;  // output positions x taps reading the image, x channels
  EXPECT_LT(plan_ops(aspp), 3 * reading / 2) << "the taps reading the image, and the epilogues";
  Tensor uneven = check_conv({.n = 2, .c = 192, .h = 13, .w = 11, .o = 128, .kh = 3, .kw = 5, .stride = {2, 1}, .padding = {8, 8}, .dilation = {8, 4}}, 101);
  EXPECT_LT(2 * plan_ops(uneven), whole(uneven, 192, 15));
  Tensor grouped = check_conv({.n = 1, .c = 256, .h = 9, .w = 9, .o = 256, .kh = 3, .kw = 3, .padding = {7, 7}, .dilation = {7, 7}, .groups = 2, .bias = true}, 102);
  EXPECT_LT(2 * plan_ops(grouped), whole(grouped, 128, 9));
  Tensor edges = check_conv({.n = 1, .c = 128, .h = 5, .w = 6, .o = 128, .kh = 3, .kw = 3, .padding = {9, 9}, .dilation = {4, 4}, .bias = true}, 103);
  EXPECT_LT(2 * plan_ops(edges), whole(edges, 128, 9));
}

// Such a convolution's kernel is vectorized: its output channels (or its pixels) are lanes.
TEST(NnConv2d, FewChannelsAndSmallGroupsAreVectorized) {
  for (auto [c, o, groups, stride] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{3, 8, 1, 2}, {48, 48, 6, 2}, {64, 64, 8, 1}}) {
    Tensor y = f32(data(static_cast<size_t>(c * 28 * 28), 78), {1, c, 28, 28})
                   .conv2d(f32(data(static_cast<size_t>(o * (c / groups) * 9), 79), {o, c / groups, 3, 3}), std::nullopt, {stride, stride}, {1, 1}, {1, 1}, groups);
    ExecutionPlan plan = y.prepare();
    EXPECT_NE(plan.prepared_kernels().back()->kernel->opts.find("UPCAST"), std::string::npos)
        << c << " -> " << o << " in " << groups << " groups: " << plan.prepared_kernels().back()->kernel->opts;
  }
}

// A convolution to a few output channels (9: no channel block) reads a computed input by pixel,
// not in channel blocks: its lanes are pixels, whose input is contiguous only unblocked. Here
// followed by a pixel shuffle (ESPCN's last layer, 32 -> 9 channels at 224x224: 62 ms scalar, 1.5
// ms vectorized); values against plain loops for 9, 3 and 12 output channels.
TEST(NnConv2d, FewOutputChannelsReadAComputedInputByPixel) {
  test::ScopedTargetShape shape("16");  // the blocks are one register of 16 float32
  for (int64_t o : {9, 3, 12}) check_conv({.n = 1, .c = 32, .h = 10, .w = 19, .o = o, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true, .computed = true}, 96);
  Tensor y = (f32(data(32 * 24 * 32, 97), {1, 32, 24, 32}) * 2.0f).conv2d(f32(data(9 * 32 * 9, 98), {9, 32, 3, 3}), std::nullopt, {1, 1}, {1, 1});
  Tensor shuffled = y.reshape({1, 1, 3, 3, 24, 32}).permute({0, 1, 4, 2, 5, 3}).reshape({1, 1, 72, 96});
  ExecutionPlan plan = shuffled.prepare();
  EXPECT_NE(plan.prepared_kernels().back()->kernel->opts.find("UPCAST"), std::string::npos) << plan.prepared_kernels().back()->kernel->opts;
  EXPECT_EQ(blocked_stores(shuffled), 0u);
}

// The blocked input is stored by the kernel that computes it (x * 2), the weight by a copy (made
// once, at prepare, for a model's constant weight), and the convolution's lanes are channels,
// whatever the spatial sizes (here 7 x 7, which no vector width divides).
TEST(NnConv2d, DepthwiseKernelIsVectorized) {
  test::ScopedTargetShape shape("16");  // the blocks are one register of 16 float32
  ConvArgs a{.n = 1, .c = 32, .h = 7, .w = 7, .o = 32, .kh = 3, .kw = 3, .padding = {1, 1}, .groups = 32, .bias = true};
  auto x = data(32 * 49, 57), w = data(32 * 9, 58), b = data(32, 59);
  Tensor y = (f32(x, {1, 32, 7, 7}) * 2.0f).conv2d(f32(w, {32, 1, 3, 3}), f32(b, {32}), {1, 1}, {1, 1}, {1, 1}, 32).relu();
  ExecutionPlan plan = y.prepare();
  ASSERT_EQ(plan.prepared_kernels().size(), 3u);
  EXPECT_NE(plan.prepared_kernels().back()->kernel->opts.find("UPCAST"), std::string::npos) << plan.prepared_kernels().back()->kernel->opts;
  for (float& v : x) v *= 2.0f;
  int64_t oh = 0, ow = 0;
  auto ref = conv_ref(x, w, b, a, oh, ow);
  for (double& v : ref) v = std::max(0.0, v);
  EXPECT_ALLCLOSE(y.to_vector<float>(), ref, 1e-5, 1e-5);
}

TEST(NnConv2d, DepthwiseHalf) {
  ConvArgs a{.n = 1, .c = 16, .h = 6, .w = 5, .o = 16, .kh = 3, .kw = 3, .stride = {2, 1}, .padding = {1, 1}, .groups = 16};
  Tensor hx = f32(data(16 * 30, 60), {1, 16, 6, 5}).cast(dtypes::float16), hw = f32(data(16 * 9, 61), {16, 1, 3, 3}).cast(dtypes::float16);
  Tensor y = hx.conv2d(hw, std::nullopt, a.stride, a.padding, a.dilation, 16);
  EXPECT_EQ(y.dtype(), dtypes::float16);
  int64_t oh = 0, ow = 0;
  EXPECT_ALLCLOSE(test::as_f32(y), conv_ref(test::as_f32(hx), test::as_f32(hw), {}, a, oh, ow), 1e-2, 1e-2);
}

TEST(NnConv2d, NonContiguousInput) {
  ConvArgs a{.n = 1, .c = 2, .h = 4, .w = 5, .o = 2, .kh = 2, .kw = 2};
  auto xs = data(40, 49);  // stored as (1, 2, 5, 4), fed transposed to (1, 2, 4, 5)
  auto w = data(16, 50);
  Tensor out = f32(xs, {1, 2, 5, 4}).transpose(2, 3).conv2d(f32(w, {2, 2, 2, 2}));
  auto x = test::permute_ref(xs, {1, 2, 5, 4}, {0, 1, 3, 2});
  int64_t oh = 0, ow = 0;
  EXPECT_ALLCLOSE(out.to_vector<float>(), conv_ref(x, w, {}, a, oh, ow), 1e-5, 1e-5);
}

TEST(NnConv2d, Int32) {
  std::vector<int32_t> x{1, 2, 3, 4, 5, 6, 7, 8, 9}, w{1, 2, 3, 4};
  Tensor out = Tensor::from_vector(x, {1, 1, 3, 3}).conv2d(Tensor::from_vector(w, {1, 1, 2, 2}));
  EXPECT_EQ(out.dtype(), dtypes::int32);
  // out[y][x] = x[y][x] + 2 x[y][x+1] + 3 x[y+1][x] + 4 x[y+1][x+1]: a distinct value per position
  EXPECT_ALLEQUAL(out.to_vector<int32_t>(), (std::vector<int32_t>{37, 47, 67, 77}));
}

TEST(NnConv2d, Int8AccumulatesInInt32) {
  std::vector<int8_t> x(9, 100), w(9, 100);
  Tensor out = Tensor::from_vector(x, {1, 1, 3, 3}).conv2d(Tensor::from_vector(w, {1, 1, 3, 3}));
  EXPECT_EQ(out.dtype(), dtypes::int32);
  EXPECT_EQ(out.item<int32_t>(), 90000);
}

// ---- pooling ----------------------------------------------------------------------------------------

using test::pool_ref;

TEST(NnPool, MaxPoolDefaultStride) {
  auto x = data(2 * 3 * 6 * 6, 60);
  Tensor p = f32(x, {2, 3, 6, 6}).max_pool2d({2, 2});
  EXPECT_EQ(p.shape(), (Shape{2, 3, 3, 3}));
  EXPECT_ALLCLOSE(p.to_vector<float>(), pool_ref(x, 6, 6, 6, 2, 2, 2, 2, 0, 0, true), 0, 0);
}

TEST(NnPool, MaxPoolStridePadding) {
  auto x = data(1 * 2 * 5 * 7, 61);
  Tensor p = f32(x, {1, 2, 5, 7}).max_pool2d({3, 2}, std::make_pair(int64_t{1}, int64_t{2}), {1, 1});
  EXPECT_EQ(p.shape(), (Shape{1, 2, 5, 4}));
  EXPECT_ALLCLOSE(p.to_vector<float>(), pool_ref(x, 2, 5, 7, 3, 2, 1, 2, 1, 1, true), 0, 0);
}

// A computed input of whole channel blocks is pooled in blocks (padding read on the blocks, -inf);
// rows and columns padded apart (the ONNX importer's ceil mode) through detail::max_pool2d.
TEST(NnPool, MaxPoolOfAComputedInputInChannelBlocks) {
  test::ScopedTargetShape shape("16");  // the blocks are one register of 16 float32
  auto x = data(2 * 32 * 9 * 7, 62);
  Tensor p = (f32(x, {2, 32, 9, 7}) * 2.0f).max_pool2d({3, 3}, std::make_pair(int64_t{2}, int64_t{2}), {1, 1});
  for (float& v : x) v *= 2.0f;
  EXPECT_EQ(p.shape(), (Shape{2, 32, 5, 4}));
  EXPECT_EQ(blocked_stores(p), 1u);
  EXPECT_ALLCLOSE(p.to_vector<float>(), pool_ref(x, 64, 9, 7, 3, 3, 2, 2, 1, 1, true), 0, 0);
  auto z = data(16 * 5 * 6, 63);
  Tensor q = detail::max_pool2d(f32(z, {1, 16, 5, 6}) * 2.0f, {2, 2}, {2, 2}, {0, 1}, {1, 0});  // (5+1) x (6+1)
  for (float& v : z) v *= 2.0f;
  EXPECT_EQ(q.shape(), (Shape{1, 16, 3, 3}));
  EXPECT_ALLCLOSE(q.to_vector<float>(), pool_ref(z, 16, 5, 6, 2, 2, 2, 2, 0, 1, 1, 0, true), 0, 0);
}

TEST(NnPool, MaxPoolInts) {
  auto x = test::int_data<int32_t>(16, 62, -100, 100);
  Tensor p = Tensor::from_vector(x, {1, 1, 4, 4}).max_pool2d({2, 2}, std::nullopt, {1, 1});
  std::vector<float> xf(x.begin(), x.end());
  EXPECT_EQ(p.dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(p.to_vector<int32_t>(), pool_ref(xf, 1, 4, 4, 2, 2, 2, 2, 1, 1, true));
}

TEST(NnPool, AvgPool) {
  auto x = data(2 * 2 * 6 * 4, 63);
  Tensor p = f32(x, {2, 2, 6, 4}).avg_pool2d({3, 2});
  EXPECT_EQ(p.shape(), (Shape{2, 2, 2, 2}));
  EXPECT_ALLCLOSE(p.to_vector<float>(), pool_ref(x, 4, 6, 4, 3, 2, 3, 2, 0, 0, false), 1e-5, 1e-6);
}

TEST(NnPool, AvgPoolStridePadding) {
  auto x = data(1 * 1 * 5 * 5, 64);
  Tensor p = f32(x, {1, 1, 5, 5}).avg_pool2d({3, 3}, std::make_pair(int64_t{2}, int64_t{2}), {1, 1});
  EXPECT_EQ(p.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_ALLCLOSE(p.to_vector<float>(), pool_ref(x, 1, 5, 5, 3, 3, 2, 2, 1, 1, false), 1e-5, 1e-6);
}

TEST(NnPool, MaxPoolOfFlippedInput) {
  auto x = data(16, 65);
  Tensor p = f32(x, {1, 1, 4, 4}).flip({3}).max_pool2d({2, 2});
  std::vector<float> xf;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) xf.push_back(x[i * 4 + 3 - j]);
  EXPECT_ALLCLOSE(p.to_vector<float>(), pool_ref(xf, 1, 4, 4, 2, 2, 2, 2, 0, 0, true), 0, 0);
}

// ---- attention --------------------------------------------------------------------------------------

// Batches of (l, d) queries, (s, d) keys and (s, dv) values, the keys after query i shut when causal.
std::vector<double> sdpa_ref(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int64_t b,
                             int64_t l, int64_t s, int64_t d, int64_t dv, bool causal) {
  std::vector<double> out;
  for (int64_t z = 0; z < b; ++z)
    for (int64_t i = 0; i < l; ++i) {
      std::vector<double> row = test::attention_row(
          &q[(z * l + i) * d], s, d, dv, [&](int64_t j, int64_t p) { return k[(z * s + j) * d + p]; },
          [&](int64_t j, int64_t e) { return v[(z * s + j) * dv + e]; },
          [&](int64_t j, double x) { return causal && j > i ? -std::numeric_limits<double>::infinity() : x; });
      out.insert(out.end(), row.begin(), row.end());
    }
  return out;
}

TEST(NnAttention, NonCausal) {
  auto q = data(2 * 3 * 4, 70), k = data(2 * 5 * 4, 71), v = data(2 * 5 * 6, 72);
  Tensor o = f32(q, {2, 3, 4}).scaled_dot_product_attention(f32(k, {2, 5, 4}), f32(v, {2, 5, 6}));
  EXPECT_EQ(o.shape(), (Shape{2, 3, 6}));
  EXPECT_ALLCLOSE(o.to_vector<float>(), sdpa_ref(q, k, v, 2, 3, 5, 4, 6, false), 1e-4, 1e-5);
}

TEST(NnAttention, Causal) {
  auto q = data(2 * 4 * 8, 73), k = data(2 * 4 * 8, 74), v = data(2 * 4 * 3, 75);
  Tensor o = f32(q, {2, 4, 8}).scaled_dot_product_attention(f32(k, {2, 4, 8}), f32(v, {2, 4, 3}), true);
  EXPECT_ALLCLOSE(o.to_vector<float>(), sdpa_ref(q, k, v, 2, 4, 4, 8, 3, true), 1e-4, 1e-5);
}

TEST(NnAttention, FourDimHeadsCausal) {
  // (batch 1, heads 2, len 3, dim 4) flattened into 2 independent attentions.
  auto q = data(24, 76), k = data(24, 77), v = data(24, 78);
  Tensor o = f32(q, {1, 2, 3, 4}).scaled_dot_product_attention(f32(k, {1, 2, 3, 4}), f32(v, {1, 2, 3, 4}), true);
  EXPECT_EQ(o.shape(), (Shape{1, 2, 3, 4}));
  EXPECT_ALLCLOSE(o.to_vector<float>(), sdpa_ref(q, k, v, 2, 3, 3, 4, 4, true), 1e-4, 1e-5);
}

TEST(NnAttention, TransposedKey) {
  auto q = data(12, 79), kt = data(12, 80), v = data(12, 81);  // key stored as (4, 3), fed as (3, 4)
  Tensor o = f32(q, {3, 4}).scaled_dot_product_attention(f32(kt, {4, 3}).transpose(), f32(v, {3, 4}));
  auto k = test::permute_ref(kt, {4, 3}, {1, 0});
  EXPECT_ALLCLOSE(o.to_vector<float>(), sdpa_ref(q, k, v, 1, 3, 3, 4, 4, false), 1e-4, 1e-5);
}

// float32 attention is one kernel (codegen/attention, tested there); other types' scores of more
// than 16 MB are held a block of queries at a time: in float64, five blocks here (480 queries
// each, and 133), a causal block reading only the keys up to its last query: less work than the
// same attention without the mask, which reads every key and has no mask to compute. Neither plan
// holds the whole score matrix.
Tensor f64(const std::vector<float>& x, Shape shape) { return f32(x, std::move(shape)).cast(dtypes::float64); }

TEST(NnAttention, LongCausalRunsInQueryBlocks) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  const int64_t b = 2, l = 2053, d = 4, dv = 3;
  auto q = data(b * l * d, 82), k = data(b * l * d, 83), v = data(b * l * dv, 84);
  Tensor o = f64(q, {b, l, d}).scaled_dot_product_attention(f64(k, {b, l, d}), f64(v, {b, l, dv}), true);
  ExecutionPlan plan = o.prepare();
  for (const Buffer& buf : plan.buffers()) EXPECT_LT(buf.nbytes(), static_cast<size_t>(b * l * l * 4));  // no whole score matrix
  ExecutionPlan unmasked = f64(q, {b, l, d}).scaled_dot_product_attention(f64(k, {b, l, d}), f64(v, {b, l, dv})).prepare();
  EXPECT_LT(plan.estimated_work().ops, unmasked.estimated_work().ops);
  EXPECT_ALLCLOSE(o.cast(dtypes::float32).to_vector<float>(), sdpa_ref(q, k, v, b, l, l, d, dv, true), 1e-4, 1e-5);
}

TEST(NnAttention, LongNonCausalWithMoreQueriesThanKeysRunsInQueryBlocks) {
  test::ScopedCpu cpu;  // checks the plan a CPU Target gets
  const int64_t b = 3, l = 1801, s = 1601, d = 5, dv = 2;
  auto q = data(b * l * d, 85), k = data(b * s * d, 86), v = data(b * s * dv, 87);
  Tensor o = f64(q, {b, l, d}).scaled_dot_product_attention(f64(k, {b, s, d}), f64(v, {b, s, dv}));
  EXPECT_EQ(o.shape(), (Shape{b, l, dv}));
  ExecutionPlan plan = o.prepare();
  for (const Buffer& buf : plan.buffers()) EXPECT_LT(buf.nbytes(), static_cast<size_t>(b * l * s * 8));
  EXPECT_ALLCLOSE(o.cast(dtypes::float32).to_vector<float>(), sdpa_ref(q, k, v, b, l, s, d, dv, false), 1e-4, 1e-5);
}

// ---- kernel counts ----------------------------------------------------------------------------------

// Over the last axis the row max and sum run once per row inside the kernel that reads them. Over
// another axis the output loops still nest by axis, so the column max and sum cannot leave the row
// loop: they are stored, and so is exp(x - max), which two kernels would otherwise each compute
// (the work budget forbids computing it twice). Reordering loops is the optimizer's job.
TEST(NnFusion, SoftmaxIsAtMostThreeKernels) {
  Tensor x = Tensor::rand({8, 32}, 1);
  EXPECT_LE(test::kernel_count(x.softmax()), 3u);
  EXPECT_LE(test::kernel_count(x.log_softmax()), 3u);
  EXPECT_LE(test::kernel_count(x.softmax(0)), 4u);
}

TEST(NnFusion, MatmulBiasReluIsOneKernel) {
  auto a = data(32, 90), w = data(24, 91), b = data(6, 92);
  Tensor y = (f32(a, {8, 4}).matmul(f32(w, {4, 6})) + f32(b, {6})).relu();
  EXPECT_EQ(test::kernel_count(y), 1u);
  auto ref = matmul_ref(a, w, 1, false, false, 8, 4, 6);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = std::max(0.0, ref[i] + b[i % 6]);
  EXPECT_ALLCLOSE(y.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(NnFusion, Conv2dBiasReluIsOneKernel) {
  ConvArgs a{.n = 1, .c = 2, .h = 6, .w = 6, .o = 3, .kh = 3, .kw = 3, .padding = {1, 1}, .bias = true};
  auto x = data(72, 93), w = data(54, 94), b = data(3, 95);
  Tensor y = f32(x, {1, 2, 6, 6}).conv2d(f32(w, {3, 2, 3, 3}), f32(b, {3}), {1, 1}, {1, 1}).relu();
  EXPECT_EQ(test::kernel_count(y), 1u);
  int64_t oh = 0, ow = 0;
  auto ref = conv_ref(x, w, b, a, oh, ow);
  for (double& v : ref) v = std::max(0.0, v);
  EXPECT_ALLCLOSE(y.to_vector<float>(), ref, kRtol, kAtol);
}

TEST(NnFusion, LayernormIsAtMostThreeKernels) {
  Tensor x = Tensor::rand({8, 32}, 2);
  EXPECT_LE(test::kernel_count(x.layernorm()), 3u);
}


}  // namespace
}  // namespace lathe
