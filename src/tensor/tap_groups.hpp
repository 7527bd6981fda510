// A convolution whose taps mostly read padding (a dilation as large as the image: an atrous
// pyramid at rate 12 on a 14x14 map multiplies zeros in 82% of its multiply-adds), computed as a
// sum of parts, each a group of taps over only the output positions where they read the image.
// Whether the parts pay is the plan's Target's choice (each part is a kernel of its own), so it
// is a rule Tensor::prepare runs, as Winograd's is; conv2d itself only drops the taps that read
// nothing but padding, which costs nothing on any machine.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/substitute.hpp"
#include "lathe/target.hpp"

namespace lathe::detail {

/// Taps [first, last] of one axis that read the image for the same output positions,
/// [begin, end), and only padding for the others.
struct TapGroup {
  int64_t first, last, begin, end;
  int64_t work() const { return (last - first + 1) * (end - begin); }
  friend bool operator==(const TapGroup&, const TapGroup&) = default;
};

/// An axis' taps that read the image somewhere, in runs that read it for the same output
/// positions: `size` positions, `k` taps of stride `s` and dilation `d`, `p` padding before,
/// `o` outputs. Tap t reads position o*s + t*d - p for output position o.
std::vector<TapGroup> tap_groups(int64_t size, int64_t k, int64_t s, int64_t d, int64_t p, int64_t o);

/// The multiply-adds one part must save to pay for its kernel on `target`: what the Target's
/// vector units do (2 multiply-adds of its lanes of `dtype` per core and cycle, 16-bit floats
/// counted as the float32 they are computed in, on its threads) in 20000 cycles, the price the
/// Winograd rule puts on its extra kernels. The transposed-convolution rule prices a phase so too.
int64_t tap_part_macs(const Target& target, DType dtype);

/// `outputs` with each direct convolution (conv2d's sum) whose padding-only multiply-adds are
/// most of its work, and whose savings pay for each part's kernel on `target`, rebuilt as the
/// sum of its tap groups' parts (each part labelled as the convolution); the same nodes where none
/// pays. `rebuilt`, where given, records each node rebuilt.
std::vector<UOpPtr> tap_groups_where_they_pay(const std::vector<UOpPtr>& outputs, const Target& target, Rebuilt* rebuilt = nullptr);

}  // namespace lathe::detail
