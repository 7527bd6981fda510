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

Value Value::stacked(Tensor items) {
  if (items.ndim() < 1) throw OnnxError("a stacked sequence needs its tensors' axis first, not a scalar");
  Value v;
  v.dtype_ = items.dtype();
  SInt count = items.symbolic_shape()[0];
  if (count.is_static())  // a number of tensors: each one, as any sequence
    for (int64_t i = 0; i < count.value(); ++i) v.items_.push_back(items.slice(0, i, i + 1).squeeze(0));
  v.stacked_ = std::move(items);
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
  if (stacked_ && !stacked_->symbolic_shape()[0].is_static())
    throw OnnxError(what + " is a sequence whose length is decided as the plan runs (a loop's appended values): "
                           "only ConcatFromSequence and SequenceLength read it");
  return items_;
}

const Tensor& Value::stacked_items(const std::string& what) const {
  if (!stacked_) throw OnnxError(what + " is not a stacked sequence");
  return *stacked_;
}

}  // namespace lathe::onnx
