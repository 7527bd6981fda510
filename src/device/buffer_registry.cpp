#include "device/buffer_registry.hpp"

#include <mutex>
#include <unordered_map>

namespace lathe {
namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<const UOp*, Buffer> buffers;
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // outlives nodes freed during static destruction
    detail::set_release_hook(Ops::BUFFER, [](const UOp& u) {
      Registry& rr = registry();
      Buffer dropped;
      std::lock_guard<std::mutex> lock(rr.mu);
      if (auto it = rr.buffers.find(&u); it != rr.buffers.end()) {
        dropped = std::move(it->second);
        rr.buffers.erase(it);
      }
    });
    return reg;
  }();
  return *r;
}

}  // namespace

UOpPtr buffer_node(const Buffer& buffer, const std::vector<int64_t>& shape) {
  std::vector<int64_t> arg{static_cast<int64_t>(buffer.id())};
  arg.insert(arg.end(), shape.begin(), shape.end());
  Registry& r = registry();
  UOpPtr node = UOp::make(Ops::BUFFER, buffer.dtype(), {}, std::move(arg));
  std::lock_guard<std::mutex> lock(r.mu);
  r.buffers[node.get()] = buffer;
  return node;
}

Buffer buffer_of(const UOp& node) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.buffers.find(&node);
  if (it == r.buffers.end()) throw InternalError("no buffer is registered for " + to_string(node));
  return it->second;
}

bool is_constant_buffer(const UOp& node) { return buffer_of(node).is_constant(); }

}  // namespace lathe
