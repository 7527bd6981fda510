// Sampling an image at fractional positions: GridSample (PyTorch's grid_sample: nearest,
// bilinear and bicubic taps, zeros/border/reflection padding) and RoiAlign. Taps are gathers from the
// flattened image (GridSample stays one lazy graph); RoiAlign runs on the host.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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

// RoiAlign: each region of interest pooled to (output_height, output_width) bins, each bin the
// average (or max) of bilinear samples on a regular grid. The grid's size depends on each
// region's size, so this is a host step of the plan (lathe/host_step.hpp): the regions may come
// from a detector's proposals, whose count is decided as the plan runs.
struct RoiAlignParams {
  int64_t oh, ow, ratio;
  double scale;
  bool max_mode, half_pixel;
  std::string where;
};

// One bilinear sample: the four corners' offsets in a channel's plane and their weights.
struct Sample {
  int64_t at[4];
  double weight[4];
  bool outside;  // beyond the map by more than a pixel: 0 (avg) or a 0 term (max)
};

// Regions are split across the plan's threads (host_parallel_for). The map is read in its own
// float type (float32 for a 16-bit one): the weights and sums are double, the result rounded once.
template <class T>
void roi_align_on_host(const RoiAlignParams& p, const HostTensor& x, const HostTensor& rois_t, const HostTensor& batch_t, const HostTensor& out_t) {
  int64_t n = x.shape[0], ch = x.shape[1], h = x.shape[2], w = x.shape[3], r = rois_t.shape[0];
  const T* img = x.as<T>();
  const double* rois = rois_t.as<double>();
  const int64_t* batch = batch_t.as<int64_t>();
  T* out = out_t.as<T>();
  host_parallel_for(r, [&](int64_t k) {
    int64_t b = batch[k];
    if (b < 0 || b >= n) throw Error(p.where + ": batch index " + std::to_string(b) + " is outside [0, " + std::to_string(n) + ")");
    const double* roi = rois + 4 * k;
    double offset = p.half_pixel ? 0.5 : 0.0;
    double x0 = roi[0] * p.scale - offset, y0 = roi[1] * p.scale - offset, x1 = roi[2] * p.scale - offset, y1 = roi[3] * p.scale - offset;
    double rw = x1 - x0, rh = y1 - y0;
    if (!p.half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);  // legacy: regions at least one pixel
    if (!std::isfinite(rw) || !std::isfinite(rh) || std::fabs(rw) > 1e6 || std::fabs(rh) > 1e6) throw Error(p.where + ": a region is not finite or too large");
    double bh = rh / static_cast<double>(p.oh), bw = rw / static_cast<double>(p.ow);
    int64_t gh = p.ratio > 0 ? p.ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(p.oh)));
    int64_t gw = p.ratio > 0 ? p.ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(p.ow)));
    gh = std::max<int64_t>(gh, 1), gw = std::max<int64_t>(gw, 1);
    double count = static_cast<double>(gh * gw);
    if (static_cast<double>(gh) * static_cast<double>(gw) * static_cast<double>(p.oh * p.ow) > 1 << 24)
      throw Error(p.where + ": a region of " + std::to_string(rw) + " x " + std::to_string(rh) + " needs more than 2^24 samples");
    if (h == 0 || w == 0) {  // nothing to sample: every bin is 0
      std::fill(out + k * ch * p.oh * p.ow, out + (k + 1) * ch * p.oh * p.ow, T(0));
      return;
    }
    // Sample (iy, ix) of bin (py, px): its four corners' offsets in a channel's plane and weights.
    auto sample_at = [&](int64_t py, int64_t px, int64_t iy, int64_t ix) {
      double yy = y0 + static_cast<double>(py) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
      double xx = x0 + static_cast<double>(px) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
      Sample sm{{0, 0, 0, 0}, {0, 0, 0, 0}, yy < -1.0 || yy > static_cast<double>(h) || xx < -1.0 || xx > static_cast<double>(w)};
      if (sm.outside) return sm;
      yy = std::max(yy, 0.0), xx = std::max(xx, 0.0);
      auto yl = static_cast<int64_t>(yy), xl = static_cast<int64_t>(xx), yh = yl + 1, xh = xl + 1;
      if (yl >= h - 1) yl = yh = h - 1, yy = static_cast<double>(yl);
      if (xl >= w - 1) xl = xh = w - 1, xx = static_cast<double>(xl);
      double ly = yy - static_cast<double>(yl), lx = xx - static_cast<double>(xl), hy = 1 - ly, hx = 1 - lx;
      return Sample{{yl * w + xl, yl * w + xh, yh * w + xl, yh * w + xh}, {hy * hx, hy * lx, ly * hx, ly * lx}, false};
    };
    // Bins in chunks of about kChunkSamples samples, so a large region's samples take bounded
    // memory on each thread; each chunk's samples serve every channel.
    constexpr int64_t kChunkSamples = 4096;
    const int64_t per_bin = gh * gw, bins = p.oh * p.ow, chunk = std::max<int64_t>(1, kChunkSamples / per_bin);
    // Scratch kept by each thread from region to region and run to run (no allocation per region).
    thread_local std::vector<Sample> samples;
    thread_local std::vector<std::pair<int64_t, double>> taps;  // an average's merged corners
    thread_local std::vector<size_t> first;                     // each bin's first tap in the chunk
    for (int64_t b0 = 0; b0 < bins; b0 += chunk) {
      int64_t b1 = std::min(bins, b0 + chunk);
      samples.clear();
      for (int64_t bin = b0; bin < b1; ++bin)
        for (int64_t iy = 0; iy < gh; ++iy)
          for (int64_t ix = 0; ix < gw; ++ix) samples.push_back(sample_at(bin / p.ow, bin % p.ow, iy, ix));
      if (!p.max_mode) {
        // An average: each bin is one weighted sum of pixels. Corners its samples share (a small
        // region's neighbouring samples land on the same pixels) are one tap, their weights added;
        // a bin of more than 16 samples keeps its corners unmerged (merging costs the square).
        taps.clear(), first.assign(static_cast<size_t>(b1 - b0) + 1, 0);
        for (int64_t bin = b0; bin < b1; ++bin) {
          size_t from = taps.size();
          for (int64_t i = 0; i < per_bin; ++i) {
            const Sample& q = samples[static_cast<size_t>((bin - b0) * per_bin + i)];
            if (q.outside) continue;
            for (int c4 = 0; c4 < 4; ++c4) {
              auto same = per_bin > 16 ? taps.end()
                                       : std::find_if(taps.begin() + static_cast<std::ptrdiff_t>(from), taps.end(),
                                                      [&](const auto& t) { return t.first == q.at[c4]; });
              if (same != taps.end()) same->second += q.weight[c4];
              else taps.emplace_back(q.at[c4], q.weight[c4]);
            }
          }
          for (size_t i = from; i < taps.size(); ++i) taps[i].second /= count;
          first[static_cast<size_t>(bin - b0) + 1] = taps.size();
        }
      }
      for (int64_t cc = 0; cc < ch; ++cc) {
        const T* plane = img + (b * ch + cc) * h * w;
        T* dst = out + (k * ch + cc) * bins;
        for (int64_t bin = b0; bin < b1; ++bin) {
          if (!p.max_mode) {
            double acc = 0.0;
            for (size_t i = first[static_cast<size_t>(bin - b0)]; i < first[static_cast<size_t>(bin - b0) + 1]; ++i)
              acc += taps[i].second * static_cast<double>(plane[taps[i].first]);
            dst[bin] = static_cast<T>(acc);
            continue;
          }
          double acc = -std::numeric_limits<double>::infinity();
          for (int64_t i = 0; i < per_bin; ++i) {  // as ONNX Runtime: the largest weighted corner
            const Sample& q = samples[static_cast<size_t>((bin - b0) * per_bin + i)];
            if (q.outside) acc = std::max(acc, 0.0);
            else
              for (int c4 = 0; c4 < 4; ++c4) acc = std::max(acc, q.weight[c4] * static_cast<double>(plane[q.at[c4]]));
          }
          dst[bin] = static_cast<T>(acc);
        }
      }
    }
  });
}

V roi_align(const OpContext& c) {
  const Tensor &x = c.in(0), &rois_t = c.in(1), &batch_t = c.in(2);
  SymShape xs = x.symbolic_shape(), rs = rois_t.symbolic_shape(), bs = batch_t.symbolic_shape();
  if (xs.size() != 4 || rs.size() != 2 || !(rs[1] == SInt(4)) || bs.size() != 1 || !(bs[0] == rs[0]))
    c.fail("needs X (N, C, H, W), rois (R, 4) and batch_indices (R), got " + shape_to_string(xs) + ", " + shape_to_string(rs) + ", " +
           shape_to_string(bs));
  RoiAlignParams p{c.attr_i("output_height", 1), c.attr_i("output_width", 1), c.attr_i("sampling_ratio", 0), c.attr_f("spatial_scale", 1.0),
                   false, false, c.where()};
  if (p.oh <= 0 || p.ow <= 0 || p.ratio < 0 || p.oh > 4096 || p.ow > 4096) c.fail("output sizes must be in [1, 4096], sampling_ratio not negative");
  std::string mode = c.attr_s("mode", "avg"), ct = c.attr_s("coordinate_transformation_mode", c.opset() < 16 ? "output_half_pixel" : "half_pixel");
  if (mode != "avg" && mode != "max") c.fail("mode '" + mode + "' is not avg or max");
  if (ct != "half_pixel" && ct != "output_half_pixel") c.fail("coordinate_transformation_mode '" + ct + "' is not supported");
  p.max_mode = mode == "max", p.half_pixel = ct == "half_pixel";
  DType t = x.dtype() == dtypes::float64 ? dtypes::float64 : dtypes::float32;
  auto step = std::make_shared<HostStep>();
  step->name = c.where();
  step->outputs = {{t, {rs[0], xs[1], p.oh, p.ow}}};
  step->run = [p](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    if (in[0].dtype == dtypes::float64) roi_align_on_host<double>(p, in[0], in[1], in[2], out[0]);
    else roi_align_on_host<float>(p, in[0], in[1], in[2], out[0]);
    return std::vector<int64_t>{};
  };
  Tensor pooled = Tensor::host_step(step, {x.cast(t), rois_t.cast(dtypes::float64), batch_t.cast(dtypes::int64)})[0];
  return V{pooled.cast(x.dtype())};
}

}  // namespace

void register_sampling_ops(std::map<std::string, OpFn>& t) {
  t["GridSample"] = grid_sample;
  t["RoiAlign"] = roi_align;
}

}  // namespace lathe::onnx::detail
