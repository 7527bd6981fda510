// Sampling an image at fractional positions: GridSample (PyTorch's grid_sample: nearest,
// bilinear and bicubic taps, zeros/border/reflection padding). Taps are gathers from the
// flattened image, so the whole operator stays one lazy graph.
#include <cmath>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

// Folds coordinates into [lo, hi] by reflecting at the borders (twice_lo, twice_hi are the
// doubled borders, as PyTorch's reflect_coordinates takes them).
Tensor reflect(const Tensor& x, double twice_lo, double twice_hi) {
  if (twice_lo == twice_hi) return x * 0.0;
  double lo = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
  Tensor d = (x - lo).abs();
  Tensor flips = (d / span).floor();
  Tensor extra = d - flips * span;
  Tensor even = (flips - (flips / 2.0).floor() * 2.0) == 0.0;
  return even.where(extra + lo, span - extra + lo);
}

struct GridSampler {
  Tensor flat;  // (N, C, H*W)
  int64_t n, ch, h, w, ho, wo;
  std::string padding;
  bool align;

  // Border and reflection padding move a coordinate inside the image; zeros leaves it.
  Tensor bound(const Tensor& coord, int64_t size) const {
    if (padding == "border") return coord.clip(0, static_cast<double>(size - 1));
    if (padding == "reflection") {
      Tensor r = align ? reflect(coord, 0, 2.0 * static_cast<double>(size - 1)) : reflect(coord, -1, 2.0 * static_cast<double>(size) - 1);
      return r.clip(0, static_cast<double>(size - 1));
    }
    return coord;
  }

  Tensor unnormalize(const Tensor& g, int64_t size) const {
    double s = static_cast<double>(size);
    return align ? (g + 1.0) / 2.0 * (s - 1) : ((g + 1.0) * s - 1) / 2.0;
  }

  // The image at integer positions (x, y) of shape (N, Ho, Wo); zero outside it (and at NaN
  // positions, which are not inside: every comparison with NaN is false).
  Tensor tap(const Tensor& x, const Tensor& y) const {
    Tensor inside = (x >= 0.0).logical_and(x <= static_cast<double>(w - 1)).logical_and(y >= 0.0).logical_and(y <= static_cast<double>(h - 1));
    Tensor zero = Tensor::zeros({}, x.dtype());
    Tensor xi = inside.where(x, zero).clip(0, static_cast<double>(w - 1)).cast(dtypes::int32);  // no NaN reaches the cast
    Tensor yi = inside.where(y, zero).clip(0, static_cast<double>(h - 1)).cast(dtypes::int32);
    Tensor idx = (yi * static_cast<int32_t>(w) + xi).reshape(Shape{n, 1, ho * wo}).expand(Shape{n, ch, ho * wo});
    Tensor v = flat.gather(2, idx).reshape(Shape{n, ch, ho, wo});
    return inside.reshape(Shape{n, 1, ho, wo}).where(v, Tensor::zeros({}, v.dtype()));
  }

  // (N, Ho, Wo) weights broadcast over channels.
  static Tensor per_channel(const Tensor& t) { return t.unsqueeze(1); }
};

// Keys' cubic convolution weights (A = -0.75) for the four taps around fraction t.
std::vector<Tensor> cubic_weights(const Tensor& t) {
  const double a = -0.75;
  auto near = [&](const Tensor& x) { return ((x * (a + 2) - (a + 3)) * x * x) + 1.0; };
  auto far = [&](const Tensor& x) { return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a; };
  return {far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)};
}

V grid_sample(const OpContext& c) {
  const Tensor &x = c.in(0), &grid = c.in(1);
  if (x.ndim() != 4 || grid.ndim() != 4 || grid.shape()[3] != 2 || grid.shape()[0] != x.shape()[0])
    c.fail("only 2-D sampling is supported: X (N, C, H, W) with grid (N, H_out, W_out, 2), got " + shape_to_string(x.shape()) + " and " +
           shape_to_string(grid.shape()));
  std::string mode = c.attr_s("mode", "bilinear");
  GridSampler s{x.reshape(Shape{x.shape()[0], x.shape()[1], x.shape()[2] * x.shape()[3]}),
                x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3], grid.shape()[1], grid.shape()[2],
                c.attr_s("padding_mode", "zeros"), c.attr_i("align_corners", 0) != 0};
  if (s.padding != "zeros" && s.padding != "border" && s.padding != "reflection") c.fail("padding_mode '" + s.padding + "' is not supported");
  Tensor g = grid.cast(dtypes::float32);
  Tensor gx = s.unnormalize(g.slice(3, 0, 1).squeeze(3), s.w), gy = s.unnormalize(g.slice(3, 1, 2).squeeze(3), s.h);
  Tensor out;
  if (mode == "nearest") {
    out = s.tap(s.bound(gx, s.w).round(), s.bound(gy, s.h).round());
  } else if (mode == "bilinear" || mode == "linear") {
    Tensor bx = s.bound(gx, s.w), by = s.bound(gy, s.h);
    Tensor x0 = bx.floor(), y0 = by.floor();
    Tensor tx = bx - x0, ty = by - y0;
    out = s.tap(x0, y0) * GridSampler::per_channel((1.0 - tx) * (1.0 - ty)) + s.tap(x0 + 1.0, y0) * GridSampler::per_channel(tx * (1.0 - ty)) +
          s.tap(x0, y0 + 1.0) * GridSampler::per_channel((1.0 - tx) * ty) + s.tap(x0 + 1.0, y0 + 1.0) * GridSampler::per_channel(tx * ty);
  } else if (mode == "bicubic" || mode == "cubic") {
    Tensor x0 = gx.floor(), y0 = gy.floor();
    std::vector<Tensor> wx = cubic_weights(gx - x0), wy = cubic_weights(gy - y0);
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) {
        Tensor v = s.tap(s.bound(x0 + static_cast<double>(i - 1), s.w), s.bound(y0 + static_cast<double>(j - 1), s.h));
        Tensor term = v * GridSampler::per_channel(wx[static_cast<size_t>(i)] * wy[static_cast<size_t>(j)]);
        out = i == 0 && j == 0 ? term : out + term;
      }
  } else {
    c.fail("mode '" + mode + "' is not supported");
  }
  return V{out.cast(x.dtype())};
}

}  // namespace

void register_sampling_ops(std::map<std::string, OpFn>& t) { t["GridSample"] = grid_sample; }

}  // namespace lathe::onnx::detail
