// Random operators: RandomUniform/Normal(Like), Bernoulli, and Dropout (which is random only in
// training mode). A `seed` attribute fixes the values; without one each node draws from a
// process-wide sequence, so a model gives the same numbers in every process that builds it in
// the same order (as tinygrad's global seed does), and different numbers node to node.
#include <atomic>
#include <cstring>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

uint64_t seed_of(const OpContext& c) {
  static std::atomic<uint64_t> next{0x5eed};
  if (!c.has_attr("seed")) return next.fetch_add(1);
  float f = static_cast<float>(c.attr_f("seed", 0));
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

// The dtype attribute, or `fallback` (the input's dtype for the *Like ops).
DType dtype_or(const OpContext& c, DType fallback) {
  if (!c.has_attr("dtype")) return fallback;
  DType dt = dtype_from_onnx(static_cast<int32_t>(c.attr_i("dtype", 1)), c.where());
  if (!dt.is_float()) c.fail("random values need a float dtype, not " + dt.name());
  return dt;
}

Shape shape_attr(const OpContext& c) {
  Shape s = c.attr_ints("shape");
  for (int64_t d : s)
    if (d < 0) c.fail("shape has a negative dimension");
  return s;
}

Tensor uniform(const OpContext& c, Shape shape, DType dt) {
  double lo = c.attr_f("low", 0), hi = c.attr_f("high", 1);
  return (Tensor::rand(std::move(shape), seed_of(c), dtypes::float64) * (hi - lo) + lo).cast(dt);
}

Tensor normal(const OpContext& c, Shape shape, DType dt) {
  return (Tensor::randn(std::move(shape), seed_of(c), dtypes::float64) * c.attr_f("scale", 1) + c.attr_f("mean", 0)).cast(dt);
}

V dropout(const OpContext& c) {
  const Tensor& x = c.in(0);
  double ratio = c.has(1) ? c.double_at0(1) : c.attr_f("ratio", 0.5);
  bool training = c.has(2) && c.double_at0(2) != 0;
  if (!training || ratio == 0) return V{x, Tensor::full(x.symbolic_shape(), true, dtypes::bool_)};  // the identity, mask all true
  if (ratio < 0 || ratio >= 1) c.fail("ratio " + std::to_string(ratio) + " is outside [0, 1)");
  if (x.is_symbolic()) c.fail("training-mode dropout needs static sizes");
  Tensor keep = Tensor::rand(x.shape(), seed_of(c), dtypes::float32) >= static_cast<float>(ratio);
  return V{keep.where(x * (1.0 / (1.0 - ratio)), Tensor::zeros({}, x.dtype())).cast(x.dtype()), keep};
}

}  // namespace

void register_random_ops(std::map<std::string, OpFn>& t) {
  t["RandomUniform"] = [](const OpContext& c) { return V{uniform(c, shape_attr(c), dtype_or(c, dtypes::float32))}; };
  t["RandomNormal"] = [](const OpContext& c) { return V{normal(c, shape_attr(c), dtype_or(c, dtypes::float32))}; };
  t["RandomUniformLike"] = [](const OpContext& c) { return V{uniform(c, c.in(0).shape(), dtype_or(c, c.in(0).dtype()))}; };
  t["RandomNormalLike"] = [](const OpContext& c) { return V{normal(c, c.in(0).shape(), dtype_or(c, c.in(0).dtype()))}; };
  t["Bernoulli"] = [](const OpContext& c) {
    const Tensor& p = c.in(0);
    DType dt = c.has_attr("dtype") ? dtype_from_onnx(static_cast<int32_t>(c.attr_i("dtype", 1)), c.where()) : p.dtype();
    return V{(Tensor::rand(p.shape(), seed_of(c), dtypes::float64) < p.cast(dtypes::float64)).cast(dt)};
  };
  t["Dropout"] = dropout;
}

}  // namespace lathe::onnx::detail
