// Resize: each resized axis is a matrix W (out x in) of interpolation weights (nearest: one 1 per
// row; linear: two taps; cubic: four) from the output-to-input coordinate map, applied as shifted
// views where the ratio is whole (resample_by_shifts), else by matmul. One axis at a time.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "tensor/tensor_util.hpp"

namespace lathe {
namespace {

[[noreturn]] void fail_resize(const Tensor& x, const std::string& why) {
  throw ShapeError("resize of " + shape_to_string(x.shape()) + ": " + why);
}

// x (float) resized along `ax` by the interpolation matrix w (out x in, row-major) as a sum of
// shifted views, where out is a multiple of in (upsampling by r: output o = r*i + p reads around
// input i, the same taps for each phase p) or in a multiple of out (downsampling by r: output o
// reads around r*o), and every row holds its phase's taps, the input's edge repeated past its
// ends: a few multiply-adds per element (none for nearest) where the matrix costs `in`. Empty
// where the matrix has another form (a ratio that is not whole, crops, taps renormalized at the
// edges).
std::optional<Tensor> resample_by_shifts(const Tensor& x, int64_t ax, const std::vector<float>& w, int64_t in, int64_t out) {
  bool up = out % in == 0;
  if (!up && in % out != 0) return std::nullopt;
  int64_t r = up ? out / in : in / out, phases = up ? r : 1;
  auto q = [&](int64_t o) { return up ? o / r : o * r; };  // the input position row o reads around
  // Each phase's taps, from a row in the middle: (shift from q, weight).
  std::vector<std::vector<std::pair<int64_t, float>>> taps(static_cast<size_t>(phases));
  for (int64_t p = 0; p < phases; ++p) {
    int64_t o = up ? r * (in / 2) + p : out / 2;
    for (int64_t col = 0; col < in; ++col)
      if (float v = w[static_cast<size_t>(o * in + col)]; v != 0.0f) taps[static_cast<size_t>(p)].emplace_back(col - q(o), v);
  }
  // Every row must be its phase's taps, clamped to the input.
  std::vector<float> rebuilt(w.size(), 0.0f);
  for (int64_t o = 0; o < out; ++o)
    for (const auto& [d, v] : taps[static_cast<size_t>(up ? o % r : 0)])
      rebuilt[static_cast<size_t>(o * in + std::clamp<int64_t>(q(o) + d, 0, in - 1))] += v;
  for (size_t i = 0; i < w.size(); ++i)
    if (std::abs(rebuilt[i] - w[i]) > 1e-6f) return std::nullopt;
  std::map<int64_t, std::vector<float>> by_shift;  // shift -> its weight in each phase
  for (int64_t p = 0; p < phases; ++p)
    for (const auto& [d, v] : taps[static_cast<size_t>(p)]) {
      auto [it, fresh] = by_shift.try_emplace(d, std::vector<float>(static_cast<size_t>(phases), 0.0f));
      it->second[static_cast<size_t>(p)] = v;
    }
  if (by_shift.empty()) return std::nullopt;
  // The input with its first and last elements repeated as far as any shift reads past them
  // (stored once where several shifts read it; each shift is a slice of it).
  int64_t last = up ? in - 1 : r * (out - 1);  // the last input position a view reads around
  int64_t before = std::max<int64_t>(0, -by_shift.begin()->first), after = std::max<int64_t>(0, last + by_shift.rbegin()->first - (in - 1));
  std::vector<std::pair<SInt, SInt>> ends(static_cast<size_t>(x.ndim()), {0, 0});
  ends[static_cast<size_t>(ax)] = {before, after};
  Tensor ext = x.pad(ends, PadMode::edge);
  std::optional<Tensor> sum;
  for (const auto& [d, weights] : by_shift) {
    int64_t start = before + d;
    Tensor view = up ? ext.slice(ax, start, start + in) : ext.slice(ax, start, start + r * (out - 1) + 1, r);
    Tensor term = view;
    bool ones = std::all_of(weights.begin(), weights.end(), [](float v) { return v == 1.0f; });
    if (up) {
      SymShape phased = x.symbolic_shape();
      phased.insert(phased.begin() + ax + 1, r);
      Shape along(phased.size(), 1);
      along[static_cast<size_t>(ax + 1)] = r;
      term = ones ? view.unsqueeze(ax + 1).expand(phased) : view.unsqueeze(ax + 1) * Tensor::from_vector(weights, along);
    } else if (!ones) {
      term = view * Tensor::full({}, weights[0], view.dtype());
    }
    sum = sum ? *sum + term : term;
  }
  if (!up) return sum;
  SymShape merged = x.symbolic_shape();
  merged[static_cast<size_t>(ax)] = out;
  return sum->reshape(merged);
}

// `x` resized to `sizes` or by `scales` (one of them empty) under `o`.
Tensor resized(const Tensor& x, const std::vector<int64_t>& sizes, const std::vector<double>& scales, const ResizeOptions& o) {
  int64_t nd = x.ndim();
  if (sizes.empty() && scales.size() != static_cast<size_t>(nd)) fail_resize(x, "needs one scale per axis, got " + std::to_string(scales.size()));
  if (scales.empty() && sizes.size() != static_cast<size_t>(nd)) fail_resize(x, "needs one size per axis, got " + std::to_string(sizes.size()));
  for (double s : scales)
    if (!(s > 0) || !std::isfinite(s)) fail_resize(x, "scales must be positive and finite");
  bool crop = o.coordinate_transformation == "tf_crop_and_resize";
  if (crop && o.roi.size() != static_cast<size_t>(2 * nd)) fail_resize(x, "tf_crop_and_resize needs an roi of 2 values per axis");
  if (o.mode != "nearest" && o.mode != "linear" && o.mode != "cubic") fail_resize(x, "mode '" + o.mode + "' is not nearest, linear or cubic");
  if (o.nearest_mode != "round_prefer_floor" && o.nearest_mode != "round_prefer_ceil" && o.nearest_mode != "floor" && o.nearest_mode != "ceil")
    fail_resize(x, "nearest_mode '" + o.nearest_mode + "' is not round_prefer_floor, round_prefer_ceil, floor or ceil");
  DType dt = x.dtype();
  Tensor r = x.cast(dtypes::float32);
  const std::string &mode = o.mode, &ct = o.coordinate_transformation, &nearest = o.nearest_mode;
  const std::vector<double>& roi = o.roi;
  double a = o.cubic_coeff_a, extrapolation = o.extrapolation_value;
  bool exclude = o.exclude_outside;
  for (int64_t ax = 0; ax < nd; ++ax) {
    int64_t in = x.shape()[static_cast<size_t>(ax)];
    double span = crop ? roi[static_cast<size_t>(ax + nd)] - roi[static_cast<size_t>(ax)] : 1.0;
    int64_t out = sizes.empty() ? static_cast<int64_t>(std::floor(static_cast<double>(in) * span * scales[static_cast<size_t>(ax)])) : sizes[static_cast<size_t>(ax)];
    if (out < 0 || out > (int64_t{1} << 24)) fail_resize(x, "output size " + std::to_string(out) + " is outside [0, 2^24]");
    double scale = sizes.empty() ? scales[static_cast<size_t>(ax)] : static_cast<double>(out) / static_cast<double>(in);
    if (out == in && scale == 1.0 && !crop) continue;
    if (in == 0) fail_resize(x, "axis " + std::to_string(ax) + " is empty and cannot be resized to " + std::to_string(out));
    std::vector<float> w(static_cast<size_t>(out * in), 0.0f);
    std::vector<uint8_t> outside(static_cast<size_t>(out), 0);
    auto add = [&](int64_t row, int64_t col, double v) {
      col = std::clamp<int64_t>(col, 0, in - 1);
      w[static_cast<size_t>(row * in + col)] += static_cast<float>(v);
    };
    for (int64_t o = 0; o < out; ++o) {
      double xo;
      if (ct == "half_pixel") xo = (o + 0.5) / scale - 0.5;
      else if (ct == "pytorch_half_pixel") xo = out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
      else if (ct == "align_corners") {
        double len = sizes.empty() ? static_cast<double>(in) * scale : static_cast<double>(out);  // unrounded when scaled
        xo = len <= 1 ? 0.0 : o * static_cast<double>(in - 1) / (len - 1);
      }
      else if (ct == "asymmetric") xo = o / scale;
      else if (ct == "tf_half_pixel_for_nn") xo = (o + 0.5) / scale;
      else if (crop) {
        double lo = roi[static_cast<size_t>(ax)], hi = roi[static_cast<size_t>(ax + nd)], last = static_cast<double>(in - 1);
        xo = out > 1 ? lo * last + static_cast<double>(o) * (hi - lo) * last / static_cast<double>(out - 1) : 0.5 * (lo + hi) * last;
        if (xo < 0 || xo > last) {
          outside[static_cast<size_t>(o)] = 1;
          continue;
        }
      }
      else fail_resize(x, "coordinate_transformation '" + ct + "' is not one of half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize");
      if (mode == "nearest") {
        double f = std::floor(xo), frac = xo - f;
        int64_t i;
        if (nearest == "floor") i = static_cast<int64_t>(f);
        else if (nearest == "ceil") i = static_cast<int64_t>(std::ceil(xo));
        else if (nearest == "round_prefer_ceil") i = static_cast<int64_t>(frac >= 0.5 ? f + 1 : f);
        else i = static_cast<int64_t>(frac > 0.5 ? f + 1 : f);
        add(o, i, 1.0);
      } else if (mode == "linear") {
        double f = std::floor(xo), t = xo - f;
        if (ct != "asymmetric" && ct != "align_corners") xo = std::clamp(xo, 0.0, static_cast<double>(in - 1)), f = std::floor(xo), t = xo - f;
        add(o, static_cast<int64_t>(f), 1.0 - t);
        add(o, static_cast<int64_t>(f) + 1, t);
      } else {
        double f = std::floor(xo), t = xo - f;
        double k[4] = {((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
                       ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
                       ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a};
        double total = 0;
        for (int j = 0; j < 4; ++j) {
          int64_t col = static_cast<int64_t>(f) - 1 + j;
          if (exclude && (col < 0 || col >= in)) k[j] = 0;
          total += k[j];
        }
        for (int j = 0; j < 4; ++j) add(o, static_cast<int64_t>(f) - 1 + j, exclude ? k[j] / total : k[j]);
      }
    }
    std::optional<Tensor> shifted = crop ? std::nullopt : resample_by_shifts(r, ax, w, in, out);
    r = shifted ? *shifted : r.transpose(ax, -1).matmul(Tensor::from_vector(w, {out, in}).transpose(0, 1)).transpose(ax, -1);
    if (std::find(outside.begin(), outside.end(), 1) != outside.end()) {
      Shape along(static_cast<size_t>(nd), 1);
      along[static_cast<size_t>(ax)] = out;
      std::vector<bool> mask(outside.begin(), outside.end());
      r = Tensor::from_vector(mask, along).where(Tensor::full({}, extrapolation, r.dtype()), r);
    }
  }
  return dt.is_float() ? r.cast(dt) : r.round().cast(dt);
}

}  // namespace

Tensor Tensor::resize(const std::vector<int64_t>& sizes, const ResizeOptions& options) const {
  if (sizes.empty() && ndim() > 0) throw ShapeError("resize of " + shape_to_string(shape_) + ": needs one size per axis, got none");
  return resized(*this, sizes, {}, options);
}

Tensor Tensor::resize_by_scales(const std::vector<double>& scales, const ResizeOptions& options) const {
  if (scales.empty() && ndim() > 0) throw ShapeError("resize of " + shape_to_string(shape_) + ": needs one scale per axis, got none");
  return resized(*this, {}, scales, options);
}

}  // namespace lathe
