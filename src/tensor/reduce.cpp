// Reductions over any set of axes.
#include <algorithm>

#include "tensor/tensor_util.hpp"

namespace lathe {
namespace {

std::vector<int64_t> normalize_axes(std::vector<int64_t> axes, int64_t ndim, const char* op) {
  if (axes.empty())
    for (int64_t i = 0; i < ndim; ++i) axes.push_back(i);
  for (int64_t& a : axes) a = detail::normalize_axis(a, ndim, op);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw ShapeError(std::string(op) + ": an axis is listed twice");
  return axes;
}

// Sums and products of small integers and bools accumulate in at least 32 bits, as in tinygrad.
DType accumulate_dtype(DType dt) {
  if (dt.is_bool()) return dtypes::int32;
  if (dt.is_int() && dt.itemsize() < 4) return dt.is_unsigned() ? dtypes::uint32 : dtypes::int32;
  return dt;
}

// MAX cannot reduce over nothing (it has no identity); `op` is the op the user called.
void require_nonempty(const Shape& shape, const std::vector<int64_t>& axes, const char* op) {
  for (int64_t a : axes)
    if (shape[a] == 0)
      throw ShapeError(std::string(op) + ": cannot reduce over the empty axis " + std::to_string(a) + " of " + shape_to_string(shape));
}

int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= shape[a];
  return n;
}

// The number of reduced elements as a float scalar tensor: a constant, or for symbolic axes an
// expression of the variables, read at run time.
Tensor reduced_count_tensor(const Tensor& t, const std::vector<int64_t>& axes, DType dt, int64_t minus = 0) {
  SymShape s = t.symbolic_shape();
  SInt n = 1;
  for (int64_t a : axes) n = n * s[a];
  n = n - SInt(minus);
  if (n.is_static()) return Tensor(UOp::const_(dt, static_cast<double>(std::max<int64_t>(0, n.value()))), {});
  return Tensor(cast(max(n.uop(), UOp::index_const(0)), dt), {});
}

}  // namespace

Tensor Tensor::reduce(Ops op, std::vector<int64_t> axes, bool keepdim, const char* name) const {
  axes = normalize_axes(std::move(axes), ndim(), name);
  SymShape mine = symbolic_shape(), kept = mine, dropped;
  for (int64_t a : axes) kept[a] = 1;
  for (int64_t i = 0; i < ndim(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i)) dropped.push_back(mine[i]);
  Tensor r = axes.empty() ? *this
                          : Tensor(UOp::make(Ops::REDUCE_AXIS, dtype(), {uop_}, ReduceArg{op, axes}), detail::max_shape(kept),
                                   detail::sym_entries(kept));
  return keepdim ? r : r.reshape(dropped);
}

Tensor Tensor::sum(std::vector<int64_t> axes, bool keepdim) const {
  return cast(accumulate_dtype(dtype())).reduce(Ops::ADD, std::move(axes), keepdim, "sum");
}

Tensor Tensor::prod(std::vector<int64_t> axes, bool keepdim) const {
  return cast(accumulate_dtype(dtype())).reduce(Ops::MUL, std::move(axes), keepdim, "prod");
}

Tensor Tensor::max(std::vector<int64_t> axes, bool keepdim) const {
  std::vector<int64_t> norm = normalize_axes(axes, ndim(), "max");
  require_nonempty(shape_, norm, "max");
  return reduce(Ops::MAX, std::move(norm), keepdim, "max");
}

Tensor Tensor::min(std::vector<int64_t> axes, bool keepdim) const {
  axes = normalize_axes(std::move(axes), ndim(), "min");
  require_nonempty(shape_, axes, "min");
  if (dtype().is_bool()) return all(std::move(axes), keepdim);
  if (dtype().is_int()) {
    // ~x reverses the order of every integer type without overflow (-x wraps at the signed minimum).
    Tensor ones = scalar_like(*this, -1, false);  // all bits set
    return bitwise_xor(ones).max(std::move(axes), keepdim).bitwise_xor(ones);
  }
  return neg().max(std::move(axes), keepdim).neg();
}

Tensor Tensor::mean(std::vector<int64_t> axes, bool keepdim) const {
  std::vector<int64_t> norm = normalize_axes(axes, ndim(), "mean");
  Tensor s = (dtype().is_float() ? *this : cast(dtypes::default_float)).sum(norm, keepdim);
  return s / reduced_count_tensor(*this, norm, s.dtype());
}

Tensor Tensor::var(std::vector<int64_t> axes, bool keepdim, int64_t correction) const {
  std::vector<int64_t> norm = normalize_axes(axes, ndim(), "var");
  Tensor x = dtype().is_float() ? *this : cast(dtypes::default_float);
  Tensor d = x - x.mean(norm, true);
  Tensor sq = (d * d).sum(norm, keepdim);
  return sq / reduced_count_tensor(*this, norm, sq.dtype(), correction);
}

Tensor Tensor::std(std::vector<int64_t> axes, bool keepdim, int64_t correction) const {
  return var(normalize_axes(std::move(axes), ndim(), "std"), keepdim, correction).sqrt();
}

Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  if (!axis) return flatten().argmax(0, false).reshape(keepdim ? Shape(shape_.size(), 1) : Shape{});
  int64_t a = detail::normalize_axis(*axis, ndim(), "argmax");
  int64_t n = shape_[a];
  require_nonempty(shape_, {a}, "argmax");
  // The first maximum: among positions equal to the max, the largest (n - i) wins.
  Shape ar(ndim(), 1);
  ar[a] = n;
  Tensor countdown = (static_cast<int64_t>(n) - Tensor::arange(n)).reshape(ar);
  if (!symbolic_shape()[a].is_static()) {
    std::vector<std::pair<SInt, SInt>> b(ndim(), {0, 1});
    b[a] = {0, symbolic_shape()[a]};
    countdown = countdown.shrink(b);
  }
  Tensor is_max = *this == max({a}, true);
  Tensor best = is_max.where(countdown, Tensor::zeros({}, dtypes::int32)).max({a}, keepdim);
  return (static_cast<int64_t>(n) - best).cast(dtypes::int32);
}

Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const {
  if (axis) {
    int64_t a = detail::normalize_axis(*axis, ndim(), "argmin");
    require_nonempty(shape_, {a}, "argmin");
  } else if (numel() == 0) {
    throw ShapeError("argmin: cannot reduce the empty tensor of shape " + shape_to_string(shape_));
  }
  if (dtype().is_bool()) return logical_not().argmax(axis, keepdim);
  if (dtype().is_int()) return bitwise_xor(scalar_like(*this, -1, false)).argmax(axis, keepdim);  // ~x: no overflow
  return neg().argmax(axis, keepdim);
}

Tensor Tensor::any(std::vector<int64_t> axes, bool keepdim) const {
  std::vector<int64_t> norm = normalize_axes(axes, ndim(), "any");
  if (reduced_count(shape_, norm) == 0) {
    Shape out = shape_;
    for (int64_t a : norm) out[a] = 1;
    Tensor f = detail::constant(false, dtypes::bool_, out);
    return keepdim ? f : f.squeeze();
  }
  return cast(dtypes::bool_).reduce(Ops::MAX, norm, keepdim, "any");
}

Tensor Tensor::all(std::vector<int64_t> axes, bool keepdim) const {
  return logical_not().any(normalize_axes(std::move(axes), ndim(), "all"), keepdim).logical_not();
}

Tensor Tensor::cumsum(int64_t axis) const {
  int64_t a = detail::normalize_axis(axis, ndim(), "cumsum");
  int64_t n = shape_[a];
  // out[.., i, ..] = sum_j x[.., j, ..] * (j <= i): the running sum as a masked reduction over a
  // new last axis j.
  Tensor x = transpose(a, -1).unsqueeze(-2);  // (..., 1, n)
  Tensor i = Tensor::arange(n).reshape({n, 1});
  Tensor j = Tensor::arange(n).reshape({1, n});
  Tensor masked = (j <= i).where(x, Tensor::zeros({}, x.dtype()));  // (..., n, n)
  return masked.sum({-1}).transpose(a, -1);
}

}  // namespace lathe
