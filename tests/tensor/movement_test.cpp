// Movement ops against plain C++ index loops: reshape, permute, expand, pad, shrink, flip,
// transpose, squeeze/unsqueeze, flatten, slicing, cat/stack/split/chunk, repeat, gather,
// contiguous; on contiguous and non-contiguous inputs and several dtypes.
#include <gtest/gtest.h>

#include <tuple>

#include "tensor/reference.hpp"

namespace lathe {
namespace {

using test::data;
using test::f32;

// ---- reshape --------------------------------------------------------------------------------------

TEST(MovementReshape, KeepsRowMajorOrder) {
  auto x = data(24, 1);
  Tensor r = f32(x, {2, 3, 4}).reshape({4, 6});
  EXPECT_EQ(r.shape(), (Shape{4, 6}));
  EXPECT_ALLCLOSE(r.to_vector<float>(), x, 0, 0);
}

TEST(MovementReshape, InfersMinusOne) {
  auto x = data(24, 2);
  Tensor r = f32(x, {24}).reshape({2, -1, 3});
  EXPECT_EQ(r.shape(), (Shape{2, 4, 3}));
  EXPECT_ALLCLOSE(r.to_vector<float>(), x, 0, 0);
}

TEST(MovementReshape, ToAndFromZeroDim) {
  Tensor s = f32({4.5f}, {1, 1}).reshape({});
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_FLOAT_EQ(s.item<float>(), 4.5f);
  Tensor back = s.reshape({1, 1, 1});
  EXPECT_EQ(back.shape(), (Shape{1, 1, 1}));
  EXPECT_FLOAT_EQ(back.item<float>(), 4.5f);
}

TEST(MovementReshape, SizeZero) {
  Tensor r = Tensor::zeros({0, 4}).reshape({2, 0, 3});
  EXPECT_EQ(r.shape(), (Shape{2, 0, 3}));
  EXPECT_TRUE(r.to_vector<float>().empty());
}

TEST(MovementReshape, OfPermutedInput) {
  auto x = data(24, 3);
  Tensor r = f32(x, {2, 3, 4}).permute({2, 0, 1}).reshape({8, 3});
  EXPECT_ALLCLOSE(r.to_vector<float>(), test::permute_ref(x, {2, 3, 4}, {2, 0, 1}), 0, 0);
}

TEST(MovementReshape, OfShrunkInput) {
  auto x = data(30, 4);
  Tensor r = f32(x, {5, 6}).shrink({{1, 3}, {1, 5}}).reshape({8});
  std::vector<float> ref;
  for (int i = 1; i < 3; ++i)
    for (int j = 1; j < 5; ++j) ref.push_back(x[i * 6 + j]);
  EXPECT_ALLCLOSE(r.to_vector<float>(), ref, 0, 0);
}

// ---- permute / transpose --------------------------------------------------------------------------

TEST(MovementPermute, EveryOrderOf3d) {
  auto x = data(24, 5);
  std::vector<std::vector<int64_t>> orders{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& o : orders) {
    Tensor p = f32(x, {2, 3, 4}).permute(o);
    Shape expect{Shape{2, 3, 4}[o[0]], Shape{2, 3, 4}[o[1]], Shape{2, 3, 4}[o[2]]};
    EXPECT_EQ(p.shape(), expect);
    EXPECT_ALLCLOSE(p.to_vector<float>(), test::permute_ref(x, {2, 3, 4}, o), 0, 0);
  }
}

TEST(MovementPermute, NegativeAxes) {
  auto x = data(6, 6);
  Tensor p = f32(x, {2, 3}).permute({-1, -2});
  EXPECT_ALLCLOSE(p.to_vector<float>(), test::permute_ref(x, {2, 3}, {1, 0}), 0, 0);
}

TEST(MovementPermute, PermuteOfPermute) {
  auto x = data(120, 7);
  Shape s{2, 3, 4, 5};
  Tensor p = f32(x, s).permute({3, 1, 0, 2}).permute({2, 0, 3, 1});
  auto once = test::permute_ref(x, s, {3, 1, 0, 2});
  EXPECT_ALLCLOSE(p.to_vector<float>(), test::permute_ref(once, {5, 3, 2, 4}, {2, 0, 3, 1}), 0, 0);
}

TEST(MovementTranspose, DefaultAndExplicitAxes) {
  auto x = data(24, 8);
  Tensor t = f32(x, {2, 3, 4});
  EXPECT_EQ(t.transpose().shape(), (Shape{2, 4, 3}));
  EXPECT_ALLCLOSE(t.transpose().to_vector<float>(), test::permute_ref(x, {2, 3, 4}, {0, 2, 1}), 0, 0);
  EXPECT_ALLCLOSE(t.transpose(0, 2).to_vector<float>(), test::permute_ref(x, {2, 3, 4}, {2, 1, 0}), 0, 0);
}

TEST(MovementTranspose, IntAndBool) {
  Tensor i = Tensor::from_vector(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, {2, 3}).transpose();
  EXPECT_ALLEQUAL(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
  Tensor b = Tensor::from_vector(std::vector<bool>{true, true, false, false}, {2, 2}).transpose();
  EXPECT_ALLEQUAL(b.to_vector<bool>(), (std::vector<bool>{true, false, true, false}));
  Tensor u = Tensor::from_vector(std::vector<uint16_t>{1, 2, 3, 4, 5, 6}, {3, 2}).transpose();
  EXPECT_ALLEQUAL(u.to_vector<uint16_t>(), (std::vector<uint16_t>{1, 3, 5, 2, 4, 6}));
}

// ---- expand ---------------------------------------------------------------------------------------

TEST(MovementExpand, SizeOneAxesGrow) {
  auto x = data(3, 9);
  Tensor e = f32(x, {3, 1}).expand({3, 4});
  std::vector<float> ref;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) ref.push_back(x[i]);
  EXPECT_ALLCLOSE(e.to_vector<float>(), ref, 0, 0);
}

TEST(MovementExpand, NewLeadingAxesAndMinusOne) {
  auto x = data(4, 10);
  Tensor e = f32(x, {1, 4}).expand({2, 3, -1});
  EXPECT_EQ(e.shape(), (Shape{2, 3, 4}));
  std::vector<float> ref;
  for (int i = 0; i < 6; ++i) ref.insert(ref.end(), x.begin(), x.end());
  EXPECT_ALLCLOSE(e.to_vector<float>(), ref, 0, 0);
}

TEST(MovementExpand, ZeroDimToShape) {
  Tensor e = Tensor::from_vector(std::vector<int32_t>{7}, {}).expand({2, 2});
  EXPECT_ALLEQUAL(e.to_vector<int32_t>(), (std::vector<int32_t>{7, 7, 7, 7}));
}

TEST(MovementExpand, ToSizeZero) {
  Tensor e = Tensor::ones({1, 3}).expand({0, 3});
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  EXPECT_TRUE(e.to_vector<float>().empty());
}

TEST(MovementExpand, OfTransposedInput) {
  auto x = data(6, 11);
  Tensor e = f32(x, {3, 2}).transpose().reshape({2, 1, 3}).expand({2, 2, 3});
  std::vector<float> ref;
  for (int i = 0; i < 2; ++i)
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < 3; ++j) ref.push_back(x[j * 2 + i]);
  EXPECT_ALLCLOSE(e.to_vector<float>(), ref, 0, 0);
}

// ---- pad / shrink -----------------------------------------------------------------------------------

std::vector<double> pad_ref(const std::vector<float>& x, int64_t rows, int64_t cols, int64_t t, int64_t b, int64_t l,
                            int64_t r, double v) {
  std::vector<double> out;
  for (int64_t i = -t; i < rows + b; ++i)
    for (int64_t j = -l; j < cols + r; ++j) out.push_back(i >= 0 && i < rows && j >= 0 && j < cols ? x[i * cols + j] : v);
  return out;
}

TEST(MovementPad, ZerosAllSides) {
  auto x = data(6, 12);
  Tensor p = f32(x, {2, 3}).pad({{1, 2}, {3, 0}});
  EXPECT_EQ(p.shape(), (Shape{5, 6}));
  EXPECT_ALLCLOSE(p.to_vector<float>(), pad_ref(x, 2, 3, 1, 2, 3, 0, 0.0), 0, 0);
}

TEST(MovementPad, WithValue) {
  auto x = data(6, 13);
  Tensor p = f32(x, {2, 3}).pad({{0, 1}, {1, 1}}, -7.5);
  EXPECT_ALLCLOSE(p.to_vector<float>(), pad_ref(x, 2, 3, 0, 1, 1, 1, -7.5), 0, 0);
}

TEST(MovementPad, NegativePaddingRemoves) {
  auto x = data(20, 14);
  Tensor p = f32(x, {4, 5}).pad({{-1, 1}, {2, -2}});
  EXPECT_EQ(p.shape(), (Shape{4, 5}));
  std::vector<double> ref;
  for (int64_t i = 1; i < 5; ++i)
    for (int64_t j = -2; j < 3; ++j) ref.push_back(i < 4 && j >= 0 ? x[i * 5 + j] : 0.0);
  EXPECT_ALLCLOSE(p.to_vector<float>(), ref, 0, 0);
}

TEST(MovementPad, IntTensorAndSizeZeroAxis) {
  Tensor p = Tensor::from_vector(std::vector<int32_t>{1, 2}, {1, 2}).pad({{1, 0}, {0, 1}}, 9);
  EXPECT_EQ(p.dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(p.to_vector<int32_t>(), (std::vector<int32_t>{9, 9, 9, 1, 2, 9}));
  Tensor z = Tensor::zeros({0, 2}).pad({{1, 1}, {0, 0}}, 3.0);
  EXPECT_EQ(z.shape(), (Shape{2, 2}));
  EXPECT_ALLCLOSE(z.to_vector<float>(), (std::vector<float>{3, 3, 3, 3}), 0, 0);
}

TEST(MovementPad, OfFlippedInput) {
  auto x = data(6, 15);
  Tensor p = f32(x, {2, 3}).flip({1}).pad({{1, 0}, {0, 1}}, 1.0);
  std::vector<float> xf{x[2], x[1], x[0], x[5], x[4], x[3]};
  EXPECT_ALLCLOSE(p.to_vector<float>(), pad_ref(xf, 2, 3, 1, 0, 0, 1, 1.0), 0, 0);
}

// The element of an axis of n that position j of the padded axis reads (j < 0 before the axis),
// as numpy.pad defines each mode: edge clamps, wrap continues from the other end, reflect mirrors
// about the end elements again and again.
int64_t pad_source(PadMode mode, int64_t j, int64_t n) {
  if (mode == PadMode::edge) return std::min(std::max<int64_t>(j, 0), n - 1);
  if (mode == PadMode::wrap) {
    while (j < 0) j += n;
    return j % n;
  }
  if (n == 1) return 0;
  while (j < 0 || j >= n) j = j < 0 ? -j : 2 * (n - 1) - j;
  return j;
}

// (rows, cols) padded by (t, b) rows and (l, r) columns as `mode` says.
template <class T>
std::vector<T> pad_mode_ref(const std::vector<T>& x, int64_t rows, int64_t cols, int64_t t, int64_t b, int64_t l, int64_t r, PadMode mode) {
  std::vector<T> out;
  for (int64_t i = -t; i < rows + b; ++i)
    for (int64_t j = -l; j < cols + r; ++j) out.push_back(x[pad_source(mode, i, rows) * cols + pad_source(mode, j, cols)]);
  return out;
}

// Edge, reflect and wrap padding against numpy's definitions: one and both axes, amounts past the
// axis' length (the pattern repeats), a one-element axis, int32 and bool, a flipped view.
TEST(MovementPad, EdgeReflectAndWrap) {
  for (PadMode mode : {PadMode::edge, PadMode::reflect, PadMode::wrap}) {
    SCOPED_TRACE(static_cast<int>(mode));
    auto x = data(15, 17);
    for (auto [t, b, l, r] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 2, 0, 0}, {0, 0, 2, 1}, {2, 1, 3, 4}, {7, 0, 0, 11}, {0, 0, 0, 0}}) {
      Tensor p = f32(x, {3, 5}).pad({{t, b}, {l, r}}, mode);
      ASSERT_EQ(p.shape(), (Shape{3 + t + b, 5 + l + r}));
      auto want = pad_mode_ref(x, 3, 5, t, b, l, r, mode);
      EXPECT_ALLCLOSE(p.to_vector<float>(), std::vector<double>(want.begin(), want.end()), 0, 0);
    }
    Tensor one = f32({4.5f, -1.0f}, {2, 1}).pad({{0, 0}, {3, 2}}, mode);
    EXPECT_ALLCLOSE(one.to_vector<float>(), (std::vector<double>{4.5, 4.5, 4.5, 4.5, 4.5, 4.5, -1, -1, -1, -1, -1, -1}), 0, 0);
    std::vector<int32_t> xi{1, -2, 3, 4, 5, -6};
    Tensor pi = Tensor::from_vector(xi, {2, 3}).pad({{1, 1}, {2, 2}}, mode);
    EXPECT_EQ(pi.dtype(), dtypes::int32);
    EXPECT_ALLEQUAL(pi.to_vector<int32_t>(), pad_mode_ref(xi, 2, 3, 1, 1, 2, 2, mode));
    Tensor pb = Tensor::from_vector(std::vector<bool>{true, false, false}, {1, 3}).pad({{0, 0}, {2, 1}}, mode);
    std::vector<uint8_t> want_b = pad_mode_ref(std::vector<uint8_t>{1, 0, 0}, 1, 3, 0, 0, 2, 1, mode);
    EXPECT_ALLEQUAL(pb.cast(dtypes::uint8).to_vector<uint8_t>(), want_b);
    std::vector<float> flipped{x[4], x[3], x[2], x[1], x[0], x[9], x[8], x[7], x[6], x[5], x[14], x[13], x[12], x[11], x[10]};
    auto want_f = pad_mode_ref(flipped, 3, 5, 1, 0, 2, 2, mode);
    EXPECT_ALLCLOSE(f32(x, {3, 5}).flip({1}).pad({{1, 0}, {2, 2}}, mode).to_vector<float>(), std::vector<double>(want_f.begin(), want_f.end()), 0, 0);
  }
}

// PadMode::constant is the value overload; the other modes refuse what they cannot repeat.
TEST(MovementPad, ModesRefuseWhatTheyCannotRepeat) {
  auto x = data(6, 18);
  EXPECT_ALLCLOSE(f32(x, {2, 3}).pad({{1, 0}, {0, 2}}, PadMode::constant, 2.5).to_vector<float>(), pad_ref(x, 2, 3, 1, 0, 0, 2, 2.5), 0, 0);
  EXPECT_THROW_MSG(f32(x, {2, 3}).pad({{-1, 0}, {0, 0}}, PadMode::edge), ShapeError, "pad (edge)", "axis 0", "at least 0");
  EXPECT_THROW_MSG(Tensor::zeros({0, 3}).pad({{1, 0}, {0, 0}}, PadMode::reflect), ShapeError, "pad (reflect)", "axis 0", "(0, 3)", "empty");
  EXPECT_THROW_MSG(f32(x, {2, 3}).pad({{1, 1}}, PadMode::wrap), ShapeError, "pad (wrap)", "1 (before, after) pairs", "(2, 3)");
  Variable n("n", 1, 6);
  Tensor sym = Tensor::zeros({6}).shrink({{0, n.bind(3)}});
  EXPECT_THROW_MSG(sym.pad({{1, 1}}, PadMode::edge), ShapeError, "pad (edge)", "static sizes");
  EXPECT_EQ(Tensor::zeros({0, 3}).pad({{0, 0}, {1, 1}}, PadMode::wrap).shape(), (Shape{0, 5})) << "an empty axis not padded is fine";
}

TEST(MovementShrink, Basic) {
  auto x = data(30, 16);
  Tensor s = f32(x, {5, 6}).shrink({{1, 4}, {2, 6}});
  EXPECT_EQ(s.shape(), (Shape{3, 4}));
  std::vector<float> ref;
  for (int i = 1; i < 4; ++i)
    for (int j = 2; j < 6; ++j) ref.push_back(x[i * 6 + j]);
  EXPECT_ALLCLOSE(s.to_vector<float>(), ref, 0, 0);
}

TEST(MovementShrink, ToSizeZeroAndFullRange) {
  auto x = data(6, 17);
  Tensor t = f32(x, {2, 3});
  EXPECT_EQ(t.shrink({{1, 1}, {0, 3}}).shape(), (Shape{0, 3}));
  EXPECT_TRUE(t.shrink({{1, 1}, {0, 3}}).to_vector<float>().empty());
  EXPECT_ALLCLOSE(t.shrink({{0, 2}, {0, 3}}).to_vector<float>(), x, 0, 0);
}

TEST(MovementShrink, OfPaddedInput) {
  auto x = data(4, 18);
  Tensor s = f32(x, {2, 2}).pad({{2, 2}, {2, 2}}, 5.0).shrink({{1, 4}, {1, 3}});
  std::vector<double> full = pad_ref(x, 2, 2, 2, 2, 2, 2, 5.0), ref;
  for (int i = 1; i < 4; ++i)
    for (int j = 1; j < 3; ++j) ref.push_back(full[i * 6 + j]);
  EXPECT_ALLCLOSE(s.to_vector<float>(), ref, 0, 0);
}

// ---- flip ---------------------------------------------------------------------------------------

TEST(MovementFlip, OneAxisAndBoth) {
  auto x = data(12, 19);
  Tensor t = f32(x, {3, 4});
  std::vector<float> r0, r1, r01;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      r0.push_back(x[(2 - i) * 4 + j]);
      r1.push_back(x[i * 4 + 3 - j]);
      r01.push_back(x[(2 - i) * 4 + 3 - j]);
    }
  EXPECT_ALLCLOSE(t.flip({0}).to_vector<float>(), r0, 0, 0);
  EXPECT_ALLCLOSE(t.flip({-1}).to_vector<float>(), r1, 0, 0);
  EXPECT_ALLCLOSE(t.flip({0, 1}).to_vector<float>(), r01, 0, 0);
  EXPECT_ALLCLOSE(t.flip({1}).flip({1}).to_vector<float>(), x, 0, 0);
}

TEST(MovementFlip, SizeOneAndSizeZeroAxes) {
  auto x = data(3, 20);
  EXPECT_ALLCLOSE(f32(x, {1, 3}).flip({0}).to_vector<float>(), x, 0, 0);
  EXPECT_TRUE(Tensor::zeros({0, 3}).flip({0}).to_vector<float>().empty());
}

TEST(MovementFlip, OfPermutedUint8) {
  auto x = test::int_data<uint8_t>(6, 21, 0, 255);
  Tensor f = Tensor::from_vector(x, {2, 3}).transpose().flip({0});  // (3, 2), rows reversed
  std::vector<uint8_t> ref;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) ref.push_back(x[j * 3 + (2 - i)]);
  EXPECT_ALLEQUAL(f.to_vector<uint8_t>(), ref);
}

// ---- squeeze / unsqueeze / flatten --------------------------------------------------------------------

TEST(MovementSqueeze, AllAndOneAxis) {
  auto x = data(6, 22);
  Tensor t = f32(x, {1, 2, 1, 3});
  EXPECT_EQ(t.squeeze().shape(), (Shape{2, 3}));
  EXPECT_EQ(t.squeeze(2).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(t.squeeze(-4).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(t.squeeze(1).shape(), (Shape{1, 2, 1, 3}));  // not size 1: unchanged
  EXPECT_ALLCLOSE(t.squeeze().to_vector<float>(), x, 0, 0);
  EXPECT_EQ(f32({1}, {1, 1}).squeeze().shape(), Shape{});
}

TEST(MovementUnsqueeze, Positions) {
  auto x = data(6, 23);
  Tensor t = f32(x, {2, 3});
  EXPECT_EQ(t.unsqueeze(0).shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(t.unsqueeze(1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(t.unsqueeze(-1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(t.unsqueeze(2).shape(), (Shape{2, 3, 1}));
  EXPECT_ALLCLOSE(t.unsqueeze(1).to_vector<float>(), x, 0, 0);
  EXPECT_EQ(f32({2}, {}).unsqueeze(0).shape(), (Shape{1}));
}

TEST(MovementFlatten, Ranges) {
  auto x = data(120, 24);
  Tensor t = f32(x, {2, 3, 4, 5});
  EXPECT_EQ(t.flatten().shape(), (Shape{120}));
  EXPECT_EQ(t.flatten(1).shape(), (Shape{2, 60}));
  EXPECT_EQ(t.flatten(1, 2).shape(), (Shape{2, 12, 5}));
  EXPECT_EQ(t.flatten(-2).shape(), (Shape{2, 3, 20}));
  EXPECT_ALLCLOSE(t.flatten(1, 2).to_vector<float>(), x, 0, 0);
  EXPECT_EQ(f32({3}, {}).flatten().shape(), (Shape{1}));
}

TEST(MovementFlatten, OfTransposed) {
  auto x = data(6, 25);
  Tensor f = f32(x, {2, 3}).transpose().flatten();
  EXPECT_ALLCLOSE(f.to_vector<float>(), test::permute_ref(x, {2, 3}, {1, 0}), 0, 0);
}

// ---- slice ----------------------------------------------------------------------------------------

/// Python's x[start:stop:step] for a 1-d list.
std::vector<float> py_slice(const std::vector<float>& x, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  int64_t n = static_cast<int64_t>(x.size());
  auto norm = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0) v += n;
    return std::clamp(v, lo, hi);
  };
  std::vector<float> out;
  if (step > 0) {
    int64_t s = start ? norm(*start, 0, n) : 0, e = stop ? norm(*stop, 0, n) : n;
    for (int64_t i = s; i < e; i += step) out.push_back(x[i]);
  } else {
    int64_t s = start ? norm(*start, -1, n - 1) : n - 1, e = stop ? norm(*stop, -1, n - 1) : -1;
    for (int64_t i = s; i > e; i += step) out.push_back(x[i]);
  }
  return out;
}

struct SliceCase {
  std::optional<int64_t> start, stop;
  int64_t step;
};

TEST(MovementSlice, MatchesPythonSemantics) {
  auto x = data(10, 26);
  std::vector<SliceCase> cases{
      {2, 7, 1},   {std::nullopt, std::nullopt, 1}, {1, std::nullopt, 3}, {-3, std::nullopt, 1}, {-8, -2, 2},
      {0, 100, 4}, {-100, 3, 1},                    {7, 2, 1},           {5, 5, 1},            {std::nullopt, std::nullopt, -1},
      {8, 1, -2},  {-1, -8, -3},                    {std::nullopt, 3, -1}, {3, std::nullopt, -1}, {100, -100, -4},
      {2, 8, 7},   {9, std::nullopt, 10},
  };
  for (const SliceCase& c : cases) {
    Tensor s = f32(x, {10}).slice(0, c.start, c.stop, c.step);
    auto ref = py_slice(x, c.start, c.stop, c.step);
    std::string what = "x[" + (c.start ? std::to_string(*c.start) : "") + ":" + (c.stop ? std::to_string(*c.stop) : "") +
                       ":" + std::to_string(c.step) + "]";
    EXPECT_EQ(s.shape(), (Shape{static_cast<int64_t>(ref.size())})) << what;
    EXPECT_ALLCLOSE(s.to_vector<float>(), ref, 0, 0) << what;
  }
}

TEST(MovementSlice, InnerAxisOf2d) {
  auto x = data(24, 27);
  Tensor s = f32(x, {4, 6}).slice(1, -1, 0, -2).slice(0, 1, 4, 2);  // rows 1,3 ; cols 5,3,1
  ASSERT_EQ(s.shape(), (Shape{2, 3}));
  std::vector<float> ref;
  for (int i : {1, 3})
    for (int j : {5, 3, 1}) ref.push_back(x[i * 6 + j]);
  EXPECT_ALLCLOSE(s.to_vector<float>(), ref, 0, 0);
}

TEST(MovementSlice, OfPermutedInt32) {
  auto x = test::int_data<int32_t>(24, 28, -100, 100);
  Tensor s = Tensor::from_vector(x, {2, 3, 4}).permute({2, 1, 0}).slice(0, std::nullopt, std::nullopt, 3);  // (2, 3, 2)
  std::vector<int32_t> ref;
  for (int i : {0, 3})
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) ref.push_back(x[k * 12 + j * 4 + i]);
  EXPECT_ALLEQUAL(s.to_vector<int32_t>(), ref);
}

// ---- cat / stack / split / chunk ----------------------------------------------------------------------

TEST(MovementCat, Axis0And1) {
  auto a = data(6, 29), b = data(4, 30);
  Tensor c0 = Tensor::cat({f32(a, {3, 2}), f32(b, {2, 2})}, 0);
  EXPECT_EQ(c0.shape(), (Shape{5, 2}));
  std::vector<float> r0 = a;
  r0.insert(r0.end(), b.begin(), b.end());
  EXPECT_ALLCLOSE(c0.to_vector<float>(), r0, 0, 0);
  Tensor c1 = Tensor::cat({f32(a, {2, 3}), f32(b, {2, 2})}, -1);
  EXPECT_EQ(c1.shape(), (Shape{2, 5}));
  std::vector<float> r1{a[0], a[1], a[2], b[0], b[1], a[3], a[4], a[5], b[2], b[3]};
  EXPECT_ALLCLOSE(c1.to_vector<float>(), r1, 0, 0);
}

TEST(MovementCat, ThreePiecesWithEmptyOne) {
  Tensor c = Tensor::cat({f32({1, 2}, {2}), Tensor::zeros({0}), f32({3}, {1})});
  EXPECT_ALLCLOSE(c.to_vector<float>(), (std::vector<float>{1, 2, 3}), 0, 0);
}

TEST(MovementCat, SingleTensorAndNegativeValues) {
  auto a = data(4, 31);
  EXPECT_ALLCLOSE(Tensor::cat({f32(a, {2, 2})}, 1).to_vector<float>(), a, 0, 0);
}

TEST(MovementCat, PromotesDtypes) {
  Tensor c = Tensor::cat({Tensor::from_vector(std::vector<int32_t>{1, 2}), f32({0.5f}, {1})});
  EXPECT_EQ(c.dtype(), dtypes::float32);
  EXPECT_ALLCLOSE(c.to_vector<float>(), (std::vector<float>{1, 2, 0.5f}), 0, 0);
  Tensor i = Tensor::cat({Tensor::from_vector(std::vector<int8_t>{-1}), Tensor::from_vector(std::vector<int8_t>{-2, 3})});
  EXPECT_EQ(i.dtype(), dtypes::int8);
  EXPECT_ALLEQUAL(i.to_vector<int8_t>(), (std::vector<int8_t>{-1, -2, 3}));
}

TEST(MovementCat, NonContiguousPieces) {
  auto a = data(6, 32), b = data(6, 33);
  Tensor c = Tensor::cat({f32(a, {2, 3}).transpose(), f32(b, {3, 2}).flip({0})}, 1);  // (3, 4)
  std::vector<float> ref;
  for (int i = 0; i < 3; ++i) {
    ref.push_back(a[0 * 3 + i]);
    ref.push_back(a[1 * 3 + i]);
    ref.push_back(b[(2 - i) * 2]);
    ref.push_back(b[(2 - i) * 2 + 1]);
  }
  EXPECT_ALLCLOSE(c.to_vector<float>(), ref, 0, 0);
}

TEST(MovementCat, BoolPieces) {
  Tensor c = Tensor::cat({Tensor::from_vector(std::vector<bool>{true}), Tensor::from_vector(std::vector<bool>{false, true})});
  EXPECT_EQ(c.dtype(), dtypes::bool_);
  EXPECT_ALLEQUAL(c.to_vector<bool>(), (std::vector<bool>{true, false, true}));
}

TEST(MovementStack, NewAxisFirstAndLast) {
  auto a = data(6, 34), b = data(6, 35);
  Tensor s0 = Tensor::stack({f32(a, {2, 3}), f32(b, {2, 3})});
  EXPECT_EQ(s0.shape(), (Shape{2, 2, 3}));
  std::vector<float> r0 = a;
  r0.insert(r0.end(), b.begin(), b.end());
  EXPECT_ALLCLOSE(s0.to_vector<float>(), r0, 0, 0);
  Tensor s2 = Tensor::stack({f32(a, {2, 3}), f32(b, {2, 3})}, -1);
  EXPECT_EQ(s2.shape(), (Shape{2, 3, 2}));
  std::vector<float> r2;
  for (int i = 0; i < 6; ++i) {
    r2.push_back(a[i]);
    r2.push_back(b[i]);
  }
  EXPECT_ALLCLOSE(s2.to_vector<float>(), r2, 0, 0);
}

TEST(MovementStack, ZeroDimTensors) {
  Tensor s = Tensor::stack({f32({1}, {}), f32({2}, {}), f32({3}, {})});
  EXPECT_EQ(s.shape(), (Shape{3}));
  EXPECT_ALLCLOSE(s.to_vector<float>(), (std::vector<float>{1, 2, 3}), 0, 0);
}

TEST(MovementSplit, BySizeWithRemainder) {
  auto x = data(14, 36);
  std::vector<Tensor> parts = f32(x, {7, 2}).split(3);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(parts[2].shape(), (Shape{1, 2}));
  EXPECT_ALLCLOSE(parts[0].to_vector<float>(), std::vector<float>(x.begin(), x.begin() + 6), 0, 0);
  EXPECT_ALLCLOSE(parts[1].to_vector<float>(), std::vector<float>(x.begin() + 6, x.begin() + 12), 0, 0);
  EXPECT_ALLCLOSE(parts[2].to_vector<float>(), std::vector<float>(x.begin() + 12, x.end()), 0, 0);
}

TEST(MovementSplit, BySizesOnAxis1) {
  auto x = data(12, 37);
  std::vector<Tensor> parts = f32(x, {2, 6}).split(std::vector<int64_t>{1, 0, 5}, 1);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1].shape(), (Shape{2, 0}));
  EXPECT_ALLCLOSE(parts[0].to_vector<float>(), (std::vector<float>{x[0], x[6]}), 0, 0);
  std::vector<float> ref(x.begin() + 1, x.begin() + 6);
  ref.insert(ref.end(), x.begin() + 7, x.end());
  EXPECT_ALLCLOSE(parts[2].to_vector<float>(), ref, 0, 0);
}

TEST(MovementChunk, EvenAndUneven) {
  auto x = data(10, 38);
  std::vector<Tensor> c = f32(x, {10}).chunk(3);  // sizes 4, 4, 2
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].shape(), (Shape{4}));
  EXPECT_EQ(c[2].shape(), (Shape{2}));
  EXPECT_ALLCLOSE(c[0].to_vector<float>(), std::vector<float>(x.begin(), x.begin() + 4), 0, 0);
  EXPECT_ALLCLOSE(c[1].to_vector<float>(), std::vector<float>(x.begin() + 4, x.begin() + 8), 0, 0);
  EXPECT_ALLCLOSE(c[2].to_vector<float>(), (std::vector<float>{x[8], x[9]}), 0, 0);
  std::vector<Tensor> d = f32(x, {2, 5}).chunk(2, 0);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_ALLCLOSE(d[0].to_vector<float>(), std::vector<float>(x.begin(), x.begin() + 5), 0, 0);
  EXPECT_ALLCLOSE(d[1].to_vector<float>(), std::vector<float>(x.begin() + 5, x.end()), 0, 0);
}

// ---- repeat / gather / contiguous -------------------------------------------------------------------

TEST(MovementRepeat, TilesEachAxis) {
  auto x = data(6, 39);
  Tensor r = f32(x, {2, 3}).repeat({2, 3});
  ASSERT_EQ(r.shape(), (Shape{4, 9}));
  std::vector<float> ref;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 9; ++j) ref.push_back(x[(i % 2) * 3 + j % 3]);
  EXPECT_ALLCLOSE(r.to_vector<float>(), ref, 0, 0);
}

TEST(MovementRepeat, ExtraLeadingAxesAndZero) {
  Tensor r = Tensor::from_vector(std::vector<int16_t>{1, 2}).repeat({2, 1, 2});
  EXPECT_EQ(r.shape(), (Shape{2, 1, 4}));
  EXPECT_ALLEQUAL(r.to_vector<int16_t>(), (std::vector<int16_t>{1, 2, 1, 2, 1, 2, 1, 2}));
  Tensor z = f32({1, 2}, {2}).repeat({0});
  EXPECT_EQ(z.shape(), (Shape{0}));
}

TEST(MovementRepeat, OfFlippedInput) {
  auto x = data(3, 40);
  Tensor r = f32(x, {3}).flip({0}).repeat({2});
  EXPECT_ALLCLOSE(r.to_vector<float>(), (std::vector<float>{x[2], x[1], x[0], x[2], x[1], x[0]}), 0, 0);
}

// Repeat counts and sizes known only at run time: one plan, plain loops' values at every binding
// (a count of 0 included); a count that may be negative is refused.
TEST(MovementRepeat, SymbolicCountsAndSizes) {
  auto x = data(5 * 3, 41);
  Variable r("r", 0, 4), n("n", 1, 5);
  Tensor rows = f32(x, {5, 3}).shrink({{0, n.bind(5)}, {0, 3}});
  Tensor t = rows.repeat(SymShape{r.bind(2), SInt(2)});
  ExecutionPlan plan = Tensor::prepare({t});
  for (auto [reps, len] : {std::pair<int64_t, int64_t>{2, 5}, {0, 3}, {4, 1}, {3, 4}}) {
    plan.execute_with_vars({{"r", reps}, {"n", len}});
    std::vector<float> got = plan.output_buffer()->to_vector<float>(), want;
    for (int64_t i = 0; i < reps * len; ++i)
      for (int64_t j = 0; j < 6; ++j) want.push_back(x[static_cast<size_t>((i % len) * 3 + j % 3)]);
    got.resize(want.size());
    EXPECT_ALLCLOSE(got, want, 0, 0) << reps << " x " << len;
  }
  Variable s("s", -1, 2);
  EXPECT_THROW(f32(x, {5, 3}).repeat(SymShape{s.bind(1), SInt(1)}), ShapeError);
}

TEST(MovementGather, Axis0AndAxis1) {
  auto x = data(12, 41);
  Tensor t = f32(x, {3, 4});
  std::vector<int32_t> i0{2, 0, 1, 1, 0, 0, 2, 2};  // (2, 4)
  Tensor g0 = t.gather(0, Tensor::from_vector(i0, {2, 4}));
  EXPECT_EQ(g0.shape(), (Shape{2, 4}));
  std::vector<float> r0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) r0.push_back(x[i0[i * 4 + j] * 4 + j]);
  EXPECT_ALLCLOSE(g0.to_vector<float>(), r0, 0, 0);
  std::vector<int64_t> i1{3, 3, 0, 1, 2, 1};  // (3, 2), int64 indices
  Tensor g1 = t.gather(1, Tensor::from_vector(i1, {3, 2}));
  std::vector<float> r1;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) r1.push_back(x[i * 4 + i1[i * 2 + j]]);
  EXPECT_ALLCLOSE(g1.to_vector<float>(), r1, 0, 0);
}

TEST(MovementGather, NegativeIndicesAndSmallerIndex) {
  auto x = data(12, 42);
  Tensor g = f32(x, {3, 4}).gather(1, Tensor::from_vector(std::vector<int32_t>{-1, 0, -4, -2}, {2, 2}));
  ASSERT_EQ(g.shape(), (Shape{2, 2}));
  EXPECT_ALLCLOSE(g.to_vector<float>(), (std::vector<float>{x[3], x[0], x[4], x[6]}), 0, 0);
}

TEST(MovementGather, IntSourceAndTransposedSource) {
  auto x = test::int_data<int32_t>(6, 43, -9, 9);
  Tensor t = Tensor::from_vector(x, {2, 3}).transpose();  // (3, 2)
  Tensor g = t.gather(0, Tensor::from_vector(std::vector<int32_t>{2, 0}, {1, 2}));
  EXPECT_EQ(g.dtype(), dtypes::int32);
  EXPECT_ALLEQUAL(g.to_vector<int32_t>(), (std::vector<int32_t>{x[2], x[3]}));
}

TEST(MovementContiguous, MaterializesView) {
  auto x = data(12, 44);
  Tensor c = f32(x, {3, 4}).transpose().contiguous();
  EXPECT_EQ(c.shape(), (Shape{4, 3}));
  EXPECT_ALLCLOSE(c.to_vector<float>(), test::permute_ref(x, {3, 4}, {1, 0}), 0, 0);
  Tensor d = (c * 2.0f).sum({1});
  auto ref = test::reduce_ref<double>(test::permute_ref(x, {3, 4}, {1, 0}), {4, 3}, {1}, 0.0,
                                      [](double a, float v) { return a + 2.0 * v; });
  EXPECT_ALLCLOSE(d.to_vector<float>(), ref, 1e-5, 1e-6);
}

TEST(MovementChain, AllViewsComposed) {
  auto x = data(60, 45);
  // (3,4,5) -> permute (5,3,4) -> shrink (3,3,4) -> flip axis 2 -> pad axis 1 -> reshape -> expand
  Tensor t = f32(x, {3, 4, 5}).permute({2, 0, 1}).shrink({{1, 4}, {0, 3}, {0, 4}}).flip({2}).pad({{0, 0}, {1, 0}, {0, 0}}, -1.0);
  ASSERT_EQ(t.shape(), (Shape{3, 4, 4}));
  Tensor e = t.reshape({1, 3, 16}).expand({2, 3, 16});
  std::vector<double> one;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 4; ++c) one.push_back(b == 0 ? -1.0 : x[(b - 1) * 20 + (3 - c) * 5 + (a + 1)]);
  std::vector<double> ref = one;
  ref.insert(ref.end(), one.begin(), one.end());
  EXPECT_ALLCLOSE(e.to_vector<float>(), ref, 0, 0);
  EXPECT_EQ(test::kernel_count(e * 1.0f), 1u);
}

}  // namespace
}  // namespace lathe
