#include "ir/label.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>

namespace lathe {
namespace {

struct Entry {
  std::weak_ptr<const UOp> node;  // a new node never reuses an id, but the entry outlives its node
  std::vector<std::string> labels;
};

struct Table {
  std::mutex mu;
  std::unordered_map<uint64_t, Entry> by_id;
  size_t prune_at = 1024;
  std::atomic<bool> used{false};
};

Table& table() {
  static Table* t = new Table;  // outlives static nodes released at exit
  return *t;
}

}  // namespace

UOpPtr labelled_as(UOpPtr node, const std::vector<std::string>& labels) {
  if (labels_of(*node).empty())
    for (const std::string& l : labels) add_label(node, l);
  return node;
}

void add_label(const UOpPtr& node, const std::string& label) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.used.store(true, std::memory_order_relaxed);
  Entry& e = t.by_id[node->id()];
  if (e.node.expired()) e = Entry{node, {}};
  if (std::find(e.labels.begin(), e.labels.end(), label) == e.labels.end()) e.labels.push_back(label);
  if (t.by_id.size() >= t.prune_at) {
    std::erase_if(t.by_id, [](const auto& kv) { return kv.second.node.expired(); });
    t.prune_at = std::max<size_t>(1024, 2 * t.by_id.size());
  }
}

std::vector<std::string> labels_of(const UOp& node) {
  Table& t = table();
  if (!t.used.load(std::memory_order_relaxed)) return {};
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.by_id.find(node.id());
  return it == t.by_id.end() || it->second.node.expired() ? std::vector<std::string>{} : it->second.labels;
}

bool any_labels() { return table().used.load(std::memory_order_relaxed); }

}  // namespace lathe
