// Graph values: tensors, sequences of tensors, and empty optionals.
#include "lathe/onnx.hpp"

namespace lathe::onnx {

Value::Value(Tensor t) : tensor_(std::move(t)), dtype_(tensor_->dtype()) {}

Value Value::sequence(std::vector<Tensor> items, DType dtype) {
  Value v;
  for (const Tensor& t : items)
    if (t.dtype() != dtype) throw OnnxError("a sequence of " + dtype.name() + " cannot hold a " + t.dtype().name() + " tensor");
  v.items_ = std::move(items);
  v.dtype_ = dtype;
  return v;
}

Value Value::none() {
  Value v;
  v.none_ = true;
  return v;
}

const Tensor& Value::tensor(const std::string& what) const {
  if (!tensor_) throw OnnxError(what + " is " + (none_ ? "an empty optional" : "a sequence") + ", not a tensor");
  return *tensor_;
}

const std::vector<Tensor>& Value::items(const std::string& what) const {
  if (!is_sequence()) throw OnnxError(what + " is " + (none_ ? "an empty optional" : "a tensor") + ", not a sequence");
  return items_;
}

}  // namespace lathe::onnx
