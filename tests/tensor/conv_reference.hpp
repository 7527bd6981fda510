// A 2-D convolution's arguments and its plain-loop reference in float64, for the tests of
// Tensor::conv2d and of the methods it chooses between (tensor/nn_test, tensor/winograd_test).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

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

}  // namespace lathe::test
