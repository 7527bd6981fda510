// The buffers behind BUFFER nodes. A tensor graph names a buffer by a BUFFER node whose arg is
// {buffer id, dims...}; the registry keeps the buffer alive exactly as long as that node lives.
#pragma once

#include <vector>

#include "lathe/device.hpp"
#include "lathe/uop.hpp"

namespace lathe {

/// The BUFFER node for `buffer` viewed as `shape` (row-major), registering the buffer.
UOpPtr buffer_node(const Buffer& buffer, const std::vector<int64_t>& shape);

/// The buffer a BUFFER node names; throws InternalError if none is registered.
Buffer buffer_of(const UOp& node);

/// Whether the buffer a BUFFER node names holds a constant (Buffer::is_constant: a model's weight).
bool is_constant_buffer(const UOp& node);

}  // namespace lathe
