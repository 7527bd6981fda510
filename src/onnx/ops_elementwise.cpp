// Elementwise ONNX operators.
#include <cmath>
#include <limits>

#include "onnx/ops.hpp"

namespace lathe::onnx::detail {
namespace {

using V = std::vector<Tensor>;

Tensor like(const Tensor& t, double v) { return Tensor::full({}, v, t.dtype()); }

// Integer division truncates toward zero (C and ONNX's integer Div); floats divide exactly.
Tensor divide(const Tensor& a, const Tensor& b) { return a.dtype().is_float() || b.dtype().is_float() ? a / b : a.idiv(b); }

// fmod = 1: the dividend's sign (C's fmod); else the divisor's (Python's %).
Tensor mod(const OpContext& c) { return c.attr_i("fmod", 0) != 0 ? c.in(0).fmod(c.in(1)) : c.in(0).remainder(c.in(1)); }

template <class F>
OpFn unary(F f) {
  return [f](const OpContext& c) { return V{f(c, c.in(0))}; };
}

OpFn binary(Tensor (*f)(const Tensor&, const Tensor&)) {
  return [f](const OpContext& c) { return V{f(c.in(0), c.in(1))}; };
}

// Max, Min, Sum, Mean over any number of inputs, broadcasting.
OpFn variadic(const char* name) {
  std::string op = name;
  return [op](const OpContext& c) {
    Tensor acc = c.in(0);
    for (size_t i = 1; i < c.num_inputs(); ++i) {
      const Tensor& x = c.in(i);
      if (op == "Max") acc = acc.maximum(x);
      else if (op == "Min") acc = acc.minimum(x);
      else acc = acc + x;
    }
    if (op == "Mean") acc = acc / static_cast<double>(c.num_inputs());
    return V{acc.cast(c.in(0).dtype())};
  };
}

}  // namespace

void register_elementwise_ops(std::map<std::string, OpFn>& t) {
  t["Add"] = binary([](const Tensor& a, const Tensor& b) { return a + b; });
  t["Sub"] = binary([](const Tensor& a, const Tensor& b) { return a - b; });
  t["Mul"] = binary([](const Tensor& a, const Tensor& b) { return a * b; });
  t["Div"] = binary(divide);
  t["Mod"] = [](const OpContext& c) { return V{mod(c)}; };
  t["Pow"] = [](const OpContext& c) {
    const Tensor &x = c.in(0), &y = c.in(1);
    // A constant scalar exponent (LayerNorm's square as exported before opset 17) is a number:
    // x.pow(2) multiplies, where a loaded exponent would call pow for every element.
    if (x.dtype().is_float() && y.numel() == 1 && y.ndim() <= x.ndim() && y.is_realized() && y.buffer().is_constant()) {
      if (y.dtype() == dtypes::float32) return V{x.pow(static_cast<double>(y.to_vector<float>()[0]))};
      if (y.dtype() == dtypes::float64) return V{x.pow(y.to_vector<double>()[0])};
    }
    if (x.dtype().is_float()) return V{x.pow(y.cast(x.dtype()))};
    return V{x.pow(y).cast(x.dtype())};
  };
  t["Equal"] = binary([](const Tensor& a, const Tensor& b) { return a == b; });
  t["Less"] = binary([](const Tensor& a, const Tensor& b) { return a < b; });
  t["LessOrEqual"] = binary([](const Tensor& a, const Tensor& b) { return a <= b; });
  t["Greater"] = binary([](const Tensor& a, const Tensor& b) { return a > b; });
  t["GreaterOrEqual"] = binary([](const Tensor& a, const Tensor& b) { return a >= b; });
  t["And"] = binary([](const Tensor& a, const Tensor& b) { return a.logical_and(b); });
  t["Or"] = binary([](const Tensor& a, const Tensor& b) { return a.logical_or(b); });
  t["Xor"] = binary([](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); });
  t["BitwiseAnd"] = binary([](const Tensor& a, const Tensor& b) { return a.bitwise_and(b); });
  t["BitwiseOr"] = binary([](const Tensor& a, const Tensor& b) { return a.bitwise_or(b); });
  t["BitwiseXor"] = binary([](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); });
  t["BitShift"] = [](const OpContext& c) {
    const Tensor &x = c.in(0), &s = c.in(1);
    return V{c.attr_s("direction", "") == "LEFT" ? x.lshift(s) : x.rshift(s)};
  };
  t["Max"] = variadic("Max");
  t["Min"] = variadic("Min");
  t["Sum"] = variadic("Sum");
  t["Mean"] = variadic("Mean");
  t["Where"] = [](const OpContext& c) { return V{c.in(0).where(c.in(1), c.in(2))}; };
  t["Not"] = unary([](const OpContext&, const Tensor& x) { return x.logical_not(); });

  t["Abs"] = unary([](const OpContext&, const Tensor& x) { return x.abs(); });
  t["Neg"] = unary([](const OpContext&, const Tensor& x) { return x.neg(); });
  t["Exp"] = unary([](const OpContext&, const Tensor& x) { return x.exp(); });
  t["Log"] = unary([](const OpContext&, const Tensor& x) { return x.log(); });
  t["Sqrt"] = unary([](const OpContext&, const Tensor& x) { return x.sqrt(); });
  t["Reciprocal"] = unary([](const OpContext&, const Tensor& x) { return x.reciprocal(); });
  t["Sin"] = unary([](const OpContext&, const Tensor& x) { return x.sin(); });
  t["Cos"] = unary([](const OpContext&, const Tensor& x) { return x.cos(); });
  t["Tan"] = unary([](const OpContext&, const Tensor& x) { return x.tan(); });
  t["Tanh"] = unary([](const OpContext&, const Tensor& x) { return x.tanh(); });
  t["Sinh"] = unary([](const OpContext&, const Tensor& x) { return x.sinh(); });
  t["Cosh"] = unary([](const OpContext&, const Tensor& x) { return x.cosh(); });
  t["Asinh"] = unary([](const OpContext&, const Tensor& x) { return x.asinh(); });
  t["Acosh"] = unary([](const OpContext&, const Tensor& x) { return x.acosh(); });
  t["Atanh"] = unary([](const OpContext&, const Tensor& x) { return x.atanh(); });
  t["Atan"] = unary([](const OpContext&, const Tensor& x) { return x.atan(); });
  t["Asin"] = unary([](const OpContext&, const Tensor& x) { return x.asin(); });
  t["Acos"] = unary([](const OpContext&, const Tensor& x) { return x.acos(); });
  t["Shrink"] = unary([](const OpContext& c, const Tensor& x) {
    double l = c.attr_f("lambd", 0.5), b = c.attr_f("bias", 0.0);
    return (x < like(x, -l)).where(x + like(x, b), (x > like(x, l)).where(x - like(x, b), like(x, 0))).cast(x.dtype());
  });
  t["Sigmoid"] = unary([](const OpContext&, const Tensor& x) { return x.sigmoid(); });
  t["Relu"] = unary([](const OpContext&, const Tensor& x) { return x.relu(); });
  t["Floor"] = unary([](const OpContext&, const Tensor& x) { return x.floor(); });
  t["Ceil"] = unary([](const OpContext&, const Tensor& x) { return x.ceil(); });
  t["Round"] = unary([](const OpContext&, const Tensor& x) { return x.round(); });
  t["Sign"] = unary([](const OpContext&, const Tensor& x) { return x.sign(); });
  t["Erf"] = unary([](const OpContext&, const Tensor& x) { return x.erf(); });
  t["Softplus"] = unary([](const OpContext&, const Tensor& x) { return x.softplus(); });
  t["Softsign"] = unary([](const OpContext&, const Tensor& x) { return x.softsign(); });
  t["IsNaN"] = unary([](const OpContext&, const Tensor& x) { return x != x; });
  t["IsInf"] = unary([](const OpContext& c, const Tensor& x) {
    double inf = std::numeric_limits<double>::infinity();
    Tensor pos = x == like(x, inf), neg = x == like(x, -inf);
    bool p = c.attr_i("detect_positive", 1) != 0, n = c.attr_i("detect_negative", 1) != 0;
    if (p && n) return pos.logical_or(neg);
    if (p) return pos;
    if (n) return neg;
    return Tensor::zeros(x.shape(), dtypes::bool_);
  });
  t["Elu"] = unary([](const OpContext& c, const Tensor& x) { return x.elu(c.attr_f("alpha", 1.0)); });
  t["Celu"] = unary([](const OpContext& c, const Tensor& x) { return x.celu(c.attr_f("alpha", 1.0)); });
  t["Selu"] = unary([](const OpContext& c, const Tensor& x) {
    return x.selu(c.attr_f("alpha", 1.67326319217681884765625), c.attr_f("gamma", 1.05070102214813232421875));
  });
  t["LeakyRelu"] = unary([](const OpContext& c, const Tensor& x) { return x.leaky_relu(c.attr_f("alpha", 0.01)); });
  t["ThresholdedRelu"] = unary([](const OpContext& c, const Tensor& x) {
    return (x > like(x, c.attr_f("alpha", 1.0))).where(x, like(x, 0));
  });
  t["HardSigmoid"] = unary([](const OpContext& c, const Tensor& x) { return x.hardsigmoid(c.attr_f("alpha", 0.2), c.attr_f("beta", 0.5)); });
  t["HardSwish"] = unary([](const OpContext&, const Tensor& x) { return x.hardswish(); });
  t["Mish"] = unary([](const OpContext&, const Tensor& x) { return x.mish(); });
  t["Gelu"] = unary([](const OpContext& c, const Tensor& x) {
    if (c.attr_s("approximate", "none") == "tanh") return x.gelu();
    return x * 0.5 * ((x * (1.0 / std::sqrt(2.0))).erf() + 1.0);
  });
  t["PRelu"] = [](const OpContext& c) {
    const Tensor& x = c.in(0);
    Tensor slope = c.in(1);
    // Before opset 7 a 1-D slope holds one value per channel (axis 1), as PyTorch's PReLU exports it.
    if (c.opset() < 7 && slope.ndim() == 1 && x.ndim() > 2 && slope.numel() == x.shape()[1] && slope.numel() > 1) {
      Shape s(static_cast<size_t>(x.ndim() - 1), 1);
      s[0] = slope.numel();
      slope = slope.reshape(s);
    }
    return V{(x < like(x, 0)).where(x * slope, x).cast(x.dtype())};
  };
  t["Clip"] = [](const OpContext& c) {
    Tensor x = c.in(0);
    if (c.opset() < 11) {
      double lo = c.attr_f("min", -std::numeric_limits<double>::infinity());
      double hi = c.attr_f("max", std::numeric_limits<double>::infinity());
      return V{x.maximum(like(x, lo)).minimum(like(x, hi))};
    }
    if (c.has(1)) x = x.maximum(c.in(1).cast(x.dtype()));
    if (c.has(2)) x = x.minimum(c.in(2).cast(x.dtype()));
    return V{x};
  };
  t["Cast"] = [](const OpContext& c) {
    DType to = dtype_from_onnx(static_cast<int32_t>(c.attr_i("to", 1)), c.where());
    return V{c.in(0).cast(to)};
  };
  t["CastLike"] = [](const OpContext& c) { return V{c.in(0).cast(c.in(1).dtype())}; };
}

}  // namespace lathe::onnx::detail
