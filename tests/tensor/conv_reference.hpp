// 2-D convolutions' and transposed convolutions' arguments and their plain-loop references in
// float64, for the tests of Tensor::conv2d, conv_transpose2d and the methods and rules they are
// computed by; and how many direct convolutions a graph holds, for the rules' tests.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "ir/toposort.hpp"
#include "tensor/direct_convolution.hpp"

namespace lathe::test {

struct ConvArgs {
  int64_t n, c, h, w, o, kh, kw;
  std::pair<int64_t, int64_t> stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
  bool bias = false;
  bool computed = false;  // the input is computed (2x), not a stored buffer
};

inline std::vector<double> conv_ref(const std::vector<float>& x, const std::vector<float>& wt, const std::vector<float>& b,
                                    const ConvArgs& a, int64_t& oh, int64_t& ow) {
  auto [sh, sw] = a.stride;
  auto [ph, pw] = a.padding;
  auto [dh, dw] = a.dilation;
  oh = (a.h + 2 * ph - dh * (a.kh - 1) - 1) / sh + 1;
  ow = (a.w + 2 * pw - dw * (a.kw - 1) - 1) / sw + 1;
  int64_t cg = a.c / a.groups, og = a.o / a.groups;
  std::vector<double> out;
  for (int64_t n = 0; n < a.n; ++n)
    for (int64_t o = 0; o < a.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double acc = a.bias ? b[o] : 0.0;
          int64_t g = o / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < a.kh; ++ky)
              for (int64_t kx = 0; kx < a.kw; ++kx) {
                int64_t iy = y * sh - ph + ky * dh, ix = xo * sw - pw + kx * dw;
                if (iy < 0 || iy >= a.h || ix < 0 || ix >= a.w) continue;
                acc += double(x[((n * a.c + g * cg + ci) * a.h + iy) * a.w + ix]) *
                       wt[((o * cg + ci) * a.kh + ky) * a.kw + kx];
              }
          out.push_back(acc);
        }
  return out;
}

// Row-major positions of a box of `dims`, each visited once.
inline void for_each(const std::vector<int64_t>& dims, const std::function<void(const std::vector<int64_t>&)>& f) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  for (int64_t flat = 0; flat < total; ++flat) {
    std::vector<int64_t> idx(dims.size());
    int64_t rest = flat;
    for (size_t i = dims.size(); i-- > 0;) idx[i] = rest % dims[i], rest /= dims[i];
    f(idx);
  }
}

inline int64_t flat_of(const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  int64_t f = 0;
  for (size_t i = 0; i < dims.size(); ++i) f = f * dims[i] + idx[i];
  return f;
}

struct Geometry {
  std::vector<int64_t> in, kernel, stride, dilation;  // spatial
  std::vector<std::pair<int64_t, int64_t>> padding;
  std::vector<int64_t> out() const {
    std::vector<int64_t> o;
    for (size_t i = 0; i < in.size(); ++i)
      o.push_back((in[i] + padding[i].first + padding[i].second - dilation[i] * (kernel[i] - 1) - 1) / stride[i] + 1);
    return o;
  }
  Window window() const { return Window{.stride = stride, .padding = padding, .dilation = dilation}; }
};

// The convolution's definition: out[n, o, p] = bias[o] + sum over c in o's group and taps k of
// x[n, c, p * s + k * d - before] w[o, c, k], where that position is inside the input. The taps
// inside the input are listed once per output position (as offsets within a channel), so the sum
// over channels allocates nothing: the sanitizer build runs it at 3-D sizes.
inline std::vector<double> conv_nd_ref(const std::vector<float>& x, const std::vector<float>& w,
                                       const std::vector<float>* bias, int64_t n, int64_t c, int64_t o, int64_t groups,
                                       const Geometry& g) {
  std::vector<int64_t> out = g.out();
  int64_t cg = c / groups, og = o / groups, in_size = 1, taps_size = 1;
  for (int64_t d : g.in) in_size *= d;
  for (int64_t d : g.kernel) taps_size *= d;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> inside;  // per output position: (input offset, tap)
  for_each(out, [&](const std::vector<int64_t>& p) {
    auto& taps = inside.emplace_back();
    for_each(g.kernel, [&](const std::vector<int64_t>& k) {
      std::vector<int64_t> at(p.size());
      for (size_t i = 0; i < p.size(); ++i) {
        at[i] = p[i] * g.stride[i] + k[i] * g.dilation[i] - g.padding[i].first;
        if (at[i] < 0 || at[i] >= g.in[i]) return;
      }
      taps.emplace_back(flat_of(at, g.in), flat_of(k, g.kernel));
    });
  });
  std::vector<double> r;
  r.reserve(static_cast<size_t>(n * o) * inside.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc)
      for (const auto& taps : inside) {
        double acc = bias ? (*bias)[static_cast<size_t>(oc)] : 0.0;
        for (int64_t ci = 0; ci < cg; ++ci) {
          const float* xc = x.data() + (b * c + oc / og * cg + ci) * in_size;
          const float* wc = w.data() + (oc * cg + ci) * taps_size;
          for (const auto& [xi, k] : taps) acc += double(xc[xi]) * wc[k];
        }
        r.push_back(acc);
      }
  return r;
}

// A transposed convolution: cout_per_group output channels a group, strides, padding, output
// padding and dilation per axis.
struct ConvT {
  int64_t n, cin, h, w, cout_per_group, kh, kw, sh, sw, ph, pw, oph, opw, groups, dh, dw;
};

// Each input element scattered through the kernel: y[n, g*og + o, i*s - p + k*d] += x[n, g*cg + c, i] * w[g*cg + c, o, k].
inline std::vector<double> conv_transpose_ref(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& bias,
                                       const ConvT& c, int64_t& oh, int64_t& ow) {
  oh = (c.h - 1) * c.sh - 2 * c.ph + c.dh * (c.kh - 1) + 1 + c.oph;
  ow = (c.w - 1) * c.sw - 2 * c.pw + c.dw * (c.kw - 1) + 1 + c.opw;
  int64_t cg = c.cin / c.groups, cout = c.cout_per_group * c.groups;
  std::vector<double> y(static_cast<size_t>(c.n * cout * oh * ow), 0.0);
  for (int64_t b = 0; b < c.n; ++b)
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t i = 0; i < oh * ow; ++i) y[static_cast<size_t>((b * cout + o) * oh * ow + i)] = bias.empty() ? 0.0 : bias[static_cast<size_t>(o)];
  for (int64_t b = 0; b < c.n; ++b)
    for (int64_t ci = 0; ci < c.cin; ++ci)
      for (int64_t i = 0; i < c.h; ++i)
        for (int64_t j = 0; j < c.w; ++j)
          for (int64_t o = 0; o < c.cout_per_group; ++o)
            for (int64_t ki = 0; ki < c.kh; ++ki)
              for (int64_t kj = 0; kj < c.kw; ++kj) {
                int64_t yi = i * c.sh - c.ph + ki * c.dh, yj = j * c.sw - c.pw + kj * c.dw;
                if (yi < 0 || yi >= oh || yj < 0 || yj >= ow) continue;
                int64_t g = ci / cg, out_ch = g * c.cout_per_group + o;
                double xv = x[static_cast<size_t>(((b * c.cin + ci) * c.h + i) * c.w + j)];
                double wv = w[static_cast<size_t>(((ci * c.cout_per_group + o) * c.kh + ki) * c.kw + kj)];
                y[static_cast<size_t>(((b * cout + out_ch) * oh + yi) * ow + yj)] += xv * wv;
              }
  return y;
}

/// How many direct convolutions (conv2d's sums, detail::direct_sums) the graph of `roots` holds.
inline size_t direct_sum_count(const std::vector<UOpPtr>& roots) {
  return detail::direct_sums(UOp::make(Ops::SINK, dtypes::void_, roots)).size();
}

}  // namespace lathe::test
