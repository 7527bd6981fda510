#include "codegen/linearize.hpp"

#include <algorithm>
#include <unordered_map>

#include "ir/axis.hpp"
#include "ir/toposort.hpp"
#include "lathe/error.hpp"

namespace lathe {

bool is_inline(Ops op) {
  return op == Ops::CONST || op == Ops::DEFINE_GLOBAL || op == Ops::DEFINE_VAR || op == Ops::SPECIAL || op == Ops::RANGE ||
         op == Ops::INDEX || op == Ops::SINK || op == Ops::BIND || op == Ops::NOOP;
}

namespace {

using Mask = uint64_t;

class Linearizer {
 public:
  explicit Linearizer(const UOpPtr& sink) : order_(toposort(sink)) {}

  std::vector<UOpPtr> run() {
    number_ranges();
    compute_deps();
    emit_block(-1);
    return std::move(out_);
  }

 private:
  static std::vector<UOpPtr> closed_by(const UOp& end) {
    std::vector<UOpPtr> rs;
    for (const UOpPtr& s : end.src())
      if (s->op() == Ops::RANGE) rs.push_back(s);
    return rs;
  }

  // Output ranges (not closed by an END of the kernel) form one chain in axis order; each END's
  // ranges form a chain of their own, opened where the END is placed; upcast ranges form a short
  // chain opened innermost inside whichever loop needs them.
  void number_ranges() {
    for (const UOpPtr& u : order_)
      if (u->op() == Ops::END)
        for (const UOpPtr& r : closed_by(*u)) owner_[r.get()] = u.get();
    for (const UOpPtr& u : order_) {
      if (u->op() != Ops::RANGE) continue;
      if (bit_.size() >= 64) throw InternalError("a kernel with more than 64 loops");
      bit_[u.get()] = static_cast<int>(bit_.size());
      ranges_.push_back(u);
      if (is_upcast_range(*u)) upcasts_.push_back(u);
      else if (!owner_.count(u.get())) outputs_.push_back(u);
    }
    auto by_axis = [](const UOpPtr& a, const UOpPtr& b) { return axis_of(*a) < axis_of(*b); };
    std::sort(outputs_.begin(), outputs_.end(), by_axis);
    std::sort(upcasts_.begin(), upcasts_.end(), by_axis);
    for (size_t i = 0; i < outputs_.size(); ++i) depth_[outputs_[i].get()] = static_cast<int>(i);
    for (const UOpPtr& u : upcasts_) {
      depth_[u.get()] = -1;
      upcast_mask_ |= Mask{1} << bit_.at(u.get());
    }
  }

  Mask bit(const UOp* r) const { return Mask{1} << bit_.at(r); }

  void compute_deps() {
    for (const UOpPtr& u : order_) {
      Mask m = 0;
      for (const UOpPtr& s : u->src()) m |= deps_[s.get()];
      if (u->op() == Ops::RANGE) m |= bit(u.get());
      if (u->op() == Ops::END) {  // closes its loops; where it stands is outside every upcast loop
        for (const UOpPtr& r : closed_by(*u)) m &= ~bit(r.get());
        m &= ~upcast_mask_;
      }
      deps_[u.get()] = m;
    }
    // An END's loops nest inside the loop it is placed in, one level per range. Outer ENDs come
    // later in the order, so walking it backwards places them before the ones they contain.
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const UOpPtr& u = *it;
      if (u->op() != Ops::END) continue;
      int host = innermost(deps_.at(u.get()) & ~upcast_mask_);
      int base = host < 0 ? -1 : depth_.at(ranges_[static_cast<size_t>(host)].get());
      int i = 0;
      for (const UOpPtr& r : closed_by(*u)) depth_[r.get()] = base + ++i;
    }
    for (const UOpPtr& u : order_) {
      host_[u.get()] = innermost(deps_.at(u.get()) & ~upcast_mask_);
      level_[u.get()] = u->op() == Ops::END ? -1 : upcast_level(deps_.at(u.get()));
    }
    place_upcast_work();
  }

  // Work inside upcast loops is emitted in every loop whose upcast loops use it (a copy per loop:
  // the loops are separate scopes): inside an END's innermost loop for what that END closes over,
  // else in the loop of the node that uses it.
  void place_upcast_work() {
    std::unordered_map<const UOp*, std::vector<const UOp*>> users;
    for (const UOpPtr& u : order_)
      for (const UOpPtr& s : u->src()) users[s.get()].push_back(u.get());
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const UOp* n = it->get();
      if (level_.at(n) < 0 || n->op() == Ops::RANGE) continue;
      std::vector<int>& need = needed_in_[n];
      auto add = [&](int b) {
        if (std::find(need.begin(), need.end(), b) == need.end()) need.push_back(b);
      };
      for (const UOp* u : users[n]) {
        if (u->op() == Ops::END) add(bit_.at(closed_by(*u).back().get()));
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
      if (m & bit(upcasts_[i].get())) level = static_cast<int>(i);
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

  void open(const UOpPtr& r) { out_.push_back(r); }
  void close(const UOpPtr& r) { out_.push_back(UOp::make(Ops::END, dtypes::void_, {r})); }

  // Emits the nodes living in loop `b` (-1: the kernel's top level): first those outside any upcast
  // loop (an END with its loop nest), then the upcast chain, then the output loop nested in `b`.
  void emit_block(int b) {
    bool needs_chain = false;
    for (const UOpPtr& u : order_) {
      if (is_inline(u->op())) continue;
      if (level_.at(u.get()) >= 0) {
        needs_chain |= needed_in(u.get(), b);
        continue;
      }
      if (host_.at(u.get()) != b) continue;
      if (u->op() == Ops::END) emit_end(u);
      else out_.push_back(u);
    }
    if (needs_chain && !upcasts_.empty()) emit_upcast_chain(b, 0);
    if (b >= 0 && owner_.count(ranges_[static_cast<size_t>(b)].get())) return;  // an END closes its own nest
    int next_depth = b < 0 ? 0 : depth_.at(ranges_[static_cast<size_t>(b)].get()) + 1;
    if (next_depth < static_cast<int>(outputs_.size())) {
      const UOpPtr& r = outputs_[static_cast<size_t>(next_depth)];
      open(r);
      emit_block(bit_.at(r.get()));
      close(r);
    }
  }

  void emit_upcast_chain(int b, size_t level) {
    const UOpPtr& r = upcasts_[level];
    open(r);
    for (const UOpPtr& u : order_)
      if (level_.at(u.get()) == static_cast<int>(level) && !is_inline(u->op()) && needed_in(u.get(), b)) out_.push_back(u);
    if (level + 1 < upcasts_.size()) emit_upcast_chain(b, level + 1);
    close(r);
  }

  void emit_end(const UOpPtr& end) {
    for (const UOpPtr& r : closed_by(*end)) {
      open(r);
      emit_block(bit_.at(r.get()));
    }
    out_.push_back(end);
  }

  std::vector<UOpPtr> order_;
  std::vector<UOpPtr> ranges_;   // by bit
  std::vector<UOpPtr> outputs_;  // output ranges, outer to inner
  std::vector<UOpPtr> upcasts_;  // upcast ranges, outer to inner
  Mask upcast_mask_ = 0;
  std::unordered_map<const UOp*, int> bit_;
  std::unordered_map<const UOp*, int> depth_;
  std::unordered_map<const UOp*, const UOp*> owner_;  // a range an END closes -> that END
  std::unordered_map<const UOp*, Mask> deps_;
  std::unordered_map<const UOp*, int> host_;   // loop, ignoring upcast ranges
  std::unordered_map<const UOp*, int> level_;  // deepest upcast range depended on, or -1
  std::unordered_map<const UOp*, std::vector<int>> needed_in_;  // upcast work -> loops whose upcast loops use it
  std::vector<UOpPtr> out_;
};

}  // namespace

std::vector<UOpPtr> linearize(const UOpPtr& sink) { return Linearizer(sink).run(); }

}  // namespace lathe
