// Inputs given by a name the model does not have: an error naming the model's inputs, never a
// value silently ignored (and a misspelt input silently replaced by another).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lathe/onnx.hpp"

namespace lathe::onnx {

/// "'image' (float32, [batch, 3, 224, 224])": an input as a message names it.
std::string describe_input(const ValueInfo& in);

/// Throws OnnxError naming the first of `given` that is not among `inputs`, and listing those.
void require_known_inputs(const std::vector<ValueInfo>& inputs, const std::vector<std::string>& given);
template <class V>
void require_known_inputs(const std::vector<ValueInfo>& inputs, const std::map<std::string, V>& given) {
  std::vector<std::string> names;
  for (const auto& [name, v] : given) names.push_back(name);
  require_known_inputs(inputs, names);
}

}  // namespace lathe::onnx
