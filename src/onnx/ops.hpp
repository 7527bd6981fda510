// The operator implementations, one file per family, each adding its operators to the table.
#pragma once

#include "onnx/op_context.hpp"

namespace lathe::onnx::detail {

void register_elementwise_ops(std::map<std::string, OpFn>& table);
void register_shape_ops(std::map<std::string, OpFn>& table);
void register_reduce_ops(std::map<std::string, OpFn>& table);
void register_nn_ops(std::map<std::string, OpFn>& table);
void register_rnn_ops(std::map<std::string, OpFn>& table);
void register_quant_ops(std::map<std::string, OpFn>& table);
void register_control_ops(std::map<std::string, ValueOpFn>& table);
void register_sequence_ops(std::map<std::string, ValueOpFn>& table);
void register_training_ops(std::map<std::string, OpFn>& table);
void register_signal_ops(std::map<std::string, OpFn>& table);
void register_sampling_ops(std::map<std::string, OpFn>& table);
void register_text_ops(std::map<std::string, OpFn>& table);
void register_random_ops(std::map<std::string, OpFn>& table);
void register_linalg_ops(std::map<std::string, OpFn>& table);
void register_data_dependent_ops(std::map<std::string, OpFn>& table);

/// The outputs of a host step over `inputs` (Tensor::host_step), its decided sizes noted for the
/// shapes computed from them (onnx/size_values.hpp).
std::vector<Tensor> host_step_outputs(const std::shared_ptr<HostStep>& step, const std::vector<Tensor>& inputs);

/// TopK as a host step of the plan (ops_data_dependent.cpp): for a k known only at run time, or
/// one too large for rounds of argmax. Returns values and indices.
std::vector<Tensor> topk_as_host_step(const OpContext& c, int64_t axis);

/// Concat along an axis of symbolic sizes, as a host step (ops_data_dependent.cpp).
Tensor concat_on_host(const OpContext& c, const std::vector<Tensor>& xs, int64_t axis);

/// ScatterElements over inputs of symbolic size, as a host step (ops_data_dependent.cpp).
Tensor scatter_elements_on_host(const OpContext& c);

/// ONNX's axis convention: negative counts from the end; fails naming the node when out of range.
int64_t axis_of(const OpContext& c, int64_t axis, int64_t ndim);

}  // namespace lathe::onnx::detail
