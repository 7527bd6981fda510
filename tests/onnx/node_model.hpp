// Small ONNX models built in the tests: one node over named inputs, with attributes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lathe/onnx.hpp"
#include "onnx/onnx_include.hpp"

namespace lathe::onnx {

// A one-node model: `op` over inputs (float, except an input named "training", which is bool, and
// names starting with "i64", which are int64) of the given shapes, outputs y0, y1...
struct NodeModel {
  ::onnx::ModelProto proto;
  ::onnx::NodeProto* node;

  NodeModel(const std::string& op, const std::vector<std::pair<std::string, Shape>>& inputs, int outputs) {
    proto.set_ir_version(8);
    proto.add_opset_import()->set_version(17);
    ::onnx::GraphProto* g = proto.mutable_graph();
    g->set_name(op);
    node = g->add_node();
    node->set_op_type(op);
    node->set_name("the_" + op);
    for (const auto& [name, shape] : inputs) {
      node->add_input(name);
      auto* tt = g->add_input();
      tt->set_name(name);
      auto* t = tt->mutable_type()->mutable_tensor_type();
      t->set_elem_type(name == "training"           ? ::onnx::TensorProto::BOOL
                       : name.rfind("i64", 0) == 0 ? ::onnx::TensorProto::INT64
                                                   : ::onnx::TensorProto::FLOAT);
      for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
    }
    for (int i = 0; i < outputs; ++i) {
      node->add_output("y" + std::to_string(i));
      g->add_output()->set_name("y" + std::to_string(i));
    }
  }
  NodeModel& attr(const std::string& name, double f) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(static_cast<float>(f));
    return *this;
  }
  NodeModel& attr_i(const std::string& name, int64_t v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  NodeModel& attr_ints(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  NodeModel& attr_s(const std::string& name, const std::string& v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s(v);
    return *this;
  }
  /// A float initializer `name` of shape `dims` read as the node's next input; its data is the
  /// caller's to add (float_data, or external data).
  ::onnx::TensorProto* initializer(const std::string& name, const Shape& dims) {
    node->add_input(name);
    ::onnx::TensorProto* t = proto.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }
  Model model() const { return Model::from_bytes(proto.SerializeAsString()); }
};

}  // namespace lathe::onnx
