// Helpers shared by the files that implement Tensor's ops.
#pragma once

#include <optional>
#include <unordered_map>

#include "lathe/tensor.hpp"

namespace lathe::detail {

void check_shape(const Shape& shape, const char* op);
Shape max_shape(const SymShape& s);
/// One entry per axis, null where static; empty when every axis is static.
std::vector<UOpPtr> sym_entries(const SymShape& s);
bool is_static(const SymShape& s);
SInt sym_numel(const SymShape& s);
/// Whether two shapes hold the same number of elements at every value of their variables (their
/// counts equal as products, whatever the order the factors were multiplied in).
bool same_numel(const SymShape& a, const SymShape& b);
/// `shape` with each size that reads a variable no binding gives (a size a host step decides)
/// evaluated at `vars` (a run's values); sizes of bound variables stay symbolic.
SymShape with_values(const SymShape& shape, const std::unordered_map<std::string, int64_t>& vars);
/// A tensor over the front of `buffer` (packed) at `shape`.
Tensor view_at(const Buffer& buffer, const Shape& shape);
SymShape to_sym(const Shape& s);
SymShape broadcast_shapes(const SymShape& a, const SymShape& b, const char* op);
Tensor broadcast_to(const Tensor& t, const SymShape& shape);
/// How many windows fit along each of `sizes`, one kernel, stride and dilation each; a ShapeError
/// naming `op` and `input` when they are not positive or a window does not fit.
std::vector<int64_t> window_counts(const std::vector<int64_t>& sizes, const std::vector<int64_t>& kernel,
                                   const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation,
                                   const char* op, const std::string& input);
/// Sliding windows over axes first.. of (N, C, S1..Sn) (first = 2): (N, C, O1..On, K1..Kn), as one
/// repeat-and-fold view per axis: the graph does not grow with the kernel, and each window
/// element is one load (stacking K strided slices instead made every load a K-way sum of gated
/// loads, 2x slower on ResNet-18's 3x3 convolutions). Each kernel axis stays its own axis, so a
/// reduction over the window is one loop per axis with no division in its index.
Tensor sliding_windows(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                       const std::vector<int64_t>& dilation, const char* op, int64_t first = 2);
/// A convolution's input over k >= 3 spatial axes, padded already, (N, C, S1..Sk-2, H, W), as read
/// by the 2-D convolution Tensor::conv computes it with: the windows of `kernel` (at `stride` and
/// `dilation`) along S1..Sk-2 folded into the batch (their positions) and the channels (each
/// channel's taps after it), (N * P1..Pk-2, C * K1..Kk-2, H, W). The Winograd rule builds it again
/// to recognise such a convolution (tensor/winograd.hpp).
Tensor folded_input(const Tensor& x, const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
                    const std::vector<int64_t>& dilation);
/// Whether `u` is made of constants alone (constant buffers, a model's weights, and what is computed
/// from them: the same on every run of a plan, which computes it once, at prepare). `memo` keeps
/// the answers for the nodes seen, so a caller asking about many nodes walks each once; sources
/// first, in order, not by recursion (a graph may be deeper than the stack).
bool made_of_constants(const UOpPtr& u, std::unordered_map<const UOp*, bool>& memo);
/// The sum of `terms` (at least one, one shape) added in pairs, then pairs of those: a tree log2(n)
/// deep, so the kernel computing it has short dependency chains and a walk of its graph few levels.
Tensor sum_in_pairs(std::vector<Tensor> terms);
/// `t` stored in the layout its view describes, for the kernels that read it that way (a
/// convolution's input in channel blocks): a CONTIGUOUS whose CopyArg says layout (schedule/reader_layout.hpp).
Tensor layout_copy(const Tensor& t);
/// conv2d by the direct method over `read`, the input as the convolution reads it (stored or not):
/// windows of `read` padded by `padding` times the weight (O, C/groups, KH, KW), summed over a
/// group's channels and the taps, (N, O, OH, OW), no bias. The shape conv2d checked; the Winograd
/// rule builds it again to recognise it (tensor/winograd.hpp).
Tensor direct_conv2d(const Tensor& read, const Tensor& weight, std::pair<int64_t, int64_t> stride, std::pair<int64_t, int64_t> padding,
                     std::pair<int64_t, int64_t> dilation, int64_t groups);
/// Max pooling of (N, C, H, W) with padding (before, after) on the rows and on the columns (the
/// ONNX importer's asymmetric and ceil-mode padding): Tensor::max_pool2d's work.
Tensor max_pool2d(const Tensor& input, std::pair<int64_t, int64_t> kernel, std::pair<int64_t, int64_t> stride,
                  std::pair<int64_t, int64_t> rows_padding, std::pair<int64_t, int64_t> columns_padding);
/// float32 `t` with its values below the smallest normal number taken as 0 (any other dtype as it
/// is): Tensor::softmax's probabilities, whose subnormals would slow every multiply that reads them.
/// The attention rule recognises this form.
Tensor subnormals_as_zero(const Tensor& t);
/// Tensor::avg_pool, its errors naming `op` (avg_pool2d reaches it too).
Tensor avg_pool(const Tensor& x, const std::vector<int64_t>& kernel, const Window& window, bool count_include_pad, const char* op);
/// softmax(scores, -1) @ values as one node, ATTENTION, which the scheduler makes one kernel with an
/// online softmax over blocks of keys (codegen/attention): no queries x keys matrix is stored.
/// scores (..., Lq, Lk) and values (..., Lk, Dv), their leading axes broadcast together; with
/// `seen`, each query sees only those keys (as if the others' scores were -inf, and the kernel
/// reads no more of them). Nothing where that kernel does not apply (a symbolic or empty size, a
/// dtype other than float32): the caller computes the two ops. The callers take it only with a
/// key range to skip (a causal mask, a window): over every key two tiled matmuls and a softmax are
/// faster on this machine's class (the kernel's per-block maximum, rescaling and exponentials
/// beside its multiply-adds: 8 heads x 1024 x 64 without a mask 11.9 against 8.3 ms, encoder_long
/// 23% slower), though they hold up to half the L3 of scores (the rule's query blocks, 16 MB)
/// where the kernel holds none.
std::optional<Tensor> attention(const Tensor& scores, const Tensor& values, std::optional<AttentionKeys> seen = std::nullopt);
/// q (..., Lq, D) @ kt (..., D, Lk) as an attention kernel's scores: kt stored with the keys
/// innermost (a block of keys is one vector per step of D), the product a plain sum of products
/// that the attention kernel computes in its own loops. Static shapes (the attention rule's).
Tensor attention_scores(const Tensor& q, const Tensor& kt);
/// A transposed convolution's input (N, C, S1..Sn) spread out by `stride` (stride - 1 zeros between
/// elements) and padded by `reach` (before, after) per spatial axis: what the flipped kernel
/// (transposed_conv_weight) is convolved with.
Tensor transposed_conv_input(const Tensor& x, const std::vector<int64_t>& stride, const std::vector<std::pair<int64_t, int64_t>>& reach);
/// A transposed convolution's weight (C, out/groups, K1..Kn) as the convolution's: flipped, its in
/// and out channels swapped within each of `groups`, (out, C/groups, K1..Kn).
Tensor transposed_conv_weight(const Tensor& w, int64_t groups);
/// A constant of `dtype` broadcast to `like`'s (possibly symbolic) shape.
Tensor constant_like(ConstValue value, DType dtype, const Tensor& like);
/// `t` reshaped (leading 1s) and expanded to `shape`.
Tensor broadcast_to(const Tensor& t, const Shape& shape);
/// The ALU node over `operands` broadcast to their common shape (ShapeError naming `name` when
/// they do not broadcast). Operands must already share a dtype (except WHERE's condition).
Tensor broadcast_alu(Ops op, std::vector<Tensor> operands, const char* name);
/// The ALU node over tensors of one shape (and dtype, except WHERE's condition).
Tensor make_alu(Ops op, std::vector<Tensor> srcs);
/// `axis` in [-ndim, ndim) made non-negative; throws ShapeError naming `op` otherwise.
int64_t normalize_axis(int64_t axis, int64_t ndim, const char* op);
/// A constant of `dtype` broadcast to `shape`.
Tensor constant(ConstValue value, DType dtype, const Shape& shape);

}  // namespace lathe::detail
