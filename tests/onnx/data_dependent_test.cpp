// Models whose sizes depend on their data (NonMaxSuppression, NonZero, Compress, Unique, TopK with
// a k given at run time): prepared once, each run decides the sizes and compiles nothing, and the
// answers are those of plain loops, empty results included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"
#include "onnx/graph_parts.hpp"

namespace lathe::onnx {
namespace {

// Deterministic values in [0, 1).
std::vector<float> uniform(size_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>(seed >> 40) / static_cast<float>(1ULL << 24);
  }
  return v;
}

// The greedy non-maximum suppression of one batch and class, corner boxes: the kept positions.
std::vector<int64_t> nms_reference(const std::vector<float>& boxes, const float* scores, int64_t n, int64_t max_out, float iou_max,
                                   float min_score) {
  auto area = [&](int64_t i) {
    const float* b = &boxes[static_cast<size_t>(4 * i)];
    return (std::max(b[0], b[2]) - std::min(b[0], b[2])) * (std::max(b[1], b[3]) - std::min(b[1], b[3]));
  };
  auto iou = [&](int64_t i, int64_t j) {
    const float *a = &boxes[static_cast<size_t>(4 * i)], *b = &boxes[static_cast<size_t>(4 * j)];
    double h = std::max(0.0, static_cast<double>(std::min(std::max(a[0], a[2]), std::max(b[0], b[2])) - std::max(std::min(a[0], a[2]), std::min(b[0], b[2]))));
    double w = std::max(0.0, static_cast<double>(std::min(std::max(a[1], a[3]), std::max(b[1], b[3])) - std::max(std::min(a[1], a[3]), std::min(b[1], b[3]))));
    if (area(i) <= 0 || area(j) <= 0) return 0.0;
    return h * w / (area(i) + area(j) - h * w);
  };
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i)
    if (scores[i] > min_score) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  std::vector<int64_t> kept;
  for (int64_t i : order) {
    if (static_cast<int64_t>(kept.size()) >= max_out) break;
    if (std::none_of(kept.begin(), kept.end(), [&](int64_t j) { return iou(i, j) > iou_max; })) kept.push_back(i);
  }
  return kept;
}

// A detector's post-processing: NMS per class, then the kept boxes gathered, their labels, and
// the sum of their coordinates. Prepared once; five images, one with no box above the threshold.
TEST(DataDependentModels, DetectorPostProcessingIsPreparedOnce) {
  const int64_t n = 53, classes = 3, max_out = 7;
  const float iou_max = 0.4f, min_score = 0.55f;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "detector_head");
  add_input(g, "boxes", {1, n, 4});
  add_input(g, "scores", {1, classes, n});
  add_int64s(g, "max_out", {max_out}, {1});
  add_float(g, "iou", iou_max);
  add_float(g, "min_score", min_score);
  add_int64s(g, "zero", {0}, {});
  add_int64s(g, "one", {1}, {});
  add_int64s(g, "two", {2}, {});
  add_node(g, "NonMaxSuppression", {"boxes", "scores", "max_out", "iou", "min_score"}, "selected");
  add_node(g, "Gather", {"selected", "two"}, "box_index");
  set_last_node_int(g, "axis", 1);
  add_node(g, "Gather", {"selected", "one"}, "labels");
  set_last_node_int(g, "axis", 1);
  add_node(g, "Gather", {"boxes", "zero"}, "image_boxes");
  add_node(g, "Gather", {"image_boxes", "box_index"}, "kept_boxes");
  add_node(g, "ReduceSum", {"kept_boxes"}, "total");
  set_last_node_int(g, "keepdims", 0);
  for (const char* out : {"selected", "kept_boxes", "labels", "total"}) add_output(g, out);
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({});
  size_t compiles = kernel_cache_stats().compiles;
  for (uint64_t image = 0; image < 5; ++image) {
    SCOPED_TRACE("image " + std::to_string(image));
    std::vector<float> boxes = uniform(static_cast<size_t>(4 * n), image + 1), scores = uniform(static_cast<size_t>(classes * n), image + 100);
    if (image == 3) std::fill(scores.begin(), scores.end(), 0.1f);  // nothing above the threshold
    std::vector<Tensor> got = pm.run({{"boxes", Tensor::from_vector(boxes, {1, n, 4})}, {"scores", Tensor::from_vector(scores, {1, classes, n})}});
    std::vector<int64_t> want_selected, want_labels;
    std::vector<float> want_boxes;
    float want_total = 0;
    for (int64_t k = 0; k < classes; ++k)
      for (int64_t i : nms_reference(boxes, &scores[static_cast<size_t>(k * n)], n, max_out, iou_max, min_score)) {
        want_selected.insert(want_selected.end(), {0, k, i});
        want_labels.push_back(k);
        for (int c = 0; c < 4; ++c) want_boxes.push_back(boxes[static_cast<size_t>(4 * i + c)]), want_total += boxes[static_cast<size_t>(4 * i + c)];
      }
    auto kept = static_cast<int64_t>(want_labels.size());
    if (image == 3) {
      EXPECT_EQ(kept, 0);
    }
    EXPECT_EQ(got[0].shape(), (Shape{kept, 3}));
    EXPECT_EQ(got[0].to_vector<int64_t>(), want_selected);
    EXPECT_EQ(got[1].shape(), (Shape{kept, 4}));
    EXPECT_EQ(got[1].to_vector<float>(), want_boxes);
    EXPECT_EQ(got[2].to_vector<int64_t>(), want_labels);
    EXPECT_NEAR(got[3].item<float>(), want_total, 1e-4 * (1 + std::fabs(want_total)));
    EXPECT_EQ(kernel_cache_stats().compiles, compiles) << "a run compiled";
  }
}

// NonZero's positions, transposed to one row per element and summed per axis; an input of all
// zeros gives none.
TEST(DataDependentModels, NonZeroFeedsKernelsOfItsSize) {
  const int64_t rows = 4, cols = 7;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "nonzero");
  add_input(g, "x", {rows, cols});
  add_node(g, "NonZero", {"x"}, "where");
  add_node(g, "Transpose", {"where"}, "rows");
  add_node(g, "ReduceSum", {"rows", "zero"}, "sums");
  add_int64s(g, "zero", {0}, {1});
  set_last_node_int(g, "keepdims", 0);
  add_output(g, "rows");
  add_output(g, "sums");
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({});
  size_t compiles = kernel_cache_stats().compiles;
  for (int fill : {0, 1, 2}) {  // some zeros, all zeros, none
    std::vector<float> x = uniform(static_cast<size_t>(rows * cols), static_cast<uint64_t>(fill) + 7);
    for (float& v : x) v = fill == 1 ? 0.0f : fill == 2 ? v + 1 : (v < 0.5f ? 0.0f : v);
    std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {rows, cols})}});
    std::vector<int64_t> want;
    int64_t sums[2] = {0, 0};
    for (int64_t i = 0; i < rows * cols; ++i)
      if (x[static_cast<size_t>(i)] != 0) want.insert(want.end(), {i / cols, i % cols}), sums[0] += i / cols, sums[1] += i % cols;
    EXPECT_EQ(got[0].shape(), (Shape{static_cast<int64_t>(want.size() / 2), 2})) << "fill " << fill;
    EXPECT_EQ(got[0].to_vector<int64_t>(), want);
    EXPECT_EQ(got[1].to_vector<int64_t>(), (std::vector<int64_t>{sums[0], sums[1]}));
  }
  EXPECT_EQ(kernel_cache_stats().compiles, compiles);
}

// TopK with k an input: every k from none to the whole axis from one plan, ties to the lower
// position, as ONNX Runtime.
TEST(DataDependentModels, TopKOfARunTimeK) {
  const int64_t rows = 3, n = 11;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "topk");
  add_input(g, "x", {rows, n});
  add_input(g, "k", {1}, ::onnx::TensorProto::INT64);
  auto* node = g->add_node();
  node->set_op_type("TopK");
  node->set_name("topk");
  for (const char* in : {"x", "k"}) node->add_input(in);
  for (const char* out : {"values", "indices"}) node->add_output(out), add_output(g, out);
  add_node(g, "Add", {"values", "values"}, "twice");
  add_output(g, "twice");
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({});
  size_t compiles = kernel_cache_stats().compiles;
  std::vector<float> x = uniform(static_cast<size_t>(rows * n), 3);
  x[2] = x[5];  // a tie
  for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{4}, n}) {
    std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {rows, n})}, {"k", Tensor::from_vector(std::vector<int64_t>{k})}});
    std::vector<float> want_values, want_twice;
    std::vector<int64_t> want_indices;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      const float* row = &x[static_cast<size_t>(r * n)];
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
      for (int64_t i = 0; i < k; ++i)
        want_indices.push_back(order[static_cast<size_t>(i)]), want_values.push_back(row[order[static_cast<size_t>(i)]]),
            want_twice.push_back(2 * row[order[static_cast<size_t>(i)]]);
    }
    EXPECT_EQ(got[0].shape(), (Shape{rows, k}));
    EXPECT_EQ(got[0].to_vector<float>(), want_values) << "k = " << k;
    EXPECT_EQ(got[1].to_vector<int64_t>(), want_indices) << "k = " << k;
    EXPECT_EQ(got[2].to_vector<float>(), want_twice) << "k = " << k;
  }
  EXPECT_EQ(kernel_cache_stats().compiles, compiles);
  // A k past the axis is an error naming the node, and the plan still serves the next run.
  EXPECT_THROW(pm.run({{"x", Tensor::from_vector(x, {rows, n})}, {"k", Tensor::from_vector(std::vector<int64_t>{n + 1})}}), Error);
  EXPECT_EQ(pm.run({{"x", Tensor::from_vector(x, {rows, n})}, {"k", Tensor::from_vector(std::vector<int64_t>{2})}})[1].shape(), (Shape{rows, 2}));
}

// A boolean mask applied with Compress, then Unique of what is left: two host steps in a row.
TEST(DataDependentModels, CompressThenUnique) {
  const int64_t n = 13;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "mask");
  add_input(g, "x", {n});
  add_input(g, "keep", {n}, ::onnx::TensorProto::BOOL);
  add_node(g, "Compress", {"x", "keep"}, "kept");
  auto* node = g->add_node();
  node->set_op_type("Unique");
  node->set_name("unique");
  node->add_input("kept");
  for (const char* out : {"values", "first", "inverse", "counts"}) node->add_output(out), add_output(g, out);
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({});
  size_t compiles = kernel_cache_stats().compiles;
  for (uint64_t seed : {1, 2, 3}) {
    std::vector<float> x(static_cast<size_t>(n));
    std::vector<float> u = uniform(static_cast<size_t>(2 * n), seed);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::floor(u[i] * 5);  // repeats
    std::vector<uint8_t> keep(static_cast<size_t>(n));
    for (size_t i = 0; i < keep.size(); ++i) keep[i] = seed == 3 ? 0 : u[static_cast<size_t>(n) + i] < 0.6f;
    Buffer kb(dtypes::bool_, static_cast<size_t>(n));
    kb.copyin(keep.data(), keep.size());
    std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {n})}, {"keep", Tensor::from_buffer(kb, {n})}});
    std::vector<float> kept;
    for (size_t i = 0; i < x.size(); ++i)
      if (keep[i]) kept.push_back(x[i]);
    std::vector<float> values = kept;
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    std::vector<int64_t> first, inverse, counts;
    for (float v : values) {
      first.push_back(std::find(kept.begin(), kept.end(), v) - kept.begin());
      counts.push_back(std::count(kept.begin(), kept.end(), v));
    }
    for (float v : kept) inverse.push_back(std::lower_bound(values.begin(), values.end(), v) - values.begin());
    SCOPED_TRACE("seed " + std::to_string(seed));
    EXPECT_EQ(got[0].to_vector<float>(), values);
    EXPECT_EQ(got[1].to_vector<int64_t>(), first);
    EXPECT_EQ(got[2].to_vector<int64_t>(), inverse);
    EXPECT_EQ(got[3].to_vector<int64_t>(), counts);
  }
  EXPECT_EQ(kernel_cache_stats().compiles, compiles);
}

// Sizes read as values: NonZero's count through Shape and Size alone (the step still runs first),
// and the last nonzero position by a negative index along the decided axis.
TEST(DataDependentModels, ADecidedSizeReadAsAValue) {
  const int64_t n = 9;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "count");
  add_input(g, "x", {n});
  add_int64s(g, "minus_one", {-1}, {});
  add_node(g, "NonZero", {"x"}, "where");
  add_node(g, "Size", {"where"}, "count");
  add_node(g, "Shape", {"where"}, "shape");
  add_node(g, "Gather", {"where", "minus_one"}, "last");
  set_last_node_int(g, "axis", 1);
  for (const char* out : {"count", "shape", "last"}) add_output(g, out);
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({});
  for (int seed : {1, 2, 3}) {
    std::vector<float> x = uniform(static_cast<size_t>(n), static_cast<uint64_t>(seed) + 40);
    for (float& v : x) v = v < 0.5f ? 0 : v;
    x[static_cast<size_t>(seed)] = 1;  // at least one nonzero
    std::vector<int64_t> at;
    for (int64_t i = 0; i < n; ++i)
      if (x[static_cast<size_t>(i)] != 0) at.push_back(i);
    std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {n})}});
    auto k = static_cast<int64_t>(at.size());
    EXPECT_EQ(got[0].item<int64_t>(), k) << "seed " << seed;
    EXPECT_EQ(got[1].to_vector<int64_t>(), (std::vector<int64_t>{1, k}));
    EXPECT_EQ(got[2].to_vector<int64_t>(), (std::vector<int64_t>{at.back()}));
  }
}

// Shapes built from a decided size: NonZero's positions flattened by Reshape to -1, widened by
// Expand to three columns, and a ConstantOfShape of that shape added to them.
TEST(DataDependentModels, ReshapeAndExpandOfADecidedSize) {
  const int64_t n = 10;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "shapes");
  add_input(g, "x", {n});
  add_int64s(g, "minus_one", {-1}, {1});
  add_int64s(g, "one", {1}, {1});
  add_int64s(g, "one_three", {1, 3}, {2});
  add_node(g, "NonZero", {"x"}, "where");
  add_node(g, "Reshape", {"where", "minus_one"}, "flat");
  add_node(g, "Unsqueeze", {"flat", "one"}, "column");
  add_node(g, "Expand", {"column", "one_three"}, "wide");
  add_node(g, "Shape", {"wide"}, "wide_shape");
  add_node(g, "ConstantOfShape", {"wide_shape"}, "zeros");
  set_last_node_int64_value(g, 5);
  add_node(g, "Add", {"wide", "zeros"}, "plus_five");
  add_output(g, "plus_five");
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({});
  size_t compiles = kernel_cache_stats().compiles;
  for (uint64_t seed : {5, 6, 7}) {
    std::vector<float> x = uniform(static_cast<size_t>(n), seed);
    for (float& v : x) v = v < 0.5f ? 0 : v;
    if (seed == 7) std::fill(x.begin(), x.end(), 0.0f);
    std::vector<int64_t> want;
    for (int64_t i = 0; i < n; ++i)
      if (x[static_cast<size_t>(i)] != 0) want.insert(want.end(), {i + 5, i + 5, i + 5});
    Tensor got = pm.run({{"x", Tensor::from_vector(x, {n})}})[0];
    EXPECT_EQ(got.shape(), (Shape{static_cast<int64_t>(want.size() / 3), 3})) << "seed " << seed;
    EXPECT_EQ(got.to_vector<int64_t>(), want) << "seed " << seed;
  }
  EXPECT_EQ(kernel_cache_stats().compiles, compiles);
}

// A decided size used only as a size: ones of NonZero's shape (a ConstantOfShape reads the count
// as its size, not as data), then NonZero of those. The first step is no data source of the second,
// and still runs before it, every run.
TEST(DataDependentModels, ASizeUsedOnlyAsASizeRunsItsStepFirst) {
  const int64_t n = 9;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "size_only");
  add_input(g, "x", {n});
  add_node(g, "NonZero", {"x"}, "where");
  add_node(g, "Shape", {"where"}, "where_shape");
  add_node(g, "ConstantOfShape", {"where_shape"}, "ones");
  set_last_node_int64_value(g, 1);
  add_node(g, "NonZero", {"ones"}, "again");
  add_output(g, "again");
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({});
  for (uint64_t seed : {11, 12, 13, 11}) {
    std::vector<float> x = uniform(static_cast<size_t>(n), seed);
    for (float& v : x) v = v < 0.5f ? 0 : v;
    int64_t k = 0;
    for (float v : x) k += v != 0;
    std::vector<int64_t> want;  // (2, k): rows 0, then 0..k-1
    for (int64_t i = 0; i < k; ++i) want.push_back(0);
    for (int64_t i = 0; i < k; ++i) want.push_back(i);
    Tensor got = pm.run({{"x", Tensor::from_vector(x, {n})}})[0];
    EXPECT_EQ(got.shape(), (Shape{2, k})) << "seed " << seed;
    EXPECT_EQ(got.to_vector<int64_t>(), want) << "seed " << seed;
  }
}

// ScatterElements over a decided size (on the host): NonZero's positions spread over three
// columns, scattered in reverse column order into zeros of their shape.
TEST(DataDependentModels, ScatterElementsOverADecidedSize) {
  const int64_t n = 11;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "scatter");
  add_input(g, "x", {n});
  add_int64s(g, "three", {1, 3}, {2});
  add_int64s(g, "reversed", {2, 1, 0}, {1, 3});
  add_int64s(g, "steps", {0, 10, 20}, {1, 3});
  add_node(g, "NonZero", {"x"}, "where");
  add_node(g, "Transpose", {"where"}, "rows");
  add_node(g, "Expand", {"rows", "three"}, "wide");
  add_node(g, "Add", {"wide", "steps"}, "updates");
  add_node(g, "Shape", {"wide"}, "wide_shape");
  add_node(g, "ConstantOfShape", {"wide_shape"}, "zeros");
  set_last_node_int64_value(g, 0);
  add_node(g, "Expand", {"reversed", "wide_shape"}, "indices");
  add_node(g, "ScatterElements", {"zeros", "indices", "updates"}, "scattered");
  set_last_node_int(g, "axis", 1);
  add_output(g, "scattered");
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({});
  for (uint64_t seed : {8, 9}) {
    std::vector<float> x = uniform(static_cast<size_t>(n), seed);
    for (float& v : x) v = v < 0.5f ? 0 : v;
    std::vector<int64_t> want;
    for (int64_t i = 0; i < n; ++i)
      if (x[static_cast<size_t>(i)] != 0) want.insert(want.end(), {i + 20, i + 10, i});
    Tensor got = pm.run({{"x", Tensor::from_vector(x, {n})}})[0];
    EXPECT_EQ(got.shape(), (Shape{static_cast<int64_t>(want.size() / 3), 3})) << "seed " << seed;
    EXPECT_EQ(got.to_vector<int64_t>(), want) << "seed " << seed;
  }
}

// ScatterElements of whole rows over a decided count (a detector merging its pyramid levels'
// regions): to distinct rows counted from the end (moved across threads), and to rows two kept
// positions share (in order: the last one wins); the rows nothing lands on keep the data.
TEST(DataDependentModels, ScatterElementsMovesWholeRowsLastOneWins) {
  const int64_t n = 13;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "scatter_rows");
  add_input(g, "x", {n});
  add_int64s(g, "three", {1, 3}, {2});
  add_int64s(g, "steps", {0, 10, 20}, {1, 3});
  add_int64s(g, "data_shape", {n, 3}, {2});
  add_int64s(g, "one", {1}, {});
  add_int64s(g, "two", {2}, {});
  add_node(g, "NonZero", {"x"}, "where");
  add_node(g, "Transpose", {"where"}, "rows");
  add_node(g, "Expand", {"rows", "three"}, "wide");
  add_node(g, "Add", {"wide", "steps"}, "updates");
  add_node(g, "Shape", {"wide"}, "wide_shape");
  add_node(g, "ConstantOfShape", {"data_shape"}, "data");
  set_last_node_int64_value(g, 7);
  add_node(g, "Neg", {"rows"}, "negated");
  add_node(g, "Sub", {"negated", "one"}, "from_end");
  add_node(g, "Expand", {"from_end", "wide_shape"}, "distinct");
  add_node(g, "ScatterElements", {"data", "distinct", "updates"}, "reversed");
  add_node(g, "Mod", {"rows", "two"}, "parity");
  add_node(g, "Expand", {"parity", "wide_shape"}, "shared");
  add_node(g, "ScatterElements", {"data", "shared", "updates"}, "last_wins");
  add_output(g, "reversed");
  add_output(g, "last_wins");
  Model m = model_of(proto);
  for (int threads : {1, 2}) {
    PreparedModel pm = m.prepare({}, {.threads = threads});
    for (uint64_t seed : {3, 4, 5}) {
      std::vector<float> x = uniform(static_cast<size_t>(n), seed);
      for (float& v : x) v = v < 0.5f ? 0 : v;
      if (seed == 5) std::fill(x.begin(), x.end(), 0.0f);  // nothing kept: the data as it was
      std::vector<int64_t> reversed(static_cast<size_t>(3 * n), 7), last_wins = reversed;
      for (int64_t p = 0; p < n; ++p)
        if (x[static_cast<size_t>(p)] != 0)
          for (int64_t c = 0; c < 3; ++c) {
            reversed[static_cast<size_t>(3 * (n - 1 - p) + c)] = p + 10 * c;
            last_wins[static_cast<size_t>(3 * (p % 2) + c)] = p + 10 * c;
          }
      std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {n})}});
      EXPECT_EQ(got[0].to_vector<int64_t>(), reversed) << threads << " threads, seed " << seed;
      EXPECT_EQ(got[1].to_vector<int64_t>(), last_wins) << threads << " threads, seed " << seed;
    }
  }
}

// Range up to a count decided as the plan runs (torch.arange over the kept boxes): one plan, the
// values of plain loops at every count, none included; with a step of 3 from 2 as well.
TEST(DataDependentModels, RangeUpToADecidedCount) {
  const int64_t n = 17;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "range");
  add_input(g, "x", {n});
  add_int64s(g, "zero", {0}, {});
  add_int64s(g, "one", {1}, {});
  add_int64s(g, "two", {2}, {});
  add_int64s(g, "three", {3}, {});
  add_node(g, "NonZero", {"x"}, "where");
  add_node(g, "Shape", {"where"}, "where_shape");
  add_node(g, "Gather", {"where_shape", "one"}, "kept");
  add_node(g, "Range", {"zero", "kept", "one"}, "positions");
  add_node(g, "Range", {"two", "kept", "three"}, "stepped");
  add_output(g, "positions");
  add_output(g, "stepped");
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({});
  EXPECT_EQ(pm.rebuilds_because(), "");
  size_t compiles = 0;
  for (int64_t keep : {5, 0, 17, 2, 9}) {
    std::vector<float> x(static_cast<size_t>(n), 0.0f);
    for (int64_t i = 0; i < keep; ++i) x[static_cast<size_t>((i * 7) % n)] = 1.0f;
    std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {n})}});
    if (keep == 5) compiles = kernel_cache_stats().compiles;
    std::vector<int64_t> positions, stepped;
    for (int64_t i = 0; i < keep; ++i) positions.push_back(i);
    for (int64_t i = 2; i < keep; i += 3) stepped.push_back(i);
    EXPECT_EQ(got[0].to_vector<int64_t>(), positions) << keep << " kept";
    EXPECT_EQ(got[1].to_vector<int64_t>(), stepped) << keep << " kept";
  }
  EXPECT_EQ(kernel_cache_stats().compiles, compiles) << "a run after the first compiled";
}

// Tile by a count decided as the plan runs, and Tile of a tensor of decided size: one plan, plain
// loops' values at every count, none included.
TEST(DataDependentModels, TileByAndOfADecidedCount) {
  const int64_t n = 11;
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "tile");
  add_input(g, "x", {n});
  add_input(g, "row", {3}, ::onnx::TensorProto::INT64);
  add_int64s(g, "one", {1}, {});
  add_int64s(g, "two", {2}, {1});
  add_node(g, "NonZero", {"x"}, "where");
  add_node(g, "Shape", {"where"}, "where_shape");
  add_node(g, "Gather", {"where_shape", "one"}, "kept");
  add_node(g, "Unsqueeze", {"kept", "zero_axis"}, "kept_1d");
  add_int64s(g, "zero_axis", {0}, {1});
  add_node(g, "Tile", {"row", "kept_1d"}, "rows");
  add_node(g, "Reshape", {"where", "minus_one"}, "positions");
  add_int64s(g, "minus_one", {-1}, {1});
  add_node(g, "Tile", {"positions", "two"}, "twice");
  add_output(g, "rows");
  add_output(g, "twice");
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({});
  EXPECT_EQ(pm.rebuilds_because(), "");
  std::vector<int64_t> row = {4, -1, 9};
  size_t compiles = 0;
  for (int64_t keep : {3, 0, 11, 1}) {
    std::vector<float> x(static_cast<size_t>(n), 0.0f);
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < keep; ++i) x[static_cast<size_t>((i * 4) % n)] = 1.0f;
    for (int64_t i = 0; i < n; ++i)
      if (x[static_cast<size_t>(i)] != 0) kept.push_back(i);
    std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {n})}, {"row", Tensor::from_vector(row, {3})}});
    if (keep == 3) compiles = kernel_cache_stats().compiles;
    std::vector<int64_t> rows, twice = kept;
    for (int64_t i = 0; i < keep; ++i) rows.insert(rows.end(), row.begin(), row.end());
    twice.insert(twice.end(), kept.begin(), kept.end());
    EXPECT_EQ(got[0].to_vector<int64_t>(), rows) << keep << " kept";
    EXPECT_EQ(got[1].to_vector<int64_t>(), twice) << keep << " kept";
  }
  EXPECT_EQ(kernel_cache_stats().compiles, compiles) << "a run after the first compiled";
}

// A model prepared for a range of batch sizes whose post-processing is data dependent: both kinds
// of size in one plan.
TEST(DataDependentModels, ARangeOfBatchesAndADataDependentSize) {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "batched_nonzero");
  auto* in = g->add_input();
  in->set_name("x");
  auto* t = in->mutable_type()->mutable_tensor_type();
  t->set_elem_type(::onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("batch");
  t->mutable_shape()->add_dim()->set_dim_value(5);
  add_node(g, "NonZero", {"x"}, "where");
  add_output(g, "where");
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({{"batch", 6}});
  size_t compiles = kernel_cache_stats().compiles;
  for (int64_t batch : {6, 1, 4}) {
    std::vector<float> x = uniform(static_cast<size_t>(batch * 5), static_cast<uint64_t>(batch));
    for (float& v : x) v = v < 0.4f ? 0 : v;
    std::vector<int64_t> rows, cols;
    for (int64_t i = 0; i < batch * 5; ++i)
      if (x[static_cast<size_t>(i)] != 0) rows.push_back(i / 5), cols.push_back(i % 5);
    rows.insert(rows.end(), cols.begin(), cols.end());
    Tensor got = pm.run({{"x", Tensor::from_vector(x, {batch, 5})}})[0];
    EXPECT_EQ(got.shape(), (Shape{2, static_cast<int64_t>(cols.size())})) << "batch " << batch;
    EXPECT_EQ(got.to_vector<int64_t>(), rows) << "batch " << batch;
  }
  EXPECT_EQ(kernel_cache_stats().compiles, compiles);
}

// RoiAlign by the ONNX definition (half_pixel coordinates): each bin the average, or the largest
// weighted corner as ONNX Runtime takes it, of a grid of bilinear samples; samples more than a
// pixel outside the map count 0.
std::vector<double> roi_align_reference(const std::vector<float>& x, const Shape& xs, const std::vector<float>& rois, const std::vector<int64_t>& batch,
                                        int64_t oh, int64_t ow, int64_t ratio, double scale, bool max_mode) {
  int64_t ch = xs[1], h = xs[2], w = xs[3], r = static_cast<int64_t>(batch.size());
  std::vector<double> out;
  for (int64_t k = 0; k < r; ++k) {
    double x0 = rois[static_cast<size_t>(4 * k)] * scale - 0.5, y0 = rois[static_cast<size_t>(4 * k + 1)] * scale - 0.5;
    double rw = rois[static_cast<size_t>(4 * k + 2)] * scale - 0.5 - x0, rh = rois[static_cast<size_t>(4 * k + 3)] * scale - 0.5 - y0;
    double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    int64_t gh = ratio > 0 ? ratio : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(rh / static_cast<double>(oh))));
    int64_t gw = ratio > 0 ? ratio : std::max<int64_t>(1, static_cast<int64_t>(std::ceil(rw / static_cast<double>(ow))));
    for (int64_t c = 0; c < ch; ++c)
      for (int64_t py = 0; py < oh; ++py)
        for (int64_t px = 0; px < ow; ++px) {
          double acc = max_mode ? -INFINITY : 0.0;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double yy = y0 + static_cast<double>(py) * bh + (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
              double xx = x0 + static_cast<double>(px) * bw + (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
              if (yy < -1 || yy > static_cast<double>(h) || xx < -1 || xx > static_cast<double>(w)) {
                acc = max_mode ? std::max(acc, 0.0) : acc;
                continue;
              }
              yy = std::min(std::max(yy, 0.0), static_cast<double>(h - 1)), xx = std::min(std::max(xx, 0.0), static_cast<double>(w - 1));
              auto y_lo = static_cast<int64_t>(yy), x_lo = static_cast<int64_t>(xx);
              int64_t y_hi = std::min(y_lo + 1, h - 1), x_hi = std::min(x_lo + 1, w - 1);
              double ly = yy - static_cast<double>(y_lo), lx = xx - static_cast<double>(x_lo);
              auto at = [&](int64_t yi, int64_t xi) { return static_cast<double>(x[static_cast<size_t>(((batch[static_cast<size_t>(k)] * ch + c) * h + yi) * w + xi)]); };
              double corners[4] = {(1 - ly) * (1 - lx) * at(y_lo, x_lo), (1 - ly) * lx * at(y_lo, x_hi), ly * (1 - lx) * at(y_hi, x_lo), ly * lx * at(y_hi, x_hi)};
              if (max_mode) acc = std::max({acc, corners[0], corners[1], corners[2], corners[3]});
              else acc += corners[0] + corners[1] + corners[2] + corners[3];
            }
          out.push_back(max_mode ? acc : acc / static_cast<double>(gh * gw));
        }
  }
  return out;
}

// Regions inside the map, across its edge, wholly outside it, smaller than a pixel and larger than
// the map, on both images; float32 and float64 maps; on one thread and split across two
// (the regions are the step's pieces): every bin as plain loops compute it.
TEST(DataDependentModels, RoiAlignPoolsEachRegionAsPlainLoops) {
  const Shape xs{2, 3, 9, 11};
  const int64_t oh = 3, ow = 4;
  std::vector<float> x = uniform(static_cast<size_t>(2 * 3 * 9 * 11), 41);
  std::vector<float> rois = {2, 2, 12, 10,  -6, -4, 5, 7,  30, 30, 40, 36,  4.2f, 4.1f, 4.6f, 4.3f,  -10, -10, 40, 40,  0, 0, 22, 18};
  std::vector<int64_t> batch = {0, 1, 0, 1, 0, 1};
  for (int elem : {::onnx::TensorProto::FLOAT, ::onnx::TensorProto::DOUBLE})
    for (const char* mode : {"avg", "max"})
      for (int64_t ratio : {int64_t{0}, int64_t{2}, int64_t{40}}) {  // 40: 1600 samples a bin, bins in chunks
        SCOPED_TRACE(std::string(mode) + (elem == ::onnx::TensorProto::FLOAT ? " float32" : " float64") + ", sampling_ratio " + std::to_string(ratio));
        ::onnx::ModelProto proto;
        ::onnx::GraphProto* g = start_graph(proto, "roi_align");
        add_input(g, "x", xs, elem);
        add_input(g, "rois", {6, 4}, elem);
        add_input(g, "batch", {6}, ::onnx::TensorProto::INT64);
        add_node(g, "RoiAlign", {"x", "rois", "batch"}, "y");
        set_last_node_int(g, "output_height", oh);
        set_last_node_int(g, "output_width", ow);
        set_last_node_int(g, "sampling_ratio", ratio);
        auto* m = g->mutable_node(0)->add_attribute();
        m->set_name("mode"), m->set_type(::onnx::AttributeProto::STRING), m->set_s(mode);
        auto* sc = g->mutable_node(0)->add_attribute();
        sc->set_name("spatial_scale"), sc->set_type(::onnx::AttributeProto::FLOAT), sc->set_f(0.5f);
        add_output(g, "y");
        std::vector<double> want = roi_align_reference(x, xs, rois, batch, oh, ow, ratio, 0.5, std::string(mode) == "max");
        Model model = model_of(proto);
        for (int threads : {1, 2}) {
          PreparedModel pm = model.prepare({}, {.threads = threads});
          Tensor xt = Tensor::from_vector(x, xs), rt = Tensor::from_vector(rois, {6, 4});
          if (elem == ::onnx::TensorProto::DOUBLE) xt = xt.cast(dtypes::float64), rt = rt.cast(dtypes::float64);
          Tensor got = pm.run({{"x", xt}, {"rois", rt}, {"batch", Tensor::from_vector(batch, {6})}})[0];
          ASSERT_EQ(got.shape(), (Shape{6, 3, oh, ow}));
          std::vector<double> v = got.cast(dtypes::float64).to_vector<double>();
          for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(v[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << threads << " threads, bin " << i;
        }
      }
}

}  // namespace
}  // namespace lathe::onnx
