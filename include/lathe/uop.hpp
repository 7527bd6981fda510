// UOp: the one node type of every lathe graph, from tensor ops to rendered kernels.
//
// A UOp is immutable {op, dtype, src, arg}. The only way to make one is UOp::make, which interns
// it: structurally equal nodes are the same object (from any thread), so equality is pointer
// equality and caches key on identity. A node lives while someone holds a UOpPtr to it; then it
// leaves the intern table. Every node has a process-unique id and a structural hash that depends
// only on its content, so it is the same in every process.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "lathe/dtype.hpp"
#include "lathe/ops.hpp"

namespace lathe {

class UOp;
/// The closed range [min, max] an integer-valued node can take.
struct Bounds {
  int64_t min;
  int64_t max;
};
using UOpPtr = std::shared_ptr<const UOp>;

/// DEFINE_VAR's argument: a named integer in [min, max].
struct VarArg {
  std::string name;
  int64_t min = 0;
  int64_t max = 0;
  friend bool operator==(const VarArg&, const VarArg&) = default;
};

/// REDUCE_AXIS's argument: the reduction op (ADD, MUL, MAX) and the axes it reduces.
struct ReduceArg {
  Ops op = Ops::ADD;
  std::vector<int64_t> axes;
  friend bool operator==(const ReduceArg&, const ReduceArg&) = default;
};

/// The keys query i of an ATTENTION sees, where a mask known when the graph is built shuts the
/// others out: [max(0, begin_step * i + begin), min(keys, end_step * i + end)), each step 0 or 1.
/// A causal mask is {0, 0, 1, 1}; a sliding window of w keys {1, 1 - w, 1, 1}; keys padded after
/// the n-th {0, 0, 0, n}. A range may hold keys the scores also mask (then they add 0).
struct AttentionKeys {
  int64_t begin_step = 0, begin = 0, end_step = 0, end = 0;
  friend bool operator==(const AttentionKeys&, const AttentionKeys&) = default;
};

/// ATTENTION's argument: softmax(scores, last axis) @ values over every key, or over the keys
/// `keys` names for each query (the kernel then reads only the key blocks some query sees).
struct AttentionArg {
  std::optional<AttentionKeys> keys;
  friend bool operator==(const AttentionArg&, const AttentionArg&) = default;
};

/// The keys of a block of an attention kernel (codegen/attention): a key operand stored as
/// (..., keys / 16, D, 16) gives a block's keys as one run per step of D. The kernel reads any
/// layout; the front end's layout choice and the kernel agree on this one. It is not a register
/// width (one register at 16 float32 lanes, two at 8): each block rescales the value
/// accumulators once, and 16 keys spread that over enough work on every target measured.
inline constexpr int64_t kAttentionKeyBlock = 16;

/// A kernel's SINK argument: what the stages after the schedule read of the kernel as a whole (as
/// tinygrad's KernelInfo). A kernel that builds its own loops (attention) takes no optimizer
/// actions and keeps the loops it was lowered with; codegen builds them.
struct KernelInfo {
  bool builds_own_loops = false;
  friend bool operator==(const KernelInfo&, const KernelInfo&) = default;
};

/// A CONTIGUOUS's argument: why the copy is stored. A layout copy (the Tensor front end's, of a
/// value in the order a reader wants: a convolution's input in channel blocks) may become the one
/// place the value is stored, read by its other readers too (schedule/reader_layout); a copy a user
/// asks for (contiguous()) is left as it is and has no argument.
struct CopyArg {
  bool layout = false;
  friend bool operator==(const CopyArg&, const CopyArg&) = default;
};

/// A node's non-source payload. Constants use the ConstValue alternatives (bool, int64_t,
/// uint64_t, double) matching their dtype. Doubles compare and hash by bit pattern.
using Arg = std::variant<std::monostate, bool, int64_t, uint64_t, double, std::string, std::vector<int64_t>, Ops,
                         VarArg, ReduceArg, AttentionArg, KernelInfo, CopyArg>;

bool arg_equal(const Arg& a, const Arg& b);
/// The KernelInfo of the kernel `ast` (a SINK): its argument, or the default when it has none.
KernelInfo kernel_info(const UOp& ast);
std::string arg_to_string(const Arg& a);

class UOp : public std::enable_shared_from_this<UOp> {
 public:
  /// Returns the interned node {op, dtype, src, arg}, making it if no equal node is alive.
  /// Throws InternalError when the number of sources is outside the op's arity.
  static UOpPtr make(Ops op, DType dtype, std::vector<UOpPtr> src = {}, Arg arg = {});

  // Leaves and common shapes.
  static UOpPtr const_(DType dtype, ConstValue value);
  static UOpPtr index_const(int64_t value) { return const_(dtypes::index, value); }
  static UOpPtr variable(const std::string& name, int64_t min, int64_t max, DType dtype = dtypes::index);
  static UOpPtr range(const UOpPtr& end, int64_t axis);
  static UOpPtr alu(Ops op, std::vector<UOpPtr> src);

  Ops op() const { return op_; }
  DType dtype() const { return dtype_; }
  const std::vector<UOpPtr>& src() const { return src_; }
  const UOpPtr& src(size_t i) const { return src_.at(i); }
  const Arg& arg() const { return arg_; }
  template <class T>
  const T& arg_as() const {
    return std::get<T>(arg_);
  }

  /// Process-unique, never reused; ordered by creation.
  uint64_t id() const { return id_; }
  /// Structural hash from op, dtype, arg and the sources' hashes; equal in every process.
  uint64_t hash() const { return hash_; }

  /// Bounds of the value for integer, index and bool nodes (bool: 0 or 1). For other dtypes the
  /// full int64 range, meaning "unknown".
  int64_t vmin() const { return vmin_; }
  int64_t vmax() const { return vmax_; }
  bool is_const() const { return op_ == Ops::CONST; }
  /// The constant's value; throws InternalError if this is not a CONST.
  ConstValue const_value() const;

  UOpPtr ptr() const { return shared_from_this(); }

  UOp(const UOp&) = delete;
  UOp& operator=(const UOp&) = delete;

 private:
  UOp(Ops op, DType dtype, std::vector<UOpPtr> src, Arg arg, uint64_t hash, Bounds bounds);
  ~UOp() = default;
  friend struct UOpDeleter;
  friend class InternTable;

  Ops op_;
  DType dtype_;
  std::vector<UOpPtr> src_;
  Arg arg_;
  uint64_t hash_;
  uint64_t id_;
  int64_t vmin_;
  int64_t vmax_;
};

/// Number of live interned nodes (for leak tests and diagnostics).
size_t live_uop_count();
namespace detail {
/// Called with each node of op `op` as it is freed, so what a registry keeps for such nodes (the
/// memory behind a BUFFER, the step behind a CUSTOM) can go with them. One hook per op.
void set_release_hook(Ops op, void (*hook)(const UOp&));
}  // namespace detail

/// The id the next node made will get: every node made later has an id at least this large.
uint64_t next_uop_id();

/// One line for one node: op, dtype, arg and the number of sources ("ADD index (2 src)").
std::string to_string(const UOp& u);
/// The whole graph under `root`, one numbered line per node, sources before users.
std::string print_graph(const UOpPtr& root);

// ALU builders. The binary forms take a node or an integer (made a constant of the node's dtype).
// Comparisons and boolean ops have names; == stays pointer equality.
UOpPtr operator+(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator-(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator*(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator%(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator-(const UOpPtr& a);
UOpPtr operator+(const UOpPtr& a, int64_t b);
UOpPtr operator-(const UOpPtr& a, int64_t b);
UOpPtr operator*(const UOpPtr& a, int64_t b);
UOpPtr operator%(const UOpPtr& a, int64_t b);
UOpPtr operator+(int64_t a, const UOpPtr& b);
UOpPtr operator*(int64_t a, const UOpPtr& b);
UOpPtr idiv(const UOpPtr& a, const UOpPtr& b);
UOpPtr idiv(const UOpPtr& a, int64_t b);
UOpPtr max(const UOpPtr& a, const UOpPtr& b);
UOpPtr min(const UOpPtr& a, const UOpPtr& b);
UOpPtr lt(const UOpPtr& a, const UOpPtr& b);
UOpPtr lt(const UOpPtr& a, int64_t b);
UOpPtr ne(const UOpPtr& a, const UOpPtr& b);
UOpPtr eq(const UOpPtr& a, const UOpPtr& b);
UOpPtr logical_and(const UOpPtr& a, const UOpPtr& b);
UOpPtr logical_or(const UOpPtr& a, const UOpPtr& b);
UOpPtr logical_not(const UOpPtr& a);
UOpPtr where(const UOpPtr& cond, const UOpPtr& a, const UOpPtr& b);
UOpPtr cast(const UOpPtr& a, DType dtype);

}  // namespace lathe
