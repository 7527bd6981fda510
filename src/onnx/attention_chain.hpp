// Attention as PyTorch exports it: MatMul -> (Div | Mul | Add | Sub | Where | Cast)* -> Softmax ->
// MatMul, each value between the two MatMuls read by the next node only. Unless its mask restricts
// the keys (then the Tensor graph's attention rule makes it one kernel), the importer runs such a
// chain a block of queries at a time when its scores are large (model.cpp), re-running its nodes
// on the rows of the first MatMul's left operand.
#pragma once

#include <unordered_map>
#include <vector>

#include "onnx/onnx_include.hpp"

namespace lathe::onnx::detail {

struct AttentionChain {
  std::vector<int> nodes;  // indices into the graph's nodes, the first MatMul's to the last's
  int softmax = 0;         // the Softmax's index
};

/// The graph's attention chains, by the index of their last MatMul.
std::unordered_map<int, AttentionChain> attention_chains(const ::onnx::GraphProto& g);

}  // namespace lathe::onnx::detail
