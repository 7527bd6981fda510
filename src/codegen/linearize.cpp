#include "codegen/linearize.hpp"

#include <algorithm>
#include <unordered_map>

#include "ir/toposort.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

using Mask = uint64_t;

class Linearizer {
 public:
  explicit Linearizer(const UOpPtr& sink) : order_(toposort(sink)) {}

  std::vector<Instr> run() {
    number_ranges();
    compute_deps();
    emit_block(-1);
    return std::move(out_);
  }

 private:
  int64_t axis_of(const UOp& r) const { return r.arg_as<std::vector<int64_t>>().at(0); }

  // Output ranges (not owned by a REDUCE) form one chain in axis order; each REDUCE's ranges
  // form a chain of their own, opened where the REDUCE is computed.
  void number_ranges() {
    for (const UOpPtr& u : order_) {
      if (u->op() == Ops::REDUCE)
        for (size_t i = 1; i < u->src().size(); ++i) owner_[u->src(i).get()] = u.get();
    }
    for (const UOpPtr& u : order_) {
      if (u->op() != Ops::RANGE) continue;
      if (bit_.size() >= 64) throw InternalError("a kernel with more than 64 loops");
      bit_[u.get()] = static_cast<int>(bit_.size());
      ranges_.push_back(u);
      if (!owner_.count(u.get())) outputs_.push_back(u);
    }
    std::sort(outputs_.begin(), outputs_.end(), [&](const UOpPtr& a, const UOpPtr& b) { return axis_of(*a) < axis_of(*b); });
    for (size_t i = 0; i < outputs_.size(); ++i) depth_[outputs_[i].get()] = static_cast<int>(i);
    for (const UOpPtr& u : order_) {
      if (u->op() != Ops::REDUCE) continue;
      for (size_t i = 1; i < u->src().size(); ++i) depth_[u->src(i).get()] = 1000 + static_cast<int>(i);
    }
  }

  void compute_deps() {
    for (const UOpPtr& u : order_) {
      Mask m = 0;
      for (const UOpPtr& s : u->src()) m |= deps_[s.get()];
      if (u->op() == Ops::RANGE) m |= Mask{1} << bit_.at(u.get());
      if (u->op() == Ops::REDUCE)
        for (size_t i = 1; i < u->src().size(); ++i) m &= ~(Mask{1} << bit_.at(u->src(i).get()));
      deps_[u.get()] = m;
      block_[u.get()] = innermost(m);
    }
  }

  // The range (by bit) a node with these dependencies lives in; -1 for the kernel's top level.
  int innermost(Mask m) const {
    int best = -1, best_depth = -1;
    for (const UOpPtr& r : ranges_) {
      int b = bit_.at(r.get());
      if (!(m & (Mask{1} << b))) continue;
      int d = depth_.at(r.get());
      if (d > best_depth) best = b, best_depth = d;
    }
    return best;
  }

  static bool is_inline(Ops op) {
    return op == Ops::CONST || op == Ops::DEFINE_GLOBAL || op == Ops::DEFINE_VAR || op == Ops::RANGE ||
           op == Ops::INDEX || op == Ops::SINK || op == Ops::BIND;
  }

  // Emits the nodes living in block `b`, then the loop nested inside it (if it is an output range).
  void emit_block(int b) {
    for (const UOpPtr& u : order_) {
      if (block_.at(u.get()) != b || is_inline(u->op())) continue;
      if (u->op() == Ops::REDUCE) {
        emit_reduce(u);
        continue;
      }
      out_.push_back({Instr::Kind::Node, u});
    }
    int next_depth = b < 0 ? 0 : depth_.at(ranges_[index_of_bit(b)].get()) + 1;
    if (b >= 0 && owner_.count(ranges_[index_of_bit(b)].get())) return;  // reduce chains close themselves
    if (next_depth < static_cast<int>(outputs_.size())) {
      const UOpPtr& r = outputs_[next_depth];
      out_.push_back({Instr::Kind::Open, r});
      emit_block(bit_.at(r.get()));
      out_.push_back({Instr::Kind::Close, r});
    }
  }

  void emit_reduce(const UOpPtr& red) {
    out_.push_back({Instr::Kind::AccInit, red});
    emit_reduce_loop(red, 1);
    out_.push_back({Instr::Kind::Node, red});
  }

  void emit_reduce_loop(const UOpPtr& red, size_t i) {
    if (i == red->src().size()) {
      out_.push_back({Instr::Kind::Accumulate, red});
      return;
    }
    const UOpPtr& r = red->src(i);
    out_.push_back({Instr::Kind::Open, r});
    emit_block(bit_.at(r.get()));
    emit_reduce_loop(red, i + 1);
    out_.push_back({Instr::Kind::Close, r});
  }

  size_t index_of_bit(int b) const { return static_cast<size_t>(b); }

  std::vector<UOpPtr> order_;
  std::vector<UOpPtr> ranges_;   // by bit
  std::vector<UOpPtr> outputs_;  // output ranges, outer to inner
  std::unordered_map<const UOp*, int> bit_;
  std::unordered_map<const UOp*, int> depth_;
  std::unordered_map<const UOp*, const UOp*> owner_;  // reduce range -> its REDUCE
  std::unordered_map<const UOp*, Mask> deps_;
  std::unordered_map<const UOp*, int> block_;
  std::vector<Instr> out_;
};

}  // namespace

std::vector<Instr> linearize(const UOpPtr& sink) { return Linearizer(sink).run(); }

}  // namespace lathe
