// NumPy .npy files (format 1.0-3.0, little-endian, C order): read into and write from Tensors.
#pragma once

#include <string>

#include "lathe/tensor.hpp"

namespace lathe::cli {

/// Throws Error naming the file for anything that is not a C-ordered little-endian .npy of a
/// supported dtype.
Tensor read_npy(const std::string& path);
/// Realizes `t` and writes it.
void write_npy(const std::string& path, const Tensor& t);

}  // namespace lathe::cli
