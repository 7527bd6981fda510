// Attention as PyTorch exports it (MatMul -> Div -> Add -> Where -> Softmax -> MatMul), imported
// node by node: the Tensor graph's attention rule runs it a block of queries at a time when its
// scores are large and no mask known at build time lets one attention kernel skip keys
// (onnx/attention_mask_test), with the values of plain loops and without the whole score matrix
// in the plan.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"
#include "onnx/graph_parts.hpp"
#include "onnx/onnx_include.hpp"
#include "tensor/reference.hpp"

namespace lathe::onnx {
namespace {

// softmax(where(allowed, q kt / scale + padding, -inf)) v over (1, heads, queries, keys) scores:
// `padding` is (1, 1, 1, keys), one row for every query; `allowed` is (queries, keys), a row each.
// With `wide`, every float is a double.
std::string attention_model(int64_t heads, int64_t queries, int64_t keys, int64_t d, int64_t dv, bool wide = false) {
  ::onnx::ModelProto m;
  ::onnx::GraphProto* g = start_graph(m, "attention");
  int type = wide ? ::onnx::TensorProto::DOUBLE : ::onnx::TensorProto::FLOAT;
  add_input(g, "q", {1, heads, queries, d}, type);
  add_input(g, "kt", {1, heads, d, keys}, type);
  add_input(g, "v", {1, heads, keys, dv}, type);
  add_input(g, "padding", {1, 1, 1, keys}, type);
  add_input(g, "allowed", {queries, keys}, ::onnx::TensorProto::BOOL);
  for (auto [name, value] : {std::pair{"scale", std::sqrt(static_cast<double>(d))}, std::pair{"lowest", -std::numeric_limits<double>::infinity()}}) {
    ::onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    if (wide) t->add_double_data(value);
    else t->add_float_data(static_cast<float>(value));
  }
  add_node(g, "MatMul", {"q", "kt"}, "qk");
  add_node(g, "Div", {"qk", "scale"}, "scaled");
  add_node(g, "Add", {"scaled", "padding"}, "padded");
  add_node(g, "Where", {"allowed", "padded", "lowest"}, "masked");
  add_node(g, "Softmax", {"masked"}, "probs");
  set_last_node_int(g, "axis", -1);
  add_node(g, "MatMul", {"probs", "v"}, "out");
  g->add_output()->set_name("out");
  return m.SerializeAsString();
}

// 2 heads x 1500 x 1500 scores are 18 MB in float32 (blocks of 1376 queries and 124) and 36 MB
// in float64 (blocks of 672 and 156): with masks given as inputs (no key the kernel could skip),
// query blocks with each operand's rows, not one attention kernel.
TEST(OnnxLongAttention, LargeScoresRunInQueryBlocksWithEachOperandsRows) {
  const int64_t heads = 2, queries = 1500, keys = 1500, d = 4, dv = 3;
  std::vector<float> q = test::data(static_cast<size_t>(heads * queries * d), 1, -0.8, 0.8);
  std::vector<float> kt = test::data(static_cast<size_t>(heads * d * keys), 2, -0.8, 0.8);
  std::vector<float> v = test::data(static_cast<size_t>(heads * keys * dv), 3, -0.8, 0.8);
  std::vector<float> padding(static_cast<size_t>(keys), 0.0f);
  for (int64_t j = keys - 7; j < keys; ++j) padding[static_cast<size_t>(j)] = -1e4f;
  std::vector<uint8_t> allowed(static_cast<size_t>(queries * keys));
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j) allowed[static_cast<size_t>(i * keys + j)] = (i + 2 * j) % 5 != 0 || j == 0;
  std::vector<double> want;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < queries; ++i) {
      std::vector<double> row = test::attention_row(
          &q[static_cast<size_t>((h * queries + i) * d)], keys, d, dv,
          [&](int64_t j, int64_t c) { return kt[static_cast<size_t>((h * d + c) * keys + j)]; },
          [&](int64_t j, int64_t e) { return v[static_cast<size_t>((h * keys + j) * dv + e)]; },
          [&](int64_t j, double x) {
            return allowed[static_cast<size_t>(i * keys + j)] ? x + padding[static_cast<size_t>(j)] : -std::numeric_limits<double>::infinity();
          });
      want.insert(want.end(), row.begin(), row.end());
    }
  for (bool wide : {false, true}) {
    auto given = [&](const std::vector<float>& x, Shape shape) {
      Tensor t = Tensor::from_vector(x, std::move(shape));
      return wide ? t.cast(dtypes::float64) : t;
    };
    Model model = Model::from_bytes(attention_model(heads, queries, keys, d, dv, wide));
    std::vector<Tensor> outs = model.build({{"q", given(q, {1, heads, queries, d})},
                                            {"kt", given(kt, {1, heads, d, keys})},
                                            {"v", given(v, {1, heads, keys, dv})},
                                            {"padding", given(padding, {1, 1, 1, keys})},
                                            {"allowed", Tensor::from_vector(std::vector<bool>(allowed.begin(), allowed.end()), {queries, keys})}});
    ASSERT_EQ(outs.size(), 1u);
    EXPECT_EQ(outs[0].shape(), (Shape{1, heads, queries, dv}));
    ExecutionPlan plan = outs[0].prepare();
    for (const Buffer& b : plan.buffers()) EXPECT_LT(b.nbytes(), static_cast<size_t>(heads * queries * keys * 4));  // no whole score matrix
    size_t attention = 0, kernels = plan.prepared_kernels().size();
    for (const PreparedKernel* k : plan.prepared_kernels()) attention += kernel_info(*k->ast).builds_own_loops;
    EXPECT_EQ(attention, 0u);
    EXPECT_GT(kernels, 4u) << "a few kernels per block of queries";
    plan.execute();
    std::vector<float> got = Tensor::from_buffer(*plan.output_buffer(), outs[0].shape()).cast(dtypes::float32).to_vector<float>();
    EXPECT_ALLCLOSE(got, want, 1e-4, 1e-5) << (wide ? "float64" : "float32");
  }
}

}  // namespace
}  // namespace lathe::onnx
