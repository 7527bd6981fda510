// Signal processing: window functions, the discrete Fourier transform (as a matmul against a
// float64 DFT matrix, so near-zero bins stay near zero), STFT and the mel filter bank.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

// Sizes these operators allocate on the host, from input values: capped so a bad model fails.
constexpr int64_t kMaxElements = int64_t{1} << 26;

void check_size(const OpContext& c, int64_t elements, const std::string& what) {
  if (elements < 0 || elements > kMaxElements) c.fail(what + " needs " + std::to_string(elements) + " elements, more than 2^26");
}

DType output_dtype(const OpContext& c) { return dtype_from_onnx(static_cast<int32_t>(c.attr_i("output_datatype", 1)), c.where()); }

// A generalized cosine window: a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic)
// or size - 1 (symmetric).
V cosine_window(const OpContext& c, double a0, double a1, double a2) {
  int64_t size = c.int_at0(0);
  if (size < 0) c.fail("window size " + std::to_string(size) + " is negative");
  check_size(c, size, "the window");
  double n_div = c.attr_i("periodic", 1) ? static_cast<double>(size) : static_cast<double>(size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) {
    double t = n_div > 0 ? 2 * std::numbers::pi * static_cast<double>(n) / n_div : 0;
    w[static_cast<size_t>(n)] = a0 - a1 * std::cos(t) + a2 * std::cos(2 * t);
  }
  return V{Tensor::from_vector(w).cast(output_dtype(c))};
}

// DFT of the real/imaginary pair (re, im) along their last axis, `n_in` samples to `n_out` bins
// of a length-`n` transform (samples past `n` are dropped, missing ones are zeros).
std::pair<Tensor, Tensor> dft_last_axis(const OpContext& c, const Tensor& re, const Tensor& im, int64_t n, int64_t n_out, bool inverse) {
  int64_t n_in = re.shape().back();
  if (n_in > 0 && n_out > kMaxElements / n_in) c.fail("a DFT of " + std::to_string(n_in) + " by " + std::to_string(n_out) + " is too large");
  std::vector<double> cos_m(static_cast<size_t>(n_in * n_out)), sin_m(cos_m.size());
  for (int64_t j = 0; j < n_in; ++j)
    for (int64_t k = 0; k < n_out; ++k) {
      double t = j < n ? 2 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n) : 0;
      bool keep = j < n;
      cos_m[static_cast<size_t>(j * n_out + k)] = keep ? std::cos(t) : 0;
      sin_m[static_cast<size_t>(j * n_out + k)] = keep ? (inverse ? std::sin(t) : -std::sin(t)) : 0;
    }
  Tensor cm = Tensor::from_vector(cos_m, Shape{n_in, n_out}), sm = Tensor::from_vector(sin_m, Shape{n_in, n_out});
  // (a + ib)(cos + i sin) = (a cos - b sin) + i (a sin + b cos)
  Tensor out_re = re.matmul(cm) - im.matmul(sm), out_im = re.matmul(sm) + im.matmul(cm);
  if (inverse) out_re = out_re / static_cast<double>(n), out_im = out_im / static_cast<double>(n);
  return {out_re, out_im};
}

// The signal's real and imaginary parts (float64) from its trailing [1] or [2] axis.
std::pair<Tensor, Tensor> complex_parts(const OpContext& c, const Tensor& x) {
  if (x.ndim() < 2 || (x.shape().back() != 1 && x.shape().back() != 2))
    c.fail("the signal's last axis must have size 1 (real) or 2 (complex), shape is " + shape_to_string(x.shape()));
  Tensor v = x.cast(dtypes::float64);
  Tensor re = v.slice(-1, 0, 1).squeeze(-1);
  Tensor im = x.shape().back() == 2 ? v.slice(-1, 1, 2).squeeze(-1) : Tensor::zeros(re.shape(), dtypes::float64);
  return {re, im};
}

V dft(const OpContext& c) {
  const Tensor& x = c.in(0);
  auto [re, im] = complex_parts(c, x);
  // Opset 20 moved the axis to input 2 (default -2, counted over the whole rank, complex axis included).
  int64_t axis = c.opset() >= 20 ? (c.has(2) ? c.int_at0(2) : -2) : c.attr_i("axis", 1);
  if (c.opset() >= 20 && axis < 0) axis += x.ndim();
  axis = axis_of(c, axis, x.ndim() - 1);
  bool inverse = c.attr_i("inverse", 0) != 0, onesided = c.attr_i("onesided", 0) != 0;
  int64_t n = c.has(1) ? c.int_at0(1) : x.shape()[axis];
  if (n <= 0) c.fail("dft_length must be positive, not " + std::to_string(n));
  check_size(c, n, "dft_length");
  int64_t n_out = onesided ? n / 2 + 1 : n;
  re = re.transpose(axis, -1), im = im.transpose(axis, -1);
  auto [out_re, out_im] = dft_last_axis(c, re, im, n, n_out, inverse);
  Tensor out = Tensor::stack({out_re.transpose(axis, -1), out_im.transpose(axis, -1)}, -1);
  return V{out.cast(x.dtype())};
}

V stft(const OpContext& c) {
  const Tensor& x = c.in(0);
  auto [re, im] = complex_parts(c, x);
  int64_t step = c.int_at0(1), signal = re.shape().back();
  int64_t frame = c.has(3) ? c.int_at0(3) : c.has(2) ? c.in(2).numel() : 0;
  if (step <= 0 || frame <= 0 || frame > signal) c.fail("frame_step and frame_length must be positive and fit the signal");
  int64_t frames = (signal - frame) / step + 1;
  std::vector<Tensor> re_frames, im_frames;
  for (int64_t f = 0; f < frames; ++f) {
    re_frames.push_back(re.slice(-1, f * step, f * step + frame));
    im_frames.push_back(im.slice(-1, f * step, f * step + frame));
  }
  Tensor fr = Tensor::stack(re_frames, 1), fi = Tensor::stack(im_frames, 1);
  if (c.has(2)) {
    if (c.in(2).numel() != frame) c.fail("the window's length differs from frame_length");
    Tensor w = c.in(2).cast(dtypes::float64);
    fr = fr * w, fi = fi * w;
  }
  int64_t n_out = c.attr_i("onesided", 1) ? frame / 2 + 1 : frame;
  auto [out_re, out_im] = dft_last_axis(c, fr, fi, frame, n_out, false);
  return V{Tensor::stack({out_re, out_im}, -1).cast(x.dtype())};
}

// Triangular filters evenly spaced on the mel scale, as ONNX's reference builds them.
V mel_weight_matrix(const OpContext& c) {
  int64_t bins = c.int_at0(0), dft_length = c.int_at0(1), rate = c.int_at0(2);
  double lo = c.double_at0(3), hi = c.double_at0(4);
  if (bins <= 0 || dft_length <= 0 || rate <= 0) c.fail("num_mel_bins, dft_length and sample_rate must be positive");
  check_size(c, (dft_length / 2 + 1) * std::min<int64_t>(bins, kMaxElements), "the mel weight matrix");
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo < 0 || hi < lo) c.fail("the edge frequencies must be finite, 0 <= lower <= upper");
  int64_t spectrogram_bins = dft_length / 2 + 1;
  auto to_mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double lo_mel = to_mel(lo), step = (to_mel(hi) - lo_mel) / static_cast<double>(bins + 2);  // ONNX reference: (bins + 2) steps
  std::vector<int64_t> edge(static_cast<size_t>(bins + 2));
  for (int64_t i = 0; i < bins + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595) - 1);
    double bin = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(rate));
    if (!(bin >= 0 && bin < static_cast<double>(kMaxElements))) c.fail("a mel band edge falls outside the spectrogram's bins");
    edge[static_cast<size_t>(i)] = static_cast<int64_t>(bin);
  }
  std::vector<double> w(static_cast<size_t>(spectrogram_bins * bins), 0.0);
  auto at = [&](int64_t row, int64_t col) -> double& {
    if (row < 0 || row >= spectrogram_bins) c.fail("a mel band edge falls outside the spectrogram's bins");
    return w[static_cast<size_t>(row * bins + col)];
  };
  for (int64_t i = 0; i < bins; ++i) {
    int64_t left = edge[static_cast<size_t>(i)], center = edge[static_cast<size_t>(i + 1)], right = edge[static_cast<size_t>(i + 2)];
    if (center == left) at(center, i) = 1;
    for (int64_t j = left; center > left && j <= center; ++j) at(j, i) = static_cast<double>(j - left) / static_cast<double>(center - left);
    for (int64_t j = center; j < right; ++j) at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  return V{Tensor::from_vector(w, Shape{spectrogram_bins, bins}).cast(output_dtype(c))};
}

}  // namespace

void register_signal_ops(std::map<std::string, OpFn>& t) {
  t["HannWindow"] = [](const OpContext& c) { return cosine_window(c, 0.5, 0.5, 0); };
  t["HammingWindow"] = [](const OpContext& c) { return cosine_window(c, 25.0 / 46, 21.0 / 46, 0); };
  t["BlackmanWindow"] = [](const OpContext& c) { return cosine_window(c, 0.42, 0.5, 0.08); };
  t["DFT"] = dft;
  t["STFT"] = stft;
  t["MelWeightMatrix"] = mel_weight_matrix;
}

}  // namespace lathe::onnx::detail
