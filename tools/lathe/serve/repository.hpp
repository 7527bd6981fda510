// A model repository laid out as Triton's: REPOSITORY/NAME/VERSION/model.onnx, VERSION a number,
// with an optional NAME/config.json:
//
//   {"max_batch_size": 8,                 the most rows of axis 0 one run takes (0: no batching)
//    "instance_count": 2,                 plans run concurrently (each prepared once)
//    "dynamic_batching": {"max_queue_delay_microseconds": 500},
//                                         requests arriving within the delay run as one batch
//    "max_sizes": {"seq": 128}}           the largest size of each other named input dimension
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lathe::serve {

struct ModelConfig {
  int64_t max_batch_size = 0;
  int instance_count = 1;
  bool dynamic_batching = false;
  int64_t max_queue_delay_us = 0;
  std::map<std::string, int64_t> max_sizes;
};

struct RepositoryModel {
  std::string name;
  std::map<int64_t, std::string> versions;  // version -> its model.onnx
  ModelConfig config;
};

/// The models of `dir`, by name. Throws lathe::Error naming the file for a missing folder, a
/// model with no numbered version holding model.onnx, or a config.json that is not valid or holds
/// a field of the wrong type or range.
std::vector<RepositoryModel> read_repository(const std::string& dir);

}  // namespace lathe::serve
