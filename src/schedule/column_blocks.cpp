#include "schedule/column_blocks.hpp"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "ir/label.hpp"
#include "ir/substitute.hpp"
#include "ir/toposort.hpp"
#include "schedule/blocks.hpp"
#include "schedule/operand_view.hpp"
#include "schedule/reader_layout.hpp"
#include "schedule/shape.hpp"

namespace lathe {
namespace {

// Whether `u` is a view of a layout copy: a copy already made for a reader.
bool views_a_layout_copy(UOpPtr u) {
  while (op_has(u->op(), kMovement)) u = u->src(0);
  return is_layout_copy(*u);
}

// A product's operand stored in column blocks: which of the two, its view, the product's axis
// its columns run along, and the block.
struct Blocked {
  size_t operand;
  OperandView view;
  int64_t column;
  int64_t block;
  std::vector<int64_t> summed;  // the product's axes its sum reduces
};

// Whether `u` is a buffer seen through reshapes: a stored value, as a model's weight.
bool stored_value(UOpPtr u) {
  while (u->op() == Ops::RESHAPE && u->src().size() == 1) u = u->src(0);
  return u->op() == Ops::BUFFER;
}

class Rule {
 public:
  Rule(const std::vector<UOpPtr>& outputs, const Target& target, const IsConstantBuffer& constant,
       const ColumnBlockPrices& prices, Rebuilt* rebuilt)
      : outputs_(outputs),
        sink_(UOp::make(Ops::SINK, dtypes::void_, outputs)),
        shapes_(graph_shapes(sink_)),
        blocks_(blocks_for(target)),
        constant_(constant),
        prices_(prices),
        rebuilt_(rebuilt) {}

  // `outputs` with each product's operand the prices accept read from its copy in blocks, built
  // over its base as rebuilt.
  std::vector<UOpPtr> run() {
    if (blocks_.lanes == 0) return outputs_;
    std::unordered_map<const UOp*, Blocked> blocked;  // by the MUL
    for (const UOpPtr& u : toposort(sink_))
      if (const UOp* product = product_summed(*u))
        if (std::optional<Blocked> w = columns_operand(*u, *product)) blocked.emplace(product, std::move(*w));
    if (blocked.empty()) return outputs_;
    return rebuild(outputs_, [&](const UOp& reader, const UOpPtr& source, const UOpPtr& source_now) {
      auto it = blocked.find(&reader);
      if (it == blocked.end() || reader.src(it->second.operand) != source) return source_now;
      return read_from_blocks(it->second, reader, now_of(it->second.view.base, source, source_now));
    }, rebuilt_);
  }

 private:

  // The operand of `product`, which the sum `u` reduces, whose columns are stored in blocks, where
  // the prices accept it. Two forms: a matrix product sums over the last axis only, and its
  // columns are the axis before it; a filter (a convolution) sums over several axes, and its
  // columns are the one kept axis that the operand reads and the other does not (the output
  // channels). A sum over one axis that is not the last (Winograd's products per point) is neither.
  std::optional<Blocked> columns_operand(const UOp& u, const UOp& product) {
    const Shape& ps = shapes_.at(&product);
    int64_t rank = static_cast<int64_t>(ps.size());
    const std::vector<int64_t>& summed = u.arg_as<ReduceArg>().axes;
    bool matrix = summed == std::vector<int64_t>{rank - 1};
    if (rank < 2 || (!matrix && summed.size() < 2)) return std::nullopt;
    OperandView views[2] = {view_of(product.src(0), shapes_), view_of(product.src(1), shapes_)};
    for (size_t i = 0; i < 2; ++i) {
      OperandView& w = views[i];
      if (w.steps.empty()) continue;
      std::optional<int64_t> column = matrix ? matrix_columns(w, views[1 - i], rank) : filter_columns(w, views[1 - i], summed, rank);
      if (!column) continue;
      int64_t block = matrix ? matrix_block(w, ps) : filter_block(w, ps, *column, summed);
      if (block && !views_a_layout_copy(w.base) && !has_variables(w.base, variables_))
        return Blocked{i, std::move(w), *column, block, summed};
    }
    return std::nullopt;
  }

  // A matrix product's columns: the axis before the summed last one, read by w and not by x.
  static std::optional<int64_t> matrix_columns(const OperandView& w, const OperandView& x, int64_t rank) {
    if (!reads(w, rank - 1) || !reads(w, rank - 2) || reads(x, rank - 2)) return std::nullopt;
    return rank - 2;
  }

  // A matrix product's block (0: not stored in blocks), by ColumnBlockPrices.
  int64_t matrix_block(const OperandView& w, const Shape& product) {
    int64_t k = product.back(), n = product[product.size() - 2];
    int64_t blk = blocks_.stored(n);
    if (blk == 0 || k < prices_.reduction || n < prices_.columns) return 0;
    int64_t work = shape_numel(product);
    int64_t batch = shape_numel(shapes_.at(w.base.get())) / (k * n);  // w's own matrices: one copy each
    int64_t rows = work / (k * n * std::max<int64_t>(batch, 1));      // the rows of x that meet one of them
    if (rows < prices_.constant_rows || work < prices_.most_work) return 0;
    // Asked last, memoised: it visits w's graph, which for an activation is the model so far.
    return rows >= prices_.rows || made_of_constants(w.base, constant_, constants_) ? blk : 0;
  }

  // A filter's block (0: not stored in blocks): where each output pixel's group takes enough
  // multiply-adds, or the filter is a stored value with a few columns (with OIHW, a 3-channel stem
  // or a group of 8 channels has no loop that both its weight and its output read in order, and
  // runs scalar: 35x slower). The block is Blocks::stored of the columns, or all of them.
  int64_t filter_block(const OperandView& w, const Shape& product, int64_t column, const std::vector<int64_t>& summed) const {
    int64_t columns = product[static_cast<size_t>(column)], work = columns;
    for (int64_t a : summed)
      if (reads(w, a)) work *= product[static_cast<size_t>(a)];
    bool worth = (work >= prices_.filter_work && columns > 1) || (columns >= prices_.stored_filter_columns && stored_value(w.base));
    if (!worth) return 0;
    int64_t blk = blocks_.stored(columns);
    return blk ? blk : columns;
  }

  // The operand `b.view` of `product` reading `base_now` (its base as rebuilt) from a copy in
  // column blocks, its axes in the product's order with the block index before the first summed
  // one; the copy labelled as the product is (the kernel that makes it is named for it).
  UOpPtr read_from_blocks(const Blocked& b, const UOp& product, const UOpPtr& base_now) const {
    const OperandView& w = b.view;
    const Shape& s = shapes_.at(w.base.get());
    const std::vector<int64_t>& summed = b.summed;
    std::vector<size_t> order(s.size());
    for (size_t a = 0; a < s.size(); ++a) order[a] = a;
    std::stable_sort(order.begin(), order.end(), [&](size_t p, size_t q) { return w.axis_in_product[p] < w.axis_in_product[q]; });
    size_t n_at = 0;
    for (size_t a = 0; a < s.size(); ++a)
      if (w.axis_in_product[a] == b.column) n_at = a;
    order.erase(std::find(order.begin(), order.end(), n_at));
    auto first_summed = std::find_if(order.begin(), order.end(), [&](size_t a) {
      return std::find(summed.begin(), summed.end(), w.axis_in_product[a]) != summed.end();
    });
    order.insert(first_summed, n_at);
    UOpPtr v = stored_in_blocks(base_now, s, n_at, order, b.block, labels_of(product));
    for (auto it = w.steps.rbegin(); it != w.steps.rend(); ++it) v = rebuilt_over(**it, v);
    return v;
  }

  // The base as rebuilt: the steps between the operand and its base were rebuilt over it, so it
  // is as many sources down from the operand as rebuilt.
  static UOpPtr now_of(const UOpPtr& base, const UOpPtr& source, const UOpPtr& source_now) {
    UOpPtr cur = source_now;
    for (UOpPtr old = source; old != base; old = old->src(0)) cur = cur->src(0);
    return cur;
  }

  std::vector<UOpPtr> outputs_;
  UOpPtr sink_;
  std::unordered_map<const UOp*, Shape> shapes_;
  Blocks blocks_;
  IsConstantBuffer constant_;
  ColumnBlockPrices prices_;
  std::unordered_map<const UOp*, bool> constants_, variables_;
  Rebuilt* rebuilt_;
};

}  // namespace

std::vector<UOpPtr> store_columns_in_blocks(const std::vector<UOpPtr>& outputs, const Target& target,
                                            const IsConstantBuffer& constant, const ColumnBlockPrices& prices,
                                            Rebuilt* rebuilt) {
  return Rule(outputs, target, constant, prices, rebuilt).run();
}

}  // namespace lathe
