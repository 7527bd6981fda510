// The op list, declared once. LATHE_OPS generates the Ops enum, op names, arity bounds and the
// group each op belongs to; every other table of per-op facts is derived from it.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

namespace lathe {

/// Per-op properties, combined as bit flags in the op table.
enum OpFlag : uint32_t {
  kNone = 0,
  kUnary = 1u << 0,        // ALU op of one operand
  kBinary = 1u << 1,       // ALU op of two operands
  kTernary = 1u << 2,      // ALU op of three operands
  kCommutative = 1u << 3,  // f(a, b) == f(b, a)
  kAssociative = 1u << 4,  // f(f(a, b), c) == f(a, f(b, c))
  kComparison = 1u << 5,   // result is bool
  kMovement = 1u << 6,     // view change before rangeify: becomes index arithmetic
  kReduce = 1u << 7,       // reduces over axes or ranges
  kBuffer = 1u << 8,       // names or addresses memory
  kLoop = 1u << 9,         // loop structure in kernels
  kIdempotent = 1u << 10,  // f(a, a) == a
};

// name, minimum sources, maximum sources (-1: any), flags.
#define LATHE_OPS(X)                                                \
  /* graph structure */                                             \
  X(SINK, 0, -1, kNone)                                             \
  X(NOOP, 0, -1, kNone)                                             \
  X(AFTER, 1, -1, kNone)                                            \
  X(BARRIER, 0, -1, kNone)                                          \
  X(KERNEL, 0, -1, kNone)                                           \
  X(CUSTOM, 0, -1, kNone)                                           \
  /* constants and variables */                                     \
  X(CONST, 0, 0, kNone)                                             \
  X(VCONST, 0, 0, kNone)                                            \
  X(DEFINE_VAR, 0, 0, kNone)                                        \
  X(BIND, 2, 2, kNone)                                              \
  /* buffers and memory */                                          \
  X(DEVICE, 0, 0, kBuffer)                                          \
  X(BUFFER, 0, 1, kBuffer)                                          \
  X(BUFFER_VIEW, 1, 1, kBuffer)                                     \
  X(DEFINE_GLOBAL, 0, 0, kBuffer)                                   \
  X(DEFINE_LOCAL, 0, 0, kBuffer)                                    \
  X(DEFINE_REG, 0, -1, kBuffer)                                      \
  X(INDEX, 2, 3, kBuffer)                                           \
  X(LOAD, 1, 3, kBuffer)                                            \
  X(STORE, 2, 3, kBuffer)                                           \
  X(COPY, 1, 2, kBuffer)                                            \
  X(CONTIGUOUS, 1, -1, kNone)                                       \
  X(ASSIGN, 2, 2, kBuffer)                                          \
  /* movement: views that become index arithmetic */                \
  X(RESHAPE, 1, -1, kMovement)                                      \
  X(PERMUTE, 1, 1, kMovement)                                       \
  X(EXPAND, 1, -1, kMovement)                                       \
  X(PAD, 1, -1, kMovement)                                          \
  X(SHRINK, 1, -1, kMovement)                                       \
  X(FLIP, 1, 1, kMovement)                                          \
  /* data-dependent indexing: x[.., index[..], ..] along axis arg */ \
  X(GATHER, 2, 2, kNone)                                            \
  /* reduction */                                                   \
  X(REDUCE_AXIS, 1, 1, kReduce)                                     \
  X(REDUCE, 1, -1, kReduce)                                         \
  /* softmax(scores, last axis) @ values: (scores, values) before     \
     rangeify; (score, value, key loop, query loop, value loop) in a  \
     kernel, each loop a RANGE or 0 (codegen/attention). Its arg an  \
     AttentionArg: the keys each query sees */                        \
  X(ATTENTION, 2, 5, kNone)                                         \
  /* loops and launch indices */                                    \
  X(RANGE, 1, -1, kLoop)                                            \
  X(END, 1, -1, kLoop)                                              \
  X(SPECIAL, 1, 1, kLoop)                                           \
  X(IF, 1, 2, kLoop)                                                \
  X(ENDIF, 1, 1, kLoop)                                             \
  /* unary ALU */                                                   \
  X(EXP2, 1, 1, kUnary)                                             \
  X(LOG2, 1, 1, kUnary)                                             \
  X(SIN, 1, 1, kUnary)                                              \
  X(SQRT, 1, 1, kUnary)                                             \
  X(RECIPROCAL, 1, 1, kUnary)                                       \
  X(NEG, 1, 1, kUnary)                                              \
  X(TRUNC, 1, 1, kUnary)                                            \
  /* binary ALU */                                                  \
  X(ADD, 2, 2, kBinary | kCommutative | kAssociative)               \
  X(MUL, 2, 2, kBinary | kCommutative | kAssociative)               \
  X(SUB, 2, 2, kBinary)                                             \
  X(IDIV, 2, 2, kBinary)                                            \
  X(MOD, 2, 2, kBinary)                                             \
  X(FDIV, 2, 2, kBinary)                                            \
  X(MAX, 2, 2, kBinary | kCommutative | kAssociative | kIdempotent) \
  X(POW, 2, 2, kBinary)                                             \
  X(CMPLT, 2, 2, kBinary | kComparison)                             \
  X(CMPNE, 2, 2, kBinary | kCommutative | kComparison)              \
  X(CMPEQ, 2, 2, kBinary | kCommutative | kComparison)              \
  X(AND, 2, 2, kBinary | kCommutative | kAssociative | kIdempotent) \
  X(OR, 2, 2, kBinary | kCommutative | kAssociative | kIdempotent)  \
  X(XOR, 2, 2, kBinary | kCommutative | kAssociative)               \
  X(SHL, 2, 2, kBinary)                                             \
  X(SHR, 2, 2, kBinary)                                             \
  X(THREEFRY, 2, 2, kBinary)                                        \
  /* ternary ALU */                                                 \
  X(WHERE, 3, 3, kTernary)                                          \
  X(MULACC, 3, 3, kTernary)                                         \
  /* type changes */                                                \
  X(CAST, 1, 1, kNone)                                              \
  X(BITCAST, 1, 1, kNone)                                           \
  /* vectors */                                                     \
  X(VECTORIZE, 1, -1, kNone)                                        \
  X(GEP, 1, 1, kNone)                                               \
  /* a warp's m16n8k16 tensor-core multiply-add (opt/tensor_core):   \
     (a: 8 floats, b: 4, c: 4, where the block's threads meet), its  \
     result 4 floats; arg 1: float16 inputs, 2: bfloat16 */          \
  X(WMMA, 4, 4, kNone)

enum class Ops : uint8_t {
#define LATHE_X(name, ...) name,
  LATHE_OPS(LATHE_X)
#undef LATHE_X
};

inline constexpr int kNumOps = 0
#define LATHE_X(...) +1
    LATHE_OPS(LATHE_X)
#undef LATHE_X
    ;

struct OpInfo {
  std::string_view name;
  int min_src;
  int max_src;  // -1: no upper bound
  uint32_t flags;
};

inline constexpr OpInfo kOpInfo[kNumOps] = {
#define LATHE_X(name, lo, hi, flags) {#name, lo, hi, flags},
    LATHE_OPS(LATHE_X)
#undef LATHE_X
};

constexpr const OpInfo& op_info(Ops op) { return kOpInfo[static_cast<int>(op)]; }
constexpr std::string_view op_name(Ops op) { return op_info(op).name; }
constexpr bool op_has(Ops op, uint32_t flag) { return (op_info(op).flags & flag) != 0; }
constexpr bool is_alu(Ops op) { return op_has(op, kUnary | kBinary | kTernary); }

inline std::ostream& operator<<(std::ostream& os, Ops op) { return os << op_name(op); }

}  // namespace lathe
