#include "codegen/attention.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "codegen/expand.hpp"
#include "codegen/parallelize.hpp"
#include "codegen/transcendental.hpp"
#include "ir/axis.hpp"
#include "ir/step.hpp"
#include "ir/substitute.hpp"
#include "ir/symbolic.hpp"
#include "ir/toposort.hpp"
#include "lathe/error.hpp"
#include "opt/heuristic.hpp"

namespace lathe {
namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMostValueVectors = 4;  // a row's value accumulators held in registers
constexpr int64_t kMostRows = 8;
// At least this many query rows share each block's key and value loads, even where their
// accumulators do not all fit the registers: with one row every load feeds one multiply-add and
// the loads bound the kernel, while a row's spilled accumulators cost a load and a store in L1 per
// block of 16 keys (gpt_long's attention at 8 lanes and 16 registers, where the registers hold
// one row: 44-50 ms a kernel with 1 row, 32-38 with 3 to 6, 41-50 with 8; at 4 lanes 1 and 4
// rows measure the same).
constexpr int64_t kMinRows = 4;
constexpr int64_t kRegistersForTemporaries = 6;      // beside the accumulators: a key row, a value vector, exp2's terms
// The running state of a group of tiles is kept in L1 beside a block of keys and values: a third
// of it. Keys and values (taken as twice the values) of one head that a core's L2 holds are read
// by each tile alone (both the target's).
constexpr int64_t kStateShareOfL1 = 3;

UOpPtr index(int64_t v) { return UOp::index_const(v); }
UOpPtr f32(double v) { return UOp::const_(dtypes::float32, v); }

int64_t size_of(const UOpPtr& loop) { return loop->op() == Ops::RANGE ? loop->src(0)->vmax() : 1; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// `gate` and `more`, either of which may be absent.
UOpPtr both(const UOpPtr& gate, const UOpPtr& more) { return !gate ? more : !more ? gate : logical_and(gate, more); }

// `x` with `gate` added to every load of a buffer whose address varies with one of `loops` (a
// position past the end reads 0 rather than outside the buffer).
UOpPtr gate_loads(const UOpPtr& x, const UOpPtr& gate, std::initializer_list<const UOp*> loops) {
  if (!gate) return x;
  Substitution gated;
  for (const UOpPtr& u : toposort(x)) {
    if (u->op() != Ops::INDEX || u->src(0)->op() != Ops::DEFINE_GLOBAL) continue;
    if (std::none_of(loops.begin(), loops.end(), [&](const UOp* r) { return varies_with(u->src(1), r); })) continue;
    gated[u.get()] = UOp::make(Ops::INDEX, u->dtype(),
                               {u->src(0), u->src(1), both(u->src().size() == 3 ? u->src(2) : nullptr, gate)});
  }
  return substitute(x, gated);
}

// The lanes of a vector over `n` positions: the target's, or fewer where those would pad `n` by
// more than an eighth (a head of 8 values: vectors of 8), at least 2.
int64_t lanes_for(int64_t n, int lanes) {
  int64_t best = std::max(2, lanes), best_pad = ceil_div(n, best) * best - n;
  for (int64_t w = best; w >= 2; w /= 2) {
    int64_t pad = ceil_div(n, w) * w - n;
    if (pad * 8 <= n) return w;
    if (pad < best_pad) best = w, best_pad = pad;
  }
  return best;
}

class FlashKernel {
 public:
  FlashKernel(const UOpPtr& ast, const Target& t) : store_(ast->src(0)), att_(store_->src(1)), t_(t) {
    keys_ = att_->src(2), query_ = att_->src(3), value_pos_ = att_->src(4);
    for (const UOpPtr& u : toposort(ast)) {
      if (u->op() == Ops::RANGE) axis_ = std::max(axis_, axis_of(*u) + 1);
      if (u->op() == Ops::DEFINE_REG) reg_ = std::max(reg_, u->arg_as<int64_t>() + 1);
    }
    for (const UOpPtr& u : toposort(store_->src(0)))
      if (u->op() == Ops::RANGE && u != query_ && u != value_pos_) lead_.push_back(u);
    std::sort(lead_.begin(), lead_.end(), [](const UOpPtr& a, const UOpPtr& b) { return axis_of(*a) < axis_of(*b); });
    for (const UOpPtr& l : {keys_, query_, value_pos_})
      if (l->op() == Ops::RANGE && !l->src(0)->is_const())
        throw InternalError("an attention kernel over a symbolic size");
    for (const UOpPtr& l : lead_)
      if (!l->src(0)->is_const()) throw InternalError("an attention kernel over a symbolic size");
    keys_n_ = size_of(keys_), queries_n_ = size_of(query_), values_n_ = size_of(value_pos_);
    seen_ = att_->arg_as<AttentionArg>().keys;
    value_lanes_ = lanes_for(values_n_, t.lanes(dtypes::float32));
    int64_t vectors = ceil_div(values_n_, value_lanes_);
    chunks_ = ceil_div(vectors, kMostValueVectors);
    vectors_ = ceil_div(vectors, chunks_);
    // A row holds its value accumulators and a block's scores (a 16-key block: two registers of 8 lanes).
    int64_t lanes = t.lanes(dtypes::float32);
    int64_t per_row = vectors_ * ceil_div(value_lanes_, lanes) + ceil_div(kAttentionKeyBlock, lanes);
    rows_ = std::clamp<int64_t>((t.vector_registers - kRegistersForTemporaries) / per_row, kMinRows, kMostRows);
    rows_ = std::min(rows_, queries_n_);
  }

  UOpPtr build() {
    int64_t lead_n = 1;
    for (const UOpPtr& l : lead_) lead_n *= size_of(l);
    // Tiles of rows_ queries go in groups that walk the keys together: each block of keys is read
    // from L1 by every tile of its group, whose running state stays in L1 too
    // (causal 8 x 4096 x 64: 111 -> 90 ms).
    int64_t tiles = ceil_div(queries_n_, rows_);
    int64_t state = rows_ * (vectors_ * value_lanes_ + kAttentionKeyBlock + 1) * 4;
    int64_t most = std::max<int64_t>(1, t_.l1_bytes / kStateShareOfL1 / state);
    // Keys and values a core's L2 holds are read from there by each tile alone, which then keeps
    // its state in registers (a group's state in L1 costs a load and a store a block: 8.1 against
    // 11.1 ms for a causal 4 x 2048 x 32).
    if (keys_n_ * values_n_ * 2 * 4 <= t_.l2_bytes) most = 1;
    // A window of keys that moves with the row: a group spans about its width of rows, or it
    // would read keys none of its rows sees past the window.
    if (seen_ && seen_->begin_step == 1 && seen_->end_step == 1)
      most = std::clamp<int64_t>(std::max<int64_t>(seen_->end - seen_->begin, kAttentionKeyBlock) / rows_, 1, most);
    int64_t groups = ceil_div(tiles, most);
    group_ = ceil_div(tiles, groups);
    all_inside_ = groups * group_ * rows_ == queries_n_;
    int64_t count = lead_n * groups * chunks_;
    int64_t threads = lead_n * queries_n_ * keys_n_ * values_n_ >= kThreadedOps ? std::min<int64_t>(t_.threads, count) : 1;
    // One loop over (batch and heads, groups of query tiles, value chunks), split across cores.
    UOpPtr at;
    if (threads > 1) {
      CoreShare share = share_of_core(index(count), threads, axis_++);
      at = share.position, group_loop_ = share.loop;
    } else {
      at = group_loop_ = make_range(index(count), axis_++);
    }
    chunk_ = simplify(at % chunks_);
    UOpPtr rest = idiv(at, index(chunks_));
    first_tile_ = simplify((rest % groups) * group_);
    UOpPtr lead_at = idiv(rest, index(groups));
    for (auto it = lead_.rbegin(); it != lead_.rend(); ++it) {
      at_tile_[it->get()] = simplify(lead_at % size_of(*it));
      lead_at = idiv(lead_at, index(size_of(*it)));
    }
    // The blocks of keys: all of them, or those some row of the group sees.
    first_block_ = index(0);
    UOpPtr end_block = index(ceil_div(keys_n_, kAttentionKeyBlock));
    if (seen_) {
      first_block_ = simplify(idiv(first_key(first_tile_ * rows_), index(kAttentionKeyBlock)));
      end_block = simplify(idiv(end_key((first_tile_ + group_) * rows_ - 1) + (kAttentionKeyBlock - 1), index(kAttentionKeyBlock)));
    }
    block_ = make_range(simplify(max(end_block - first_block_, index(0))), axis_++);
    tile_ = make_range(index(group_), axis_++);  // inside a block: the group's tiles
    lane_ = make_range(index(kAttentionKeyBlock), axis_++, AxisKind::Upcast);
    column_ = make_range(index(value_lanes_), axis_++, AxisKind::Upcast);

    std::vector<Row> rows;
    std::vector<UOpPtr> updates;
    for (int64_t r = 0; r < rows_; ++r) rows.push_back(row(r, updates));
    UOpPtr end = UOp::make(Ops::END, dtypes::void_, {UOp::make(Ops::NOOP, dtypes::void_, std::move(updates)), block_, tile_});
    // After the last block, a loop over the group's tiles again stores each row's values.
    UOpPtr again = make_range(index(group_), axis_++);
    std::vector<UOpPtr> stores;
    for (int64_t r = 0; r < rows_; ++r)
      for (const UOpPtr& st : finish(rows[static_cast<size_t>(r)], r, again, end)) stores.push_back(st);
    return UOp::make(Ops::SINK, dtypes::void_, std::move(stores));
  }

 private:
  // A query row's registers, an element per tile of the group: its running maximum and sum, and
  // its value accumulators.
  struct Row {
    UOpPtr max, sum;
    std::vector<UOpPtr> values;
  };

  // A register array with an element per tile of the group, each set to `init` for each group.
  UOpPtr reg(DType d, const UOpPtr& init) {
    return UOp::make(Ops::DEFINE_REG, d.ptr(AddrSpace::Reg, group_), {init, group_loop_}, reg_++);
  }
  // Its element for `tile`, read inside the loop `after` or after the END `after`.
  static UOpPtr element(const UOpPtr& reg, const UOpPtr& tile) { return UOp::make(Ops::INDEX, reg->dtype(), {reg, tile}); }
  static UOpPtr read(const UOpPtr& reg, const UOpPtr& tile, const UOpPtr& after) {
    return UOp::make(Ops::LOAD, reg->dtype().base(), {element(reg, tile), after});
  }

  // Row r of `tile` (of the group): its position, whether it is inside the queries, and the row it
  // reads (a row past the end reads the last, and stores nothing).
  struct Place {
    UOpPtr position, inside, read;
  };
  Place place(int64_t r, const UOpPtr& tile) const {
    Place p;
    p.position = simplify((first_tile_ + tile) * rows_ + r);
    p.inside = all_inside_ ? nullptr : lt(p.position, queries_n_);
    p.read = p.inside ? simplify(min(p.position, index(queries_n_ - 1))) : p.position;
    return p;
  }

  static UOpPtr splat(const UOpPtr& x, int64_t lanes) {
    if (x->dtype().count() > 1) return x;
    return UOp::make(Ops::VECTORIZE, x->dtype().vec(static_cast<int>(lanes)), std::vector<UOpPtr>(static_cast<size_t>(lanes), x));
  }

  UOpPtr polynomials(const UOpPtr& x) const { return t_.native_transcendentals ? x : decompose_transcendentals(x); }

  // `x` as the vector of the positions of the register loop `axis` (a block's keys, a vector's
  // value positions).
  UOpPtr along_lanes(const UOpPtr& x, const UOpPtr& axis) {
    return splat(vectorize_along(simplify(polynomials(x)), axis), axis->src(0)->vmax());
  }

  // The key at position `lane` of the current block.
  UOpPtr key_at(const UOpPtr& lane) const { return simplify((first_block_ + block_) * kAttentionKeyBlock + lane); }

  // The first key and the end of the keys `row` sees, by the mask's range (seen_).
  UOpPtr first_key(const UOpPtr& row) const { return simplify(max(row * seen_->begin_step + seen_->begin, index(0))); }
  UOpPtr end_key(const UOpPtr& row) const { return simplify(min(row * seen_->end_step + seen_->end, index(keys_n_))); }

  // The value positions of the tile's vector `k` (of its chunk), and whether they are inside.
  UOpPtr column(int64_t k) const { return simplify(chunk_ * (vectors_ * value_lanes_) + k * value_lanes_ + column_); }
  UOpPtr column_inside(int64_t k) const {
    return chunks_ * vectors_ * value_lanes_ == values_n_ ? nullptr : lt(column(k), values_n_);
  }

  // Row r's online update over one block of keys, for the group's tile `tile_` (its register
  // updates go to `updates`).
  Row row(int64_t r, std::vector<UOpPtr>& updates) {
    Row out;
    Place p = place(r, tile_);
    UOpPtr key = key_at(lane_);
    UOpPtr key_inside = keys_n_ % kAttentionKeyBlock == 0 ? nullptr : lt(key, keys_n_);
    // The keys the row sees: those inside, or those of its range (which are inside).
    UOpPtr seen = seen_ ? logical_and(logical_not(lt(key, first_key(p.read))), lt(key, end_key(p.read))) : key_inside;

    Substitution at = at_tile_;
    at[keys_.get()] = key;
    if (query_->op() == Ops::RANGE) at[query_.get()] = p.read;
    UOpPtr score = gate_loads(substitute(att_->src(0), at), key_inside, {lane_.get(), block_.get()});
    if (seen) score = where(seen, score, f32(-kInf));
    UOpPtr scaled = score * f32(kLog2e);  // exp(x) = 2^(x log2 e)
    UOpPtr scores = along_lanes(scaled, lane_);

    out.max = reg(dtypes::float32, f32(-kInf));
    out.sum = reg(dtypes::float32.vec(static_cast<int>(kAttentionKeyBlock)), splat(f32(0), kAttentionKeyBlock));
    UOpPtr old_max = read(out.max, tile_, tile_);
    UOpPtr new_max = max(old_max, fold_lanes(Ops::MAX, scores));
    // Scores all -inf so far: nothing is rescaled (2^(-inf - -inf) would be NaN) and each term is 0.
    UOpPtr shift = where(eq(new_max, f32(-kInf)), f32(0), new_max);
    UOpPtr rescale = simplify(polynomials(UOp::alu(Ops::EXP2, {old_max - shift})));
    UOpPtr weights = along_lanes(UOp::alu(Ops::EXP2, {scaled - shift}), lane_);
    UOpPtr old_sum = read(out.sum, tile_, tile_);
    updates.push_back(UOp::make(Ops::STORE, dtypes::void_, {element(out.max, tile_), new_max}));
    updates.push_back(UOp::make(Ops::STORE, dtypes::void_, {element(out.sum, tile_), old_sum * splat(rescale, kAttentionKeyBlock) + weights}));

    for (int64_t k = 0; k < vectors_; ++k) {
      UOpPtr acc = reg(dtypes::float32.vec(static_cast<int>(value_lanes_)), splat(f32(0), value_lanes_));
      out.values.push_back(acc);
      UOpPtr sum = read(acc, tile_, tile_) * splat(rescale, value_lanes_);
      for (int64_t j = 0; j < kAttentionKeyBlock; ++j) {
        UOpPtr key_j = key_at(index(j));
        UOpPtr inside = keys_n_ % kAttentionKeyBlock == 0 ? nullptr : lt(key_j, keys_n_);
        Substitution vat = at_tile_;
        vat[keys_.get()] = key_j;
        if (value_pos_->op() == Ops::RANGE) vat[value_pos_.get()] = column(k);
        UOpPtr value = gate_loads(substitute(att_->src(1), vat), both(inside, column_inside(k)), {block_.get(), column_.get()});
        if (inside) value = where(inside, value, f32(0));  // a key past the end weighs 0: no NaN from 0 * inf
        UOpPtr weight = splat(UOp::make(Ops::GEP, dtypes::float32, {weights}, j), value_lanes_);
        sum = sum + weight * along_lanes(value, column_);
      }
      updates.push_back(UOp::make(Ops::STORE, dtypes::void_, {element(acc, tile_), sum}));
    }
    return out;
  }

  // Row r's outputs for the group's tile `tile` after the last block (`end`): its value
  // accumulators over its sum, stored.
  std::vector<UOpPtr> finish(const Row& row, int64_t r, const UOpPtr& tile, const UOpPtr& end) {
    Place p = place(r, tile);
    UOpPtr sum = fold_lanes(Ops::ADD, read(row.sum, tile, end));
    const UOpPtr& idx = store_->src(0);
    std::vector<UOpPtr> out;
    for (int64_t k = 0; k < vectors_; ++k) {
      Substitution at = at_tile_;
      if (query_->op() == Ops::RANGE) at[query_.get()] = p.position;
      if (value_pos_->op() == Ops::RANGE) at[value_pos_.get()] = column(k);
      UOpPtr gate = both(both(idx->src().size() == 3 ? substitute(idx->src(2), at) : nullptr, p.inside), column_inside(k));
      std::vector<UOpPtr> src{idx->src(0), simplify(substitute(idx->src(1), at))};
      if (gate) src.push_back(simplify(gate));
      UOpPtr value = UOp::alu(Ops::FDIV, {read(row.values[k], tile, end), splat(sum, value_lanes_)});
      UOpPtr st = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, idx->dtype(), std::move(src)), value});
      for (const UOpPtr& s : vectorize_store(st, column_)) out.push_back(s);
    }
    return out;
  }

  UOpPtr store_, att_;
  Target t_;
  UOpPtr keys_, query_, value_pos_;
  std::vector<UOpPtr> lead_;  // batch, heads: the loops other than the query's and the value's
  int64_t axis_ = 0, reg_ = 0;
  int64_t keys_n_ = 1, queries_n_ = 1, values_n_ = 1;
  std::optional<AttentionKeys> seen_;  // the keys each query sees, where a mask shuts some out
  int64_t value_lanes_ = 16;           // the lanes of a vector of value positions
  int64_t chunks_ = 1, vectors_ = 1, rows_ = 1, group_ = 1;
  bool all_inside_ = true;  // every row of every group is a query
  UOpPtr group_loop_, chunk_, first_tile_, first_block_, block_, tile_, lane_, column_;
  Substitution at_tile_;  // each lead loop as the group's position along it
};

}  // namespace

UOpPtr attention_as_one_kernel(const UOpPtr& ast, const Target& target) {
  if (!kernel_info(*ast).builds_own_loops || ast->src().size() != 1 || ast->src(0)->op() != Ops::STORE ||
      ast->src(0)->src(1)->op() != Ops::ATTENTION)
    return ast;
  return FlashKernel(ast, target).build();
}

}  // namespace lathe
