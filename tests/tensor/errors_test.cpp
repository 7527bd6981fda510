// Bad input throws the right lathe::Error subclass at the call (while building the graph, never at
// realize), and the message names the op and the shapes or dtypes involved.
#include <gtest/gtest.h>

#include "tensor/reference.hpp"

namespace lathe {
namespace {

Tensor f(Shape s) { return Tensor::zeros(std::move(s)); }

// ---- elementwise ----------------------------------------------------------------------------------

TEST(ErrorsCreation, AShapeTooLargeForAnyMachineIsAShapeError) {
  EXPECT_THROW(Tensor::zeros(Shape{int64_t{1} << 40, int64_t{1} << 40}), ShapeError);
  EXPECT_THROW(Tensor::empty(Shape{int64_t{1} << 62}), ShapeError);
  EXPECT_EQ(Tensor::zeros(Shape{int64_t{1} << 40, int64_t{1} << 40, 0}).numel(), 0);  // empty: nothing to hold
}

TEST(ErrorsElementwise, BinaryShapeMismatchNamesOpAndShapes) {
  EXPECT_THROW_MSG(f({2, 3}) + f({4}), ShapeError, "add", "(2, 3)", "(4,)");
  EXPECT_THROW_MSG(f({2, 3}) - f({3, 2}), ShapeError, "sub", "(2, 3)", "(3, 2)");
  EXPECT_THROW_MSG(f({5}) * f({4}), ShapeError, "mul", "(5,)", "(4,)");
  EXPECT_THROW_MSG(f({2, 2}) / f({3}), ShapeError, "div", "(2, 2)", "(3,)");
  EXPECT_THROW_MSG(f({2}).pow(f({3})), ShapeError, "pow", "(2,)", "(3,)");
  EXPECT_THROW_MSG(f({2}).maximum(f({3})), ShapeError, "maximum", "(2,)", "(3,)");
}

TEST(ErrorsElementwise, ComparisonShapeMismatch) {
  EXPECT_THROW_MSG(f({2}) < f({3}), ShapeError, "lt", "(2,)", "(3,)");
  EXPECT_THROW_MSG(f({2}) > f({3}), ShapeError, "gt", "(2,)", "(3,)");
  EXPECT_THROW_MSG(f({2}) <= f({3}), ShapeError, "le", "(2,)", "(3,)");
  EXPECT_THROW_MSG(f({2}) >= f({3}), ShapeError, "ge", "(2,)", "(3,)");
  EXPECT_THROW_MSG(f({2}) == f({3}), ShapeError, "eq", "(2,)", "(3,)");
  EXPECT_THROW_MSG(f({2}) != f({3}), ShapeError, "ne", "(2,)", "(3,)");
}

TEST(ErrorsElementwise, MinimumShapeMismatchNamesMinimum) {
  EXPECT_THROW_MSG(f({2}).minimum(f({3})), ShapeError, "minimum", "(2,)", "(3,)");
}

TEST(ErrorsElementwise, WhereShapeMismatch) {
  Tensor cond = Tensor::zeros({2, 3}, dtypes::bool_);
  EXPECT_THROW_MSG(cond.where(f({4}), f({})), ShapeError, "where", "(2, 3)", "(4,)");
  EXPECT_THROW_MSG(cond.where(f({3}), f({2})), ShapeError, "where", "(2,)");
}

TEST(ErrorsElementwise, LogicalShapeMismatch) {
  EXPECT_THROW_MSG(f({2}).logical_and(f({3})), ShapeError, "logical_and", "(2,)", "(3,)");
  EXPECT_THROW_MSG(f({2}).logical_or(f({3})), ShapeError, "logical_or", "(2,)", "(3,)");
}

TEST(ErrorsElementwise, BitwiseOnFloatsIsDTypeError) {
  Tensor i = Tensor::zeros({2}, dtypes::int32);
  EXPECT_THROW_MSG(f({2}).bitwise_and(i), DTypeError, "bitwise_and", "float32");
  EXPECT_THROW_MSG(i.bitwise_or(f({2})), DTypeError, "bitwise_or", "float32");
  EXPECT_THROW_MSG(Tensor::zeros({2}, dtypes::float16).bitwise_xor(i), DTypeError, "bitwise_xor", "float16");
  EXPECT_THROW_MSG(f({2}).lshift(1), DTypeError, "lshift", "float32");
  EXPECT_THROW_MSG(Tensor::zeros({2}, dtypes::float64).rshift(1), DTypeError, "rshift", "float64");
  EXPECT_THROW_MSG(Tensor::zeros({2}, dtypes::bool_).lshift(1), DTypeError, "lshift", "bool");
}

TEST(ErrorsElementwise, BitwiseShapeMismatch) {
  Tensor a = Tensor::zeros({2}, dtypes::int32), b = Tensor::zeros({3}, dtypes::int32);
  EXPECT_THROW_MSG(a.bitwise_and(b), ShapeError, "bitwise_and", "(2,)", "(3,)");
}

TEST(ErrorsElementwise, ShiftOutOfRange) {
  Tensor i = Tensor::zeros({2}, dtypes::int8);
  EXPECT_THROW_MSG(i.lshift(8), Error, "lshift", "int8");
  EXPECT_THROW_MSG(i.rshift(-1), Error, "rshift", "int8");
}

TEST(ErrorsElementwise, ClipBoundsReversed) { EXPECT_THROW_MSG(f({2}).clip(1.0, -1.0), Error, "clip"); }

TEST(ErrorsElementwise, BadCastAndBitcast) {
  EXPECT_THROW_MSG(f({2}).cast(dtypes::void_), DTypeError, "cast", "void");
  EXPECT_THROW_MSG(f({2}).cast(dtypes::index), DTypeError, "cast", "index");
  EXPECT_THROW_MSG(f({2}).cast(dtypes::float32.vec(4)), DTypeError, "cast");
  EXPECT_THROW_MSG(f({2}).bitcast(dtypes::int16), DTypeError, "bitcast", "float32", "int16");
  EXPECT_THROW_MSG(f({2}).bitcast(dtypes::float64), DTypeError, "bitcast", "float32", "float64");
  EXPECT_THROW_MSG(Tensor::zeros({2}, dtypes::bool_).bitcast(dtypes::int16), DTypeError, "bitcast", "bool", "int16");
  EXPECT_THROW_MSG(f({2}).bitcast(dtypes::void_), DTypeError, "bitcast");
}

// ---- creation and reading -------------------------------------------------------------------------

TEST(ErrorsCreation, FromVectorSizeMismatch) {
  EXPECT_THROW_MSG(Tensor::from_vector(std::vector<float>{1, 2, 3}, {2, 2}), ShapeError, "from_vector", "(2, 2)");
  EXPECT_THROW_MSG(Tensor::from_vector(std::vector<float>{1}, {-1}), ShapeError, "from_vector");
}

TEST(ErrorsCreation, NegativeShapes) {
  EXPECT_THROW_MSG(Tensor::full({2, -1}, 1.0), ShapeError, "full", "(2, -1)");
  EXPECT_THROW_MSG(Tensor::zeros({-3}), ShapeError, "(-3,)");
  EXPECT_THROW_MSG(Tensor::ones({-3}), ShapeError, "(-3,)");
  EXPECT_THROW_MSG(Tensor::empty({-3}), ShapeError, "empty", "(-3,)");
  EXPECT_THROW_MSG(Tensor::rand({-3}), ShapeError, "rand", "(-3,)");
  EXPECT_THROW_MSG(Tensor::randn({-3}), ShapeError, "randn", "(-3,)");
  EXPECT_THROW_MSG(Tensor::eye(-2), ShapeError, "eye", "-2");
}

TEST(ErrorsCreation, RandNeedsFloat) {
  EXPECT_THROW_MSG(Tensor::rand({2}, 0, dtypes::int32), DTypeError, "rand", "int32");
  EXPECT_THROW_MSG(Tensor::randn({2}, 0, dtypes::bool_), DTypeError, "randn", "bool");
}

TEST(ErrorsCreation, ArangeZeroStep) { EXPECT_THROW_MSG(Tensor::arange(0, 5, 0), Error, "arange", "step"); }

TEST(ErrorsCreation, FromBufferSizeMismatch) {
  Buffer b(dtypes::float32, 6);
  EXPECT_THROW_MSG(Tensor::from_buffer(b, {2, 2}), ShapeError, "from_buffer", "(2, 2)");
}

TEST(ErrorsReading, WrongElementTypeAndItem) {
  EXPECT_THROW_MSG(f({2}).to_vector<double>(), DTypeError, "to_vector", "float32", "float64");
  EXPECT_THROW_MSG(Tensor::arange(3).to_vector<int64_t>(), DTypeError, "to_vector", "int32", "int64");
  EXPECT_THROW_MSG(Tensor::zeros({2}, dtypes::bool_).to_vector<int32_t>(), DTypeError, "to_vector", "bool");
  EXPECT_THROW_MSG(f({2, 2}).item<float>(), ShapeError, "item", "(2, 2)");
  EXPECT_THROW_MSG(f({0}).item<float>(), ShapeError, "item", "(0,)");
}

// ---- reductions -----------------------------------------------------------------------------------

TEST(ErrorsReduce, BadAxisNamesOpAndAxis) {
  Tensor t = f({2, 3});
  EXPECT_THROW_MSG(t.sum({2}), ShapeError, "sum", "axis 2");
  EXPECT_THROW_MSG(t.sum({-3}), ShapeError, "sum", "axis -3");
  EXPECT_THROW_MSG(t.prod({5}), ShapeError, "prod", "axis 5");
  EXPECT_THROW_MSG(t.max({2}), ShapeError, "max", "axis 2");
  EXPECT_THROW_MSG(t.mean({2}), ShapeError, "mean", "axis 2");
  EXPECT_THROW_MSG(t.var({2}), ShapeError, "var", "axis 2");
  EXPECT_THROW_MSG(t.argmax(2), ShapeError, "argmax", "axis 2");
  EXPECT_THROW_MSG(t.any({2}), ShapeError, "any", "axis 2");
  EXPECT_THROW_MSG(t.cumsum(2), ShapeError, "cumsum", "axis 2");
  EXPECT_THROW_MSG(f({}).sum({0}), ShapeError, "sum", "axis 0");
}

TEST(ErrorsReduce, BadAxisNamesTheOpCalled) {
  Tensor t = f({2, 3});
  EXPECT_THROW_MSG(t.min({2}), ShapeError, "min", "axis 2");
  EXPECT_THROW_MSG(Tensor::zeros({2}, dtypes::uint8).min({1}), ShapeError, "min", "axis 1");
  EXPECT_THROW_MSG(t.std({2}), ShapeError, "std", "axis 2");
  EXPECT_THROW_MSG(t.argmin(2), ShapeError, "argmin", "axis 2");
  EXPECT_THROW_MSG(t.all({2}), ShapeError, "all", "axis 2");
}

TEST(ErrorsReduce, RepeatedAxis) {
  EXPECT_THROW_MSG(f({2, 3}).sum({1, -1}), ShapeError, "sum", "twice");
  EXPECT_THROW_MSG(f({2, 3}).max({0, 0}), ShapeError, "max", "twice");
}

TEST(ErrorsReduce, MaxMinArgOverEmptyAxis) {
  Tensor t = f({2, 0});
  EXPECT_THROW_MSG(t.max({1}), ShapeError, "max", "(2, 0)");
  EXPECT_THROW_MSG(t.min({1}), ShapeError, "min", "(2, 0)");
  EXPECT_THROW_MSG(t.argmax(1), ShapeError, "argmax", "(2, 0)");
  EXPECT_THROW_MSG(t.argmin(1), ShapeError, "argmin", "(2, 0)");
  EXPECT_THROW_MSG(Tensor::zeros({0}, dtypes::int32).min(), ShapeError, "min", "(0,)");
}

// ---- movement -------------------------------------------------------------------------------------

TEST(ErrorsMovement, Reshape) {
  EXPECT_THROW_MSG(f({2, 3}).reshape({4, 2}), ShapeError, "reshape", "(2, 3)", "(4, 2)");
  EXPECT_THROW_MSG(f({2, 3}).reshape({-1, -1}), ShapeError, "reshape", "(-1, -1)");
  EXPECT_THROW_MSG(f({2, 3}).reshape({4, -1}), ShapeError, "reshape", "(4, -1)", "(2, 3)");
  EXPECT_THROW_MSG(f({2, 3}).reshape({-2, -3}), ShapeError, "reshape");
  EXPECT_THROW_MSG(f({0, 3}).reshape({-1, 0}), ShapeError, "reshape");
}

TEST(ErrorsMovement, Permute) {
  EXPECT_THROW_MSG(f({2, 3}).permute({0}), ShapeError, "permute", "(2, 3)");
  EXPECT_THROW_MSG(f({2, 3}).permute({0, 0}), ShapeError, "permute", "twice");
  EXPECT_THROW_MSG(f({2, 3}).permute({0, 2}), ShapeError, "permute", "axis 2");
  EXPECT_THROW_MSG(f({2, 3}).transpose(0, 2), ShapeError, "transpose", "axis 2");
}

TEST(ErrorsMovement, Expand) {
  EXPECT_THROW_MSG(f({3, 2}).expand({3, 4}), ShapeError, "expand", "(3, 2)", "(3, 4)");
  EXPECT_THROW_MSG(f({2, 3}).expand({3}), ShapeError, "expand", "(2, 3)", "(3,)");
  EXPECT_THROW_MSG(f({1}).expand({-2}), ShapeError, "expand");
}

TEST(ErrorsMovement, PadAndShrink) {
  EXPECT_THROW_MSG(f({2, 3}).pad({{1, 1}}), ShapeError, "pad", "(2, 3)");
  EXPECT_THROW_MSG(f({2, 3}).pad({{-2, -1}, {0, 0}}), ShapeError, "pad", "(2, 3)");
  EXPECT_THROW_MSG(f({2, 3}).shrink({{0, 2}}), ShapeError, "shrink", "(2, 3)");
  EXPECT_THROW_MSG(f({2, 3}).shrink({{0, 3}, {0, 3}}), ShapeError, "shrink", "(0, 3)", "(2, 3)");
  EXPECT_THROW_MSG(f({2, 3}).shrink({{1, 0}, {0, 3}}), ShapeError, "shrink", "(1, 0)");
  EXPECT_THROW_MSG(f({2, 3}).shrink({{-1, 1}, {0, 3}}), ShapeError, "shrink");
}

TEST(ErrorsMovement, FlipSqueezeUnsqueezeFlatten) {
  EXPECT_THROW_MSG(f({2, 3}).flip({2}), ShapeError, "flip", "axis 2");
  EXPECT_THROW_MSG(f({2, 3}).flip({1, -1}), ShapeError, "flip", "twice");
  EXPECT_THROW_MSG(f({2, 3}).squeeze(2), ShapeError, "squeeze", "axis 2");
  EXPECT_THROW_MSG(f({2, 3}).unsqueeze(3), ShapeError, "unsqueeze", "axis 3");
  EXPECT_THROW_MSG(f({2, 3}).unsqueeze(-4), ShapeError, "unsqueeze", "axis -4");
  EXPECT_THROW_MSG(f({2, 3, 4}).flatten(2, 1), ShapeError, "flatten");
  EXPECT_THROW_MSG(f({2, 3}).flatten(0, 5), ShapeError, "flatten", "axis 5");
}

TEST(ErrorsMovement, Slice) {
  EXPECT_THROW_MSG(f({5}).slice(0, 0, 5, 0), ShapeError, "slice", "step");
  EXPECT_THROW_MSG(f({5}).slice(1, 0, 5), ShapeError, "slice", "axis 1");
}

TEST(ErrorsMovement, CatStack) {
  EXPECT_THROW_MSG(Tensor::cat({f({2, 3}), f({2, 4})}, 0), ShapeError, "cat", "(2, 4)", "(2, 3)");
  EXPECT_THROW_MSG(Tensor::cat({f({2, 3}), f({2})}, 0), ShapeError, "cat", "(2,)");
  EXPECT_THROW_MSG(Tensor::cat({f({2, 3})}, 2), ShapeError, "cat", "axis 2");
  EXPECT_THROW_MSG(Tensor::cat({}), ShapeError, "cat");
  EXPECT_THROW_MSG(Tensor::stack({f({2}), f({3})}), ShapeError, "stack", "(3,)", "(2,)");
  EXPECT_THROW_MSG(Tensor::stack({}), ShapeError, "stack");
  EXPECT_THROW_MSG(Tensor::stack({f({2})}, 2), ShapeError, "stack", "axis 2");
}

TEST(ErrorsMovement, SplitChunkRepeat) {
  EXPECT_THROW_MSG(f({5}).split(std::vector<int64_t>{2, 2}), ShapeError, "split", "(5,)");
  EXPECT_THROW_MSG(f({5}).split(std::vector<int64_t>{6, -1}), ShapeError, "split");
  EXPECT_THROW_MSG(f({5}).split(0), ShapeError, "split");
  EXPECT_THROW_MSG(f({5}).split(2, 1), ShapeError, "split", "axis 1");
  EXPECT_THROW_MSG(f({5}).chunk(0), ShapeError, "chunk");
  EXPECT_THROW_MSG(f({2, 3}).repeat({2}), ShapeError, "repeat", "(2, 3)");
  EXPECT_THROW_MSG(f({2}).repeat({-1}), ShapeError, "repeat");
}

TEST(ErrorsMovement, Gather) {
  Tensor idx2 = Tensor::zeros({2, 2}, dtypes::int32);
  EXPECT_THROW_MSG(f({3, 4}).gather(0, Tensor::zeros({2}, dtypes::int32)), ShapeError, "gather", "(2,)", "(3, 4)");
  EXPECT_THROW_MSG(f({3, 4}).gather(0, Tensor::zeros({2, 2})), DTypeError, "gather", "float32");
  EXPECT_THROW_MSG(f({3, 4}).gather(2, idx2), ShapeError, "gather", "axis 2");
  EXPECT_THROW_MSG(f({3, 1}).gather(0, idx2), ShapeError, "gather", "(2, 2)", "(3, 1)");
}

// ---- compound -------------------------------------------------------------------------------------

TEST(ErrorsNn, MatmulInnerMismatch) {
  EXPECT_THROW_MSG(f({2, 3}).matmul(f({4, 5})), ShapeError, "matmul", "(2, 3)", "(4, 5)");
  EXPECT_THROW_MSG(f({3}).dot(f({4})), ShapeError, "matmul", "(3,)", "(4,)");
  EXPECT_THROW_MSG(f({}).matmul(f({2})), ShapeError, "matmul");
}

TEST(ErrorsNn, MatmulBatchMismatchNamesMatmul) {
  EXPECT_THROW_MSG(f({2, 3, 4}).matmul(f({3, 4, 5})), ShapeError, "matmul", "(2, 3, 4)", "(3, 4, 5)");
}

TEST(ErrorsNn, SoftmaxLayernormAxes) {
  EXPECT_THROW_MSG(f({2, 3}).softmax(2), ShapeError, "softmax", "axis 2");
  EXPECT_THROW_MSG(f({2, 3}).log_softmax(-3), ShapeError, "log_softmax", "axis -3");
  EXPECT_THROW_MSG(f({2, 3}).layernorm({2}), ShapeError, "layernorm", "axis 2");
}

TEST(ErrorsNn, Conv2d) {
  Tensor x = f({1, 2, 5, 5});
  EXPECT_THROW_MSG(f({2, 5, 5}).conv2d(f({1, 2, 3, 3})), ShapeError, "conv2d", "(2, 5, 5)");
  EXPECT_THROW_MSG(x.conv2d(f({1, 2, 3})), ShapeError, "conv2d", "(1, 2, 3)");
  EXPECT_THROW_MSG(x.conv2d(f({1, 3, 3, 3})), ShapeError, "conv2d", "(1, 2, 5, 5)", "(1, 3, 3, 3)");
  EXPECT_THROW_MSG(x.conv2d(f({3, 1, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1}, 2), ShapeError, "conv2d", "2 groups");
  EXPECT_THROW_MSG(x.conv2d(f({1, 2, 6, 6})), ShapeError, "conv2d", "6x6", "(1, 2, 5, 5)");
  EXPECT_THROW_MSG(x.conv2d(f({4, 2, 3, 3}), f({3})), ShapeError, "conv2d", "bias", "(3,)");
  EXPECT_THROW_MSG(x.conv2d(f({1, 2, 3, 3}), std::nullopt, {0, 1}), ShapeError, "conv2d", "stride");
  EXPECT_THROW_MSG(x.conv2d(f({1, 2, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {3, 3}), ShapeError, "conv2d", "(1, 2, 5, 5)");
  // A depthwise shape (16 channels, one per group) is checked the same way before conv2d picks
  // its path: the errors name the input as the caller gave it, not the channel-blocked copy.
  Tensor d = f({1, 16, 2, 2});
  EXPECT_THROW_MSG(d.conv2d(f({16, 1, 3, 3}), std::nullopt, {1, 1}, {0, 0}, {1, 1}, 16), ShapeError, "conv2d", "3x3", "(1, 16, 2, 2)");
  EXPECT_THROW_MSG(d.conv2d(f({16, 1, 3, 3}), std::nullopt, {1, 0}, {1, 1}, {1, 1}, 16), ShapeError, "conv2d", "stride");
  EXPECT_THROW_MSG(d.conv2d(f({16, 1, 3, 3}), f({8}), {1, 1}, {1, 1}, {1, 1}, 16), ShapeError, "conv2d", "bias", "(8,)");
}

TEST(ErrorsNn, Pooling) {
  EXPECT_THROW_MSG(f({2, 4, 4}).max_pool2d({2, 2}), ShapeError, "max_pool2d", "(2, 4, 4)");
  EXPECT_THROW_MSG(f({1, 1, 4, 4}).max_pool2d({5, 5}), ShapeError, "max_pool2d", "(1, 1, 4, 4)");
  EXPECT_THROW_MSG(f({2, 4, 4}).avg_pool2d({2, 2}), ShapeError, "avg_pool2d", "(2, 4, 4)");
  EXPECT_THROW_MSG(f({1, 1, 4, 4}).avg_pool2d({0, 2}), ShapeError, "avg_pool2d");
}

TEST(ErrorsNn, Attention) {
  EXPECT_THROW_MSG(f({4}).scaled_dot_product_attention(f({3, 4}), f({3, 4})), ShapeError, "scaled_dot_product_attention");
  EXPECT_THROW_MSG(f({2, 4}).scaled_dot_product_attention(f({3, 5}), f({3, 4})), ShapeError, "(2, 4)", "(5, 3)");
}

// ---- nothing runs before the error ---------------------------------------------------------------

TEST(ErrorsAtCall, LazyGraphThrowsBeforeRealize) {
  Tensor a = Tensor::rand({4, 4}, 1) * 2.0f;  // lazy
  ASSERT_FALSE(a.is_realized());
  EXPECT_THROW(a.sum({3}), ShapeError);
  EXPECT_THROW(a + f({3}), ShapeError);
  EXPECT_THROW(a.reshape({3, 5}), ShapeError);
  EXPECT_THROW(a.bitcast(dtypes::float16), DTypeError);
  EXPECT_FALSE(a.is_realized());
}

TEST(ErrorsAtCall, AllAreLatheErrors) {
  // Every error above is a lathe::Error, so callers can catch them together.
  EXPECT_THROW(f({2}) + f({3}), Error);
  EXPECT_THROW(f({2}).bitwise_and(f({2})), Error);
  EXPECT_THROW(f({2}).to_vector<int32_t>(), Error);
}

}  // namespace
}  // namespace lathe
