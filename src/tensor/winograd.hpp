// A 3x3 convolution of stride 1 by Winograd's minimal filtering, F(4x4, 3x3): each 4x4 block
// of output pixels ("tile") from a 6x6 window of the input, with 36 multiply-adds per (tile,
// input channel, output channel) where the direct method does 144; or F(2x2, 3x3), 2x2 tiles from
// 4x4 windows, 16 multiply-adds where the direct method does 36, whose transformed weight is 16
// points to F(4x4)'s 36 (a small image's deep layer, where the weight is what costs). Written as
// plain Tensor math, each step a kernel the scheduler fuses and the optimizer tiles as any other:
//
//   input transform   V = Bᵀ d B      per tile and input channel, d its 6x6 (4x4) window
//   weight transform  U = G g Gᵀ      per (output, input) channel, g its 3x3 kernel: a constant
//                                     weight's is computed once, at prepare
//   product           M = Σ_c U V    36 (16) matrix products (K x C) . (C x tiles), one per point
//   output transform  Y = Aᵀ M A      per tile and output channel, fused into what reads Y
//
// The transforms are sums of the window's rows and columns scaled by the matrices' constants;
// every step reads and writes channels in vector lanes (the input in channel blocks, the product
// with output channels innermost). The interpolation points are 0, ±1, ±2 (F(2x2): 0, ±1) (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2015): float32 results differ from the direct
// method's by a few units in the fifth significant digit at 512 channels (tests/tensor/winograd_test).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/substitute.hpp"
#include "lathe/target.hpp"
#include "lathe/tensor.hpp"

namespace lathe::detail {

/// A convolution's facts the choice between the direct method and Winograd's reads.
struct WinogradCase {
  int64_t batch, in_channels, out_channels, out_h, out_w;
  int64_t lanes;        // the Target's float32 lanes
  int64_t cache_bytes;  // the L2 of the cores a kernel runs on (the Target's per core, times its threads)
  int64_t accumulators = 8;  // the Target's accumulators (Target::accumulators: a register tile's budget)
  // The input transform's values per input channel and batch entry: 1, or less where a
  // convolution's taps along depth share each frame's (winograd_conv3d: D' / (KD P)).
  double input_share = 1;
  // Where a weight outgrows the cache every core shares (the Target's L3), it is read from memory
  // at every run, at this many cycles a float (4 / Target::memory_bytes_per_cycle) where that is
  // more than WinogradPrices::weight_value.
  int64_t shared_cache_bytes = int64_t{32} << 20;
  double memory_value = 0;
};

/// The prices of the choice, in cycles of one core (calibrated on ResNet-18's layers and a batch
/// of 8's, 64 to 512 channels, at 8 and at 16 lanes; tests/tensor/winograd_test holds the cases;
/// re-fitted on 2026-11-30 to thirteen layer shapes timed by each method at both widths, 64 to
/// 512 channels at 7x7 to 224x224, batches 1, 2 and 8: bench/RESULTS.md).
/// Each method's multiply-adds overlap with reading its weight, so it takes the longer of the two;
/// F(4x4)'s weight is 4x the direct one's (36 points for 9 taps), F(2x2)'s 16/9, which decides a
/// deep layer on a small image (512 channels at 7x7: 38 MB read for F(4x4)'s 4 tiles, 17 MB for
/// F(2x2)'s 16).
struct WinogradPrices {
  double fma_units = 2;              // vector multiply-adds a core issues per cycle
  double direct_efficiency = 0.9;    // the share of that peak a direct convolution's register tiles reach at 8 lanes
  // The same at 16 lanes or more: the direct kernels measure 67-73% of the FMA peak there. At 0.9
  // the direct method was kept where Winograd's was faster: a batch of 8 at 56x56x64 (6.0 against
  // F(4x4)'s 4.9 ms), 64 channels at 112x112 (3.4 against 2.5), 512 at 7x7 (0.77 against F(2x2)'s
  // 0.59).
  double direct_efficiency_wide = 0.7;
  double product_efficiency = 0.55;  // the share the points' products reach (short sums over the channels)
  // Per float of weight read, at the least. At 1, F(2x2) was kept at 8 lanes for 256 to 1024
  // channels at 7x7, where F(4x4) ran 1.2-1.6x faster (512: 0.58 against 0.88 ms on a Zen 5 held
  // to 8 lanes, 0.76 against 0.93 on an Intel Xeon), and the direct method at 16 lanes for 512 at
  // 4x4 (0.25 against F(2x2)'s 0.16 ms): two cores of the Zen 5 stream a float of F(4x4)'s 38 MB
  // in about half a cycle each (bench/winograd_prices.py). Where memory is slower than that
  // (WinogradCase::memory_value: two cores of an AVX2 EPYC take about 1.2 cycles a float), a
  // weight larger than the L3 costs its memory's price: there F(2x2) for 512 and 1024 channels
  // at 7x7 ran 1.26x faster than F(4x4), whose 9 MB weight at 256 channels (in L3) still won.
  double weight_value = 0.6;
  double transform_value = 2;        // per transformed value (a point per tile and channel, in and out): memory-bound passes
  // Where the transformed input outgrows the cores' caches, each transformed value costs this
  // share more per doubling beyond them (measured at 8 lanes: 2.2 cycles a value at 1.8x the
  // caches, ResNet-18's 56x56; 4.4 at 14x, a batch of 8's; 5.8 at 29x, ESPCN's 64 -> 32 at
  // 224x224). Lanes do not change it (memory-bound). 0.3 since the CPU backends prefetch the
  // product's streamed weights (codegen/prefetch.hpp):
  // 64 channels at 224x224 then took 18.5 ms by F(4x4) against 22.6 direct at 8 lanes. ESPCN's
  // layer took about the same by either (11.2 against 12.0) and is left direct, the method that
  // reads least; at 16 lanes the direct method is 1.3-1.7x faster on both.
  double streamed_growth = 0.3;
  double kernel = 20000;             // the transforms' and the product's kernels beside the direct one's
};

/// LATHE_WINOGRAD: 0 (every 3x3 by the direct method), 1 (by estimated cost, the default, also
/// when unset), 2 or 4 (F(2x2, 3x3) or F(4x4, 3x3) for every convolution Winograd's method can
/// compute, whatever it costs: how its prices are measured, bench/winograd_prices.py). Throws
/// Error naming the value for anything else.
int64_t winograd_setting();
/// The share of the multiply-add peak the direct method's register tile keeps busy on an output
/// `width` pixels wide, with `budget` accumulators (Target::accumulators, as opt/heuristic plans
/// its tiles): all where the width is at least the budget (a row tile divides it or pads it); on a
/// narrower image the tile's rows are its width, of one vector, or a divisor of it in half the
/// budget, of two (7 pixels at a budget of 8: 7 of 8; at 16, 7 rows of 2 vectors: 14 of 16).
double direct_tile_share(int64_t width, int64_t budget);
/// Estimated cycles of the direct method and of Winograd's F(tile x tile, 3x3) (tile 4 or 2) for `c`.
double direct_cycles(const WinogradCase& c, const WinogradPrices& p = {});
double winograd_cycles(const WinogradCase& c, int64_t tile, const WinogradPrices& p = {});

/// The Winograd method a convolution is computed by: the output tile (4: F(4x4, 3x3), 2:
/// F(2x2, 3x3)) with the fewest estimated cycles where that is fewer than the direct method's, for
/// a float32 3x3 of stride 1 and dilation 1, one group, both channel counts in whole vector blocks
/// and a weight computed from constants (its transform is then made once, at prepare); 0 (the
/// direct method) otherwise, and always with LATHE_WINOGRAD=0. A symbolic batch is counted at its
/// largest. F(2x2) has 16 points to F(4x4)'s 36: less weight to read where the image is small.
/// `input_share` is WinogradCase's.
int64_t winograd_tile(const Tensor& x, const Tensor& weight, std::pair<int64_t, int64_t> stride,
                      std::pair<int64_t, int64_t> padding, std::pair<int64_t, int64_t> dilation, int64_t groups,
                      const Target& target, double input_share = 1);
/// Whether winograd_tile chooses a Winograd method.
bool winograd_pays(const Tensor& x, const Tensor& weight, std::pair<int64_t, int64_t> stride, std::pair<int64_t, int64_t> padding,
                   std::pair<int64_t, int64_t> dilation, int64_t groups, const Target& target);

/// `outputs` with each direct 3x3 convolution (conv2d's sum, as direct_conv2d builds it) by
/// winograd_conv2d where winograd_pays for `target`, the Target the plan is prepared for; the same
/// nodes where none pays. Tensor::prepare asks it, so one graph prepared for 8 and for 16 lanes is
/// chosen for each. A convolution a Winograd one reads is rebuilt too. Each node the rule adds is
/// labelled as the convolution it stands for; `rebuilt`, where given, records each node rebuilt
/// (so the plan answers to the caller's nodes).
std::vector<UOpPtr> winograd_where_it_pays(const std::vector<UOpPtr>& outputs, const Target& target, Rebuilt* rebuilt = nullptr);

/// The convolution of x (N, C, H, W) with weight (K, C, 3, 3), stride 1, `padding` zeros on each
/// side, by F(tile x tile, 3x3) (tile 4 or 2) as above; the input read in channel blocks of
/// `block` (C a multiple of it). Any sizes: tiles past the output's edge read zeros and are cut off.
/// Where `stored_padding` and the sizes are static, the input's padding is stored in its blocks
/// (a copy of them its producer writes in place: schedule/padded_in_place), so the input
/// transform reads no gates (which doubled its time at 8 lanes); else it is read through them.
Tensor winograd_conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                       std::pair<int64_t, int64_t> padding, int64_t block, int64_t tile = 4,
                       bool stored_padding = true);

/// The steps of a convolution's taps along the first of three spatial axes (its depth: a video's
/// frames).
struct DepthSteps {
  int64_t stride = 1, dilation = 1;
};

/// The convolution of x (N, C, D, H, W) with weight (K, C, KD, 3, 3), `depth`'s stride and dilation
/// along D and stride 1 over each frame, `padding` zeros (before, after) along D, H and W: each
/// frame by F(tile x tile, 3x3) as above, the KD taps along D summed in the product with the input
/// channels. Each input frame is transformed once, where conv2d over Tensor::conv's folded input
/// transforms it KD times, from a copy KD times the input's size. (N, K, P, OH, OW); C a multiple
/// of `block`. `stored_padding` as winograd_conv2d's.
Tensor winograd_conv3d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias, DepthSteps depth,
                       const std::array<std::pair<int64_t, int64_t>, 3>& padding, int64_t block, int64_t tile = 4,
                       bool stored_padding = true);

}  // namespace lathe::detail
