#include "schedule/concat_blocks.hpp"

#include <unordered_set>

#include "ir/label.hpp"
#include "ir/toposort.hpp"
#include "schedule/blocks.hpp"
#include "schedule/shape.hpp"

namespace lathe {
namespace {

// A piece computed by a kernel of its own: a reduction's result (reshaped, permuted, cut or
// broadcast) under elementwise ops (a bias, an activation, a residual sum, Winograd's output
// transform: two sums of six products with its matrix, 21 nodes deep), looked for at most
// kPartDepth nodes deep. Breadth first, each node once: a graph that shares its nodes (x * x + x)
// has paths that double with every level. Without `through_expand`, a broadcast (an upsampling's
// repeat) is no part: its reader fuses it.
constexpr int kPartDepth = 24;
bool reduction_result(const UOpPtr& x, bool through_expand = true) {
  std::vector<const UOp*> level{x.get()};
  std::unordered_set<const UOp*> seen{x.get()};
  for (int depth = 0; depth < kPartDepth && !level.empty(); ++depth) {
    std::vector<const UOp*> next;
    for (const UOp* u : level) {
      if (u->op() == Ops::REDUCE_AXIS) return true;
      bool view = u->op() == Ops::RESHAPE || u->op() == Ops::PERMUTE || u->op() == Ops::SHRINK || (u->op() == Ops::EXPAND && through_expand);
      if (!view && !is_alu(u->op()) && u->op() != Ops::CAST) continue;
      for (size_t i = 0; i < (view ? 1 : u->src().size()); ++i)
        if (seen.insert(u->src(i).get()).second) next.push_back(u->src(i).get());
    }
    level = std::move(next);
  }
  return false;
}

// One piece of a join: the PAD that places it, and its channels' first index.
struct Piece {
  UOpPtr pad;
  int64_t offset;
};

class Rule {
 public:
  Rule(const std::vector<UOpPtr>& outputs, const Target& target, Rebuilt* rebuilt)
      : outputs_(outputs), sink_(UOp::make(Ops::SINK, dtypes::void_, outputs)), shapes_(graph_shapes(sink_)),
        blocks_(blocks_for(target)), lanes_(blocks_.lanes), rebuilt_(rebuilt) {}

  std::vector<UOpPtr> run() {
    if (lanes_ == 0) return outputs_;
    std::vector<UOpPtr> order = toposort(sink_);
    for (const UOpPtr& u : order)
      if (u->op() == Ops::ADD)
        if (std::optional<std::vector<Piece>> pieces = join_of(*u)) joins_.emplace(u.get(), std::move(*pieces));
    std::unordered_set<const UOp*> inside;  // the ADDs of a sum of parts already taken, from its root down
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if ((*it)->op() == Ops::ADD && !inside.count(it->get()) && !joins_.count(it->get())) take_parts(**it, inside);
    if (joins_.empty() && parts_.empty()) return outputs_;
    return rebuild(outputs_, [&](const UOp&, const UOpPtr& source, const UOpPtr& source_now) {
      if (parts_.count(source.get())) return part_in_blocks(source, source_now);
      auto it = joins_.find(source.get());
      if (it == joins_.end()) return source_now;
      auto [made, fresh] = made_.emplace(source.get(), UOpPtr{});
      if (fresh) {
        made->second = in_blocks(*source, it->second, source_now);
        if (rebuilt_) rebuilt_->record(source, made->second);
      }
      return made->second;
    }, rebuilt_);
  }

 private:
  // The pieces of `sum` when it joins channels the rule accepts: an ADD tree whose leaves are
  // static PADs along axis 1 only, with zeros, that tile the channels in order.
  std::optional<std::vector<Piece>> join_of(const UOp& sum) const {
    const Shape& s = shapes_.at(&sum);
    if (s.size() != 4 || !sum.dtype().is_float()) return std::nullopt;
    std::vector<Piece> pieces;
    std::vector<UOpPtr> leaves;
    if (!collect(sum, leaves)) return std::nullopt;
    int64_t next = 0;
    for (const UOpPtr& pad : leaves) {
      const auto& arg = pad->arg_as<std::vector<int64_t>>();
      const UOpPtr& piece = pad->src(0);
      const Shape& ps = shapes_.at(piece.get());
      if (pad->src().size() != 2 || !pad->src(1)->is_const() || const_as_double(pad->src(1)->const_value()) != 0.0 || ps.size() != 4 ||
          arg[0] || arg[1] || arg[4] || arg[5] || arg[6] || arg[7] || arg[2] != next || piece->dtype() != sum.dtype() ||
          ps[1] % lanes_ != 0 || !reduction_result(piece))
        return std::nullopt;
      pieces.push_back({pad, next});
      next += ps[1];
    }
    if (pieces.size() < 2 || next != s[1]) return std::nullopt;
    return pieces;
  }

  // The block a join of `pieces` is stored in: the one a convolution reading it takes where every
  // piece fills whole blocks of it, else the lanes.
  int64_t join_block(const std::vector<Piece>& pieces) const {
    int64_t b = blocks_.convolution_input(shapes_.at(pieces.front().pad.get())[1]);  // the join's channels
    for (const Piece& p : pieces)
      if (shapes_.at(p.pad->src(0).get())[1] % b != 0) return lanes_;
    return b;
  }

  // A sum of parts each computed by a kernel of its own and padded to the whole output along the
  // image's axes (a convolution split by groups of taps, the tap-group rule's conv2d_by_tap_groups, tensor/tap_groups):
  // the kernel of the part covering the most output positions adds the others in its epilogue, a
  // vector of output channels at a time, so each other part is stored in channel blocks and read
  // so. Its leaves: a PAD along axes 2 and 3 only (with zeros) of such a part, bar the largest,
  // which may be the part itself; the parts overlap (a join tiles the output instead).
  void take_parts(const UOp& sum, std::unordered_set<const UOp*>& inside) {
    const Shape& s = shapes_.at(&sum);
    if (s.size() != 4 || !sum.dtype().is_float() || s[1] % lanes_ != 0) return;
    std::vector<UOpPtr> leaves, adds;
    if (!collect(sum, leaves, &adds, true) || leaves.size() < 2) return;
    auto part_of = [](const UOpPtr& leaf) { return leaf->op() == Ops::PAD ? leaf->src(0) : leaf; };
    size_t largest = 0;
    for (size_t i = 0; i < leaves.size(); ++i)
      if (shape_numel(shapes_.at(part_of(leaves[i]).get())) >= shape_numel(shapes_.at(part_of(leaves[largest]).get()))) largest = i;
    for (size_t i = 0; i < leaves.size(); ++i) {
      const UOpPtr& leaf = leaves[i];
      const UOpPtr part = part_of(leaf);
      if (part->dtype() != sum.dtype() || !reduction_result(part, false)) return;
      if (i == largest) continue;
      if (leaf->op() != Ops::PAD || leaf->src().size() != 2 || !leaf->src(1)->is_const() || const_as_double(leaf->src(1)->const_value()) != 0.0)
        return;
      const auto& arg = leaf->arg_as<std::vector<int64_t>>();
      if (arg[0] || arg[1] || arg[2] || arg[3]) return;
    }
    // Parts that overlap (a join along the image's axes tiles it: nothing is summed there).
    int64_t covered = 0;
    for (const UOpPtr& leaf : leaves) covered += shape_numel(shapes_.at(part_of(leaf).get()));
    if (covered <= shape_numel(s)) return;
    for (const UOpPtr& a : adds) inside.insert(a.get());
    for (size_t i = 0; i < leaves.size(); ++i)
      if (i != largest) parts_.insert(leaves[i].get());
  }

  // A part's PAD reading the part from its copy in channel blocks.
  UOpPtr part_in_blocks(const UOpPtr& source, const UOpPtr& pad_now) {
    const UOp& pad = *source;
    auto [made, fresh] = made_.emplace(&pad, UOpPtr{});
    if (!fresh) return made->second;
    std::vector<std::string> labels = labels_of(pad);
    const Shape& ps = shapes_.at(pad.src(0).get());
    SymDims dims;
    for (int64_t d : ps) dims.push_back(UOp::index_const(d));
    UOpPtr v = split_in_blocks(pad_now->src(0), ps, dims, 1, lanes_, true, labels);
    v = labelled_as(UOp::make(Ops::RESHAPE, pad.dtype(), {v}, ps), labels);
    made->second = rebuilt_over(*pad_now, v);
    if (rebuilt_) rebuilt_->record(source, made->second);
    return made->second;
  }

  // The leaves of the ADD tree under `u`, left to right: PADs. With `any_leaf`, a leaf may be any
  // node; `adds` (where given) gets the tree's ADDs below u. A tree of more than kMostTerms nodes is
  // none the rules take (a join of hundreds of pieces, or a sum whose terms are shared, t + t
  // sixty times over, which has 2^60 paths to walk).
  static constexpr int kMostTerms = 1024;
  bool collect(const UOp& u, std::vector<UOpPtr>& leaves, std::vector<UOpPtr>* adds = nullptr, bool any_leaf = false) const {
    int budget = kMostTerms;
    return collect(u, leaves, adds, any_leaf, budget);
  }
  bool collect(const UOp& u, std::vector<UOpPtr>& leaves, std::vector<UOpPtr>* adds, bool any_leaf, int& budget) const {
    for (const UOpPtr& s : u.src()) {
      if (--budget < 0) return false;
      if (s->op() == Ops::ADD) {
        if (adds) adds->push_back(s);
        if (!collect(*s, leaves, adds, any_leaf, budget)) return false;
      } else if (s->op() == Ops::PAD || any_leaf) {
        leaves.push_back(s);
      } else {
        return false;
      }
    }
    return true;
  }

  // The join of `pieces` (as rebuilt under `now`) as one of blocks, viewed as (N, C, H, W).
  UOpPtr in_blocks(const UOp& sum, const std::vector<Piece>& pieces, const UOpPtr& now) const {
    std::vector<std::string> labels = labels_of(sum);
    std::vector<UOpPtr> pieces_now;  // the ADD tree's leaves as rebuilt, left to right
    collect(*now, pieces_now);
    const Shape& s = shapes_.at(&sum);
    std::vector<UOpPtr> terms;
    int64_t b = join_block(pieces);
    for (size_t i = 0; i < pieces.size(); ++i) {
      const UOpPtr& piece = pieces[i].pad->src(0);
      const Shape& ps = shapes_.at(piece.get());
      SymDims dims;
      for (int64_t d : ps) dims.push_back(UOp::index_const(d));
      UOpPtr v = split_in_blocks(pieces_now[i]->src(0), ps, dims, 1, b, true, labels);
      std::vector<int64_t> pad(10, 0);
      pad[2] = pieces[i].offset / b;
      pad[3] = (s[1] - pieces[i].offset - ps[1]) / b;
      terms.push_back(labelled_as(UOp::make(Ops::PAD, sum.dtype(), {v, pieces[i].pad->src(1)}, pad), labels));
    }
    while (terms.size() > 1) {  // in pairs, as the join was
      std::vector<UOpPtr> next;
      for (size_t i = 0; i + 1 < terms.size(); i += 2) next.push_back(labelled_as(UOp::make(Ops::ADD, sum.dtype(), {terms[i], terms[i + 1]}), labels));
      if (terms.size() % 2) next.push_back(terms.back());
      terms = std::move(next);
    }
    return labelled_as(UOp::make(Ops::RESHAPE, sum.dtype(), {terms[0]}, s), labels);
  }

  std::vector<UOpPtr> outputs_;
  UOpPtr sink_;
  std::unordered_map<const UOp*, Shape> shapes_;
  Blocks blocks_;
  int64_t lanes_;
  Rebuilt* rebuilt_;
  std::unordered_map<const UOp*, std::vector<Piece>> joins_;
  std::unordered_set<const UOp*> parts_;  // the PADs of summed parts stored in blocks
  std::unordered_map<const UOp*, UOpPtr> made_;
};

}  // namespace

std::vector<UOpPtr> join_channels_in_blocks(const std::vector<UOpPtr>& outputs, const Target& target, Rebuilt* rebuilt) {
  return Rule(outputs, target, rebuilt).run();
}

}  // namespace lathe
