#include "codegen/linearize.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/toposort.hpp"
#include "lathe/error.hpp"

namespace lathe {

bool is_upcast_range(const UOp& r) {
  if (r.op() != Ops::RANGE) return false;
  const auto& a = r.arg_as<std::vector<int64_t>>();
  return a.size() > 1 && a[1] == kRangeUpcast;
}

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
  // form a chain of their own, opened where the REDUCE is computed; upcast ranges form a short
  // chain opened innermost inside whichever block needs them.
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
      if (is_upcast_range(*u)) upcasts_.push_back(u);
      else if (!owner_.count(u.get())) outputs_.push_back(u);
    }
    auto by_axis = [&](const UOpPtr& a, const UOpPtr& b) { return axis_of(*a) < axis_of(*b); };
    std::sort(outputs_.begin(), outputs_.end(), by_axis);
    std::sort(upcasts_.begin(), upcasts_.end(), by_axis);
    for (size_t i = 0; i < outputs_.size(); ++i) depth_[outputs_[i].get()] = static_cast<int>(i);
    for (size_t i = 0; i < upcasts_.size(); ++i) {
      depth_[upcasts_[i].get()] = -1;
      upcast_mask_ |= Mask{1} << bit_.at(upcasts_[i].get());
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
    }
    // A REDUCE's loops nest inside the loop it is placed in, one level per range. Outer REDUCEs
    // come later in the order, so walking it backwards places them before the ones they contain.
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const UOpPtr& u = *it;
      if (u->op() != Ops::REDUCE) continue;
      int host = innermost(deps_.at(u.get()) & ~upcast_mask_);
      int base = host < 0 ? -1 : depth_.at(ranges_[static_cast<size_t>(host)].get());
      for (size_t i = 1; i < u->src().size(); ++i) depth_[u->src(i).get()] = base + static_cast<int>(i);
    }
    for (const UOpPtr& u : order_) {
      host_[u.get()] = innermost(deps_.at(u.get()) & ~upcast_mask_);
      level_[u.get()] = upcast_level(deps_.at(u.get()));
    }
    for (const UOpPtr& red : order_)
      if (red->op() == Ops::REDUCE && (deps_[red.get()] & upcast_mask_))
        upcast_reduce_block_[bit_.at(red->src().back().get())] = red.get();
    place_upcast_work();
  }

  // Work inside upcast loops is emitted in every block whose upcast loops use it (a copy per
  // block: the loops are separate scopes), so it is computed where the accumulators are.
  void place_upcast_work() {
    std::unordered_map<const UOp*, std::vector<const UOp*>> users;
    for (const UOpPtr& u : order_)
      for (const UOpPtr& s : u->src()) users[s.get()].push_back(u.get());
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const UOp* n = it->get();
      if (level_.at(n) < 0 || n->op() == Ops::REDUCE || n->op() == Ops::RANGE) continue;
      std::vector<int>& need = needed_in_[n];
      auto add = [&](int b) {
        if (std::find(need.begin(), need.end(), b) == need.end()) need.push_back(b);
      };
      for (const UOp* u : users[n]) {
        if (u->op() == Ops::REDUCE) add(bit_.at(u->src().back().get()));
        else if (level_.at(u) >= 0) for (int b : needed_in_[u]) add(b);
        else add(host_.at(u));
      }
      if (need.empty()) add(host_.at(n));
    }
  }

  bool needed_in(const UOp* n, int b) const {
    auto it = needed_in_.find(n);
    return it != needed_in_.end() && std::find(it->second.begin(), it->second.end(), b) != it->second.end();
  }

  int upcast_level(Mask m) const {
    int level = -1;
    for (size_t i = 0; i < upcasts_.size(); ++i)
      if (m & (Mask{1} << bit_.at(upcasts_[i].get()))) level = static_cast<int>(i);
    return level;
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

  // Emits the nodes living in block `b`: first those outside any upcast loop (and every REDUCE
  // with its loop nest), then the upcast chain, then the output loop nested inside `b`.
  void emit_block(int b) {
    bool needs_chain = upcast_reduce_block_.count(b) > 0;
    for (const UOpPtr& u : order_) {
      if (is_inline(u->op())) continue;
      if (level_.at(u.get()) >= 0 && u->op() != Ops::REDUCE) {
        needs_chain |= needed_in(u.get(), b);
        continue;
      }
      if (host_.at(u.get()) != b) continue;
      if (u->op() == Ops::REDUCE) {
        emit_reduce(u);
        continue;
      }
      out_.push_back({Instr::Kind::Node, u});
    }
    if (needs_chain && !upcasts_.empty()) emit_upcast_chain(b, 0);
    if (b >= 0 && owner_.count(ranges_[static_cast<size_t>(b)].get())) return;  // reduce nests close themselves
    int next_depth = b < 0 ? 0 : depth_.at(ranges_[static_cast<size_t>(b)].get()) + 1;
    if (next_depth < static_cast<int>(outputs_.size())) {
      const UOpPtr& r = outputs_[next_depth];
      out_.push_back({Instr::Kind::Open, r});
      emit_block(bit_.at(r.get()));
      out_.push_back({Instr::Kind::Close, r});
    }
  }

  void emit_upcast_chain(int b, size_t level) {
    const UOpPtr& r = upcasts_[level];
    out_.push_back({Instr::Kind::Open, r});
    for (const UOpPtr& u : order_)
      if (level_.at(u.get()) == static_cast<int>(level) && u->op() != Ops::REDUCE && !is_inline(u->op()) &&
          needed_in(u.get(), b))
        out_.push_back({Instr::Kind::Node, u});
    if (level + 1 < upcasts_.size()) {
      emit_upcast_chain(b, level + 1);
    } else if (auto it = upcast_reduce_block_.find(b); it != upcast_reduce_block_.end()) {
      out_.push_back({Instr::Kind::Accumulate, it->second->ptr()});
    }
    out_.push_back({Instr::Kind::Close, r});
  }

  void emit_reduce(const UOpPtr& red) {
    out_.push_back({Instr::Kind::AccInit, red});
    emit_reduce_loop(red, 1);
    out_.push_back({Instr::Kind::Node, red});
  }

  void emit_reduce_loop(const UOpPtr& red, size_t i) {
    if (i == red->src().size()) {
      if (!(deps_.at(red.get()) & upcast_mask_)) out_.push_back({Instr::Kind::Accumulate, red});
      return;
    }
    const UOpPtr& r = red->src(i);
    out_.push_back({Instr::Kind::Open, r});
    emit_block(bit_.at(r.get()));
    emit_reduce_loop(red, i + 1);
    out_.push_back({Instr::Kind::Close, r});
  }

  std::vector<UOpPtr> order_;
  std::vector<UOpPtr> ranges_;   // by bit
  std::vector<UOpPtr> outputs_;  // output ranges, outer to inner
  std::vector<UOpPtr> upcasts_;  // upcast ranges, outer to inner
  Mask upcast_mask_ = 0;
  std::unordered_map<const UOp*, int> bit_;
  std::unordered_map<const UOp*, int> depth_;
  std::unordered_map<const UOp*, const UOp*> owner_;  // reduce range -> its REDUCE
  std::unordered_map<const UOp*, Mask> deps_;
  std::unordered_map<const UOp*, int> host_;   // block, ignoring upcast ranges
  std::unordered_map<const UOp*, int> level_;  // deepest upcast range depended on, or -1
  std::unordered_map<int, const UOp*> upcast_reduce_block_;  // innermost reduce range -> its upcast REDUCE
  std::unordered_map<const UOp*, std::vector<int>> needed_in_;  // upcast work -> blocks whose upcast loops use it
  std::vector<Instr> out_;
};

}  // namespace

std::vector<Instr> linearize(const UOpPtr& sink) { return Linearizer(sink).run(); }

}  // namespace lathe
