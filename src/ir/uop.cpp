// Construction, interning, hashing and destruction of UOps.
#include "lathe/uop.hpp"

#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/bounds.hpp"
#include "lathe/error.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace lathe {

namespace detail {
void fail_check(const char* cond, const std::string& msg, const char* file, int line) {
  throw InternalError(std::string("internal check failed: ") + cond + ": " + msg + " (" + file + ":" +
                      std::to_string(line) + ")");
}
}  // namespace detail

bool arg_equal(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<double>(&a))
    return std::bit_cast<uint64_t>(*x) == std::bit_cast<uint64_t>(std::get<double>(b));
  return a == b;
}

KernelInfo kernel_info(const UOp& ast) {
  const auto* info = std::get_if<KernelInfo>(&ast.arg());
  return info ? *info : KernelInfo{};
}

namespace {

// Appends a canonical byte encoding of a node's content, the input of its structural hash: on
// the stack for the usual few dozen bytes (hashing runs for every node made), on the heap beyond.
class HashWriter {
 public:
  void bytes(const void* p, size_t n) {
    if (heap_.empty() && used_ + n <= sizeof stack_) {
      std::memcpy(stack_ + used_, p, n);
      used_ += n;
      return;
    }
    if (heap_.empty()) heap_.assign(stack_, used_);
    heap_.append(static_cast<const char*>(p), n);
  }
  template <class T>
  void pod(const T& v) {
    bytes(&v, sizeof v);
  }
  void str(std::string_view s) {
    pod(static_cast<uint64_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void arg(const Arg& a) {
    pod(static_cast<uint8_t>(a.index()));
    std::visit(
        [this](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
          } else if constexpr (std::is_same_v<T, std::string>) {
            str(v);
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            pod(static_cast<uint64_t>(v.size()));
            for (int64_t x : v) pod(x);
          } else if constexpr (std::is_same_v<T, Ops>) {
            str(op_name(v));
          } else if constexpr (std::is_same_v<T, VarArg>) {
            str(v.name);
            pod(v.min);
            pod(v.max);
          } else if constexpr (std::is_same_v<T, ReduceArg>) {
            str(op_name(v.op));
            pod(static_cast<uint64_t>(v.axes.size()));
            for (int64_t x : v.axes) pod(x);
          } else if constexpr (std::is_same_v<T, AttentionArg>) {
            pod(static_cast<uint8_t>(v.keys.has_value()));
            if (v.keys) {
              pod(v.keys->begin_step);
              pod(v.keys->begin);
              pod(v.keys->end_step);
              pod(v.keys->end);
            }
          } else if constexpr (std::is_same_v<T, KernelInfo>) {
            pod(static_cast<uint8_t>(v.builds_own_loops));
          } else if constexpr (std::is_same_v<T, CopyArg>) {
            pod(static_cast<uint8_t>(v.layout));
          } else if constexpr (std::is_same_v<T, bool>) {
            pod(static_cast<uint8_t>(v));
          } else {
            pod(v);
          }
        },
        a);
  }
  uint64_t digest() const { return heap_.empty() ? XXH3_64bits(stack_, used_) : XXH3_64bits(heap_.data(), heap_.size()); }

 private:
  char stack_[256];
  size_t used_ = 0;
  std::string heap_;
};

// The op and the dtype's scalar are hashed by name so the hash survives reordering
// of the op and type tables.
uint64_t structural_hash(Ops op, DType dtype, const std::vector<UOpPtr>& src, const Arg& arg) {
  HashWriter w;
  w.str(op_name(op));
  w.str(dtype.scalar_name());
  w.pod(static_cast<int32_t>(dtype.count()));
  w.pod(static_cast<uint8_t>(dtype.is_ptr()));
  if (dtype.is_ptr()) {
    w.pod(static_cast<uint8_t>(dtype.addrspace()));
    w.pod(dtype.ptr_size());
  }
  w.arg(arg);
  w.pod(static_cast<uint64_t>(src.size()));
  for (const UOpPtr& s : src) w.pod(s->hash());
  return w.digest();
}

std::atomic<uint64_t> g_next_id{1};
std::array<std::atomic<void (*)(const UOp&)>, kNumOps> g_release_hooks{};
std::atomic<size_t> g_live{0};

}  // namespace

// Sharded so that threads building unrelated graphs rarely contend. A shard is an open-addressing
// table from structural hash to the live nodes with that hash (linear probing, one slot per node,
// erased slots marked until the next rebuild): a lookup reads one contiguous run of slots, where a
// node-based map took a cache miss per bucket and an allocation per node. Nodes remove
// themselves in UOpDeleter.
class InternTable {
 public:
  static InternTable& get() {
    // Leaked on purpose: nodes may be released during static destruction after main returns.
    static InternTable* table = new InternTable;
    return *table;
  }

  UOpPtr intern(Ops op, DType dtype, std::vector<UOpPtr> src, Arg arg);
  void erase(const UOp* u);

 private:
  static constexpr size_t kShards = 64;
  struct Slot {
    uint64_t hash = 0;
    const UOp* node = nullptr;  // null: never used; erased(): its node was released
  };
  // The mark of an erased slot: an address no node has (a function, so that tables made during
  // static initialisation see it too).
  static const UOp* erased() { return reinterpret_cast<const UOp*>(uintptr_t{1}); }
  struct Shard {
    std::mutex mu;
    std::vector<Slot> slots;  // a power of two long, at most half taken (live or erased)
    size_t live = 0, dead = 0;  // slots holding a node, slots erased()

    size_t start(uint64_t hash) const { return (hash / kShards) & (slots.size() - 1); }
    // Rebuilds the table with room for `live` nodes at most a third full.
    void rebuild() {
      size_t n = 16;
      while (n < live * 3) n *= 2;
      std::vector<Slot> old = std::exchange(slots, std::vector<Slot>(n));
      dead = 0;
      for (const Slot& s : old)
        if (s.node && s.node != erased()) {
          size_t i = start(s.hash);
          while (slots[i].node) i = (i + 1) & (n - 1);
          slots[i] = s;
        }
    }
  };
  Shard& shard(uint64_t hash) { return shards_[hash % kShards]; }
  std::array<Shard, kShards> shards_;
};

// Releases a node without recursing into its sources: a chain of a million nodes would
// otherwise overflow the C stack. Sources are parked on a per-thread list and dropped in a loop.
struct UOpDeleter {
  void operator()(const UOp* u) const {
    InternTable::get().erase(u);
    if (auto hook = g_release_hooks[static_cast<size_t>(u->op_)].load()) hook(*u);
    thread_local std::vector<UOpPtr> pending;
    thread_local bool draining = false;
    UOp* mut = const_cast<UOp*>(u);
    for (UOpPtr& s : mut->src_) pending.push_back(std::move(s));
    delete mut;
    g_live.fetch_sub(1, std::memory_order_relaxed);
    if (draining) return;
    draining = true;
    while (!pending.empty()) {
      UOpPtr last = std::move(pending.back());
      pending.pop_back();
      last.reset();  // may re-enter and append to `pending`
    }
    draining = false;
  }
};

UOpPtr InternTable::intern(Ops op, DType dtype, std::vector<UOpPtr> src, Arg arg) {
  uint64_t h = structural_hash(op, dtype, src, arg);
  // Everything that can throw happens before the lock: unwinding under it could drop the last
  // reference to a source, whose deleter would then wait on this same lock.
  Bounds bounds = detail::compute_bounds(op, dtype, src, arg);
  Shard& sh = shard(h);
  std::lock_guard<std::mutex> lock(sh.mu);
  if ((sh.live + sh.dead + 1) * 2 > sh.slots.size()) sh.rebuild();
  size_t mask = sh.slots.size() - 1, i = sh.start(h), free = sh.slots.size();
  for (; sh.slots[i].node; i = (i + 1) & mask) {
    const UOp* u = sh.slots[i].node;
    if (u == erased()) {
      if (free == sh.slots.size()) free = i;
      continue;
    }
    if (sh.slots[i].hash != h || u->op_ != op || u->dtype_ != dtype || u->src_ != src || !arg_equal(u->arg_, arg)) continue;
    // A node whose last reference is being dropped right now is still listed until its deleter
    // takes this lock; it cannot be revived, so a fresh node takes its place. The weak pointer is
    // taken as weak_ptr<UOp>, not <const UOp>: libstdc++ converts between the two through a
    // temporary shared_ptr, which could be the node's last reference and run its deleter here,
    // under the lock that deleter waits for.
    std::weak_ptr<UOp> weak = const_cast<UOp*>(u)->weak_from_this();
    if (std::shared_ptr<UOp> alive = weak.lock()) return alive;
  }
  UOpPtr made(new UOp(op, dtype, std::move(src), std::move(arg), h, bounds), UOpDeleter{});
  if (free != sh.slots.size()) {
    i = free;
    --sh.dead;
  }
  sh.slots[i] = {h, made.get()};
  ++sh.live;
  g_live.fetch_add(1, std::memory_order_relaxed);
  return made;
}

void InternTable::erase(const UOp* u) {
  Shard& sh = shard(u->hash_);
  std::lock_guard<std::mutex> lock(sh.mu);
  size_t mask = sh.slots.size() - 1;
  for (size_t i = sh.start(u->hash_); sh.slots[i].node; i = (i + 1) & mask) {
    if (sh.slots[i].node != u) continue;
    sh.slots[i].node = erased();
    --sh.live;
    ++sh.dead;
    // Give back the table once a large graph is gone; shrinking only after an eightfold drop
    // keeps this amortised O(1).
    if (sh.slots.size() > 1024 && sh.live < sh.slots.size() / 16) sh.rebuild();
    return;
  }
}

UOp::UOp(Ops op, DType dtype, std::vector<UOpPtr> src, Arg arg, uint64_t hash, Bounds bounds)
    : op_(op),
      dtype_(dtype),
      src_(std::move(src)),
      arg_(std::move(arg)),
      hash_(hash),
      id_(g_next_id.fetch_add(1, std::memory_order_relaxed)),
      vmin_(bounds.min),
      vmax_(bounds.max) {}

UOpPtr UOp::make(Ops op, DType dtype, std::vector<UOpPtr> src, Arg arg) {
  const OpInfo& info = op_info(op);
  int n = static_cast<int>(src.size());
  if (n < info.min_src || (info.max_src >= 0 && n > info.max_src))
    throw InternalError("UOp " + std::string(info.name) + " takes " + std::to_string(info.min_src) +
                        (info.max_src == info.min_src ? ""
                         : info.max_src < 0           ? " or more"
                                                      : " to " + std::to_string(info.max_src)) +
                        " sources, got " + std::to_string(n));
  for (const UOpPtr& s : src) LATHE_CHECK(s != nullptr, "null source given to " + std::string(info.name));
  return InternTable::get().intern(op, dtype, std::move(src), std::move(arg));
}

ConstValue UOp::const_value() const {
  LATHE_CHECK(op_ == Ops::CONST, "const_value() of a " + std::string(op_name(op_)));
  return std::visit(
      [this](const auto& v) -> ConstValue {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> ||
                      std::is_same_v<T, double>) {
          return v;
        } else {
          throw InternalError("CONST node without a constant argument: " + to_string(*this));
        }
      },
      arg_);
}

void detail::set_release_hook(Ops op, void (*hook)(const UOp&)) { g_release_hooks[static_cast<size_t>(op)].store(hook); }

size_t live_uop_count() { return g_live.load(std::memory_order_relaxed); }
uint64_t next_uop_id() { return g_next_id.load(std::memory_order_relaxed); }

UOpPtr UOp::const_(DType dtype, ConstValue value) {
  ConstValue v = cast_const(value, dtype);
  return make(Ops::CONST, dtype, {}, std::visit([](auto x) -> Arg { return x; }, v));
}

UOpPtr UOp::variable(const std::string& name, int64_t min, int64_t max, DType dtype) {
  if (min > max)
    throw Error("variable '" + name + "' has min " + std::to_string(min) + " > max " + std::to_string(max));
  return make(Ops::DEFINE_VAR, dtype, {}, VarArg{name, min, max});
}

UOpPtr UOp::range(const UOpPtr& end, int64_t axis) {
  return make(Ops::RANGE, dtypes::index, {end}, std::vector<int64_t>{axis});
}

UOpPtr UOp::alu(Ops op, std::vector<UOpPtr> src) {
  LATHE_CHECK(is_alu(op), std::string(op_name(op)) + " is not an ALU op");
  LATHE_CHECK(!src.empty(), "ALU op without sources");
  DType out = op == Ops::WHERE ? src.at(1)->dtype() : src[0]->dtype();
  if (op_has(op, kComparison)) out = DType(ScalarType::Bool, out.count());
  return make(op, out, std::move(src));
}

namespace {
UOpPtr like(const UOpPtr& a, int64_t v) { return UOp::const_(a->dtype(), v); }
}  // namespace

UOpPtr operator+(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::ADD, {a, b}); }
UOpPtr operator-(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::SUB, {a, b}); }
UOpPtr operator*(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::MUL, {a, b}); }
UOpPtr operator%(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::MOD, {a, b}); }
UOpPtr operator-(const UOpPtr& a) { return UOp::alu(Ops::NEG, {a}); }
UOpPtr operator+(const UOpPtr& a, int64_t b) { return a + like(a, b); }
UOpPtr operator-(const UOpPtr& a, int64_t b) { return a - like(a, b); }
UOpPtr operator*(const UOpPtr& a, int64_t b) { return a * like(a, b); }
UOpPtr operator%(const UOpPtr& a, int64_t b) { return a % like(a, b); }
UOpPtr operator+(int64_t a, const UOpPtr& b) { return like(b, a) + b; }
UOpPtr operator*(int64_t a, const UOpPtr& b) { return like(b, a) * b; }
UOpPtr idiv(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::IDIV, {a, b}); }
UOpPtr idiv(const UOpPtr& a, int64_t b) { return idiv(a, like(a, b)); }
UOpPtr max(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::MAX, {a, b}); }
UOpPtr min(const UOpPtr& a, const UOpPtr& b) { return -max(-a, -b); }
UOpPtr lt(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::CMPLT, {a, b}); }
UOpPtr lt(const UOpPtr& a, int64_t b) { return lt(a, like(a, b)); }
UOpPtr ne(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::CMPNE, {a, b}); }
UOpPtr eq(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::CMPEQ, {a, b}); }
UOpPtr logical_and(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::AND, {a, b}); }
UOpPtr logical_or(const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::OR, {a, b}); }
UOpPtr logical_not(const UOpPtr& a) { return ne(a, UOp::const_(a->dtype(), true)); }
UOpPtr where(const UOpPtr& cond, const UOpPtr& a, const UOpPtr& b) { return UOp::alu(Ops::WHERE, {cond, a, b}); }
UOpPtr cast(const UOpPtr& a, DType dtype) { return UOp::make(Ops::CAST, dtype, {a}); }

}  // namespace lathe
