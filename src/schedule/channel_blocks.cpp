#include "schedule/channel_blocks.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>

#include "ir/label.hpp"
#include "ir/toposort.hpp"
#include "schedule/blocks.hpp"
#include "schedule/operand_view.hpp"
#include "schedule/reader_layout.hpp"
#include "schedule/realize.hpp"
#include "schedule/shape.hpp"
#include "schedule/split_replay.hpp"

namespace lathe {
namespace {

// The view steps from `operand` down to the first node that is not a view (its base); where
// `widening` is set, through the casts that widen an integer input for its products too (conv2d's
// int8 x int8 in int32).
std::vector<UOpPtr> view_steps(const UOpPtr& operand, bool widening = false) {
  auto step = [&](const UOp& u) { return op_has(u.op(), kMovement) || (widening && widening_cast(u)); };
  std::vector<UOpPtr> steps;
  for (UOpPtr cur = operand; step(*cur); cur = cur->src(0)) steps.push_back(cur);
  return steps;
}

// The filter that operand `1 - x` of `product` is, where it is one (filter_columns) and a large
// convolution's: its multiply-adds per output pixel of a group (its columns x the summed axes it
// reads) at least `filter_work`. A convolution sums over channels and taps, two axes or more.
struct Filter {
  OperandView w;
  int64_t columns;
};
std::optional<Filter> large_filter(const UOp& product, size_t x, const std::vector<int64_t>& summed,
                                   const std::unordered_map<const UOp*, Shape>& shapes, int64_t filter_work) {
  if (summed.size() < 2) return std::nullopt;
  const Shape& ps = shapes.at(&product);
  OperandView xv = view_of(product.src(x), shapes), wv = view_of(product.src(1 - x), shapes);
  std::optional<int64_t> column = filter_columns(wv, xv, summed, static_cast<int64_t>(ps.size()));
  if (!column) return std::nullopt;
  int64_t columns = ps[static_cast<size_t>(*column)], work = columns;
  for (int64_t a : summed)
    if (reads(wv, a)) work *= ps[static_cast<size_t>(a)];
  if (work < filter_work) return std::nullopt;
  return Filter{std::move(wv), columns};
}

// Whether `steps` take sliding windows: a window's fold repeats its axis (EXPAND) and cuts the
// repeats to rows (SHRINK). A reduction over an operand without them reduces its own axes (a
// softmax's maximum, a tensor contraction), which no block layout here is for.
bool windowed(const std::vector<UOpPtr>& steps) {
  auto has = [&](Ops op) { return std::any_of(steps.begin(), steps.end(), [&](const UOpPtr& u) { return u->op() == op; }); };
  return has(Ops::EXPAND) && has(Ops::SHRINK);
}

UOpPtr base_of(const std::vector<UOpPtr>& steps, const UOpPtr& operand) { return steps.empty() ? operand : steps.back()->src(0); }

// `u` as rebuilt: `depth` sources down from `now`, the rebuilt node `depth` sources above it.
UOpPtr down(UOpPtr now, size_t depth) {
  while (depth-- > 0) now = now->src(0);
  return now;
}

// One convolution's input, as the prices decided to store it.
struct Plan {
  enum class Kind { padded_copy, channel_blocks, pooled_in_blocks, depthwise_in_blocks } kind = Kind::channel_blocks;
  size_t x = 0;                     // which operand of the product reads the input
  std::vector<UOpPtr> x_steps;    // its views, the operand first, down to the stored input
  UOpPtr stored;                  // the node stored for it: a buffer or a CONTIGUOUS, then the one split in blocks
  size_t channel = 0;             // the input's channel axis (channel blocks)
  size_t landing = 0;             // the product's axis it is read along
  int64_t block = 0;
  std::vector<UOpPtr> w_steps;    // the filter's views, the operand first, down to its base
  UOpPtr filter;
  size_t w_channel = 0;           // the filter base's axis read along the product's `landing`
};

class Rule {
 public:
  Rule(const std::vector<UOpPtr>& outputs, const Target& target, const ChannelBlockPrices& prices, Rebuilt* rebuilt)
      : outputs_(outputs),
        sink_(UOp::make(Ops::SINK, dtypes::void_, outputs)),
        shapes_(graph_shapes(sink_)),
        dims_(graph_sym_shapes(sink_, shapes_)),
        blocks_(blocks_for(target)),
        prices_(prices),
        rebuilt_(rebuilt) {}

  std::vector<UOpPtr> run() {
    for (const UOpPtr& u : toposort(sink_))
      if (std::optional<Plan> p = plan(*u)) plans_.emplace(u.get(), std::move(*p));
    if (plans_.empty()) return outputs_;
    return rebuild(outputs_, [&](const UOp&, const UOpPtr& source, const UOpPtr& source_now) {
      auto it = plans_.find(source.get());
      if (it == plans_.end()) return source_now;
      auto [made, fresh] = made_.emplace(source.get(), UOpPtr{});
      if (fresh) {
        const Plan& p = it->second;
        made->second = p.kind == Plan::Kind::padded_copy ? padded(p, source_now) : over_blocks(*source, p, source_now);
        if (rebuilt_) rebuilt_->record(source, made->second);
      }
      return made->second;
    }, rebuilt_);
  }

 private:

  // A pool: the largest of each window of a computed input, by channel. Where a block of
  // Blocks::activations (a cache line, the plan's lanes or half of them) divides the channels, the
  // kernel that computes the input stores it in such blocks, as a convolution reads it, and a
  // block of channels is one or two vector loads per tap; the padding is read through, on the blocks. The windows are taken on the split view, as a
  // convolution's are. A sum or a maximum over the input's own axes (a softmax's, a global pool's)
  // is no pool: the axes it reduces must be the windows' taps.
  std::optional<Plan> pool_plan(const UOp& pool) {
    if (blocks_.lanes == 0) return std::nullopt;
    Plan p;
    p.kind = Plan::Kind::pooled_in_blocks;
    std::vector<UOpPtr> steps = view_steps(pool.src(0));
    UOpPtr base = base_of(steps, pool.src(0));
    if (!windowed(steps) || base->op() == Ops::BUFFER || is_layout_copy(*base) || !base->dtype().is_float()) return std::nullopt;
    const std::vector<int64_t>& reduced = pool.arg_as<ReduceArg>().axes;
    auto is_reduced = [&](size_t a) { return std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(a)) != reduced.end(); };
    for (const std::optional<size_t>& l : landings(steps, base))
      if (l && is_reduced(*l)) return std::nullopt;  // reduces an axis of the input itself
    if (!lowest_split(p, pool.src(0), [&](size_t landing) { return !is_reduced(landing); })) return std::nullopt;
    return p;
  }

  // The lowest node under the views `all` (the operand first) over `base` whose channels (its
  // innermost axis read straight along an operand's axis `accept` takes, in blocks of
  // `block_of` its size) the views above it keep whole in blocks: the node the operand reads (a
  // computed value; a view of it, as a channel shuffle, where the views mix its blocks), and the
  // views above it, into `p`. A copy a front end asked for (a plain CONTIGUOUS) is read through:
  // the value under it is stored in blocks instead, unless the copy holds fewer elements than that
  // value (views_through_copy): then the view it copies is stored.
  bool lowest_split(Plan& p, const std::vector<UOpPtr>& all, const UOpPtr& base, const std::function<bool(size_t)>& accept,
                    const std::function<int64_t(int64_t)>& block_of) const {
    for (size_t j = all.size(); j >= 1; --j) {
      std::vector<UOpPtr> steps(all.begin(), all.begin() + static_cast<int64_t>(j));
      UOpPtr node = j == all.size() ? base : all[j];
      if (plain_copy(*node)) continue;
      const Shape& s = shapes_.at(node.get());
      std::vector<std::optional<size_t>> on = landings(steps, node);
      for (size_t a = on.size(); a-- > 0;) {
        if (!on[a] || !accept(*on[a])) continue;
        // An axis that other axes merge into the reader's channels (the lanes of a concatenation of
        // blocks, (N, C/B, B, H, W)) is no whole channel axis: the view that merges them is stored.
        // A symbolic one is never split.
        int64_t block = block_of(s[a]);
        bool splits = block && s[a] % block == 0 && shapes_.at(all.front().get())[*on[a]] <= s[a] && dims_.at(node.get())[a]->is_const();
        std::optional<Replayed> r = splits ? replay().chain(steps, a, block, nullptr) : std::nullopt;
        if (r && r->axis == *on[a]) {
          p.x_steps = std::move(steps);
          p.stored = node;
          p.channel = a, p.landing = *on[a], p.block = block;
          return true;
        }
        break;  // only the innermost such axis is the channels
      }
    }
    return false;
  }
  bool lowest_split(Plan& p, const UOpPtr& operand, const std::function<bool(size_t)>& accept) const {
    auto [all, base] = views_through_copy(view_steps(operand), operand);
    return lowest_split(p, all, base, accept, [&](int64_t n) { return blocks_.activations(n); });
  }

  // `steps` (an operand's views) and the node under them, continued through a copy a front end
  // asked for (a plain CONTIGUOUS) to the views of what it copies. A copy of fewer elements than
  // the value under its views (every other pixel, for a 1x1 filter's stride) is continued to its
  // own source only: that view is what is stored, not the whole value read through it.
  std::pair<std::vector<UOpPtr>, UOpPtr> views_through_copy(std::vector<UOpPtr> steps, const UOpPtr& operand) const {
    UOpPtr base = base_of(steps, operand);
    if (!plain_copy(*base)) return {std::move(steps), base};
    std::vector<UOpPtr> more = view_steps(base->src(0));
    UOpPtr below = base_of(more, base->src(0));
    steps.push_back(base);
    if (shape_numel(shapes_.at(base.get())) < shape_numel(shapes_.at(below.get())))
      return {std::move(steps), base->src(0)};
    steps.insert(steps.end(), more.begin(), more.end());
    return {std::move(steps), below};
  }

  std::optional<Plan> plan(const UOp& sum) {
    if (sum.op() == Ops::REDUCE_AXIS && sum.arg_as<ReduceArg>().op == Ops::MAX) return pool_plan(sum);
    const UOp* product = product_summed(sum);
    if (!product) return std::nullopt;
    const Shape& ps = shapes_.at(product);
    const std::vector<int64_t>& summed = sum.arg_as<ReduceArg>().axes;
    if (summed.size() < 2) return std::nullopt;  // a product of matrices, not even a depthwise convolution
    auto is_summed = [&](size_t a) { return std::find(summed.begin(), summed.end(), static_cast<int64_t>(a)) != summed.end(); };
    for (size_t x = 0; x < 2; ++x) {
      std::optional<Filter> large = large_filter(*product, x, summed, shapes_, prices_.filter_work);
      if (!large) continue;
      const OperandView& wv = large->w;
      int64_t columns = large->columns;
      Plan p;
      p.x = x;
      p.x_steps = view_steps(product->src(x));
      p.stored = base_of(p.x_steps, product->src(x));
      bool copied = plain_copy(*p.stored);
      if (!windowed(p.x_steps)) continue;
      if (!copied && p.stored->op() != Ops::BUFFER) continue;  // an input store_convolution_inputs did not store
      // The input channels: the input's axis read along a summed axis that the filter reads too
      // (or one channel, an axis of size 1, which view_of says no operand reads).
      const Shape& input = shapes_.at(p.stored.get());
      std::optional<size_t> channel;
      for (size_t a = input.size(); a-- > 0 && !channel;) {
        std::optional<Replayed> r = replay().chain(p.x_steps, a, 1, nullptr);
        if (r && is_summed(r->axis) && (reads(wv, static_cast<int64_t>(r->axis)) || ps[r->axis] == 1)) channel = a, p.landing = r->axis;
      }
      if (!channel) continue;
      p.channel = *channel;
      int64_t group_channels = ps[p.landing];
      int64_t macs = shape_numel(input) ? shape_numel(ps) / shape_numel(input) : 0;  // per input element
      bool padded = !p.x_steps.empty() && p.x_steps.back()->op() == Ops::PAD;
      // Output channels too few or too odd for a block of their own (ESPCN's 27) leave a kernel's
      // vectors to run along the pixels, where each tap's padding gates are a mask of lanes (on
      // AVX2 a masked load, its mask computed at every tap: ESPCN's 32 -> 27 convolution ran 1.9x
      // slower so than from the padded copy, which its producer writes in place).
      bool pixels_in_lanes = blocks_.lanes > 0 && blocks_.stored(columns) == 0;
      if (padded && (group_channels < prices_.gated_channels || macs >= prices_.padded_copy_macs || pixels_in_lanes)) {
        p.kind = Plan::Kind::padded_copy;
        return p;
      }
      // In channel blocks: where a group's channels fill whole blocks, the filter's output channels
      // have a block, and a stored input is read often enough to pay for its copy.
      int64_t b = blocks_.convolution_input(group_channels);
      auto through = views_through_copy(p.x_steps, product->src(x));  // to the value the copy copies
      const std::vector<UOpPtr>& all = through.first;
      const UOpPtr& below = through.second;
      // A value already split in blocks of the lanes (a join of pieces a line does not all divide,
      // concat_blocks) is read in them: a line would copy it.
      if (b != 0 && stored_block(all, below) == blocks_.lanes) b = blocks_.lanes;
      bool pays = copied || (columns >= blocks_.lanes && macs >= prices_.stored_copy_macs);
      if (b == 0 || group_channels % b != 0 || !p.stored->dtype().is_float() || !pays || blocks_.stored(columns) == 0) continue;
      size_t landing = p.landing;
      if (!lowest_split(p, all, below, [&](size_t l) { return l == landing; }, [&](int64_t) { return b; })) continue;
      // The filter read in the same blocks: its base's axis that lands on the input's channels.
      p.w_steps = view_steps(product->src(1 - x));
      p.filter = base_of(p.w_steps, product->src(1 - x));
      const Shape& filter = shapes_.at(p.filter.get());
      bool found = false;
      for (size_t a = filter.size(); a-- > 0 && !found;) {
        if (filter[a] % b != 0) continue;
        std::optional<Replayed> r = replay().chain(p.w_steps, a, b, nullptr);
        if (r && r->axis == p.landing) found = true, p.w_channel = a;
      }
      if (found) return p;
    }
    return depthwise_plan(sum, *product);
  }

  // Where each axis of the base under `steps` lands in the operand, read straight (b = 1): an axis
  // a window folds, cuts or pads lands nowhere.
  std::vector<std::optional<size_t>> landings(const std::vector<UOpPtr>& steps, const UOpPtr& base) const {
    const Shape& s = shapes_.at(base.get());
    std::vector<std::optional<size_t>> out(s.size());
    for (size_t a = 0; a < s.size(); ++a)
      if (s[a] != 1)
        if (std::optional<Replayed> r = replay().chain(steps, a, 1, nullptr)) out[a] = r->axis;
    return out;
  }

  // A depthwise convolution (one input and one output channel a group): its filter w reads the
  // channels and the taps straight, its input x the channels straight and the taps through the
  // windows, and it sums over the taps only. Where a block of Blocks::activations (a cache line,
  // the plan's lanes or half of them) divides the channels, both are read in such blocks: the
  // input stored (N, C/B, H, W, B) by the kernel that computes it (or copied so, a stored input),
  // the filter (C/B, 1, KH, KW, B). Each tap is then
  // one vector load of B channels times one vector of weights, whatever the stride or the width,
  // and the padding gate is the same for every lane.
  std::optional<Plan> depthwise_plan(const UOp& sum, const UOp& product) {
    if (blocks_.lanes == 0) return std::nullopt;
    const std::vector<int64_t>& summed = sum.arg_as<ReduceArg>().axes;
    auto is_summed = [&](size_t a) { return std::find(summed.begin(), summed.end(), static_cast<int64_t>(a)) != summed.end(); };
    for (size_t x = 0; x < 2; ++x) {
      Plan p;
      p.kind = Plan::Kind::depthwise_in_blocks;
      p.x = x;
      p.x_steps = view_steps(product.src(x));
      p.stored = base_of(p.x_steps, product.src(x));
      p.w_steps = view_steps(product.src(1 - x));
      p.filter = base_of(p.w_steps, product.src(1 - x));
      if (!windowed(p.x_steps) || is_layout_copy(*p.stored) || is_layout_copy(*p.filter) || !p.stored->dtype().is_float() ||
          p.filter->dtype() != p.stored->dtype())
        continue;
      std::vector<std::optional<size_t>> on_x = landings(p.x_steps, p.stored), on_w = landings(p.w_steps, p.filter);
      auto lands = [](const std::vector<std::optional<size_t>>& on, size_t axis) {
        return std::find(on.begin(), on.end(), std::optional<size_t>(axis)) != on.end();
      };
      const Shape& ps = shapes_.at(&product);
      bool taps = std::all_of(summed.begin(), summed.end(), [&](int64_t a) {  // (a group's one channel is no tap)
        return ps[static_cast<size_t>(a)] == 1 || (lands(on_w, static_cast<size_t>(a)) && !lands(on_x, static_cast<size_t>(a)));
      });
      bool any_tap = std::any_of(summed.begin(), summed.end(), [&](int64_t a) { return ps[static_cast<size_t>(a)] > 1; });
      if (!taps || !any_tap) continue;
      // The channels: the input's innermost axis read straight along a kept axis the filter reads.
      if (!lowest_split(p, product.src(x), [&](size_t landing) { return !is_summed(landing) && lands(on_w, landing); })) continue;
      for (size_t a = 0; a < on_w.size(); ++a)
        if (on_w[a] == p.landing) {
          std::optional<Replayed> rw = replay().chain(p.w_steps, a, p.block, nullptr);
          if (rw && rw->axis == p.landing) return p.w_channel = a, p;
        }
    }
    return std::nullopt;
  }

  SplitReplay replay() const { return SplitReplay(shapes_, dims_); }

  // The block a value under a reader's views is already split in: a join of blocks (N, C/B, B, H, W)
  // under the view that merges it back to (N, C, H, W), as concat_blocks builds it; 0 for any other.
  int64_t stored_block(const std::vector<UOpPtr>& views, const UOpPtr& value) const {
    if (views.empty() || views.back()->op() != Ops::RESHAPE) return 0;
    const Shape &split = shapes_.at(value.get()), &merged = shapes_.at(views.back().get());
    if (split.size() != 5 || merged.size() != 4 || split[0] != merged[0] || split[1] * split[2] != merged[1] || split[3] != merged[2] ||
        split[4] != merged[3])
      return 0;
    return split[2];
  }

  // The stored input as rebuilt, reached from the product's operand as rebuilt.
  static UOpPtr stored_now(const Plan& p, const UOpPtr& operand_now) { return down(operand_now, p.x_steps.size()); }

  static UOpPtr product_now(const UOpPtr& sum_now) {
    UOpPtr p = sum_now->src(0);
    return p->op() == Ops::CAST ? p->src(0) : p;
  }

  // The sum reading a copy of PAD(input) instead of the input, padded through its views.
  UOpPtr padded(const Plan& p, const UOpPtr& sum_now) const {
    UOpPtr product = product_now(sum_now);
    UOpPtr stored = stored_now(p, product->src(p.x));
    UOpPtr input = plain_copy(*stored) ? stored->src(0) : stored;
    const UOpPtr& pad = p.x_steps.back();
    std::vector<UOpPtr> src{input};
    src.insert(src.end(), pad->src().begin() + 1, pad->src().end());
    UOpPtr v = labelled_as(UOp::make(Ops::PAD, pad->dtype(), std::move(src), pad->arg()), labels_of(*pad));
    if (rebuilt_) rebuilt_->record(pad, v);  // the caller's PAD: the padded copy's values
    v = labelled_as(UOp::make(Ops::CONTIGUOUS, v->dtype(), {v}), labels_of(*pad));
    for (size_t i = p.x_steps.size() - 1; i-- > 0;) v = rebuilt_over(*p.x_steps[i], v);
    return with_operand(sum_now, product, p.x, v);
  }

  // The reduction over its input's copy in channel blocks (and a product's filter, in the same
  // blocks), the input's views replayed over the split copy. A sum over the channels (a
  // convolution) runs over (block, taps, lane): the lanes go last, and its filter is stored by the
  // column blocks after; a reduction that keeps the channels (a pool, a depthwise convolution)
  // keeps the lanes beside their block index, and a depthwise filter is copied here.
  UOpPtr over_blocks(const UOp& reduce, const Plan& p, const UOpPtr& reduce_now) const {
    bool pool = p.kind == Plan::Kind::pooled_in_blocks, lanes_summed = p.kind == Plan::Kind::channel_blocks;
    UOpPtr top = pool ? reduce_now : product_now(reduce_now);  // the node reading the input
    size_t xi = pool ? 0 : p.x;
    std::vector<std::string> labels = labels_of(*top);
    UOpPtr input = down(top->src(xi), p.x_steps.size());
    UOpPtr value = replay().chain(p.x_steps, p.channel, p.block, split_copy(input, *p.stored, p.channel, p.block, true, labels))->node;
    ReduceArg arg = reduce.arg_as<ReduceArg>();
    if (!pool) {
      UOpPtr filter = down(top->src(1 - p.x), p.w_steps.size());
      UOpPtr w = replay().chain(p.w_steps, p.w_channel, p.block, split_copy(filter, *p.filter, p.w_channel, p.block, !lanes_summed, labels))->node;
      if (lanes_summed) {
        size_t rank = shapes_.at(product_summed(reduce)).size() + 1;
        std::vector<int64_t> order;
        for (size_t i = 0; i < rank; ++i)
          if (i != p.landing + 1) order.push_back(static_cast<int64_t>(i));
        order.push_back(static_cast<int64_t>(p.landing) + 1);
        value = permuted(value, order, labels);
        w = permuted(w, order, labels);
      }
      value = labelled_as(UOp::make(Ops::MUL, top->dtype(), p.x == 0 ? std::vector<UOpPtr>{value, w} : std::vector<UOpPtr>{w, value}), labels);
      if (reduce_now->src(0)->op() == Ops::CAST) value = rebuilt_over(*reduce_now->src(0), value);
    }
    if (lanes_summed) {
      arg.axes.push_back(static_cast<int64_t>(shapes_.at(product_summed(reduce)).size()));
    } else {
      for (int64_t& a : arg.axes)
        if (a > static_cast<int64_t>(p.landing)) ++a;
    }
    UOpPtr r = labelled_as(UOp::make(Ops::REDUCE_AXIS, reduce.dtype(), {value}, arg), labels_of(reduce));
    return reshaped(r, shapes_.at(&reduce), dims_.at(&reduce), labels_of(reduce));
  }

  // `now` (the node `old` stands for, rebuilt) split at axis `a` in blocks of `b`, from a layout copy
  // where `copy`.
  UOpPtr split_copy(const UOpPtr& now, const UOp& old, size_t a, int64_t b, bool copy, const std::vector<std::string>& labels) const {
    return split_in_blocks(now, shapes_.at(&old), dims_.at(&old), a, b, copy, labels);
  }

  // `sum_now` with operand `x` of its product (`product`) replaced by `operand`.
  static UOpPtr with_operand(const UOpPtr& sum_now, const UOpPtr& product, size_t x, const UOpPtr& operand) {
    std::vector<UOpPtr> src = product->src();
    src[x] = operand;
    UOpPtr v = labelled_as(UOp::make(product->op(), product->dtype(), std::move(src), product->arg()), labels_of(*product));
    if (sum_now->src(0)->op() == Ops::CAST) v = rebuilt_over(*sum_now->src(0), v);
    return rebuilt_over(*sum_now, v);
  }

  std::vector<UOpPtr> outputs_;
  UOpPtr sink_;
  std::unordered_map<const UOp*, Shape> shapes_;
  std::unordered_map<const UOp*, SymDims> dims_;
  Blocks blocks_;
  ChannelBlockPrices prices_;
  Rebuilt* rebuilt_;
  std::unordered_map<const UOp*, Plan> plans_;  // by the sum
  std::unordered_map<const UOp*, UOpPtr> made_;
};

// The large convolutions' computed (or constant) inputs in the graph under `sink` (a 1x1
// convolution, which takes no windows, is a product the realize rule decides for): for each, the
// node of the convolution's views that reads it (the key) and the node to store.
std::unordered_map<const UOp*, const UOp*> computed_convolution_inputs(const UOpPtr& sink, const ChannelBlockPrices& prices) {
  std::unordered_map<const UOp*, Shape> shapes = graph_shapes(sink);
  std::unordered_map<const UOp*, const UOp*> found;
  for (const UOpPtr& u : toposort(sink)) {
    const UOp* product = product_summed(*u);
    if (!product) continue;
    for (size_t x = 0; x < 2; ++x) {
      if (!large_filter(*product, x, u->arg_as<ReduceArg>().axes, shapes, prices.filter_work)) continue;
      std::vector<UOpPtr> steps = view_steps(product->src(x), true);
      if (!windowed(steps)) continue;
      // What is stored: the computed value, with the reshapes right above it (a pool's dropped
      // axes), which only rename its elements.
      size_t top = steps.size();
      while (top > 1 && steps[top - 1]->op() == Ops::RESHAPE) --top;
      const UOpPtr& input = steps.back()->src(0);
      if (is_computed(*input) || input->is_const()) found.emplace(steps[top - 1].get(), top == steps.size() ? input.get() : steps[top].get());
      break;
    }
  }
  return found;
}

}  // namespace

std::vector<UOpPtr> store_convolution_inputs(const std::vector<UOpPtr>& outputs, const ChannelBlockPrices& prices, Rebuilt* rebuilt) {
  if (outputs.empty()) return outputs;
  std::unordered_map<const UOp*, const UOp*> edges = computed_convolution_inputs(UOp::make(Ops::SINK, dtypes::void_, outputs), prices);
  if (edges.empty()) return outputs;
  std::unordered_map<const UOp*, UOpPtr> stored;  // by the input, as rebuilt
  return rebuild(outputs, [&](const UOp& reader, const UOpPtr& source, const UOpPtr& source_now) {
    if (auto it = edges.find(&reader); it == edges.end() || it->second != source.get()) return source_now;
    UOpPtr& copy = stored[source.get()];
    if (!copy) copy = labelled_as(UOp::make(Ops::CONTIGUOUS, source_now->dtype(), {source_now}), labels_of(*source));
    return copy;
  }, rebuilt);
}

std::vector<UOpPtr> store_channels_in_blocks(const std::vector<UOpPtr>& outputs, const Target& target, const ChannelBlockPrices& prices,
                                             Rebuilt* rebuilt) {
  return Rule(outputs, target, prices, rebuilt).run();
}

}  // namespace lathe
