// Creation ops. Constants are lazy (a CONST broadcast to the shape); data that must exist
// element by element (arange, random numbers) is made on the host, once, into a buffer.
#include <cmath>

#include "device/buffer_registry.hpp"
#include "schedule/shape.hpp"
#include "tensor/tensor_util.hpp"

namespace lathe {
namespace {

DType dtype_of_value(const ConstValue& v) {
  if (std::holds_alternative<bool>(v)) return dtypes::bool_;
  if (std::holds_alternative<double>(v)) return dtypes::default_float;
  return dtypes::default_int;
}

// A counter-based generator: the value at position i depends only on (seed, i), so results are
// the same on every machine and for every thread count.
uint64_t mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double uniform(uint64_t seed, uint64_t i) { return static_cast<double>(mix(seed, i) >> 11) * 0x1.0p-53; }

Tensor host_tensor(const std::vector<double>& values, DType dtype, const Shape& shape) {
  size_t item = static_cast<size_t>(dtype.itemsize());
  std::vector<char> bytes(values.size() * item);  // made on the host, then copied to the buffer's device
  char* p = bytes.data();
  for (size_t i = 0; i < values.size(); ++i) write_const(values[i], dtype, p + i * item);
  Buffer b(dtype, values.size());
  b.copyin(bytes.data(), bytes.size());
  return Tensor(buffer_node(b, shape), shape);
}

}  // namespace

Tensor Tensor::full(Shape shape, ConstValue value, std::optional<DType> dtype) {
  detail::check_shape(shape, "full");
  return detail::constant(value, dtype.value_or(dtype_of_value(value)), shape);
}

Tensor Tensor::full(const SymShape& shape, ConstValue value, std::optional<DType> dtype) {
  for (const SInt& d : shape)
    if (d.min() < 0) throw ShapeError("full: negative dimension in shape " + shape_to_string(shape));
  Tensor c(UOp::const_(dtype.value_or(dtype_of_value(value)), value), {});
  return detail::broadcast_to(c, shape);
}

Tensor Tensor::zeros(const SymShape& shape, DType dtype) { return full(shape, int64_t{0}, dtype); }
Tensor Tensor::ones(const SymShape& shape, DType dtype) { return full(shape, int64_t{1}, dtype); }

Tensor Tensor::empty(const SymShape& shape, DType dtype) {
  for (const SInt& d : shape)
    if (d.min() < 0) throw ShapeError("empty: negative dimension in shape " + shape_to_string(shape));
  if (detail::is_static(shape)) return empty(detail::max_shape(shape), dtype);
  Buffer b(dtype, static_cast<size_t>(shape_numel(detail::max_shape(shape))));
  return from_buffer(b, shape);
}

Tensor Tensor::zeros(Shape shape, DType dtype) { return full(std::move(shape), int64_t{0}, dtype); }
Tensor Tensor::ones(Shape shape, DType dtype) { return full(std::move(shape), int64_t{1}, dtype); }

Tensor Tensor::empty(Shape shape, DType dtype) {
  detail::check_shape(shape, "empty");
  return Tensor(buffer_node(Buffer(dtype, static_cast<size_t>(shape_numel(shape))), shape), shape);
}

Tensor Tensor::arange(int64_t n) { return arange(0, static_cast<double>(n), 1, dtypes::int32); }

Tensor Tensor::arange(double start, double stop, double step, DType dtype) {
  if (step == 0) throw Error("arange: step cannot be zero");
  double count = std::ceil((stop - start) / step);
  int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<double>(i) * step;
  // Its values are its arguments': a constant, so what a plan computes from it alone (a mask,
  // positions, eye) is computed once, at prepare. (rand stays an ordinary buffer: it is the usual
  // stand-in for an input a program later writes.)
  Tensor t = host_tensor(v, dtype, {n});
  t.buffer().set_constant();
  return t;
}

Tensor Tensor::eye(int64_t n, DType dtype) {
  if (n < 0) throw ShapeError("eye: negative size " + std::to_string(n));
  return (arange(n).reshape({n, 1}) == arange(n).reshape({1, n})).cast(dtype);
}

Tensor Tensor::rand(Shape shape, uint64_t seed, DType dtype) {
  detail::check_shape(shape, "rand");
  if (!dtype.is_float()) throw DTypeError("rand: needs a float dtype, not " + dtype.name());
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = uniform(seed, i);
    // Rounding to a narrower float could reach 1.0; keep the interval half-open.
    if (const_as_double(cast_const(v[i], dtype)) >= 1.0) v[i] = 0.0;
  }
  return host_tensor(v, dtype, shape);
}

Tensor Tensor::randn(Shape shape, uint64_t seed, DType dtype) {
  detail::check_shape(shape, "randn");
  if (!dtype.is_float()) throw DTypeError("randn: needs a float dtype, not " + dtype.name());
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) {
    // Box-Muller over two independent uniforms per element.
    double u1 = 1.0 - uniform(seed, 2 * i), u2 = uniform(seed, 2 * i + 1);
    v[i] = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  return host_tensor(v, dtype, shape);
}

}  // namespace lathe
