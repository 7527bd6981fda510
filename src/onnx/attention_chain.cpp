#include "onnx/attention_chain.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <string>

namespace lathe::onnx::detail {
namespace {

// Operators between the scores and the Softmax that work on each query's row alone.
const std::set<std::string>& row_wise_ops() {
  static const std::set<std::string> ops{"Div", "Mul", "Add", "Sub", "Where", "Cast"};
  return ops;
}

constexpr int kMostNodesBetween = 6;  // scale, mask, casts: PyTorch's exports have two or three

}  // namespace

std::unordered_map<int, AttentionChain> attention_chains(const ::onnx::GraphProto& g) {
  std::unordered_map<std::string, int> producer, readers;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string& in : g.node(i).input()) ++readers[in];
    for (const std::string& out : g.node(i).output()) producer[out] = i;
  }
  for (const auto& out : g.output()) ++readers[out.name()];  // a graph output is read outside
  // The node that makes `value` when nothing else reads it, else nothing.
  auto only_reader_of = [&](const std::string& value) -> std::optional<int> {
    auto p = producer.find(value);
    if (p == producer.end() || readers[value] != 1 || g.node(p->second).output_size() != 1) return std::nullopt;
    return p->second;
  };
  // The nodes from a MatMul to the node making `value`, through row-wise operators.
  std::function<std::optional<std::vector<int>>(const std::string&, int)> back_to_matmul =
      [&](const std::string& value, int depth) -> std::optional<std::vector<int>> {
    std::optional<int> n = only_reader_of(value);
    if (!n) return std::nullopt;
    const ::onnx::NodeProto& node = g.node(*n);
    if (node.op_type() == "MatMul") return std::vector<int>{*n};
    if (depth == 0 || !row_wise_ops().count(node.op_type())) return std::nullopt;
    for (const std::string& in : node.input())
      if (std::optional<std::vector<int>> chain = back_to_matmul(in, depth - 1)) {
        chain->push_back(*n);
        return chain;
      }
    return std::nullopt;
  };
  std::unordered_map<int, AttentionChain> chains;
  for (int i = 0; i < g.node_size(); ++i) {
    const ::onnx::NodeProto& last = g.node(i);
    if (last.op_type() != "MatMul" || last.input_size() != 2) continue;
    std::optional<int> softmax = only_reader_of(last.input(0));
    if (!softmax || g.node(*softmax).op_type() != "Softmax") continue;
    std::optional<std::vector<int>> chain = back_to_matmul(g.node(*softmax).input(0), kMostNodesBetween);
    if (!chain) continue;
    chain->push_back(*softmax);
    chain->push_back(i);
    chains[i] = AttentionChain{*chain, *softmax};
  }
  return chains;
}

}  // namespace lathe::onnx::detail
