#include "opt/heuristic.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "ir/axis.hpp"
#include "ir/step.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "opt/tensor_core.hpp"

namespace lathe {
namespace {

// A load or store of the kernel: its offset, and whether it runs in a reduction's loop.
struct Access {
  UOpPtr offset;
  bool store;
  bool hot;
  int itemsize;
};

std::vector<Access> accesses(const UOpPtr& ast) {
  std::set<const UOp*> hot;
  std::vector<UOpPtr> order = toposort(ast);
  for (const UOpPtr& u : order)
    if (u->op() == Ops::REDUCE)
      for (const UOpPtr& x : toposort(u->src(0)))
        if (x->op() == Ops::LOAD) hot.insert(x.get());
  std::vector<Access> out;
  for (const UOpPtr& u : order) {
    if (u->op() != Ops::LOAD && u->op() != Ops::STORE) continue;
    const UOpPtr& idx = u->src(0);
    if (idx->op() != Ops::INDEX) continue;
    DType elem = u->op() == Ops::LOAD ? u->dtype() : u->src(1)->dtype();
    out.push_back({idx->src(1), u->op() == Ops::STORE, hot.count(u.get()) > 0, static_cast<int>(elem.itemsize())});
  }
  return out;
}

// How far `offset` moves when `loop` steps by one (ir/step.hpp).
std::optional<int64_t> stride(const UOpPtr& offset, const Loop& loop) { return step_along(offset, loop.range); }

// The most lanes (a power of two from 4 to `max_lanes`) that divide `size`; 0 when none.
int lanes_for(int64_t size, int max_lanes) {
  for (int l = max_lanes; l >= 4; l /= 2)
    if (size % l == 0) return l;
  return 0;
}

// The largest divisor of `size` in [2, most]; 1 when none.
int64_t divisor_up_to(int64_t size, int64_t most) {
  for (int64_t d = std::min(size, most); d >= 2; --d)
    if (size % d == 0) return d;
  return 1;
}

// An operand of a core's L2 (the target's) or more is split between the threads rather than each
// reading all of it, when the kernel does few operations per element of it, so its stream is what
// the kernel waits on (ResNet-50's last 3x3 convolutions on a 4x4 map: ~100 per weight element; a UNet
// convolution's 4 MB input is used ~1800 times per element and is better read whole by each
// thread: split by rows it ran 25% slower).
constexpr int64_t kFewUsesPerElement = 256;

// The fewest rows a four-vector register tile must be able to hold (Planner::tile): 2, which a
// 16-register file allows beside the four loads and a broadcast (and 6 a 32-register one).
constexpr int64_t kLeastFourfoldRows = 2;

// The accumulators a register tile needs for its multiply-adds' latency to be hidden: about 4
// cycles each, 2 issued a cycle. A tile with fewer waits on them.
constexpr int64_t kLatencyAccumulators = 8;

// Rows that slide by two taps or more (a stride-2 convolution's pixels) take the wider tile as
// rows that do not slide where at most this many output loops slide: an image's rows and columns
// (2D stems and stride-2 3x3s 5-18% faster at 8 lanes), not a video's frames too (R3D-18's 3D
// convolutions ran 11-20% slower so: each padded row keeps a position and a gate per window axis in
// the general registers, which spilled; docs/decisions/twelve-accumulators-on-sixteen-registers.md).
constexpr int kMostWideSlidingLoops = 2;

// The registers a two-vector tile's step needs beside its accumulators: the two column vectors
// and one row's broadcast (codegen/expand lists the copies so each broadcast dies after its two
// multiply-adds).
constexpr int64_t kTwoVectorOperands = 3;

// The most rows unsliding_two_vector_rows gives: 12 accumulators, a tuned AVX2 GEMM's 6 x 2 tile.
constexpr int64_t kWideTileRows = 6;

// The shortest reduction (multiply-adds per accumulator) unsliding_two_vector_rows is asked for:
// 64 long, the 12 accumulators' stores and the padded rows cost what the steps save (a 64 -> 256
// 1x1 convolution on 8 x 56 x 56 ran 1-3% slower so, ResNeXt-50's 64-channel 1x1s 2-16%).
constexpr int64_t kLeastWideTileReduction = 128;

// The rows of a two-vector register tile on a CPU (`budget` accumulators, `registers` vector
// registers) whose rows do not slide along a window (a matmul's, a 1x1 convolution's pixels, the
// Winograd product's tiles): where half the file holds fewer than kWideTileRows rows, as many as
// the file holds beside kTwoVectorOperands, up to kWideTileRows. At 16 registers that is 6 rows,
// not 4: the 1x1 convolutions of ResNet-50 and ResNeXt-50 ran 7-13% faster so, transformer and
// ConvNeXt matmuls 5-15%, Inception-v3 about 7% (bench/RESULTS.md, 2026-12-01). At 32 registers
// half the file (8 rows) stays: 14 rows of 2 were slower there
// (docs/decisions/matmul-ceiling-and-fourteen-row-tiles.md). Rows that slide by one tap keep half
// the file too, as do any sliding rows where more than kMostWideSlidingLoops output loops slide:
// each keeps an address and a padding gate per tap in the general registers
// (docs/decisions/twelve-accumulators-on-sixteen-registers.md).
int64_t unsliding_two_vector_rows(int64_t budget, int64_t registers) {
  return std::max(budget / 2, std::min((registers - kTwoVectorOperands) / 2, kWideTileRows));
}

// What a two-vector tile's step does besides its multiply-adds (the vectors' loads and
// prefetches, the loop) costs about as much as kTileStepRows rows of them.
constexpr double kTileStepRows = 2;

// The price of `size` rows in tiles of `n` (a wider tile's, Planner::tile): the padded rows, each
// with its share of its step's own work. 49 pixels take 5 rows (50 padded) rather than 6 (54):
// the 1024 -> 2048 1x1 on 7x7 at 8 lanes ran 2-4% faster so; 196 keep 6 (198).
double padded_rows_price(int64_t size, int64_t n) {
  return static_cast<double>((size + n - 1) / n * n) * (static_cast<double>(n) + kTileStepRows) /
         static_cast<double>(n);
}

// Whether a four-vector register tile (`four` accumulators over `four_stored` padded positions)
// is worth taking over the two-vector one (`two`, `two_stored`) on the same rows (Planner::tile).
bool fourfold_pays(int64_t four, int64_t four_stored, int64_t two, int64_t two_stored) {
  if (four <= two) return false;
  bool too_few = two < kLatencyAccumulators;  // two vectors' tile waits on the multiply-adds' latency
  if (too_few) return four_stored * 32 <= two_stored * 33;
  return four_stored <= two_stored && four * 2 >= two * 3;
}

// The fewest bytes a thread's part of a kernel's output is stored in, in one run, for the threads
// to split a loop other than the output's outermost (a page: Swin-T's window shuffles, 2.7 KB runs,
// and ShuffleNet's channel shuffle, 3.1 KB, ran up to 1.8x slower so).
constexpr int64_t kLeastThreadRun = 4096;

// A loop moved innermost so its kernel reads in order (Planner::read_in_order) stores to as many
// streams as it has steps: at most kMostStoreStreams (about a core's line fill buffers:
// DeepLabV3's 32 channel blocks ran 30% slower so), and at most kMostAliasedStreams of them a
// multiple of kSetSpan bytes apart, which fall in the same sets of L1 and whose addresses alias
// (U-Net's 64x64 maps, all 8 streams 128 KB apart, ran 2.5x slower; R3D-18's, 1.6 MB, 1.6-2.1x;
// ResNet-18's 28x28 maps, 8 streams 49 KB apart, two on each offset, ran 20% faster).
constexpr int64_t kMostStoreStreams = 16, kSetSpan = 4096, kMostAliasedStreams = 2;

// The share of L1 a row's part of the other operand may take for a group of blocks to stream
// past it (Planner::blocks_in_groups), in quarters: three, one left to the blocks' stream and
// the prefetches ahead of it. A 6-row tile over 1024 input channels reads 24 KB a row, 3/4 of an
// AVX2 CPU's 32 KB.
constexpr int64_t kRowShareOfL1 = 3;

bool ordinary(const Loop& l) { return l.kind == AxisKind::Loop && !l.symbolic; }

// Whether `size` padded to a multiple of `multiple` grows by at most an eighth: the padding a loop
// takes for whole vectors, pairs of them or a register tile's rows.
bool pads_by_an_eighth(int64_t size, int64_t multiple) {
  return ((size + multiple - 1) / multiple * multiple - size) * 8 <= size;
}

// A GPU runs one thread per output. A kernel with at most kGroupedOutputs outputs whose
// reduction is at least kGroupedReduction long (a sum to one value, a norm's statistics, a
// pooled head) would leave the GPU nearly idle, each thread reducing a whole row: its threads share
// the reduction instead, a block of up to kGroupThreads per output (GROUP), each taking every n-th
// element, their partials combined through shared memory.
constexpr int64_t kGroupedOutputs = 4096;
constexpr int64_t kGroupedReduction = 256;
constexpr int64_t kGroupThreads = 256;

// Whether the next position of `r` reads inside the window a position of it reads through one of
// the `hot` loads: a step along `r` is a whole number of steps along some reduction loop that stay
// within it (a convolution's pixels along its taps, or along its taps and channels merged into one
// loop). `by_one_tap`: only where that step is one step of such a loop (a convolution's pixels
// whose stride is its dilation, the closest sliding: neighbouring positions share all their window
// but one tap's column). Where the taps and the channels of a block are merged into one loop (an
// unpadded convolution's columns), a step of one tap is a block of channels, and no step of
// that loop tells the stride: such pixels count as sliding by more than one tap whatever their
// stride (Inception-v3's unpadded stride-1 3x3 over 32 channels so took the wider tile, and ran the
// same: 2043 -> 2006 and 1964 -> 1990 us).
bool slides(const Loop& r, const std::vector<UOpPtr>& hot, const std::vector<Loop>& loops, bool by_one_tap = false) {
  for (const UOpPtr& o : hot) {
    std::optional<int64_t> along = stride(o, r);
    if (!along || *along <= 0) continue;
    for (const Loop& k : loops) {
      std::optional<int64_t> tap = k.reduce ? stride(o, k) : std::nullopt;
      if (tap && *tap > 0 && *along % *tap == 0 && *along < *tap * k.size && (!by_one_tap || *along == *tap)) return true;
    }
  }
  return false;
}

// Whether some load of `hot` steps along both loops `a` and `b`.
bool follows_both(const std::vector<UOpPtr>& hot, const Loop& a, const Loop& b) {
  for (const UOpPtr& o : hot)
    if (stride(o, a) != 0 && stride(o, b) != 0) return true;
  return false;
}

// The bytes one position of `r` reads over the reduction through the hot loads that vary along it.
// Saturates at 64 times `l1` (the L1 data cache's bytes).
int64_t window_bytes(const std::vector<Access>& acc, const Loop& r, const std::vector<Loop>& loops, int64_t l1) {
  int64_t bytes = 0;
  for (const Access& a : acc) {
    if (!a.hot || a.store || stride(a.offset, r).value_or(1) == 0) continue;
    int64_t n = a.itemsize;
    for (const Loop& k : loops)
      if (k.reduce && stride(a.offset, k).value_or(1) != 0)  // saturated: a symbolic loop counts its bound
        n = k.size > l1 * 64 ? l1 * 64 : std::min(n * k.size, l1 * 64);
    bytes = std::min(bytes + n, l1 * 64);
  }
  return bytes;
}

// A rough count of the operations `ast` performs (loop trips times the nodes they run): before
// codegen, only to decide whether threads pay. What a kernel costs is counted after linearize
// (codegen/estimates.hpp, the profile's figures).
int64_t estimated_ops(const UOpPtr& ast) {
  // Each node runs once per position of the loops it depends on (a reduction's own loops end at it).
  std::unordered_map<const UOp*, std::set<const UOp*>> loops;
  int64_t total = 0;
  for (const UOpPtr& u : toposort(ast)) {
    std::set<const UOp*>& mine = loops[u.get()];
    for (const UOpPtr& s : u->src()) mine.insert(loops[s.get()].begin(), loops[s.get()].end());
    if (u->op() == Ops::RANGE) mine.insert(u.get());
    if (u->op() == Ops::REDUCE)
      for (size_t i = 1; i < u->src().size(); ++i) mine.erase(u->src(i).get());
    if (!is_alu(u->op()) && u->op() != Ops::LOAD && u->op() != Ops::STORE && u->op() != Ops::CAST) continue;
    int64_t trips = 1;
    for (const UOp* r : mine) trips = std::min<int64_t>(trips * std::max<int64_t>(r->src(0)->vmax(), 1), int64_t{1} << 50);
    total = std::min<int64_t>(total + trips, int64_t{1} << 60);
  }
  return total;
}

class Planner {
 public:
  Planner(const UOpPtr& ast, const Target& t) : cur_(ast), t_(t) {}

  std::vector<Opt> plan() {
    std::vector<Access> acc = accesses(cur_);
    if (acc.empty()) return opts_;
    int item = 4;
    for (const Access& a : acc) item = std::max(item, a.itemsize);
    int max_lanes = std::max(1, t_.vector_bytes / item);
    budget_ = t_.accumulators();
    if (t_.has_local && (on_tensor_cores() || grouped_on_gpu())) return opts_;
    if (std::optional<VectorAxis> v = vector_axis(max_lanes)) {
      int64_t pad_to = paired(*v) ? 2 * v->lanes : v->padded ? v->lanes : 0;
      if (!pad_to || apply({OptOp::PADTO, v->loop.axis, pad_to})) tile(*find_loop(cur_, v->loop.axis), v->lanes);
    }
    read_in_order();
    large_operand_read_once();
    threads();
    return opts_;
  }

 private:
  bool apply(Opt o) {
    try {
      cur_ = apply_opt(cur_, o);
    } catch (const OptError&) {
      return false;
    }
    opts_.push_back(o);
    return true;
  }

  // `actions` in order, all or none: where one is refused, the kernel stays as it was before the first.
  bool apply_all(const std::vector<Opt>& actions) {
    UOpPtr before = cur_;
    size_t applied = opts_.size();
    for (const Opt& o : actions)
      if (!apply(o)) {
        cur_ = before;
        opts_.resize(applied);
        return false;
      }
    return true;
  }

  struct VectorAxis {
    Loop loop;
    int lanes;
    bool padded;  // the loop is padded to a multiple of the lanes first
  };

  // The loop whose positions become vector lanes: the most lanes first, then the most accesses
  // made contiguous (weighted: a load in a reduction's loop 4, a store 2, another load 1; an
  // access made strided counts against), an output loop before a reduction's, the innermost.
  // Contiguity is judged on the split loop's lanes, so a blocked layout (o / 32, o % 32) counts.
  // An output loop no full vector divides may be padded to one (PADTO) where that adds at most an
  // eighth and every load in the reduction stays a vector or a broadcast: its padded lanes then
  // read inside their buffers (a weight stored with padded channel blocks, tensor/nn.cpp), not
  // lane by lane (1000 classes: 63 vectors of 16 rather than 125 of 8).
  std::optional<VectorAxis> vector_axis(int max_lanes) {
    std::optional<VectorAxis> best;
    std::tuple<int, int, bool, int64_t> best_key{};
    for (const Loop& l : kernel_loops(cur_)) {
      if (!ordinary(l)) continue;
      bool can_pad = !l.reduce && max_lanes >= 4 && l.size % max_lanes != 0 && pads_by_an_eighth(l.size, max_lanes);
      for (bool padded : {false, true}) {
        if (padded && !can_pad) continue;
        int lanes = padded ? max_lanes : lanes_for(l.size, max_lanes);
        if (!lanes) continue;
        std::optional<Lanes> split = lanes_of(l, padded ? lanes : 0, lanes);
        if (!split) continue;
        // A loop whose hot loads are vectors (none read lane by lane) is taken for them alone, padded
        // or not: what counts against it is read or stored once per output (the stores and the
        // residuals of an NCHW output, a bias clamped in its padded lanes), beside a reduction's
        // worth of vector loads (a 1x1 convolution's NCHW output plus three others ran scalar, 30x
        // slower). A padded loop is taken for nothing else.
        if (!split->hot_vectors() && (padded || split->score <= 0)) continue;
        int score = split->score;
        std::tuple<int, int, bool, int64_t> key{lanes, score, !l.reduce, l.axis};
        if (!best || key > best_key) best = VectorAxis{l, lanes, padded}, best_key = key;
      }
    }
    return best;
  }

  // How the accesses read along loop `l` split by `lanes` (padded first to a multiple of
  // `pad_to`, where not 0): whether a hot load is a vector, one is read lane by lane (varying or
  // strided) and one is the same in every lane (a broadcast), and the score vector_axis weighs
  // them by. None where the split is refused.
  struct Lanes {
    int score = 0;
    bool hot_vector = false, hot_lane_by_lane = false, hot_broadcast = false;
    bool hot_vectors() const { return hot_vector && !hot_lane_by_lane; }
  };
  std::optional<Lanes> lanes_of(const Loop& l, int64_t pad_to, int64_t lanes) const {
    UOpPtr split;
    try {
      split = pad_to ? apply_opt(cur_, {OptOp::PADTO, l.axis, pad_to}) : cur_;
      split = apply_opt(split, {l.reduce ? OptOp::UNROLL : OptOp::UPCAST, l.axis, lanes});
    } catch (const OptError&) {
      return std::nullopt;
    }
    std::optional<Loop> lane = find_loop(split, next_axis(cur_));
    if (!lane) return std::nullopt;
    Lanes out;
    for (const Access& a : accesses(split)) {
      std::optional<int64_t> s = stride(a.offset, *lane);
      out.hot_vector |= a.hot && !a.store && s == 1;
      out.hot_lane_by_lane |= a.hot && s != 0 && s != 1;
      out.hot_broadcast |= a.hot && !a.store && s == 0;
      if (s == 0) continue;
      int w = a.hot ? 4 : a.store ? 2 : 1;
      out.score += s == 1 ? w : -w;
    }
    return out;
  }

  // Whether the output loop `v` leaves an odd count of vectors (104 channels: 13 of 8) and is
  // padded to pairs of them instead: where that adds at most an eighth, its hot loads stay
  // vectors, their padded lanes inside their buffers (a weight whose channels are stored padded
  // to blocks of two registers, schedule/blocks.hpp's Blocks::stored), and one is a broadcast.
  // Each row of the tile then takes two vectors (Planner::tile), and a broadcast feeds two
  // multiply-adds, not one: at 16 registers of 8 floats RegNet-Y's 104-channel 1x1s ran 1.7x
  // faster as 2 vectors x 4 pixels padded to 112 channels than as 1 x 8. (A tile without
  // broadcasts, a depthwise convolution's, would only compute the padding.)
  bool paired(const VectorAxis& v) const {
    const Loop& l = v.loop;
    int64_t pair = 2 * v.lanes, vectors = (l.size + v.lanes - 1) / v.lanes;
    if (l.reduce || vectors < 3 || vectors % 2 == 0 || !pads_by_an_eighth(l.size, pair)) return false;
    std::optional<Lanes> split = lanes_of(l, pair, v.lanes);
    return split && split->hot_vectors() && split->hot_broadcast;
  }

  // The register tile around the vector axis `v` split by `lanes`.
  void tile(const Loop& v, int lanes) {
    int64_t lane_axis = next_axis(cur_);
    if (!apply({v.reduce ? OptOp::UNROLL : OptOp::UPCAST, v.axis, lanes})) return;
    // The operands read along the vector lanes inside a reduction.
    std::optional<Loop> lane = find_loop(cur_, lane_axis);
    std::vector<UOpPtr> vector_operands, hot;
    for (const Access& a : accesses(cur_))
      if (a.hot) {
        hot.push_back(a.offset);
        if (lane && stride(a.offset, *lane) == 1) vector_operands.push_back(a.offset);
      }
    std::optional<Loop> left = find_loop(cur_, v.axis);  // what is left of the vector axis (none: 1)
    int64_t outer_size = left ? left->size : 1;
    if (hot.empty()) {
      shared_work_loop(v.axis);
      return transpose_tile(v.axis, lane, lanes);
    }
    if (v.reduce) {
      reduce_tile(hot, v.axis, outer_size);
      return elementwise_lanes(lanes);
    }

    // Rows: an output loop some vector operand does not depend on and some other hot load does.
    // Each (rows, vectors) fits the register budget. The most accumulators that store a result
    // win, counted at the share of a step their multiply-adds take beside the loads that feed them
    // (a broadcast per row, a load per vector: 16 rows of 1 vector read 17 operands for 16
    // multiply-adds, 7 rows of 2 vectors 9 for 14), then more vectors. (Inception-v3's 147-pixel
    // rows as 160 padded rows of 1 vector ran 2.5x slower than as 7 rows of 2.)
    std::optional<Loop> best_row;
    int64_t best_rows = 1, best_vectors = 1, best_most = 1;  // best_most: the most rows its tile allowed
    bool best_padded = false;
    double best_score = 0;
    // A row's second vector: the rest of the vector axis when it splits in two; where the vector
    // axis is all lanes (a channel block of 16), the loop over blocks.
    std::optional<int64_t> blocks = block_axis(v.axis, vector_operands, hot);
    int64_t second = outer_size % 2 == 0 ? v.axis : left || !blocks ? -1 : *blocks;  // -1: none
    // some operand in the reduction is the same in every lane: a broadcast
    bool broadcasts =
        lane && std::any_of(hot.begin(), hot.end(), [&](const UOpPtr& o) { return stride(o, *lane) == 0; });
    // Else an odd count of blocks (104 channels in 13 of 8) is padded to an even one where that
    // adds at most an eighth and the tile broadcasts, as paired() pads a vector axis, on registers
    // two of which make at most a cache line, as Blocks::stored pads weights for (wider ones take
    // twice the rows of one vector; their tiles are kept, unmeasured).
    if (second < 0 && !left && broadcasts && registers_pair_in_a_line(t_))
      if (std::optional<int64_t> odd = block_axis(v.axis, vector_operands, hot, -1, true))
        if (pads_by_an_eighth(find_loop(cur_, *odd)->size, 2) && apply({OptOp::PADTO, *odd, 2}))
          second = *odd, blocks = odd;
    bool can_double = second >= 0;
    // Four vectors where the loops over a blocked layout's blocks give two more: the loop the
    // second vector comes from, where it is a loop over blocks that splits in four (not the rest
    // of the vector axis: a matmul's columns, whose 6 x 4 tiles gained nothing), or a second loop
    // over blocks (blocks of 32 channels read as two of 16, the 32s a loop of their own), where
    // the register file holds at least kLeastFourfoldRows rows of them beside the four loads and
    // a broadcast (6 at 32 registers, 2 at 16). Each broadcast then feeds four multiply-adds
    // rather than two; a tile without broadcasts (a depthwise convolution reads its input as
    // vectors too) saves nothing so and keeps two (MobileNet-V2's ran 7% slower as 2 x 4).
    // `fourfold`: the upcasts that make the four (none: empty).
    auto most_rows = [&](int64_t vectors) {
      return vectors == 4 ? std::max<int64_t>(0, (t_.vector_registers - vectors - 2) / vectors) : budget_ / vectors;
    };
    std::vector<std::pair<int64_t, int64_t>> fourfold;
    std::vector<Loop> loops = kernel_loops(cur_);
    if (can_double && broadcasts && most_rows(4) >= kLeastFourfoldRows) {
      // No loop whose steps slide along the reduction's window (an NCHW image's rows, whose
      // padding gates would then stay in the loads rather than bound the taps' loop).
      auto sliding = [&](std::optional<int64_t> axis) {
        std::optional<Loop> l = axis ? find_loop(cur_, *axis) : std::nullopt;
        return l && slides(*l, hot, loops);
      };
      std::optional<Loop> from = find_loop(cur_, second);
      std::optional<int64_t> other = block_axis(v.axis, vector_operands, hot, second);
      if (sliding(other)) other.reset();
      if (sliding(second)) other.reset(), from.reset();
      if (second != v.axis && from && from->size % 4 == 0) fourfold = {{second, 4}};
      else if (other && (second != v.axis || outer_size == 2)) fourfold = {{second, 2}, {*other, 2}};
    }
    std::vector<Access> all = accesses(cur_);
    std::optional<Loop> second_loop = can_double ? find_loop(cur_, second) : std::nullopt;
    int64_t reduction = 1;  // the multiply-adds each accumulator sums, up to kLeastWideTileReduction
    for (const Loop& k : loops)
      if (k.reduce)
        reduction = k.size >= kLeastWideTileReduction / reduction ? kLeastWideTileReduction : reduction * k.size;
    int sliding = 0;  // the output loops that slide: an image's rows and columns, a video's frames too
    for (const Loop& r : loops) sliding += !r.reduce && r.axis != v.axis && slides(r, hot, loops);
    // A symbolic loop (the boxes a detector kept) takes rows too, padded at each run to a multiple
    // of them, but only where no loop of known size can (a matmul's rows): its run may be far
    // below its bound (one image of a batch of up to 16 computed 8 as rows: ResNet-18's direct
    // convolutions 14.9 -> 35.5 ms), and a row at a time each vector of B fed one multiply-add.
    for (int pass = 0; pass < 2 && !best_row; ++pass) {  // loops of known size, then symbolic ones
      for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
        const Loop& r = *it;
        if (r.kind != AxisKind::Loop || r.reduce || r.axis == v.axis || r.size < 2 || r.symbolic != (pass == 1)) continue;
        // Some vector operand is the same on every row (a matmul's B row, a convolution's weights;
        // a depthwise convolution's input is a vector operand too, read anew for each pixel).
        bool reused = false;
        for (const UOpPtr& o : vector_operands) reused = reused || stride(o, r) == 0;
        bool feeds = false;
        for (const UOpPtr& o : hot) feeds = feeds || stride(o, r) != 0;
        if (!reused || !feeds) continue;
        // Rows that slide along a window (a convolution's pixels: the next row's input is this
        // row's next tap) share what they load; rows that do not (the images of a batch) each load
        // a window of their own, and where those overflow L1 they count three quarters (so 7 pixels
        // x 2 vectors win over 8 images x 2: ResNet-18 at batch 8, whose images' 3x3 windows of 256
        // and 512 channels, 74 and 147 KB for 8, ran at 200-290 GFLOP/s as rows and ~380 with
        // pixels as rows; 8 windows of 128 channels, 37 KB, run faster as rows).
        int64_t own_window = sliding > 0 && !slides(r, hot, loops) ? window_bytes(all, r, loops, t_.l1_bytes) : 0;
        int64_t stored_by_two = 0, by_two = 0;  // the two-vector tile's positions (padded) and accumulators
        for (int64_t vectors : {int64_t{2}, int64_t{1}, int64_t{4}}) {
          if ((vectors == 2 && !can_double) || (vectors == 4 && fourfold.empty())) continue;
          // `wider`: a two-vector tile allowed more rows than half the file, which it pads to
          // where no divisor comes near them (196 pixels as 198 in tiles of 6, 49 as 50 in tiles
          // of 5: padded_rows_price).
          // Only where each row reads one broadcast and no load follows both the rows and the
          // second vector: codegen/expand then lists the copies row by row (copy_order), else the
          // six broadcasts stay live across both vectors and the tile spills.
          int64_t most = most_rows(vectors);
          bool wider = false;
          if (vectors == 2 && broadcasts && !r.symbolic && !t_.has_local && reduction >= kLeastWideTileReduction &&
              second_loop &&
              !slides(r, hot, loops, sliding <= kMostWideSlidingLoops) &&
              !follows_both(hot, r, *second_loop)) {
            most = unsliding_two_vector_rows(budget_, t_.vector_registers);
            wider = most > most_rows(vectors);
          }
          int64_t rows = r.symbolic ? std::min(most, r.size) : divisor_up_to(r.size, most);
          // No divisor near the budget (a prime size: 17 or 109 pixels): the loop is padded to a
          // multiple of the most rows that add at most an eighth to it (17 pixels: 18, 3 tiles of 6),
          // more than twice the divisor's rows; four vectors' rows also where that is just twice
          // (17 pixels at 16 registers: 18, 9 tiles of 2; 51 at 32 registers: 54, 9 tiles of 6).
          // A wider tile also tries fewer rows, while they hold more accumulators than
          // kLatencyAccumulators, and takes the one whose padded rows cost least (padded_rows_price).
          bool pad = r.symbolic;
          if (int64_t divisor = rows;
              !r.symbolic && (divisor * 2 <= most || (wider && divisor < most)) && r.size >= most)
            for (int64_t n = most; n > (wider ? divisor : divisor * 2) || (vectors == 4 && n == most); --n) {
              if (pad && n * vectors <= kLatencyAccumulators) break;  // fewer would wait on latency
              if (!pads_by_an_eighth(r.size, n)) continue;
              if (!pad || padded_rows_price(r.size, n) < padded_rows_price(r.size, rows)) rows = n, pad = true;
              if (!wider) break;
            }
          int64_t accumulators = rows * vectors, stored = (r.size + rows - 1) / rows * rows;
          if (accumulators < 2) continue;  // no tile
          if (vectors == 2) stored_by_two = stored, by_two = accumulators;
          // Four vectors where they hold more accumulators than two: any more where two hold too
          // few to hide the multiply-adds' latency, padding at most a 32nd more than two
          // (Inception-v3's 17-pixel 1x7s and 3x3 of stride 2 at 16 registers: 2 x 4 against 3 x 2,
          // 9-19% faster; its 147-pixel rows as 2 x 4 padded to 148 against 7 rows of 1 vector,
          // 9-18%), else half as many again and padding no more (17 pixels at 32 registers: 6 x 4
          // against 6 x 2, 2.33 -> 2.09 ms for the 3x3; ResNet-50's 1x1s on 56x56 as 4 x 4
          // against 7 x 2 ran 15-20% slower). Padded rows cost more than the loads saved
          // (MNASNet's 49 pixels as 9 x 6 rows of 4 vectors ran 27% slower than 7 x 7 of 2).
          if (vectors == 4 && !fourfold_pays(accumulators, stored, by_two, stored_by_two)) continue;
          double score = static_cast<double>(accumulators) * static_cast<double>(r.size) / static_cast<double>(stored) *
                         std::min(1.0, static_cast<double>(accumulators) / static_cast<double>(rows + vectors)) *
                         (own_window > t_.l1_bytes / rows ? 0.75 : 1.0);
          if (score > best_score) {
            best_row = r, best_rows = rows, best_vectors = vectors, best_padded = pad, best_score = score;
            best_most = most;
          }
        }
      }
    }
    if (!best_row) {
      if (can_double) apply({OptOp::UPCAST, second, 2});
      return;
    }
    if (best_vectors == 4)
      for (auto [axis, n] : fourfold) apply({OptOp::UPCAST, axis, n});
    if (best_vectors == 2) apply({OptOp::UPCAST, second, 2});
    // PADTO refused: a known size as its divisors allow; a symbolic one as it is, where it is a
    // multiple of the rows already (UPCAST refuses it otherwise).
    if (best_padded && !apply({OptOp::PADTO, best_row->axis, best_rows}) && !best_row->symbolic)
      best_rows = divisor_up_to(best_row->size, best_most);
    if (best_rows > 1) apply({OptOp::UPCAST, best_row->axis, best_rows});
    more_rows(best_row->axis, best_rows * best_vectors, vector_operands, hot);
    // Rows are ordered against what is left of the vector axis or, where the tile took all of it
    // (a block of 32 columns, 2 vectors of 16), against the loop over the blocks (UPCAST keeps a
    // split loop's axis for what is left of it).
    order(best_row->axis, find_loop(cur_, v.axis) || !blocks ? v.axis : *blocks);
  }

  // A kernel whose vectors run along a reduction that also stores a row elementwise after it
  // (softmax's exp(x - max) of each element, once the row's max is known) stores the row in
  // vectors too: an output loop along which each store is contiguous, each other load contiguous
  // or the same, and the reduction's loads the same (they are done before it) becomes lanes.
  // Otherwise that loop is scalar, and with it every exp of the row.
  void elementwise_lanes(int lanes) {
    std::vector<Access> acc = accesses(cur_);
    std::vector<Loop> loops = kernel_loops(cur_);
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      const Loop& l = *it;
      if (!ordinary(l) || l.reduce || l.size % lanes != 0) continue;
      bool fits = true;
      for (const Access& a : acc) {
        std::optional<int64_t> s = stride(a.offset, l);
        fits = fits && (a.store ? s == 1 : a.hot ? s == 0 : s == 0 || s == 1);
      }
      if (fits) {
        apply({OptOp::UPCAST, l.axis, lanes});
        return;
      }
    }
  }

  // A row loop too short to fill the register budget (a convolution 4 pixels wide: 4 x 2 vectors,
  // 8 accumulators, too few to hide the multiply-adds' latency, and each weight vector loaded for
  // 4 of them) takes rows from a second loop with the same reuse: the rows above those pixels.
  // Only exact divisors: a padded second loop would compute whole rows that are never stored.
  void more_rows(int64_t row_axis, int64_t accumulators, const std::vector<UOpPtr>& vector_operands, const std::vector<UOpPtr>& hot) {
    int64_t room = budget_ / accumulators, best = 1;
    if (room < 2) return;
    std::optional<Loop> pick;
    std::vector<Loop> loops = kernel_loops(cur_);
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      const Loop& r = *it;
      if (!ordinary(r) || r.reduce || r.axis == row_axis || r.size < 2) continue;
      // Every vector operand is the same on each new row (one that varies is a loop over output
      // channels, a second block, which the vectors already count) and some other load is not.
      bool reused = !vector_operands.empty(), feeds = false;
      for (const UOpPtr& o : vector_operands) reused = reused && stride(o, r) == 0;
      for (const UOpPtr& o : hot) feeds = feeds || stride(o, r) != 0;
      if (!reused || !feeds) continue;
      if (int64_t n = divisor_up_to(r.size, room); n > best) best = n, pick = r;
    }
    if (pick) apply({OptOp::UPCAST, pick->axis, best});
  }

  // A kernel with no reduction whose floating-point work partly does not depend on an output
  // loop of at most kSharedWorkLoop positions: the loop with the most such operations (the
  // innermost of equals) is upcast whole, and its copies compute that work once (the expander
  // builds one node for each expression they share). The vector axis's outer loop is left alone.
  void shared_work_loop(int64_t vector_axis) {
    std::vector<UOpPtr> order = toposort(cur_);
    std::optional<Loop> pick;
    int64_t most = 0;
    for (const Loop& r : kernel_loops(cur_)) {
      if (!ordinary(r) || r.reduce || r.size < 2 || r.size > kSharedWorkLoop || r.axis == vector_axis) continue;
      std::unordered_map<const UOp*, bool> reads;  // whether a node depends on r
      int64_t shared = 0;
      for (const UOpPtr& u : order) {
        bool d = u.get() == r.range.get();
        for (const UOpPtr& s : u->src()) d = d || reads[s.get()];
        reads[u.get()] = d;
        shared += !d && is_alu(u->op()) && u->dtype().is_float();
      }
      if (shared > 0 && shared >= most) most = shared, pick = r;
    }
    if (pick) apply({OptOp::UPCAST, pick->axis, pick->size});
  }

  // A kernel with no reduction that reads some input across its lanes (a transposing copy: a
  // weight laid out in channel blocks reads 16 rows for each vector it stores) also steps, in each
  // iteration, along the loop that input is contiguous in, up to a vector's worth: the tile reads
  // whole cache lines of each row. One row at a time, rows whose stride is a multiple of 2 KB
  // fall in the same few sets of the L1 cache and evict each other before the next element of
  // each is read (ResNet-18's 3x3 weights: 2.5 GB/s).
  void transpose_tile(int64_t vector_axis, const std::optional<Loop>& lane, int lanes) {
    if (!lane) return;
    for (const Access& a : accesses(cur_)) {
      std::optional<int64_t> across = stride(a.offset, *lane);
      if (a.store || !across || *across == 0 || *across == 1) continue;
      for (const Loop& r : kernel_loops(cur_))
        if (ordinary(r) && !r.reduce && r.axis != vector_axis && r.size >= 2 && stride(a.offset, r) == 1) {
          if (int64_t n = divisor_up_to(r.size, lanes); n > 1) apply({OptOp::UPCAST, r.axis, n});
          return;
        }
    }
  }

  // The loop over blocks of a blocked layout: an output loop of even size (odd where `odd`), other
  // than the vector axis (and `skip`), that every vector operand steps along and the other loads in
  // the reduction do not (2 blocks of 16 channels).
  std::optional<int64_t> block_axis(int64_t vector_axis, const std::vector<UOpPtr>& vector_operands,
                                    const std::vector<UOpPtr>& hot, int64_t skip = -1, bool odd = false) const {
    if (vector_operands.empty()) return std::nullopt;
    std::vector<Loop> loops = kernel_loops(cur_);
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
      const Loop& t = *it;
      if (!ordinary(t) || t.reduce || t.axis == vector_axis || t.axis == skip || t.size % 2 != (odd ? 1 : 0)) continue;
      bool fits = true;
      for (const UOpPtr& o : hot) {
        bool vector = std::find(vector_operands.begin(), vector_operands.end(), o) != vector_operands.end();
        fits = fits && (vector ? stride(o, t) != 0 : stride(o, t) == 0);
      }
      if (fits) return t.axis;
    }
    return std::nullopt;
  }

  // The bytes an access reaches over the loops its offset depends on.
  int64_t footprint(const Access& a) const {
    int64_t n = a.itemsize;
    for (const Loop& l : kernel_loops(cur_))
      if (stride(a.offset, l) != 0) n = std::min<int64_t>(n * l.size, int64_t{1} << 50);
    return n;
  }

  // The bytes between the lowest and the highest address an access reaches (a window's rows read
  // by several taps are counted once, as footprint does not).
  static int64_t span(const Access& a) {
    constexpr int64_t kMost = int64_t{1} << 50;  // an unbounded offset (a data-dependent one) spans this much
    int64_t elements = 0;
    if (__builtin_sub_overflow(a.offset->vmax(), a.offset->vmin(), &elements) || elements >= kMost) return kMost;
    return std::min<int64_t>((elements + 1) * a.itemsize, kMost);
  }

  // Of the loops left of the rows and of the vectors, the outer one makes the other operand be
  // read again on each of its steps: the outer one is the one whose re-reads cost less (a matmul
  // of square matrices walks column blocks outside row blocks: a row block of A is smaller to
  // stream again than the whole of B).
  void order(int64_t row_axis, int64_t vector_axis) {
    std::optional<Loop> rows = find_loop(cur_, row_axis), vectors = find_loop(cur_, vector_axis);
    // Only rows outside vectors is reconsidered: moving a convolution's pixel loop outside its
    // output-channel blocks by this count made it 15% slower (the count ignores the windows'
    // overlap, which the caches catch).
    if (!rows || !vectors || rows->kind != AxisKind::Loop || !ordinary(*vectors) || vectors->axis < rows->axis) return;
    int64_t row_operand = 0, vector_operand = 0;  // bytes read by the loads that follow only one of them
    for (const Access& a : accesses(cur_)) {
      if (!a.hot) continue;
      bool r = stride(a.offset, *rows) != 0, v = stride(a.offset, *vectors) != 0;
      if (r && !v) row_operand += footprint(a);
      if (v && !r) vector_operand += footprint(a);
    }
    // rows outside: the vector operand is read rows->size times; vectors outside: the row operand
    if (static_cast<double>(vectors->size) * row_operand < static_cast<double>(rows->size) * vector_operand)
      apply({OptOp::SWAP, rows->axis, vectors->axis});
  }

  // A reduction along the vector axis: the output loops that some hot load does not depend on
  // while another does (the rows and columns of A @ B^T) each take up to 4 positions, as many
  // partial-sum vectors as the register budget holds (4 x 4 at 32 registers, 4 x 2 at 16: 4 x 4
  // spilled a vector per multiply-add at 8 lanes); with none, the reduction keeps several
  // partial sums.
  void reduce_tile(const std::vector<UOpPtr>& hot, int64_t axis, int64_t outer_size) {
    int upcasts = 0;
    int64_t room = budget_;
    std::vector<Loop> loops = kernel_loops(cur_);
    for (auto it = loops.rbegin(); it != loops.rend() && upcasts < 2; ++it) {
      const Loop& r = *it;
      if (!ordinary(r) || r.reduce || r.size < 2) continue;
      bool some_not = false, some = false;
      for (const UOpPtr& o : hot) (stride(o, r) == 0 ? some_not : some) = true;
      if (!some_not || !some) continue;
      int64_t n = divisor_up_to(r.size, std::min<int64_t>(4, room));
      if (n > 1 && apply({OptOp::UPCAST, r.axis, n})) ++upcasts, room /= n;
    }
    if (upcasts == 0 && outer_size >= 8) {
      int64_t n = outer_size % 4 == 0 ? 4 : outer_size % 2 == 0 ? 2 : 1;
      if (n > 1) apply({OptOp::UNROLL, axis, n});
    }
  }

  // The kernel's output count (its output loops' sizes multiplied) and its longest ordinary
  // reduction loop (none: no reduction a GROUP can take): what both GROUP rules weigh.
  std::pair<int64_t, std::optional<Loop>> outputs_and_longest_reduction() const {
    int64_t outputs = 1;
    std::optional<Loop> longest;
    for (const Loop& l : kernel_loops(cur_)) {
      if (!l.reduce) outputs *= l.size;
      else if (ordinary(l) && (!longest || l.size > longest->size)) longest = l;
    }
    return {outputs, longest};
  }

  // On a GPU, a kernel of few outputs and one long reduction: its longest reduction loop shared by
  // a block of threads, at least 4 positions each (a power of two, so a warp is whole).
  // Only where the GPU can place it (codegen/launch_grid): a grid launches the three output loops
  // of the largest axes; each loop past them stays in every thread, a row of partials each, and
  // the rows (n x their count x the accumulator) must fit the block's shared memory.
  bool grouped_on_gpu() {
    auto [outputs, longest] = outputs_and_longest_reduction();
    if (!longest || outputs > kGroupedOutputs || longest->size < kGroupedReduction) return false;
    int64_t n = std::min<int64_t>({kGroupThreads, t_.local_max[0], t_.local_total_max});
    while (n > 32 && n * 4 > longest->size) n /= 2;
    std::vector<Loop> outs;  // by axis
    for (const Loop& l : kernel_loops(cur_))
      if (!l.reduce && l.size > 1) outs.push_back(l);
    int64_t rows = 1;
    for (size_t i = 0; i + 3 < outs.size(); ++i) rows *= outs[i].size;
    int64_t partial_bytes = 4;  // a 16-bit float's partials are float32, others their own type
    for (const UOpPtr& u : toposort(cur_))
      if (u->op() == Ops::REDUCE && std::find(u->src().begin() + 1, u->src().end(), longest->range) != u->src().end())
        partial_bytes = std::max<int64_t>(partial_bytes, u->dtype().scalar().itemsize());
    if (n * rows * partial_bytes > t_.shared_bytes) return false;
    return apply({OptOp::GROUP, longest->axis, n});
  }

  // On a GPU with tensor cores for its inputs, a contraction of 16-bit floats runs on them (TC):
  // over its longest reduction loop of a tensor core's form, its rows, columns and that loop
  // padded to the tile where they are not multiples of it, when the padding adds at most the work
  // there was (tensor cores do 16-bit multiply-adds many times faster than a thread's float ones).
  // A warp then takes up to 2 x 2 tiles (UPCAST of the row and column tile loops).
  bool on_tensor_cores() {
    std::optional<TensorCoreLoops> best;
    for (const Loop& l : kernel_loops(cur_)) {
      if (!l.reduce || !ordinary(l)) continue;
      std::optional<TensorCoreLoops> fit = tensor_core_loops(cur_, l.axis);
      if (fit && has_tensor_core(t_, fit->input) && (!best || l.size > best->k.size)) best = fit;
    }
    if (!best) return false;
    auto up = [](int64_t size, int64_t tile) { return (size + tile - 1) / tile * tile; };
    double grown = static_cast<double>(up(best->m.size, kTensorCoreM)) * static_cast<double>(up(best->n.size, kTensorCoreN)) *
                   static_cast<double>(up(best->k.size, kTensorCoreK)) / (static_cast<double>(best->m.size) * static_cast<double>(best->n.size) * static_cast<double>(best->k.size));
    if (grown > 2) return false;
    std::vector<Opt> actions;
    for (auto [l, tile] : {std::pair{best->m, kTensorCoreM}, {best->n, kTensorCoreN}, {best->k, kTensorCoreK}})
      if (l.size % tile) actions.push_back({OptOp::PADTO, l.axis, tile});
    actions.push_back({OptOp::TC, best->k.axis, 0});
    if (!apply_all(actions)) return false;  // planned without tensor cores
    // A warp takes 2 x 2 tiles where the tiles pair up: each A fragment then feeds two
    // multiply-adds and each B fragment two (16 accumulators a lane).
    for (const Loop& l : {best->n, best->m})
      if (std::optional<Loop> tiles = find_loop(cur_, l.axis); tiles && tiles->size % 2 == 0)
        apply({OptOp::UPCAST, l.axis, 2});
    return true;
  }

  // On a CPU, a kernel without a reduction that reads at least what it stores, and whose largest
  // input steps a cache line or less along an output loop along which the store steps
  // kLeastThreadRun bytes or more, takes that loop innermost of its output loops of known size
  // (and threads leave it there): the input is then read line after line in the order it lies in
  // memory, and the store writes a vector to each of that loop's few streams (kMostStoreStreams,
  // few of them a multiple of kSetSpan apart). A GPU keeps its order: its innermost loop is a warp's
  // lanes, whose stores coalesce along the output's own layout. A Winograd output transform reads its
  // first pass tile by tile, each tile's row of channels in one run, and stores channel blocks:
  // with the loop over the blocks outermost, each sweep over the image read one line in twelve
  // of each tile's (Inception-v3's 71x71, 192 channels, at 8 lanes: 369 -> 192 us; ResNet-50's
  // 14x14s: 18 -> 9 us).
  void read_in_order() {
    std::vector<Loop> loops = kernel_loops(cur_);
    if (t_.has_local || std::any_of(loops.begin(), loops.end(), [](const Loop& l) { return l.reduce; })) return;
    auto [in, out] = largest_load_and_store();
    if (!in || !out || span(*in) < span(*out)) return;
    std::vector<Loop> outs;
    for (const Loop& l : loops)
      if (ordinary(l)) outs.push_back(l);
    for (size_t i = 0; i + 1 < outs.size(); ++i) {
      int64_t reads = step(*in, outs[i]) * in->itemsize, stores = step(*out, outs[i]) * out->itemsize;
      // streams whose addresses agree modulo kSetSpan: size over the distinct offsets they fall on
      int64_t aliased = stores > 0 ? (outs[i].size * std::gcd(stores, kSetSpan) + kSetSpan - 1) / kSetSpan : 0;
      bool streams_apart = outs[i].size <= kMostStoreStreams && aliased <= kMostAliasedStreams;
      if (reads == 0 || reads > kCacheLineBytes || stores < kLeastThreadRun || !streams_apart) continue;
      for (size_t j = i; j + 1 < outs.size(); ++j)  // trades places with each loop inside it
        if (!apply({OptOp::SWAP, outs[j].axis, outs[j + 1].axis})) return;
      read_along_ = outs.back().axis;
      return;
    }
  }

  // The elements access `a` steps over per step of loop `l`, either way; an index that is no
  // affine function of the loop (divided, taken modulo) counts as not stepping along it (0).
  static int64_t step(const Access& a, const Loop& l) { return std::abs(stride(a.offset, l).value_or(0)); }

  // The largest load and the largest store of the kernel (by span).
  std::pair<std::optional<Access>, std::optional<Access>> largest_load_and_store() const {
    std::optional<Access> in, out;
    for (const Access& a : accesses(cur_)) {
      std::optional<Access>& mine = a.store ? out : in;
      if (!mine || span(a) > span(*mine)) mine = a;
    }
    return {in, out};
  }

  // Whether `a` spans the target's L2 or more and a kernel of `ops` operations uses it fewer than
  // kFewUsesPerElement times per element: its stream from beyond L2 is what the kernel waits on.
  bool little_used_beyond_l2(const Access& a, int64_t ops) const {
    return span(a) >= t_.l2_bytes && ops < kFewUsesPerElement * (span(a) / a.itemsize);
  }

  // An operand of L2 or more that the kernel uses few times per element (kFewUsesPerElement) is
  // read whole again for each step of an output loop outside it that it does not step along: a
  // 1x1 or a depth-only convolution's blocks of output channels, nested between a batch's images
  // or a video's frames and their pixels. Where the other hot loads fit half of L2, the loops
  // nest anew: those the operand steps along without a window outermost (the pixels), then those
  // it slides along (the frames, whose neighbours read the same input frames), then the rest
  // (the blocks, which stream past from L2). Each part of the operand is then read from beyond L2
  // once. R(2+1)D-18's 3x1x1 convolutions (144 -> 64 channels over 8 frames of 56x56, 1.8 MB a
  // frame) ran at 60-73 GFLOP/s as frames, blocks, pixels on a Zen 3, and at 97-104 so.
  void large_operand_read_once() {
    if (t_.has_local || read_along_ >= 0) return;
    std::optional<Access> big;
    int64_t others = 0;
    for (const Access& a : accesses(cur_)) {
      if (!a.hot || a.store) continue;
      others += span(a);
      if (!big || span(a) > span(*big)) big = a;
    }
    if (!big || !little_used_beyond_l2(*big, estimated_ops(cur_)) || (others - span(*big)) * 2 > t_.l2_bytes) return;
    std::vector<Loop> loops = kernel_loops(cur_), outs, along, sliding, apart;
    std::vector<UOpPtr> ranges;
    bool reread = false;  // a loop it does not step along is outside one it does
    for (const Loop& l : loops) {
      ranges.push_back(l.range);
      if (!ordinary(l) || l.reduce) continue;
      outs.push_back(l);
      if (stride(big->offset, l) == 0)
        apart.push_back(l);
      else
        (slides(l, {big->offset}, loops) ? sliding : along).push_back(l);
      reread |= !apart.empty() && apart.back().axis != l.axis;
    }
    if (!reread) return;
    // Only where the loops that do not slide read no window at all (a 1x1's pixels, not a
    // strided 3x3's columns): no step of one is a whole number of a reduction loop's steps, both
    // taken inside the loops (a padded or PADTO'd loop's index is clamped at its edges, where
    // its step changes).
    std::vector<int64_t> taps;  // each reduction loop's step, where some loop is along
    for (const Loop& k : loops) {
      if (!k.reduce || along.empty()) continue;
      std::optional<int64_t> tap = step_inside(big->offset, k.range, ranges);
      if (!tap) return;
      taps.push_back(*tap);
    }
    for (const Loop& l : along) {
      std::optional<int64_t> by = step_inside(big->offset, l.range, ranges);
      if (!by) return;
      for (int64_t tap : taps)
        if (tap > 0 && *by % tap == 0) return;
    }
    std::vector<Loop> wanted = along;
    wanted.insert(wanted.end(), sliding.begin(), sliding.end());
    wanted.insert(wanted.end(), apart.begin(), apart.end());
    std::vector<int64_t> at;  // each loop's place now, by its place at the start
    for (const Loop& l : outs) at.push_back(l.axis);
    for (size_t i = 0; i < outs.size(); ++i) {
      int64_t place = outs[i].axis, now = -1;
      for (size_t j = 0; j < outs.size(); ++j)
        if (outs[j].axis == wanted[i].axis) now = at[j];
      if (now == place) continue;
      if (!apply({OptOp::SWAP, place, now})) return;
      for (int64_t& a : at)  // the two loops traded places
        a = a == place ? now : a == now ? place : a;
    }
  }

  // Threads: the outermost output loop that splits into even parts (or many), moved outermost.
  // With fewer outputs than threads, the reduction's longest loop is split across them (GROUP).
  void threads() {
    int64_t ops = estimated_ops(cur_);
    if (t_.threads <= 1 || ops < kThreadedOps) return;
    auto [outputs, longest] = outputs_and_longest_reduction();
    std::vector<Loop> outs;
    for (const Loop& l : kernel_loops(cur_))
      if (!l.reduce && l.kind == AxisKind::Loop) outs.push_back(l);
    if (outputs < t_.threads && longest && longest->size >= 2 * t_.threads && apply({OptOp::GROUP, longest->axis, t_.threads})) return;
    if (outs.empty()) return;
    const Loop outermost = outs.front();
    // An operand too large for a core's cache and used by few operations per element is split
    // between the threads, each streaming its own part: threads over the images of a batch would
    // each read all of a convolution's weight (9 MB for a 3x3 over 512 channels on a 4x4 map). Of
    // the loops it steps along, the one that divides the most bytes of the other hot loads comes
    // first, so a split divides them as well. Without such an operand, where the outermost loop
    // leaves more than L1 of hot loads for each thread to read whole, a loop every hot load steps
    // along comes first: a batched product's batch (Winograd's points, each thread half the
    // transformed input and half the transformed weight); a depthwise convolution's few weights
    // stay whole.
    std::vector<Access> hot_loads;
    for (const Access& a : accesses(cur_))
      if (a.hot && !a.store) hot_loads.push_back(a);
    std::optional<Access> big;
    int64_t hot_bytes = 0;
    for (const Access& a : hot_loads) {
      hot_bytes += span(a);
      if (!big || span(a) > span(*big)) big = a;
    }
    auto divided = [&](const Loop& l) {  // the bytes of hot loads a split of l divides
      int64_t bytes = 0;
      for (const Access& a : hot_loads) bytes += stride(a.offset, l) != 0 ? span(a) : 0;
      return bytes;
    };
    if (big && little_used_beyond_l2(*big, ops)) {
      auto along_big = [&](const Loop& l) { return stride(big->offset, l) != 0 ? divided(l) : -1; };
      std::stable_sort(outs.begin(), outs.end(),
                       [&](const Loop& a, const Loop& b) { return along_big(a) > along_big(b); });
    } else if (hot_loads.size() > 1 && hot_bytes - divided(outs.front()) > t_.l1_bytes) {
      std::stable_partition(outs.begin(), outs.end(), [&](const Loop& l) { return divided(l) == hot_bytes; });
    }
    // A kernel without a reduction whose largest input is at least as large as what it stores,
    // and is split by the outermost output loop too, splits along the loop that input steps
    // farthest along instead (the outermost of the input's layout, which the kernel that stored
    // it split, as its own outermost), so each thread reads what the same core wrote, where each
    // step of that loop still stores kLeastThreadRun bytes or more in one run. A Winograd output
    // transform reads its first pass tile by tile and stores channel blocks: split over the
    // blocks, each core read half its input from the other's cache. An input the outermost loop
    // does not split, each thread reads whole (Swin-T's window shifts ran 2x slower split).)
    if (!big) {
      std::optional<Access> in, out;
      std::tie(in, out) = largest_load_and_store();  // named, not bound: a lambda below reads `in`
      if (in && out && span(*in) >= span(*out)) {
        // An input that does not step along the outermost loop (step 0: also where its index
        // divides the loop) keeps that loop's split.
        auto along = std::max_element(outs.begin(), outs.end(),
                                      [&](const Loop& a, const Loop& b) { return step(*in, a) < step(*in, b); });
        // A step of the stored offset is a run of that many elements where the store is dense.
        if (step(*in, outs.front()) > 0 && step(*out, *along) * out->itemsize >= kLeastThreadRun)
          std::rotate(outs.begin(), along, along + 1);
      }
    }
    int64_t n = t_.threads;
    for (const Loop& l : outs) {
      int64_t least = l.range->src(0)->vmin();
      if (least < n || (l.size % n != 0 && l.size < 4 * n) || l.axis == read_along_) continue;
      if (l.axis != outermost.axis && !apply({OptOp::SWAP, outermost.axis, l.axis})) continue;
      if (!blocks_in_groups(outermost.axis, n)) apply({OptOp::THREAD, outermost.axis, n});
      return;
    }
    if (outermost.size >= 2) apply({OptOp::THREAD, outermost.axis, std::min(n, outermost.size)});
  }

  // Cache blocks, as a tuned GEMM's: the loop the threads split (`axis`, over `n` threads) walks
  // blocks of an operand that the rows of tiles inside it do not read (B's column blocks, a 1x1
  // convolution's weights for a block of output channels over all input channels), and each
  // block is read again for each row, the rows' operand again for each block. Where a block
  // fills L1 or more (so it cannot stay there beside the row's part it meets) and the rows'
  // operand overflows half of L2 (so each block's pass reads it from beyond L2), each thread
  // takes its blocks in groups that fit half of L2 and walks each group inside the rows: a row's
  // part of the other operand, where it fits kRowShareOfL1 of L1, stays there while the group's
  // blocks stream past it from L2, and the rows' operand is read once a group. At 8 lanes
  // ResNet-50's 1024 -> 256 1x1s on 14x14 ran 14-16% faster so, matmul 1024 3-8%; on a Zen 3
  // (32 KB L1), a 512-deep reduction's 32 KB blocks: 1x1s on 28x28 13-18%, on 14x14 5-8%, matmul
  // 512 6-12%. Blocks of 24 KB beside a row's 9 KB (384-deep) stay in order: grouped, a 1x1 ran
  // 8% faster and a matmul 4% slower (docs/decisions/zen-3-one-by-one-and-three-by-three-tries.md). A 7x7
  // map's 49 rows over 768-1024 channels, whose 150-200 KB stay in L2, ran 0-6% slower
  // (docs/decisions/one-by-one-weight-blocks-inside-rows.md). Sizes are the operands' spans over
  // the loops' steps, which are what they occupy in the caches where a row's part is whole lines
  // (A's rows, an input in channel blocks; an NCHW input's 6 pixels a channel would take a line
  // each). Returns whether it split the loop so (TILE, THREAD, then TILE and SWAP for the
  // groups); the caller threads it whole otherwise. Rows that slide along a window keep their
  // order: neighbouring rows share their loads.
  bool blocks_in_groups(int64_t axis, int64_t n) {
    std::optional<Loop> l = find_loop(cur_, axis);
    if (t_.has_local || !l || !ordinary(*l) || l->size % n != 0) return false;
    int64_t per = l->size / n;  // each thread's blocks
    std::vector<Loop> loops = kernel_loops(cur_);
    std::vector<Loop> outs;  // the output loops, symbolic ones too: only the blocks' and the rows'
    for (const Loop& r : loops)
      if (r.kind == AxisKind::Loop && !r.reduce) outs.push_back(r);
    if (per < 2 || outs.size() != 2 || !ordinary(outs[0]) || !ordinary(outs[1])) return false;
    const Loop& rows = outs[0].axis == axis ? outs[1] : outs[0];
    std::vector<UOpPtr> hot;
    std::optional<Access> blocked, row;  // the largest hot load along only the blocks, along only the rows
    for (const Access& a : accesses(cur_)) {
      if (!a.hot || a.store) continue;
      hot.push_back(a.offset);
      bool b = stride(a.offset, *l) != 0, r = stride(a.offset, rows) != 0;
      if (b == r) continue;
      std::optional<Access>& mine = b ? blocked : row;
      if (!mine || span(a) > span(*mine)) mine = a;
    }
    if (!blocked || !row || slides(rows, hot, loops)) return false;
    int64_t block = span(*blocked) / l->size, share = span(*row) / rows.size;
    if (block < t_.l1_bytes || share > t_.l1_bytes * kRowShareOfL1 / 4 || span(*row) * 2 <= t_.l2_bytes) return false;
    int64_t group = 1;  // the most blocks that divide a thread's and fit half of L2
    for (int64_t g = 2; g <= per; ++g)
      if (per % g == 0 && g * block * 2 <= t_.l2_bytes) group = g;
    if (group < 2) return false;
    int64_t blocks = next_axis(cur_);  // the loop over a thread's blocks TILE makes
    std::vector<Opt> actions{{OptOp::TILE, axis, per}, {OptOp::THREAD, axis, n}};
    // Groups of them: the loop over the groups takes the rows' place, the rows that of the groups
    // (a SWAP of their ranges), the blocks of a group innermost.
    if (group < per) actions.insert(actions.end(), {{OptOp::TILE, blocks, group}, {OptOp::SWAP, rows.axis, blocks}});
    return apply_all(actions);  // refused: the caller threads the loop whole
  }

  UOpPtr cur_;
  Target t_;
  int64_t read_along_ = -1;  // the loop read_in_order moved innermost (-1: none), which threads keep there
  int64_t budget_ = 8;
  std::vector<Opt> opts_;
};

}  // namespace


std::vector<Opt> hand_coded_opts(const UOpPtr& ast, const Target& target) { return Planner(ast, target).plan(); }

}  // namespace lathe
