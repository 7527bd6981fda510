// Det: determinants of (..., M, M) matrices by LU decomposition with partial pivoting, in float64
// on the host, from the input computed when the graph is built.
#include <cmath>
#include <utility>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

double determinant(std::vector<double> a, int64_t n) {
  double det = 1;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < n; ++r)
      if (std::fabs(a[static_cast<size_t>(r * n + col)]) > std::fabs(a[static_cast<size_t>(pivot * n + col)])) pivot = r;
    double p = a[static_cast<size_t>(pivot * n + col)];
    if (p == 0) return 0;
    if (pivot != col) {
      for (int64_t k = 0; k < n; ++k) std::swap(a[static_cast<size_t>(pivot * n + k)], a[static_cast<size_t>(col * n + k)]);
      det = -det;
    }
    det *= p;
    for (int64_t r = col + 1; r < n; ++r) {
      double f = a[static_cast<size_t>(r * n + col)] / p;
      for (int64_t k = col; k < n; ++k) a[static_cast<size_t>(r * n + k)] -= f * a[static_cast<size_t>(col * n + k)];
    }
  }
  return det;
}

V det(const OpContext& c) {
  const Tensor& x = c.in(0);
  if (x.ndim() < 2 || x.shape()[x.ndim() - 1] != x.shape()[x.ndim() - 2] || !x.dtype().is_float())
    c.fail("needs float (..., M, M) matrices, got " + x.dtype().name() + " " + shape_to_string(x.shape()));
  int64_t n = x.shape().back(), count = n == 0 ? 0 : x.numel() / (n * n);
  c.require_build_time(x, "input 0");
  std::vector<double> all = x.cast(dtypes::float64).to_vector<double>(), out;
  for (int64_t m = 0; m < count; ++m)
    out.push_back(determinant(std::vector<double>(all.begin() + m * n * n, all.begin() + (m + 1) * n * n), n));
  Shape batch(x.shape().begin(), x.shape().end() - 2);
  if (n == 0) {  // the empty product, once per matrix of the batch
    size_t matrices = 1;
    for (int64_t d : batch) matrices *= static_cast<size_t>(d);
    out.assign(matrices, 1.0);
  }
  return V{Tensor::from_vector(out, batch).cast(x.dtype())};
}

}  // namespace

void register_linalg_ops(std::map<std::string, OpFn>& t) { t["Det"] = det; }

}  // namespace lathe::onnx::detail
