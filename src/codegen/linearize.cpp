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
  // ranges form a chain of their own, opened where the END is placed.
  void number_ranges() {
    for (const UOpPtr& u : order_)
      if (u->op() == Ops::END)
        for (const UOpPtr& r : closed_by(*u)) owner_[r.get()] = u.get();
    for (const UOpPtr& u : order_) {
      if (u->op() != Ops::RANGE) continue;
      if (bit_.size() >= 64) throw InternalError("a kernel with more than 64 loops");
      bit_[u.get()] = static_cast<int>(bit_.size());
      ranges_.push_back(u);
      if (is_register_range(*u)) throw InternalError("linearize met an upcast loop: expand_upcasts runs first");
      if (!owner_.count(u.get())) outputs_.push_back(u);
    }
    std::sort(outputs_.begin(), outputs_.end(), [](const UOpPtr& a, const UOpPtr& b) { return axis_of(*a) < axis_of(*b); });
    for (size_t i = 0; i < outputs_.size(); ++i) depth_[outputs_[i].get()] = static_cast<int>(i);
  }

  Mask bit(const UOp* r) const { return Mask{1} << bit_.at(r); }

  void compute_deps() {
    for (const UOpPtr& u : order_) {
      Mask m = 0;
      for (const UOpPtr& s : u->src()) m |= deps_[s.get()];
      if (u->op() == Ops::RANGE) m |= bit(u.get());
      if (u->op() == Ops::END)
        for (const UOpPtr& r : closed_by(*u)) m &= ~bit(r.get());
      deps_[u.get()] = m;
    }
    // An END's loops nest inside the loop it is placed in, one level per range. Outer ENDs come
    // later in the order, so walking it backwards places them before the ones they contain.
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const UOpPtr& u = *it;
      if (u->op() != Ops::END) continue;
      int host = innermost(deps_.at(u.get()));
      int base = host < 0 ? -1 : depth_.at(ranges_[static_cast<size_t>(host)].get());
      int i = 0;
      for (const UOpPtr& r : closed_by(*u)) depth_[r.get()] = base + ++i;
    }
    for (const UOpPtr& u : order_) host_[u.get()] = innermost(deps_.at(u.get()));
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

  // Emits the nodes living in loop `b` (-1: the kernel's top level), an END with its loop nest,
  // then the output loop nested in `b`.
  void emit_block(int b) {
    for (const UOpPtr& u : order_) {
      if (is_inline(u->op()) || host_.at(u.get()) != b) continue;
      if (u->op() == Ops::END) emit_end(u);
      else out_.push_back(u);
    }
    if (b >= 0 && owner_.count(ranges_[static_cast<size_t>(b)].get())) return;  // an END closes its own nest
    int next_depth = b < 0 ? 0 : depth_.at(ranges_[static_cast<size_t>(b)].get()) + 1;
    if (next_depth < static_cast<int>(outputs_.size())) {
      const UOpPtr& r = outputs_[static_cast<size_t>(next_depth)];
      open(r);
      emit_block(bit_.at(r.get()));
      close(r);
    }
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
  std::unordered_map<const UOp*, int> bit_;
  std::unordered_map<const UOp*, int> depth_;
  std::unordered_map<const UOp*, const UOp*> owner_;  // a range an END closes -> that END
  std::unordered_map<const UOp*, Mask> deps_;
  std::unordered_map<const UOp*, int> host_;  // the loop it is placed in
  std::vector<UOpPtr> out_;
};

}  // namespace

std::vector<UOpPtr> linearize(const UOpPtr& sink) { return Linearizer(sink).run(); }

}  // namespace lathe
