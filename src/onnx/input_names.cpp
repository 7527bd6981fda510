#include "onnx/input_names.hpp"

#include <algorithm>

namespace lathe::onnx {

std::string describe_input(const ValueInfo& in) {
  std::string dims;
  for (size_t i = 0; i < in.dims.size(); ++i) {
    std::string d = i < in.dim_params.size() && !in.dim_params[i].empty() ? in.dim_params[i]
                    : in.dims[i]                                             ? std::to_string(*in.dims[i])
                                                                             : "?";
    dims += (i ? ", " : "") + d;
  }
  std::string kind = in.kind == ValueKind::kTensor ? "" : in.kind == ValueKind::kSequence ? "sequence of " : "optional ";
  return "'" + in.name + "' (" + kind + in.dtype.name() + ", [" + dims + "])";
}

void require_known_inputs(const std::vector<ValueInfo>& inputs, const std::vector<std::string>& given) {
  for (const std::string& name : given) {
    if (std::any_of(inputs.begin(), inputs.end(), [&](const ValueInfo& in) { return in.name == name; })) continue;
    std::string list;
    for (const ValueInfo& in : inputs) list += (list.empty() ? "" : ", ") + describe_input(in);
    throw OnnxError("the model has no input '" + name + "'; its inputs are " + (list.empty() ? "none" : list));
  }
}

}  // namespace lathe::onnx
