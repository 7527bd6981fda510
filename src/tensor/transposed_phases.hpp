// A strided transposed convolution without dilation, which conv_transpose2d writes as its
// definition (the input spread out by the stride, stride - 1 zeros between elements, convolved
// with the flipped kernel), computed as one convolution per output phase with no zeros
// multiplied, interleaved, where the multiply-adds the phases save pay for their kernels on the
// plan's Target: a rule Tensor::prepare runs after the attention rule and before the tap-group
// and Winograd rules. Two spatial axes of static sizes, dilation 1; a stride above 16 along an
// axis of one position is not recognised (its spread looks the same at every stride).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/substitute.hpp"
#include "lathe/target.hpp"
#include "lathe/tensor.hpp"

namespace lathe::detail {

/// The transposed convolution of x (N, C, H, W) whose flipped kernel is `wt` (as
/// transposed_conv_weight makes it), stride `stride`, padding `pad`, dilation 1, `out_size`
/// outputs, as one convolution per output phase: along an axis, output y = s*Y + r takes only the
/// taps k0 + s*m of `wt`, which read input Y + base + m. Static sizes.
Tensor conv_transpose_by_phases(const Tensor& x, const Tensor& wt, std::pair<int64_t, int64_t> stride,
                                std::pair<int64_t, int64_t> pad, std::pair<int64_t, int64_t> out_size, int64_t groups);

/// `outputs` with each convolution of a spread input (transposed_conv_input of static sizes,
/// stride above 1 on an axis, convolved at stride 1 without dilation, as conv_transpose2d builds
/// it) computed by conv_transpose_by_phases where the multiply-adds its phases save are at least
/// a kernel's worth per phase on `target` (tap_part_macs); each node it adds labelled as the
/// convolution. `rebuilt`, where given, records each node rebuilt.
std::vector<UOpPtr> transposed_phases_where_they_pay(const std::vector<UOpPtr>& outputs, const Target& target, Rebuilt* rebuilt = nullptr);

}  // namespace lathe::detail
