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
// has paths that double with every level.
constexpr int kPartDepth = 24;
bool reduction_result(const UOpPtr& x) {
  std::vector<const UOp*> level{x.get()};
  std::unordered_set<const UOp*> seen{x.get()};
  for (int depth = 0; depth < kPartDepth && !level.empty(); ++depth) {
    std::vector<const UOp*> next;
    for (const UOp* u : level) {
      if (u->op() == Ops::REDUCE_AXIS) return true;
      bool view = u->op() == Ops::RESHAPE || u->op() == Ops::PERMUTE || u->op() == Ops::SHRINK || u->op() == Ops::EXPAND;
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
        lanes_(blocks_for(target).lanes), rebuilt_(rebuilt) {}

  std::vector<UOpPtr> run() {
    if (lanes_ == 0) return outputs_;
    for (const UOpPtr& u : toposort(sink_))
      if (u->op() == Ops::ADD)
        if (std::optional<std::vector<Piece>> pieces = join_of(*u)) joins_.emplace(u.get(), std::move(*pieces));
    if (joins_.empty()) return outputs_;
    return rebuild(outputs_, [&](const UOp&, const UOpPtr& source, const UOpPtr& source_now) {
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

  // The leaves of the ADD tree under `u`, left to right: PADs.
  bool collect(const UOp& u, std::vector<UOpPtr>& leaves) const {
    for (const UOpPtr& s : u.src()) {
      if (s->op() == Ops::ADD) {
        if (!collect(*s, leaves)) return false;
      } else if (s->op() == Ops::PAD) {
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
    for (size_t i = 0; i < pieces.size(); ++i) {
      const UOpPtr& piece = pieces[i].pad->src(0);
      const Shape& ps = shapes_.at(piece.get());
      SymDims dims;
      for (int64_t d : ps) dims.push_back(UOp::index_const(d));
      UOpPtr v = split_in_blocks(pieces_now[i]->src(0), ps, dims, 1, lanes_, true, labels);
      std::vector<int64_t> pad(10, 0);
      pad[2] = pieces[i].offset / lanes_;
      pad[3] = (s[1] - pieces[i].offset - ps[1]) / lanes_;
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
  int64_t lanes_;
  Rebuilt* rebuilt_;
  std::unordered_map<const UOp*, std::vector<Piece>> joins_;
  std::unordered_map<const UOp*, UOpPtr> made_;
};

}  // namespace

std::vector<UOpPtr> join_channels_in_blocks(const std::vector<UOpPtr>& outputs, const Target& target, Rebuilt* rebuilt) {
  return Rule(outputs, target, rebuilt).run();
}

}  // namespace lathe
