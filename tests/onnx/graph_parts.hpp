// Pieces of small ONNX graphs built in the tests node by node: a typed input, a node, and
// deterministic values to feed them.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "lathe/onnx.hpp"
#include "onnx/onnx_include.hpp"

namespace lathe::onnx {

// A graph input of `elem_type` (float unless told) and a static shape.
inline void add_input(::onnx::GraphProto* g, const std::string& name, const Shape& shape, int elem_type = ::onnx::TensorProto::FLOAT) {
  auto* v = g->add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
}

// A node `op` over `ins` making `out` (named after it).
inline void add_node(::onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& ins, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out + "_node");
  for (const std::string& in : ins) n->add_input(in);
  n->add_output(out);
}

// n values in [-0.8, 0.8], different for each seed.
inline std::vector<float> wave_values(int64_t n, int seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + seed)) * 0.8f;
  return v;
}

}  // namespace lathe::onnx
