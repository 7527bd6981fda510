#include "schedule/lowering.hpp"

#include <functional>
#include <map>

#include "ir/alu.hpp"
#include "ir/symbolic.hpp"
#include "lathe/error.hpp"
#include "schedule/realize.hpp"

namespace lathe {
namespace {

UOpPtr index(int64_t v) { return UOp::index_const(v); }
UOpPtr true_() { return UOp::const_(dtypes::bool_, true); }

bool is_one(const UOpPtr& d) { return d->is_const() && const_as_int(d->const_value()) == 1; }

// Row-major offset of `idx` in an array of `dims` (strides are products of later dims).
UOpPtr linear_index(const std::vector<UOpPtr>& idx, const SymDims& dims) {
  UOpPtr lin = index(0), stride = index(1);
  for (size_t i = idx.size(); i-- > 0;) {
    if (!is_one(dims[i])) lin = lin + idx[i] * stride;
    stride = stride * dims[i];
  }
  return lin;
}

// Lowers the tensor graph under one realized node to index arithmetic over loop ranges. Sizes
// are index expressions, so symbolic axes become loops over a variable.
class KernelLowering {
 public:
  KernelLowering(const UOpPtr& root, const Schedule& sched, const std::unordered_map<const UOp*, bool>& realized,
                 std::vector<UOpPtr>& bufs)
      : root_(root), shapes_(sched.shapes), dims_(sched.sym_shapes), realized_(realized), sched_(sched), bufs_(bufs) {}

  UOpPtr run() {
    std::vector<UOpPtr> idx = output_loops();
    UOpPtr value_node = root_->op() == Ops::CONTIGUOUS ? root_->src(0) : root_;
    return store(lower(value_node, idx, true_()), idx);
  }

  /// The kernel that fills the buffer of root (a PAD) with its pad value.
  UOpPtr fill() { return store(root_->src(1), output_loops()); }

 private:
  std::vector<UOpPtr> output_loops() {
    std::vector<UOpPtr> idx;
    for (const UOpPtr& d : dims_.at(root_.get())) idx.push_back(is_one(d) ? index(0) : UOp::range(d, next_axis_++));
    bufs_.assign({root_});
    return idx;
  }

  // Stores `value` at `idx` of root's buffer (or of the PAD's it is written into).
  UOpPtr store(const UOpPtr& value, const std::vector<UOpPtr>& idx) const {
    auto [out, at] = element_of(0, root_, idx, nullptr);
    // An attention kernel builds its own loops (codegen/attention); every other kernel is shaped by the optimizer.
    Arg info = value->op() == Ops::ATTENTION ? Arg(KernelInfo{.builds_own_loops = true}) : Arg();
    return UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {at, value})}, info);
  }

  // The buffer in `slot` holding `u`, and the INDEX of u's element `idx` in it (gated by `valid`
  // unless null): u's own layout, or the interior of the PAD whose buffer u is written into,
  // each axis shifted by what the PAD adds before it.
  std::pair<UOpPtr, UOpPtr> element_of(size_t slot, const UOpPtr& u, std::vector<UOpPtr> idx, const UOpPtr& valid) const {
    const Placement* p = sched_.placement(*u);
    const UOpPtr& holder = p && p->kind == Placement::Kind::padded_interior ? p->base : u;
    if (holder != u)
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = idx[i] + size_arg(*holder, 2, 2 * i);
    UOpPtr buf = define_global(slot, u->dtype(), shape_numel(shapes_.at(holder.get())));
    std::vector<UOpPtr> index_src{buf, linear_index(idx, dims_.at(holder.get()))};
    if (valid) index_src.push_back(valid);
    return {buf, UOp::make(Ops::INDEX, buf->dtype(), std::move(index_src))};
  }

  static UOpPtr define_global(size_t slot, DType dt, int64_t size) {
    return UOp::make(Ops::DEFINE_GLOBAL, dt.ptr(AddrSpace::Global, size), {}, static_cast<int64_t>(slot));
  }

  bool is_realized(const UOpPtr& u) const { return is_stored(*u, root_.get(), realized_); }

  size_t slot_of(const UOpPtr& u) {
    for (size_t i = 1; i < bufs_.size(); ++i)
      if (bufs_[i] == u) return i;
    bufs_.push_back(u);
    return bufs_.size() - 1;
  }

  // A request's nodes, held (not just their addresses): index expressions are made on the fly,
  // and a freed one's address may be reused by a different node while the memo still lists it.
  using Key = std::vector<UOpPtr>;

  // What one node needs: the values of some (node, index, gate) requests, then a combination of
  // them. Lowering runs on an explicit stack of these, so graphs of any depth lower without
  // recursion.
  struct Request {
    UOpPtr u;
    std::vector<UOpPtr> idx;
    UOpPtr valid;
  };
  struct Step {
    UOpPtr value;                   // set when the node's value needs nothing more
    std::vector<Request> requests;  // else: these first,
    std::function<UOpPtr(const std::vector<UOpPtr>&)> combine;  // then this
  };

  static Key key_of(const Request& r) {
    Key key{r.u, r.valid};
    key.insert(key.end(), r.idx.begin(), r.idx.end());
    return key;
  }

  UOpPtr lower(const UOpPtr& u, const std::vector<UOpPtr>& idx, const UOpPtr& valid) {
    struct Frame {
      Key key;
      Step step;
      std::vector<UOpPtr> results;
    };
    Request root{u, idx, valid};
    if (auto it = memo_.find(key_of(root)); it != memo_.end()) return it->second;
    std::vector<Frame> stack;
    stack.push_back({key_of(root), plan(root), {}});
    while (true) {
      Frame& f = stack.back();
      if (!f.step.value && f.results.size() < f.step.requests.size()) {
        const Request& r = f.step.requests[f.results.size()];
        Key k = key_of(r);
        if (auto it = memo_.find(k); it != memo_.end()) {
          f.results.push_back(it->second);
        } else {
          Step next = plan(r);
          stack.push_back({std::move(k), std::move(next), {}});
        }
        continue;
      }
      UOpPtr v = f.step.value ? f.step.value : f.step.combine(f.results);
      memo_.emplace(f.key, v);
      stack.pop_back();
      if (stack.empty()) return v;
      stack.back().results.push_back(v);
    }
  }

  // The i-th size argument of a movement op: its extra source when symbolic, else its arg.
  static UOpPtr size_arg(const UOp& u, size_t first_src, size_t i) {
    if (u.src().size() > first_src) return u.src(first_src + i);
    return index(u.arg_as<std::vector<int64_t>>()[i]);
  }

  static Step done(UOpPtr v) { return Step{std::move(v), {}, {}}; }
  static Step forward(Request r) {
    return Step{nullptr, {std::move(r)}, [](const std::vector<UOpPtr>& v) { return v[0]; }};
  }

  Step plan(const Request& req) {
    const UOpPtr& u = req.u;
    const std::vector<UOpPtr>& idx = req.idx;
    const UOpPtr& valid = req.valid;
    const SymDims& dims = dims_.at(u.get());
    if (is_realized(u)) {
      auto [buf, at] = element_of(slot_of(u), u, idx, valid == true_() ? nullptr : valid);
      return done(UOp::make(Ops::LOAD, u->dtype(), {at}));
    }
    switch (u->op()) {
      case Ops::CONST:
      case Ops::DEFINE_VAR:
      case Ops::BIND: return done(u);
      case Ops::RESHAPE: return forward({u->src(0), reshape_index(idx, dims, dims_.at(u->src(0).get())), valid});
      case Ops::PERMUTE: {
        const auto& order = u->arg_as<std::vector<int64_t>>();
        std::vector<UOpPtr> src_idx(idx.size());
        for (size_t i = 0; i < order.size(); ++i) src_idx[order[i]] = idx[i];
        return forward({u->src(0), src_idx, valid});
      }
      case Ops::EXPAND: {
        const SymDims& src_dims = dims_.at(u->src(0).get());
        std::vector<UOpPtr> src_idx(idx);
        for (size_t i = 0; i < idx.size(); ++i)
          if (is_one(src_dims[i])) src_idx[i] = index(0);
        return forward({u->src(0), src_idx, valid});
      }
      case Ops::SHRINK: {
        std::vector<UOpPtr> src_idx(idx);
        for (size_t i = 0; i < idx.size(); ++i) src_idx[i] = idx[i] + size_arg(*u, 1, 2 * i);
        return forward({u->src(0), src_idx, valid});
      }
      case Ops::FLIP: {
        const auto& flags = u->arg_as<std::vector<int64_t>>();
        std::vector<UOpPtr> src_idx(idx);
        for (size_t i = 0; i < idx.size(); ++i)
          if (flags[i]) src_idx[i] = dims[i] - 1 - idx[i];
        return forward({u->src(0), src_idx, valid});
      }
      case Ops::PAD: {
        const SymDims& src_dims = dims_.at(u->src(0).get());
        std::vector<UOpPtr> src_idx(idx);
        UOpPtr inside = true_();
        for (size_t i = 0; i < idx.size(); ++i) {
          UOpPtr before = size_arg(*u, 2, 2 * i), after = size_arg(*u, 2, 2 * i + 1);
          if (is_zero(before) && is_zero(after)) continue;
          src_idx[i] = idx[i] - before;
          UOpPtr ok = logical_and(logical_not(lt(src_idx[i], 0)), lt(src_idx[i], src_dims[i]));
          inside = inside == true_() ? ok : logical_and(inside, ok);
        }
        inside = simplify(inside);
        if (inside == true_()) return forward({u->src(0), src_idx, valid});
        UOpPtr gate = simplify(valid == true_() ? inside : logical_and(valid, inside));
        UOpPtr pad_value = u->src(1);
        if (gate == UOp::const_(dtypes::bool_, false)) return done(pad_value);
        return Step{nullptr, {{u->src(0), src_idx, gate}},
                    [inside, pad_value](const std::vector<UOpPtr>& v) { return where(inside, v[0], pad_value); }};
      }
      case Ops::REDUCE_AXIS: {
        const auto& ra = u->arg_as<ReduceArg>();
        const SymDims& src_dims = dims_.at(u->src(0).get());
        std::vector<UOpPtr> src_idx(idx);
        std::vector<UOpPtr> ranges;
        for (int64_t a : ra.axes) {
          if (is_one(src_dims[a])) {
            src_idx[a] = index(0);
            continue;
          }
          src_idx[a] = UOp::range(src_dims[a], next_axis_++);
          ranges.push_back(src_idx[a]);
        }
        if (ranges.empty()) return forward({u->src(0), src_idx, valid});
        DType dt = u->dtype();
        Ops op = ra.op;
        return Step{nullptr, {{u->src(0), src_idx, valid}}, [ranges, dt, op](const std::vector<UOpPtr>& v) {
                      std::vector<UOpPtr> src{v[0]};
                      src.insert(src.end(), ranges.begin(), ranges.end());
                      return UOp::make(Ops::REDUCE, dt, std::move(src), op);
                    }};
      }
      case Ops::CONTIGUOUS: return forward({u->src(0), idx, valid});
      case Ops::ATTENTION: {
        // The score at (..., query, key) and the value at (..., key, value) over a loop of keys;
        // the query and value loops go with them (codegen/attention tiles all three).
        size_t last = idx.size() - 1;
        UOpPtr keys = UOp::range(dims_.at(u->src(0).get())[last], next_axis_++);
        std::vector<UOpPtr> score_idx(idx), value_idx(idx);
        score_idx[last] = keys;
        value_idx[last - 1] = keys;
        UOpPtr query = idx[last - 1], value = idx[last];
        DType dt = u->dtype();
        Arg seen = u->arg();
        return Step{nullptr, {{u->src(0), score_idx, valid}, {u->src(1), value_idx, valid}},
                    [dt, keys, query, value, seen](const std::vector<UOpPtr>& v) {
                      return UOp::make(Ops::ATTENTION, dt, {v[0], v[1], keys, query, value}, seen);
                    }};
      }
      case Ops::GATHER: {
        // The index's value at this position picks the source's position along the axis; a
        // position outside [0, n) reads nothing and gives 0.
        auto axis = static_cast<size_t>(u->arg_as<int64_t>());
        UOpPtr n = dims_.at(u->src(0).get())[axis];
        return Step{nullptr, {{u->src(1), idx, valid}}, [this, u, idx, valid, axis, n](const std::vector<UOpPtr>& v) {
                      UOpPtr pos = UOp::make(Ops::CAST, dtypes::index, {v[0]});
                      UOpPtr inside = logical_and(logical_not(lt(pos, 0)), lt(pos, n));
                      std::vector<UOpPtr> src_idx(idx);
                      src_idx[axis] = pos;
                      UOpPtr gate = valid == true_() ? inside : logical_and(valid, inside);
                      UOpPtr zero = UOp::const_(u->dtype(), int64_t{0});
                      return where(inside, lower(u->src(0), src_idx, gate), zero);
                    }};
      }
      default: break;
    }
    if (is_alu(u->op()) || u->op() == Ops::CAST || u->op() == Ops::BITCAST) {
      Step step;
      for (const UOpPtr& s : u->src()) step.requests.push_back({s, dims_.at(s.get()).empty() ? std::vector<UOpPtr>{} : idx, valid});
      step.combine = [u](const std::vector<UOpPtr>& v) { return UOp::make(u->op(), u->dtype(), v, u->arg()); };
      return step;
    }
    throw InternalError("the scheduler cannot lower " + to_string(*u));
  }

  // The source index of a reshape: `idx` (over `out`) flattened and split again over `in`.
  static std::vector<UOpPtr> reshape_index(const std::vector<UOpPtr>& idx, const SymDims& out, const SymDims& in) {
    std::vector<UOpPtr> src_idx(in.size(), index(0));
    bool symbolic = false;
    for (const SymDims* dims : {&out, &in})
      for (const UOpPtr& d : *dims) symbolic = symbolic || !d->is_const();
    if (!symbolic) {  // the simplifier cancels the divisions by constant strides
      split_group(idx, out, in, 0, out.size(), 0, in.size(), src_idx);
      return src_idx;
    }
    // With symbolic sizes, axes are matched in groups whose sizes multiply to the same (an axis
    // the reshape keeps, a batch of `n`, is a group of its own), each flattened and split alone:
    // no division by a symbolic stride is left for a simplifier that cannot cancel it (Winograd's
    // product over a dynamic batch divided every element's address by batch x 4096).
    size_t i = 0, j = 0;
    for (;;) {
      while (i < out.size() && is_one(out[i])) ++i;
      while (j < in.size() && is_one(in[j])) ++j;
      if (i == out.size() || j == in.size()) break;
      size_t i_end = i + 1, j_end = j + 1;
      UOpPtr out_size = out[i], in_size = in[j];
      bool matched = true;
      while (out_size != in_size) {  // hash-consed: the same expression is the same node
        if (!out_size->is_const() || !in_size->is_const()) {
          matched = false;
          break;
        }
        bool grow_out = const_as_int(out_size->const_value()) < const_as_int(in_size->const_value());
        if (grow_out ? i_end == out.size() : j_end == in.size()) {
          matched = false;
          break;
        }
        if (grow_out) out_size = simplify(out_size * out[i_end++]);
        else in_size = simplify(in_size * in[j_end++]);
      }
      if (!matched) {  // what is left, as one group
        split_group(idx, out, in, i, out.size(), j, in.size(), src_idx);
        return src_idx;
      }
      split_group(idx, out, in, i, i_end, j, j_end, src_idx);
      i = i_end, j = j_end;
    }
    return src_idx;
  }

  // Axes [i0, i1) of `out` flattened, split over axes [j0, j1) of `in` into `src_idx`. The group's
  // outermost axis takes no remainder: an index inside the group's `out` axes is inside its `in`
  // ones (a symbolic batch left a remainder by batch x 150528 on every element of a dynamic-batch
  // ResNet's input).
  static void split_group(const std::vector<UOpPtr>& idx, const SymDims& out, const SymDims& in, size_t i0, size_t i1, size_t j0, size_t j1,
                          std::vector<UOpPtr>& src_idx) {
    UOpPtr flat = linear_index(std::vector<UOpPtr>(idx.begin() + static_cast<std::ptrdiff_t>(i0), idx.begin() + static_cast<std::ptrdiff_t>(i1)),
                               SymDims(out.begin() + static_cast<std::ptrdiff_t>(i0), out.begin() + static_cast<std::ptrdiff_t>(i1)));
    UOpPtr stride = index(1);
    for (size_t j = j1; j-- > j0;) {
      src_idx[j] = is_one(in[j]) ? index(0) : j == j0 ? simplify(idiv(flat, stride)) : simplify(idiv(flat, stride) % in[j]);
      stride = stride * in[j];
    }
  }

  UOpPtr root_;
  const std::unordered_map<const UOp*, Shape>& shapes_;
  const std::unordered_map<const UOp*, SymDims>& dims_;
  const std::unordered_map<const UOp*, bool>& realized_;
  const Schedule& sched_;
  std::vector<UOpPtr>& bufs_;
  int64_t next_axis_ = 0;
  std::map<Key, UOpPtr> memo_;
};

}  // namespace

UOpPtr lower_kernel(const UOpPtr& root, const Schedule& sched, const std::unordered_map<const UOp*, bool>& realized,
                    std::vector<UOpPtr>& bufs) {
  return KernelLowering(root, sched, realized, bufs).run();
}

UOpPtr lower_fill(const UOpPtr& pad, const Schedule& sched, const std::unordered_map<const UOp*, bool>& realized,
                  std::vector<UOpPtr>& bufs) {
  return KernelLowering(pad, sched, realized, bufs).fill();
}

}  // namespace lathe
