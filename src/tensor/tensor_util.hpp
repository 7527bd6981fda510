// Helpers shared by the files that implement Tensor's ops.
#pragma once

#include "lathe/tensor.hpp"
#include "schedule/shape.hpp"

namespace lathe::detail {

void check_shape(const Shape& shape, const char* op);
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
/// `t` reshaped (leading 1s) and expanded to `shape`.
Tensor broadcast_to(const Tensor& t, const Shape& shape);
/// The ALU node over tensors of one shape (and dtype, except WHERE's condition).
Tensor make_alu(Ops op, std::vector<Tensor> srcs);
/// `axis` in [-ndim, ndim) made non-negative; throws ShapeError naming `op` otherwise.
int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op);
/// A constant of `dtype` broadcast to `shape`.
Tensor constant(ConstValue value, DType dtype, const Shape& shape);

}  // namespace lathe::detail
