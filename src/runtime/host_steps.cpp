#include "runtime/host_steps.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <unordered_map>

#include "device/thread_pool.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

using Key = std::pair<uint64_t, size_t>;  // the step's key, the output

Key key_of(const UOp& node) {
  const auto& arg = node.arg_as<std::vector<int64_t>>();
  return {static_cast<uint64_t>(arg.at(0)), static_cast<size_t>(arg.at(1))};
}

struct Registry {
  std::mutex mu;
  std::unordered_map<const UOp*, std::shared_ptr<const HostStepNode>> owners;  // the nodes host_step_node made
  std::map<Key, std::weak_ptr<const HostStepNode>> by_key;
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;  // outlives nodes freed during static destruction
    detail::set_release_hook(Ops::CUSTOM, [](const UOp& u) {
      Registry& rr = registry();
      std::shared_ptr<const HostStepNode> dropped;  // let go outside the lock: the step's function may hold tensors
      std::lock_guard<std::mutex> lock(rr.mu);
      auto it = rr.owners.find(&u);
      if (it == rr.owners.end()) return;
      dropped = std::move(it->second);
      rr.owners.erase(it);
      auto k = rr.by_key.find(key_of(u));
      if (k != rr.by_key.end() && k->second.use_count() <= 1) rr.by_key.erase(k);  // `dropped` was its last owner
    });
    return reg;
  }();
  return *r;
}

}  // namespace

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<HostOutput> held_outputs(const HostStep& step) {
  std::vector<HostOutput> out = step.outputs;
  if (!step.sizes.empty()) out.push_back({dtypes::int64, {static_cast<int64_t>(step.sizes.size())}});
  return out;
}

uint64_t new_host_step_key() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

UOpPtr host_step_node(std::shared_ptr<const HostStep> step, uint64_t key, size_t output, int64_t elements, std::vector<UOpPtr> sources,
                      std::vector<SymShape> input_shapes) {
  Registry& r = registry();
  DType dtype = held_outputs(*step).at(output).dtype;
  std::vector<int64_t> arg{static_cast<int64_t>(key), static_cast<int64_t>(output), elements};
  UOpPtr node = UOp::make(Ops::CUSTOM, dtype, std::move(sources), std::move(arg));
  auto entry = std::make_shared<const HostStepNode>(HostStepNode{std::move(step), key, output, std::move(input_shapes)});
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.owners.try_emplace(node.get(), entry).second) r.by_key[{key, output}] = entry;
  return node;
}

HostStepNode host_step_of(const UOp& node) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (auto it = r.owners.find(&node); it != r.owners.end()) return *it->second;
  auto k = r.by_key.find(key_of(node));
  std::shared_ptr<const HostStepNode> entry = k == r.by_key.end() ? nullptr : k->second.lock();
  if (!entry) throw InternalError("no host step is registered for " + to_string(node));
  return *entry;
}

namespace {
thread_local int host_threads = 1;  // the running step's plan's threads (HostThreadsScope)
}  // namespace

HostThreadsScope::HostThreadsScope(int threads) : before_(host_threads) { host_threads = std::max(threads, 1); }
HostThreadsScope::~HostThreadsScope() { host_threads = before_; }

void host_parallel_for(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  int64_t parts = std::min<int64_t>(host_threads, n);
  if (parts <= 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::exception_ptr first;
  std::mutex m;
  HostThreadsScope alone(1);  // a call from inside a piece runs on its own thread (the pool is taken)
  auto part = [&](size_t p) {
    try {
      for (int64_t i = n * static_cast<int64_t>(p) / parts, end = n * (static_cast<int64_t>(p) + 1) / parts; i < end; ++i) fn(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!first) first = std::current_exception();
    }
  };
  detail::parallel_for(static_cast<size_t>(parts), part);
  if (first) std::rethrow_exception(first);
}

}  // namespace lathe
