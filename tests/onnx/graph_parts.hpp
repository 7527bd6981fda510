// Pieces of small ONNX graphs built in the tests node by node: the model, typed inputs, scalar
// initializers, nodes and an attribute.
#pragma once

#include <cctype>
#include <string>
#include <vector>

#include "lathe/onnx.hpp"
#include "onnx/onnx_include.hpp"

namespace lathe::onnx {

// The model `m` as lathe loads it.
inline Model model_of(const ::onnx::ModelProto& m) {
  std::string bytes;
  m.SerializeToString(&bytes);
  return Model::from_bytes(bytes);
}

// The graph of `m`, an opset-17 model, named `name`.
inline ::onnx::GraphProto* start_graph(::onnx::ModelProto& m, const std::string& name) {
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  ::onnx::GraphProto* g = m.mutable_graph();
  g->set_name(name);
  return g;
}

// A float scalar initializer.
inline void add_float(::onnx::GraphProto* g, const std::string& name, float value) {
  ::onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::FLOAT);
  t->add_float_data(value);
}

// An int64 initializer of `shape` (a scalar when empty and one value is given).
inline void add_int64s(::onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values, const Shape& shape) {
  ::onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(::onnx::TensorProto::INT64);
  for (int64_t d : shape) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

// An integer attribute of the graph's last node (Softmax's axis).
inline void set_last_node_int(::onnx::GraphProto* g, const std::string& name, int64_t value) {
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(value);
}

// The int64 `value` attribute of the graph's last node (ConstantOfShape's fill).
inline void set_last_node_int64_value(::onnx::GraphProto* g, int64_t v) {
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name("value");
  a->set_type(::onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(::onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_int64_data(v);
}

// A graph input of `elem_type` (float unless told) and a static shape.
inline void add_input(::onnx::GraphProto* g, const std::string& name, const Shape& shape, int elem_type = ::onnx::TensorProto::FLOAT) {
  auto* v = g->add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
}

// A graph input whose sizes are numbers or names (dim_param), as {"n", "3"}.
inline void add_sized_input(::onnx::GraphProto* g, const std::string& name, const std::vector<std::string>& dims,
                            int elem_type = ::onnx::TensorProto::FLOAT) {
  auto* t = g->add_input();
  t->set_name(name);
  auto* tt = t->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  for (const std::string& d : dims) {
    auto* dim = tt->mutable_shape()->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

// The graph attribute `name` of the graph's last node (Loop's body).
inline void set_last_node_graph(::onnx::GraphProto* g, const std::string& name, const ::onnx::GraphProto& body) {
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body;
}

// An integer list attribute of the graph's last node (Scan's axes).
inline void set_last_node_ints(::onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

// A graph output named `name` (its type left to the graph).
inline void add_output(::onnx::GraphProto* g, const std::string& name) { g->add_output()->set_name(name); }

// A node `op` over `ins` making `out` (named after it).
inline void add_node(::onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& ins, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out + "_node");
  for (const std::string& in : ins) n->add_input(in);
  n->add_output(out);
}

}  // namespace lathe::onnx
