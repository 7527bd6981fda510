// The optimizers of the ai.onnx.preview.training domain: one update step of Adagrad, Adam and
// Momentum over any number of tensors (inputs R, T, then the Xs, their Gs, and their states).
#include <cmath>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

// The tensors each optimizer takes after R and T: n groups (X, G, states...) of `groups` lists.
size_t group_size(const OpContext& c, size_t groups) {
  size_t rest = c.num_inputs() - 2;
  if (c.num_inputs() < 2 || rest % groups != 0) c.fail("expects R, T and " + std::to_string(groups) + " equally long lists of tensors");
  return rest / groups;
}

Tensor as_dtype(const Tensor& scalar, const Tensor& like) { return scalar.reshape(Shape{}).cast(like.dtype()); }

V adagrad(const OpContext& c) {
  size_t n = group_size(c, 3);
  double decay = c.attr_f("decay_factor", 0), eps = c.attr_f("epsilon", 1e-6), norm = c.attr_f("norm_coefficient", 0);
  Tensor rate = c.in(0).cast(dtypes::float64) / (c.in(1).cast(dtypes::float64) * decay + 1.0);
  V xs, hs;
  for (size_t i = 0; i < n; ++i) {
    const Tensor &x = c.in(2 + i), &g = c.in(2 + n + i), &h = c.in(2 + 2 * n + i);
    Tensor reg = x * norm + g;
    Tensor h_new = h + reg * reg;
    xs.push_back(x - as_dtype(rate, x) * reg / (h_new.sqrt() + eps));
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

V adam(const OpContext& c) {
  size_t n = group_size(c, 4);
  double alpha = c.attr_f("alpha", 0.9), beta = c.attr_f("beta", 0.999), eps = c.attr_f("epsilon", 1e-6);
  double norm = c.attr_f("norm_coefficient", 0), norm_post = c.attr_f("norm_coefficient_post", 0);
  double steps = static_cast<double>(c.int_at0(1));
  double rate = c.double_at0(0);
  if (steps > 0) rate *= std::sqrt(1 - std::pow(beta, steps)) / (1 - std::pow(alpha, steps));
  V xs, vs, hs;
  for (size_t i = 0; i < n; ++i) {
    const Tensor &x = c.in(2 + i), &g = c.in(2 + n + i), &v = c.in(2 + 2 * n + i), &h = c.in(2 + 3 * n + i);
    Tensor reg = x * norm + g;
    Tensor v_new = v * alpha + reg * (1 - alpha);
    Tensor h_new = h * beta + reg * reg * (1 - beta);
    Tensor x_new = x - v_new / (h_new.sqrt() + eps) * rate;
    xs.push_back(x_new * (1 - norm_post));
    vs.push_back(v_new);
    hs.push_back(h_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

V momentum(const OpContext& c) {
  size_t n = group_size(c, 3);
  double alpha = c.attr_f("alpha", 0), beta = c.attr_f("beta", 0), norm = c.attr_f("norm_coefficient", 0);
  std::string mode = c.attr_s("mode", "standard");
  if (mode != "standard" && mode != "nesterov") c.fail("mode '" + mode + "' is not 'standard' or 'nesterov'");
  if (c.int_at0(1) <= 0) beta = 1;  // the first step takes the whole gradient
  double rate = c.double_at0(0);
  V xs, vs;
  for (size_t i = 0; i < n; ++i) {
    const Tensor &x = c.in(2 + i), &g = c.in(2 + n + i), &v = c.in(2 + 2 * n + i);
    Tensor reg = x * norm + g;
    Tensor v_new = v * alpha + reg * beta;
    xs.push_back(mode == "standard" ? x - v_new * rate : x - (reg + v_new * alpha) * rate);
    vs.push_back(v_new);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

}  // namespace

void register_training_ops(std::map<std::string, OpFn>& t) {
  t["Adagrad"] = adagrad;
  t["Adam"] = adam;
  t["Momentum"] = momentum;
}

}  // namespace lathe::onnx::detail
