// lathe::Tensor: a lazy handle to a UOp graph. Every op only builds graph (shapes and dtypes are
// checked at the call, throwing lathe::Error subclasses that name the op and the shapes);
// realize() runs it, prepare() compiles it into an ExecutionPlan without running it.
//
// Conventions follow tinygrad: broadcasting and type promotion as in numpy/tinygrad, negative
// axes count from the end, reductions take a list of axes (empty = all) and keepdim,
// `Tensor::arange(n)` is int32 and float literals are float32.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lathe/device.hpp"
#include "lathe/dtype.hpp"
#include "lathe/error.hpp"
#include "lathe/host_step.hpp"
#include "lathe/uop.hpp"
#include "lathe/variable.hpp"

namespace lathe {

class ExecutionPlan;
struct PrepareOptions;
using Shape = std::vector<int64_t>;

/// A shape that does not fit the operation (mismatched, bad axis, negative size, ...).
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// How Tensor::resize maps each output position to the input and interpolates there (ONNX
/// Resize's attributes, under the same names and with the same defaults).
struct ResizeOptions {
  std::string mode = "nearest";                          ///< nearest, linear or cubic
  std::string coordinate_transformation = "half_pixel";  ///< half_pixel, pytorch_half_pixel, align_corners,
                                                         ///< asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize
  std::string nearest_mode = "round_prefer_floor";       ///< round_prefer_floor, round_prefer_ceil, floor, ceil
  double cubic_coeff_a = -0.75;                          ///< the cubic kernel's a
  bool exclude_outside = false;                          ///< cubic taps outside the input weigh 0 (the rest renormalized)
  std::vector<double> roi;                               ///< tf_crop_and_resize: the box, starts then ends, 0..1
  double extrapolation_value = 0.0;                      ///< tf_crop_and_resize: outside the input
};

/// How Tensor::pad fills what it adds (numpy.pad's and ONNX Pad's modes).
enum class PadMode {
  constant,  ///< a value
  edge,      ///< the nearest element of the axis, repeated
  reflect,   ///< mirrored about the end element, which is not repeated (1 2 3 -> 3 2 | 1 2 3 | 2 1)
  wrap,      ///< the axis continued from its other end (1 2 3 -> 2 3 | 1 2 3 | 1 2)
};

/// Where the windows of an N-d convolution or pool lie, one entry per spatial axis (the axes
/// after N and C); an empty vector means 1 for every stride and dilation, 0 for every padding.
struct Window {
  std::vector<int64_t> stride = {};                       ///< pools: empty means the kernel's size
  std::vector<std::pair<int64_t, int64_t>> padding = {};  ///< (before, after), at least 0
  std::vector<int64_t> dilation = {};
  bool ceil_mode = false;  ///< pools: the end padded so a last, partial window is kept (unless it would start in the end padding)
};

class Tensor {
 public:
  /// A scalar float32 zero; mostly useful as a placeholder.
  Tensor();
  /// Wraps a tensor-graph node of the given shape (for importers and tests).
  Tensor(UOpPtr uop, Shape shape);
  /// The same with symbolic dimensions: `shape` holds each dimension's maximum, `symbolic` the
  /// index expression of each dimension that is symbolic (null for the static ones).
  Tensor(UOpPtr uop, Shape shape, std::vector<UOpPtr> symbolic);

  // ---- creation -------------------------------------------------------------------------------
  template <class T>
  static Tensor from_vector(const std::vector<T>& data, Shape shape);
  template <class T>
  static Tensor from_vector(const std::vector<T>& data) {
    return from_vector(data, Shape{static_cast<int64_t>(data.size())});
  }
  /// A tensor over an existing buffer (shared, not copied); its size must match the shape.
  static Tensor from_buffer(Buffer buffer, Shape shape);
  static Tensor from_buffer(Buffer buffer, std::initializer_list<int64_t> shape) { return from_buffer(std::move(buffer), Shape(shape)); }
  /// The same with symbolic sizes: the buffer holds the shape at its largest, and the values of
  /// each binding are packed at its front (as a plan writes an output of symbolic size).
  static Tensor from_buffer(Buffer buffer, const SymShape& shape);
  static Tensor full(Shape shape, ConstValue value, std::optional<DType> dtype = {});
  static Tensor zeros(Shape shape, DType dtype = dtypes::float32);
  static Tensor ones(Shape shape, DType dtype = dtypes::float32);
  /// Uninitialised memory of the given shape. A symbolic dimension allocates for its maximum.
  static Tensor empty(Shape shape, DType dtype = dtypes::float32);
  static Tensor empty(const SymShape& shape, DType dtype = dtypes::float32);
  static Tensor full(const SymShape& shape, ConstValue value, std::optional<DType> dtype = {});
  static Tensor zeros(const SymShape& shape, DType dtype = dtypes::float32);
  static Tensor ones(const SymShape& shape, DType dtype = dtypes::float32);
  // A braced list ({n, 8}) picks these, so both numbers and variables can be written inline.
  static Tensor empty(std::initializer_list<SInt> shape, DType dtype = dtypes::float32) { return empty(SymShape(shape), dtype); }
  static Tensor full(std::initializer_list<SInt> shape, ConstValue value, std::optional<DType> dtype = {}) {
    return full(SymShape(shape), value, dtype);
  }
  static Tensor zeros(std::initializer_list<SInt> shape, DType dtype = dtypes::float32) { return zeros(SymShape(shape), dtype); }
  static Tensor ones(std::initializer_list<SInt> shape, DType dtype = dtypes::float32) { return ones(SymShape(shape), dtype); }
  /// [0, 1, ..., n-1] as int32.
  static Tensor arange(int64_t n);
  /// [start, start+step, ...) below stop (above, for a negative step).
  static Tensor arange(double start, double stop, double step = 1, DType dtype = dtypes::int32);
  static Tensor eye(int64_t n, DType dtype = dtypes::float32);
  /// Uniform in [0, 1); the same seed gives the same values on every machine.
  static Tensor rand(Shape shape, uint64_t seed = 0, DType dtype = dtypes::float32);
  /// Standard normal; reproducible from the seed.
  static Tensor randn(Shape shape, uint64_t seed = 0, DType dtype = dtypes::float32);

  // ---- properties -----------------------------------------------------------------------------
  /// The shape; a symbolic dimension reads as its maximum.
  const Shape& shape() const { return shape_; }
  /// The shape with symbolic dimensions as SInts.
  SymShape symbolic_shape() const;
  bool is_symbolic() const { return !sym_.empty(); }
  int64_t ndim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const;
  DType dtype() const { return uop_->dtype(); }
  const UOpPtr& uop() const { return uop_; }
  /// The id of this tensor's node: for a realized tensor, its buffer node, which is how an
  /// ExecutionPlan finds the tensor's buffer (ExecutionPlan::buffer_mut_by_id).
  uint64_t uop_id() const { return uop_->id(); }
  /// The buffer behind a realized tensor, or an invalid handle for a lazy one.
  Buffer buffer() const;
  /// The device it is computed on: its buffers' (all on one device), else LATHE_DEVICE's. Throws
  /// Error when its graph reads buffers on two devices.
  DeviceSpec device() const;
  /// This tensor on `device` ("CPU", "CUDA:1", "EMU"): itself when it is there already, else
  /// realized and its values copied to a buffer there. What is computed from the copy runs there.
  Tensor to(const std::string& device) const;
  bool is_realized() const;
  std::string to_string() const;
  /// Names the computation of this tensor (a layer, an ONNX node): a plan's profile and trace
  /// list, for each kernel, the labels of the tensors fused into it. Returns *this.
  const Tensor& label(const std::string& name) const;

  // ---- running ----------------------------------------------------------------------------------
  /// Runs the graph now; afterwards this tensor reads its buffer.
  Tensor& realize();
  /// Compiles and allocates everything needed to compute this tensor; runs nothing.
  ExecutionPlan prepare() const;
  /// Several outputs in one plan, in order.
  static ExecutionPlan prepare(const std::vector<Tensor>& outputs);
  /// The same with settings of its own (optimizations, threads, backend) instead of the defaults.
  static ExecutionPlan prepare(const std::vector<Tensor>& outputs, const PrepareOptions& options);
  /// This tensor, an output of `plan` at `position`, after a run: a view of the plan's buffer at
  /// the sizes of that run (every variable the plan reads at its value: as execute_with_vars bound
  /// it, or as a host step decided it).
  Tensor read_from(const ExecutionPlan& plan, size_t position) const;
  /// Realizes and copies the values out; T must match the dtype.
  template <class T>
  std::vector<T> to_vector() const;
  /// The value of a one-element tensor.
  template <class T>
  T item() const;

  // ---- host steps -----------------------------------------------------------------------------------
  /// The outputs of `step` (lathe/host_step.hpp) over `inputs`, at their symbolic shapes: the step
  /// runs on the host each time a plan that computes them runs, and the sizes it decides are
  /// variables the kernels after it read. Where it decides sizes, one more tensor follows: an
  /// int64 vector of their values (compute with a decided size from it, so the computation runs
  /// after the step). Throws Error for a step without a run function or outputs, or an output
  /// whose size has no upper bound.
  static std::vector<Tensor> host_step(std::shared_ptr<const HostStep> step, const std::vector<Tensor>& inputs);

  // ---- elementwise --------------------------------------------------------------------------------
  Tensor neg() const;
  Tensor abs() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor expm1() const;  // e^x - 1, without cancellation near 0
  Tensor log() const;
  Tensor log1p() const;  // log(1 + x), without cancellation near 0
  Tensor log2() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor reciprocal() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor asinh() const;
  Tensor acosh() const;
  Tensor atanh() const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(double exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor gelu() const;  // the tanh approximation, as tinygrad's
  Tensor silu() const;
  Tensor softplus() const;  // log(1 + e^x), without overflow for large x
  Tensor softsign() const;
  Tensor mish() const;
  Tensor elu(double alpha = 1.0) const;
  Tensor celu(double alpha = 1.0) const;
  Tensor selu(double alpha = 1.6732632423543772, double gamma = 1.0507009873554805) const;
  Tensor leaky_relu(double slope = 0.01) const;
  Tensor hardsigmoid(double alpha = 1.0 / 6, double beta = 0.5) const;  // clip(alpha x + beta, 0, 1)
  Tensor hardswish() const;
  Tensor erf() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;  // half to even, as numpy and tinygrad do
  Tensor trunc() const;
  Tensor sign() const;
  Tensor clip(double lo, double hi) const;
  /// cond.where(x, y): x where this (bool) tensor is true, else y.
  Tensor where(const Tensor& x, const Tensor& y) const;
  Tensor where(double x, double y) const;
  Tensor logical_not() const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor bitwise_and(const Tensor& other) const;
  Tensor bitwise_or(const Tensor& other) const;
  Tensor bitwise_xor(const Tensor& other) const;
  Tensor lshift(int64_t bits) const;
  Tensor rshift(int64_t bits) const;
  /// Shifts by per-element amounts, broadcast, cast to this tensor's integer dtype; an amount
  /// outside [0, bits of the dtype) gives an unspecified value.
  Tensor lshift(const Tensor& bits) const;
  Tensor rshift(const Tensor& bits) const;
  /// Integer division rounding toward zero (C's `/`), broadcasting, in the operands' common
  /// integer dtype; DTypeError for a float or bool operand.
  Tensor idiv(const Tensor& other) const;
  /// The remainder with the dividend's sign (C's `%`, C's fmod, torch.fmod): a - b * trunc(a / b).
  Tensor fmod(const Tensor& other) const;
  /// The remainder with the divisor's sign (Python's `%`, torch.remainder): a - b * floor(a / b).
  Tensor remainder(const Tensor& other) const;
  Tensor cast(DType dtype) const;
  /// Reinterprets the bits; the dtypes must have the same size.
  Tensor bitcast(DType dtype) const;

  // ---- reductions (axes: empty = all) -------------------------------------------------------------
  Tensor sum(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor prod(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor max(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor min(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor mean(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor var(std::vector<int64_t> axes = {}, bool keepdim = false, int64_t correction = 1) const;
  Tensor std(std::vector<int64_t> axes = {}, bool keepdim = false, int64_t correction = 1) const;
  /// Index of the first maximum along `axis` (all elements, flattened, when absent); int32.
  Tensor argmax(std::optional<int64_t> axis = {}, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = {}, bool keepdim = false) const;
  Tensor any(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor all(std::vector<int64_t> axes = {}, bool keepdim = false) const;
  Tensor cumsum(int64_t axis = 0) const;

  // ---- movement ---------------------------------------------------------------------------------
  /// One entry may be -1 (inferred; static shapes only).
  Tensor reshape(Shape shape) const;
  Tensor reshape(const SymShape& shape) const;
  Tensor reshape(std::initializer_list<SInt> shape) const;
  Tensor permute(std::vector<int64_t> order) const;
  /// Size-1 axes grow to the new size; -1 keeps an axis; new leading axes may be added.
  Tensor expand(Shape shape) const;
  Tensor expand(const SymShape& shape) const;
  Tensor expand(std::initializer_list<SInt> shape) const;
  /// {{before, after}, ...} per axis, filled with `value`; entries may be symbolic, and a static
  /// negative one removes elements.
  Tensor pad(std::vector<std::pair<SInt, SInt>> padding, double value = 0) const;
  /// The same filled as `mode` says: `constant` is the overload above; the others need static
  /// sizes and padding of at least 0, and an axis that is not empty where it is padded (reflect:
  /// two elements, unless the axis has one); any amount, repeating the pattern as numpy.pad does.
  Tensor pad(std::vector<std::pair<SInt, SInt>> padding, PadMode mode, double value = 0) const;
  /// {{start, end}, ...} per axis; entries may be symbolic (`{0, n.bind(10)}`).
  Tensor shrink(std::vector<std::pair<SInt, SInt>> bounds) const;
  Tensor flip(std::vector<int64_t> axes) const;
  Tensor transpose(int64_t dim0 = -2, int64_t dim1 = -1) const;
  Tensor squeeze(std::optional<int64_t> axis = {}) const;
  Tensor unsqueeze(int64_t axis) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  /// Python-style slicing on one axis: start and stop may be negative or absent, step != 0.
  Tensor slice(int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1) const;
  static Tensor cat(const std::vector<Tensor>& tensors, int64_t axis = 0);
  static Tensor stack(const std::vector<Tensor>& tensors, int64_t axis = 0);
  std::vector<Tensor> split(int64_t size, int64_t axis = 0) const;
  std::vector<Tensor> split(const std::vector<int64_t>& sizes, int64_t axis = 0) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t axis = 0) const;
  /// Tiled: axis i repeated repeats[i] times (leading repeats add axes), as torch.Tensor.repeat.
  Tensor repeat(std::vector<int64_t> repeats) const;
  /// The same where the repeats or this tensor's sizes are symbolic (a count a host step decides).
  Tensor repeat(const SymShape& repeats) const;
  Tensor repeat(std::initializer_list<SInt> repeats) const { return repeat(SymShape(repeats)); }
  /// out[i][j] = this[index[i][j]][j] (for axis 0), as torch.gather.
  Tensor gather(int64_t axis, const Tensor& index) const;
  /// Forces a copy into a fresh buffer at realize (a realize point inside a lazy graph).
  Tensor contiguous() const;

  // ---- compound -----------------------------------------------------------------------------------
  Tensor matmul(const Tensor& other) const;
  Tensor dot(const Tensor& other) const { return matmul(other); }
  /// Einstein summation, as numpy.einsum: "ij,jk->ik", repeated labels for diagonals, "..." for
  /// broadcast leading axes; without "->", the labels used once, sorted. The result has the first
  /// operand's dtype.
  static Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands);
  Tensor softmax(int64_t axis = -1) const;
  Tensor log_softmax(int64_t axis = -1) const;
  Tensor layernorm(std::vector<int64_t> axes = {-1}, double eps = 1e-5) const;
  /// NCHW input, (out, in/groups, kh, kw) weight.
  Tensor conv2d(const Tensor& weight, const std::optional<Tensor>& bias = {}, std::pair<int64_t, int64_t> stride = {1, 1},
                std::pair<int64_t, int64_t> padding = {0, 0}, std::pair<int64_t, int64_t> dilation = {1, 1},
                int64_t groups = 1) const;
  /// Transposed convolution (conv2d's adjoint, PyTorch's conv_transpose2d): NCHW input,
  /// (in, out/groups, kh, kw) weight, output (N, out, (H - 1) * sh - 2 * ph + dh * (kh - 1) + 1 +
  /// output_padding_h, ...). `padding` trims both ends of each axis; `output_padding` adds to the end.
  Tensor conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias = {}, std::pair<int64_t, int64_t> stride = {1, 1},
                          std::pair<int64_t, int64_t> padding = {0, 0}, std::pair<int64_t, int64_t> output_padding = {0, 0},
                          int64_t groups = 1, std::pair<int64_t, int64_t> dilation = {1, 1}) const;
  /// Resized to `sizes`, one per axis (NCHW images: keep N and C), interpolated as `options` says.
  Tensor resize(const std::vector<int64_t>& sizes, const ResizeOptions& options = {}) const;
  /// Resized by `scales`, one per axis: each output size is floor(size * scale) (of the roi's span
  /// for tf_crop_and_resize), and the scale itself maps output to input positions.
  Tensor resize_by_scales(const std::vector<double>& scales, const ResizeOptions& options = {}) const;
  Tensor max_pool2d(std::pair<int64_t, int64_t> kernel, std::optional<std::pair<int64_t, int64_t>> stride = {},
                    std::pair<int64_t, int64_t> padding = {0, 0}) const;
  Tensor avg_pool2d(std::pair<int64_t, int64_t> kernel, std::optional<std::pair<int64_t, int64_t>> stride = {},
                    std::pair<int64_t, int64_t> padding = {0, 0}) const;
  /// Convolution over the spatial axes of (N, C, S1..Sk), any k >= 1 (PyTorch's conv1d, conv2d,
  /// conv3d; ONNX Conv): weight (O, C/groups, K1..Kk), bias (O); output (N, O, P1..Pk), Pi =
  /// (Si + before + after - dilation * (Ki - 1) - 1) / stride + 1.
  Tensor conv(const Tensor& weight, const std::optional<Tensor>& bias = {}, const Window& window = {}, int64_t groups = 1) const;
  /// Its adjoint over any k >= 1 spatial axes (PyTorch's conv_transpose1d/2d/3d; ONNX
  /// ConvTranspose): weight (C, O/groups, K1..Kk); the full output (Si - 1) * stride + dilation *
  /// (Ki - 1) + 1 + output_padding, cut by `padding` (before, after) at its two ends.
  Tensor conv_transpose(const Tensor& weight, const std::optional<Tensor>& bias = {}, const Window& window = {},
                        const std::vector<int64_t>& output_padding = {}, int64_t groups = 1) const;
  /// The maximum / mean of each window of `kernel` over the spatial axes of (N, C, S1..Sk), any k
  /// >= 1: padding counts as -inf (the dtype's lowest for integers) / as nothing, unless
  /// `count_include_pad` (then as zeros, in the divisor too).
  Tensor max_pool(const std::vector<int64_t>& kernel, const Window& window = {}) const;
  Tensor avg_pool(const std::vector<int64_t>& kernel, const Window& window = {}, bool count_include_pad = false) const;
  /// The windows themselves, (N, C, P1..Pk, K1..Kk), of this tensor padded with `value`: a view
  /// (no copy, no gather), each window element one load.
  Tensor windows(const std::vector<int64_t>& kernel, const Window& window = {}, double value = 0) const;
  /// softmax(q k^T / sqrt(d) [+ causal mask]) v over the last two axes.
  Tensor scaled_dot_product_attention(const Tensor& key, const Tensor& value, bool is_causal = false) const;

  // ---- operators (tensor or scalar on either side) ------------------------------------------------
  friend Tensor operator+(const Tensor& a, const Tensor& b);
  friend Tensor operator-(const Tensor& a, const Tensor& b);
  friend Tensor operator*(const Tensor& a, const Tensor& b);
  friend Tensor operator/(const Tensor& a, const Tensor& b);
  friend Tensor operator-(const Tensor& a) { return a.neg(); }
  friend Tensor operator<(const Tensor& a, const Tensor& b);
  friend Tensor operator<=(const Tensor& a, const Tensor& b);
  friend Tensor operator>(const Tensor& a, const Tensor& b);
  friend Tensor operator>=(const Tensor& a, const Tensor& b);
  friend Tensor operator==(const Tensor& a, const Tensor& b);
  friend Tensor operator!=(const Tensor& a, const Tensor& b);

  /// A scalar of a C++ literal's type, shaped to broadcast: floats are float32-like
  /// ("weak" float), integers adopt the other operand's dtype.
  static Tensor scalar_like(const Tensor& like, double value, bool is_float);

 private:
  template <class T>
  friend struct ScalarOperand;
  Tensor binary(Ops op, const Tensor& other, const char* name) const;
  Tensor unary(Ops op) const;
  Tensor reduce(Ops op, std::vector<int64_t> axes, bool keepdim, const char* name) const;

  UOpPtr uop_;
  Shape shape_;
  std::vector<UOpPtr> sym_;  // empty when static; else one entry per axis, null where static
};

// Scalars on either side of an operator: `a * 2.0f`, `1.0f - a`, `a < 3`.
#define LATHE_SCALAR_OPERATORS(op)                                                                   \
  template <class S, class = std::enable_if_t<std::is_arithmetic_v<S>>>                              \
  Tensor operator op(const Tensor& a, S s) {                                                         \
    return a op Tensor::scalar_like(a, static_cast<double>(s), std::is_floating_point_v<S>);        \
  }                                                                                                  \
  template <class S, class = std::enable_if_t<std::is_arithmetic_v<S>>>                              \
  Tensor operator op(S s, const Tensor& a) {                                                         \
    return Tensor::scalar_like(a, static_cast<double>(s), std::is_floating_point_v<S>) op a;        \
  }
LATHE_SCALAR_OPERATORS(+)
LATHE_SCALAR_OPERATORS(-)
LATHE_SCALAR_OPERATORS(*)
LATHE_SCALAR_OPERATORS(/)
LATHE_SCALAR_OPERATORS(<)
LATHE_SCALAR_OPERATORS(<=)
LATHE_SCALAR_OPERATORS(>)
LATHE_SCALAR_OPERATORS(>=)
LATHE_SCALAR_OPERATORS(==)
LATHE_SCALAR_OPERATORS(!=)
#undef LATHE_SCALAR_OPERATORS

/// "(2, 3)", "(n, 4)": a shape as errors print it (a symbolic size by its expression).
std::string shape_to_string(const Shape& shape);
std::string shape_to_string(const SymShape& shape);

namespace detail {
Tensor tensor_from_bytes(const void* data, size_t nbytes, DType dtype, Shape shape);
std::vector<uint8_t> tensor_bytes(const Tensor& t, DType expected, const char* what);
}  // namespace detail

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& data, Shape shape) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(data.begin(), data.end());
    return detail::tensor_from_bytes(bytes.data(), bytes.size(), dtypes::bool_, std::move(shape));
  } else {
    return detail::tensor_from_bytes(data.data(), data.size() * sizeof(T), dtype_of<T>(), std::move(shape));
  }
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  std::vector<uint8_t> bytes = detail::tensor_bytes(*this, dtype_of<T>(), "to_vector");
  std::vector<T> out(bytes.size() / sizeof(T));
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != 0;
  } else if (!out.empty()) {
    std::memcpy(out.data(), bytes.data(), bytes.size());
  }
  return out;
}

template <class T>
T Tensor::item() const {
  if (numel() != 1) throw ShapeError("item() of a tensor of shape " + shape_to_string(shape_) + " (needs one element)");
  return to_vector<T>()[0];
}

}  // namespace lathe
