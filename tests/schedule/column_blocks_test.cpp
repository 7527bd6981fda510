// A product's operand w is stored in column blocks of the Target the schedule is planned for
// (schedule/column_blocks.hpp), whichever way the product was written, and the values are those
// of plain loops at every block width.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/toposort.hpp"
#include "lathe/lathe.hpp"
#include "runtime/planning_target.hpp"
#include "schedule/blocks.hpp"
#include "schedule/create_schedule.hpp"
#include "schedule/reader_layout.hpp"
#include "schedule/layout_copies.hpp"
#include "tensor/conv_reference.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::copies;
using test::planned_for;
using test::run;

// 260 columns: no block of two registers divides them; at 4 lanes they are padded with zeros to
// 264 in blocks of 8, at 8 and 16 lanes to 272 in blocks of 16 (Blocks::stored). The copy is
// (N/B, K, B) for the Target the schedule is planned for, and every width computes the product.
TEST(ColumnBlocks, ALargeProductsRightOperandIsStoredInBlocksOfTheTargetsLanes) {
  int64_t m = 256, k = 256, n = 260;
  auto a = test::data(static_cast<size_t>(m * k), 1), b = test::data(static_cast<size_t>(k * n), 2);
  Tensor y = test::f32(a, {m, k}).matmul(test::f32(b, {k, n}));
  std::vector<double> want = test::matmul_ref(a, b, 1, false, false, m, k, n);
  for (auto [lanes, blk] : {std::pair{4, 8}, {8, 16}, {16, 16}}) {
    int64_t blocks = (n + blk - 1) / blk;
    EXPECT_EQ(copies(y, planned_for(lanes)),
              (std::vector<std::pair<Shape, DType>>{{{blocks, k, blk}, dtypes::float32}}))
        << lanes << " lanes";
    EXPECT_ALLCLOSE(run(y, lanes), want, 1e-4, 1e-4);
  }
  // float16 sums in float32 (a cast between the sum and the product); the copy stays float16.
  Tensor half = test::f32(a, {m, k}).cast(dtypes::float16).matmul(test::f32(b, {k, n}).cast(dtypes::float16));
  EXPECT_EQ(copies(half, planned_for(16)), (std::vector<std::pair<Shape, DType>>{{{17, k, 16}, dtypes::float16}}));
}

// The plan's Target decides, not the one the graph was built under: one graph prepared for two
// shapes holds a copy padded to each one's block.
TEST(ColumnBlocks, EachPlanStoresTheBlocksOfItsOwnTarget) {
  int64_t m = 256, k = 256, n = 260;
  Tensor y = Tensor::rand({m, k}, 3).realize().matmul(Tensor::rand({k, n}, 4).realize());
  for (auto [lanes, columns] : {std::pair{4, 264}, {16, 272}}) {
    ExecutionPlan plan = Tensor::prepare({y}, {.threads = 1, .shape = TargetShape::parse(std::to_string(lanes))});
    size_t padded = static_cast<size_t>(k * columns);
    bool holds = false;
    for (const Buffer& buf : plan.buffers()) holds |= buf.size() == padded;
    EXPECT_TRUE(holds) << lanes << " lanes: a copy of " << padded << " elements";
  }
}

// The same product written as plain math, its operands the other way round, gets the same copy.
TEST(ColumnBlocks, APlainSumOfProductsGetsTheBlocksMatmulGets) {
  int64_t m = 128, k = 384, n = 512;
  auto a = test::data(static_cast<size_t>(m * k), 5), b = test::data(static_cast<size_t>(k * n), 6);
  Tensor x = test::f32(a, {m, k}), w = test::f32(b, {k, n});
  Tensor plain = (w.transpose(0, 1).unsqueeze(0) * x.unsqueeze(1)).sum({2});
  for (int lanes : {8, 16}) {
    auto want = copies(x.matmul(w), planned_for(lanes));
    ASSERT_EQ(want.size(), 1u);
    EXPECT_EQ(copies(plain, planned_for(lanes)), want) << lanes << " lanes";
  }
  EXPECT_ALLCLOSE(run(plain, 8), test::matmul_ref(a, b, 1, false, false, m, k, n), 1e-4, 1e-4);
}

// Q @ K^T over 12 heads reads K across its rows: each head's K is copied once into blocks of keys,
// (heads, keys / B, features, B). The heads count in the product's size (each alone is small).
TEST(ColumnBlocks, ATransposedOperandIsCopiedIntoBlocksAlongItsRows) {
  int64_t heads = 12, m = 128, keys = 500, d = 32;
  auto q = test::data(static_cast<size_t>(heads * m * d), 7), kv = test::data(static_cast<size_t>(heads * keys * d), 8);
  Tensor y = test::f32(q, {heads, m, d}).matmul(test::f32(kv, {heads, keys, d}).transpose(-1, -2));
  std::vector<float> kt(kv.size());  // K^T as (heads, d, keys), for the reference
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < keys; ++i)
      for (int64_t j = 0; j < d; ++j)
        kt[static_cast<size_t>((h * d + j) * keys + i)] = kv[static_cast<size_t>((h * keys + i) * d + j)];
  std::vector<double> want = test::matmul_ref(q, kt, heads, true, true, m, d, keys);
  for (int lanes : {4, 8, 16}) {
    int64_t blk = blocks_for(planned_for(lanes).target).stored(keys), blocks = (keys + blk - 1) / blk;
    EXPECT_EQ(copies(y, planned_for(lanes)),
              (std::vector<std::pair<Shape, DType>>{{{heads, blocks, d, blk}, dtypes::float32}}))
        << lanes;
    EXPECT_ALLCLOSE(run(y, lanes), want, 1e-4, 1e-4);
  }
}

// Attention's P @ V with V split into heads, (B, T, H, D) read as (B, H, T, D): the copy keeps the
// batch and heads outside and each block of features contiguous along the keys it sums,
// (B, H, D/b, T, b), b the Target's block for 64 features.
TEST(ColumnBlocks, TheOtherAxesStayOutsideTheBlocks) {
  int64_t batch = 2, t = 160, heads = 8, d = 64;
  auto p = test::data(static_cast<size_t>(batch * heads * t * t), 16),
       v = test::data(static_cast<size_t>(batch * t * heads * d), 17);
  Tensor values = test::f32(v, {batch, t, heads * d}).reshape({batch, t, heads, d}).transpose(1, 2);
  Tensor y = test::f32(p, {batch, heads, t, t}).matmul(values);
  std::vector<float> v_heads(v.size());  // V as (B, H, T, D), for the reference
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < d; ++j)
          v_heads[static_cast<size_t>(((b * heads + h) * t + i) * d + j)] =
              v[static_cast<size_t>(((b * t + i) * heads + h) * d + j)];
  std::vector<double> want = test::matmul_ref(p, v_heads, batch * heads, true, true, t, t, d);
  for (int lanes : {4, 8, 16}) {
    int64_t blk = blocks_for(planned_for(lanes).target).stored(d);
    EXPECT_EQ(copies(y, planned_for(lanes)),
              (std::vector<std::pair<Shape, DType>>{{{batch, heads, d / blk, t, blk}, dtypes::float32}}))
        << lanes;
    EXPECT_ALLCLOSE(run(y, lanes), want, 1e-4, 1e-4);
  }
}

// An int8 weight is copied as int8 (the product widens it to int32 after the copy), its columns
// padded with zeros in the copy; the product's padded columns are computed and never stored.
TEST(ColumnBlocks, IntegersAreCopiedBeforeTheyAreWidened) {
  int64_t m = 96, k = 200, n = 1000;
  std::vector<int8_t> ai(static_cast<size_t>(m * k)), bi(static_cast<size_t>(k * n));
  for (size_t i = 0; i < ai.size(); ++i) ai[i] = static_cast<int8_t>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < bi.size(); ++i) bi[i] = static_cast<int8_t>(static_cast<int>(i % 5) - 2);
  Tensor y = Tensor::from_vector(ai, {m, k}).matmul(Tensor::from_vector(bi, {k, n}));
  EXPECT_EQ(copies(y, planned_for(16)), (std::vector<std::pair<Shape, DType>>{{{63, k, 16}, dtypes::int8}}));
  ExecutionPlan plan = Tensor::prepare({y}, {.threads = 1, .shape = TargetShape::parse("16")});
  plan.execute();
  std::vector<int32_t> got = plan.output_buffer()->to_vector<int32_t>();
  for (int64_t i = 0; i < m; i += 13)
    for (int64_t j = 0; j < n; j += 37) {
      int64_t want = 0;
      for (int64_t p = 0; p < k; ++p)
        want += int64_t{ai[static_cast<size_t>(i * k + p)]} * bi[static_cast<size_t>(p * n + j)];
      EXPECT_EQ(got[static_cast<size_t>(i * n + j)], want) << i << " " << j;
    }
}

// Where the copy would cost more than it saves, the operand is read in place: a small product,
// a short sum, few columns, a computed operand under few rows (a constant one, copied once at
// prepare, pays from fewer), a Target too narrow for blocks.
TEST(ColumnBlocks, OperandsReadInPlaceWhereTheCopyDoesNotPay) {
  auto none = std::vector<std::pair<Shape, DType>>{};
  Tensor small = Tensor::rand({64, 64}, 1).matmul(Tensor::rand({64, 64}, 2));
  EXPECT_EQ(copies(small, planned_for(16)), none) << "2^18 multiply-adds";
  Tensor short_sum = Tensor::rand({4096, 8}, 1).matmul(Tensor::rand({8, 1024}, 2));
  EXPECT_EQ(copies(short_sum, planned_for(16)), none) << "K = 8";
  Tensor narrow = Tensor::rand({4096, 128}, 1).matmul(Tensor::rand({128, 32}, 2));
  EXPECT_EQ(copies(narrow, planned_for(16)), none) << "32 columns";
  Tensor few_rows = Tensor::rand({32, 1024}, 1).matmul(Tensor::rand({1024, 1024}, 2).realize());
  EXPECT_EQ(copies(few_rows, planned_for(16, [](const UOp&) { return false; })), none)
      << "32 rows of a weight computed each run";
  EXPECT_EQ(copies(few_rows, planned_for(16, [](const UOp&) { return true; })).size(), 1u)
      << "32 rows of a constant weight";
  Tensor large = Tensor::rand({256, 256}, 1).matmul(Tensor::rand({256, 256}, 2));
  EXPECT_EQ(copies(large, planned_for(1)), none) << "one lane: no blocks";
}

// A row vector under a batch of 8 weights, broadcast: each weight meets one row, read in place;
// the same weights under 128 rows each are copied. Values are those of plain loops either way.
TEST(ColumnBlocks, RowsCountPerMatrixOfTheOperand) {
  int64_t batch = 8, k = 512, n = 4096;
  auto b = test::data(static_cast<size_t>(batch * k * n), 9);
  Tensor w = test::f32(b, {batch, k, n});
  auto a1 = test::data(static_cast<size_t>(k), 10);
  Tensor one = test::f32(a1, {1, 1, k}).matmul(w);
  EXPECT_TRUE(copies(one, planned_for(16)).empty());
  auto a = test::data(static_cast<size_t>(batch * 128 * k), 11);
  Tensor many = test::f32(a, {batch, 128, k}).matmul(w);
  EXPECT_EQ(copies(many, planned_for(16)).size(), 1u);
  EXPECT_ALLCLOSE(run(one, 16), test::matmul_ref(a1, b, batch, false, true, 1, k, n), 1e-4, 1e-4);
}

// Rows counted at their largest: an activation with a symbolic batch keeps its weight's blocks, and
// every bound value computes the product. An operand with a symbolic size (keys up to a bound
// length) is read in place.
TEST(ColumnBlocks, ASymbolicRowCountKeepsTheBlocksASymbolicOperandIsReadInPlace) {
  int64_t most = 256, k = 256, n = 260;
  auto a = test::data(static_cast<size_t>(most * k), 12), b = test::data(static_cast<size_t>(k * n), 13);
  Variable rows("rows", 1, most);
  Tensor y = test::f32(a, {most, k}).shrink({{0, rows.bind(100)}, {0, k}}).matmul(test::f32(b, {k, n}));
  EXPECT_EQ(copies(y, planned_for(16)), (std::vector<std::pair<Shape, DType>>{{{17, k, 16}, dtypes::float32}}));
  std::vector<double> want = test::matmul_ref(a, b, 1, false, false, most, k, n);
  ExecutionPlan plan = Tensor::prepare({y}, {.threads = 1, .shape = TargetShape::parse("16")});
  for (int64_t t : {int64_t{1}, int64_t{100}, most}) {
    plan.execute_with_vars({{"rows", t}});
    std::vector<float> got = plan.output_buffer()->to_vector<float>();
    for (int64_t i = 0; i < t * n; i += 7)
      ASSERT_NEAR(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)],
                  1e-4 * (1 + std::abs(want[static_cast<size_t>(i)])))
          << t << " rows, " << i;
  }
  Variable len("len", 1, 512);
  Tensor keys = Tensor::rand({512, k}, 14).shrink({{0, len.bind(300)}, {0, k}});
  Tensor scores = Tensor::rand({most, k}, 15).matmul(keys.transpose(0, 1));
  EXPECT_TRUE(copies(scores, planned_for(16)).empty());
}

// A convolution's filter is stored in blocks of its output channels, (O/B, C, KH, KW, B) over an
// input read unblocked (3 channels: no block holds them): a block of output channels is one vector
// load for every tap. 20 channels: blocks of 4 divide them; wider ones pad them with zeros.
TEST(ColumnBlocks, AFiltersOutputChannelsAreStoredInBlocksOfTheTargetsLanes) {
  test::ConvArgs a{.n = 2, .c = 3, .h = 11, .w = 13, .o = 20, .kh = 5, .kw = 5, .stride = {2, 2}, .padding = {2, 2}};
  auto x = test::data(static_cast<size_t>(a.n * a.c * a.h * a.w), 18), wt = test::data(static_cast<size_t>(a.o * a.c * a.kh * a.kw), 19);
  Tensor y = test::f32(x, {a.n, a.c, a.h, a.w}).conv2d(test::f32(wt, {a.o, a.c, a.kh, a.kw}), std::nullopt, a.stride, a.padding);
  int64_t oh = 0, ow = 0;
  std::vector<double> want = test::conv_ref(x, wt, {}, a, oh, ow);
  for (int lanes : {4, 8, 16}) {
    int64_t blk = blocks_for(planned_for(lanes).target).stored(a.o);
    if (blk == 0) blk = a.o;
    EXPECT_EQ(copies(y, planned_for(lanes)),
              (std::vector<std::pair<Shape, DType>>{{{(a.o + blk - 1) / blk, a.c, a.kh, a.kw, blk}, dtypes::float32}}))
        << lanes << " lanes";
    EXPECT_ALLCLOSE(run(y, lanes), want, 1e-4, 1e-4);
  }
}

// Over an input read in channel blocks of CB, the filter sums over (C/CB, KH, KW, CB) in that
// order, and its copy keeps that order inside each block of output channels:
// (O/B, C/CB, KH, KW, CB, B), beside the input's own copy, (N, C/CB, H, W, CB). The plan's Target
// sets both blocks (schedule/channel_blocks chooses CB), whatever the build's default target.
TEST(ColumnBlocks, AFilterOverBlockedInputKeepsTheOrderItIsSummedIn) {
  test::ConvArgs a{.n = 1, .c = 32, .h = 15, .w = 15, .o = 48, .kh = 3, .kw = 3, .stride = {2, 2}, .padding = {1, 1}};
  auto x = test::data(static_cast<size_t>(a.n * a.c * a.h * a.w), 20), wt = test::data(static_cast<size_t>(a.o * a.c * a.kh * a.kw), 21);
  Tensor input = test::f32(x, {a.n, a.c, a.h, a.w}) * 1.0f;  // computed: its kernel stores it in blocks
  Tensor y = input.conv2d(test::f32(wt, {a.o, a.c, a.kh, a.kw}), std::nullopt, a.stride, a.padding);
  int64_t oh = 0, ow = 0;
  std::vector<double> want = test::conv_ref(x, wt, {}, a, oh, ow);
  for (int lanes : {4, 8, 16}) {
    int64_t cb = blocks_for(planned_for(lanes).target).convolution_input(a.c), blk = blocks_for(planned_for(lanes).target).stored(a.o);
    EXPECT_EQ(copies(y, planned_for(lanes)),
              (std::vector<std::pair<Shape, DType>>{{{a.n, a.c / cb, a.h, a.w, cb}, dtypes::float32},
                                                    {{(a.o + blk - 1) / blk, a.c / cb, a.kh, a.kw, cb, blk}, dtypes::float32}}))
        << lanes << " lanes";
    EXPECT_ALLCLOSE(run(y, lanes), want, 1e-4, 1e-4);
  }
}

// A grouped filter with 4 output channels a group and little work per pixel (4 x 8 x 3 x 3) is
// stored in blocks where it is a stored value (a model's weight, copied once at prepare), and read
// in place where it is computed each run; 2 output channels a group are read in place either way.
TEST(ColumnBlocks, ASmallFilterIsStoredInBlocksOnlyWhereItIsAStoredValue) {
  for (int64_t o : {16, 8}) {
    test::ConvArgs a{.n = 2, .c = 32, .h = 9, .w = 7, .o = o, .kh = 3, .kw = 3, .padding = {1, 1}, .groups = 4};
    auto x = test::data(static_cast<size_t>(a.n * a.c * a.h * a.w), 22), wt = test::data(static_cast<size_t>(a.o * 8 * a.kh * a.kw), 23);
    Tensor stored = test::f32(wt, {a.o, 8, a.kh, a.kw});
    Tensor computed = stored * 1.0f;
    int64_t oh = 0, ow = 0;
    std::vector<double> want = test::conv_ref(x, wt, {}, a, oh, ow);
    for (const Tensor& w : {stored, computed}) {
      Tensor y = test::f32(x, {a.n, a.c, a.h, a.w}).conv2d(w, std::nullopt, a.stride, a.padding, a.dilation, a.groups);
      size_t want_copies = o == 16 && w.is_realized() ? 1 : 0;
      EXPECT_EQ(copies(y, planned_for(8)).size(), want_copies) << o << " channels, " << (w.is_realized() ? "stored" : "computed");
      EXPECT_ALLCLOSE(run(y, 8), want, 1e-4, 1e-4);
    }
  }
}

}  // namespace
}  // namespace lathe
