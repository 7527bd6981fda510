// Target: what every stage needs to know about the machine a kernel runs on, said once. The
// device's backend fills it in (device/cpu/cpu_target.cpp for CPUs); the schedule, the optimizer
// and the code generator read it, and none of them names an instruction set.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "lathe/dtype.hpp"

namespace lathe {

/// The shape of a Target a plan may ask for instead of its device's: how wide and how many its
/// vector registers are and how large its caches. It is separate from the instruction set the
/// code is compiled for (LATHE_CPU_TARGET): LLVM splits a 16-lane vector into two 8-lane ones, so
/// kernels planned for any shape run on any x86-64 CPU, and one machine can check the kernels
/// every shape gets. A field left at 0 keeps the device's value.
struct TargetShape {
  int vector_bytes = 0;      // the widest vector register (float32 lanes x 4)
  int vector_registers = 0;  // how many of them
  int64_t l1_bytes = 0;      // a core's L1 data cache
  int64_t l2_bytes = 0;      // a core's L2 cache
  int64_t l3_bytes = 0;      // the cache every core shares
  int memory_bytes_per_cycle = 0;  // Target::memory_bytes_per_cycle

  /// Parses LATHE_TARGET_SHAPE's syntax: a float32 lane count alone ("4", "8", "16": the shape of
  /// a typical CPU of that width: 16 registers, 32 KB L1, 512 KB L2 and memory at 4 bytes a cycle
  /// for 4 and 8 lanes; 32 registers, 48 KB, 1 MB and 7 bytes for 16; a 32 MB L3 for all), or
  /// comma-separated fields "lanes=8,registers=16,l1=32K,l2=512K,l3=32M,memory=4" (sizes in bytes,
  /// or with a K or M suffix; memory in bytes a cycle; a field not given stays 0). Throws Error
  /// naming the text for anything else.
  static TargetShape parse(const std::string& text);
  /// "lanes=8,registers=16,l1=32K,l2=512K,l3=32M,memory=4" (the fields that are set).
  std::string to_string() const;
  friend bool operator==(const TargetShape&, const TargetShape&) = default;
};

/// A matrix unit's operation: D (M x N, `out`) = A (M x K, `in`) x B (K x N) + C, per group of
/// threads (a GPU's warp).
struct TensorCore {
  int m = 0, n = 0, k = 0;
  DType in = dtypes::float16, out = dtypes::float32;
  friend bool operator==(const TensorCore&, const TensorCore&) = default;
};

/// A cache line, what one read of memory brings into a core's caches: 64 bytes on every x86-64
/// CPU (the optimizer's reads in order, the CPU renderers' prefetches).
inline constexpr int64_t kCacheLineBytes = 64;

/// The machine a kernel is planned and generated for.
struct Target {
  // Vector registers (a GPU: what one thread loads at once) and how many.
  int vector_bytes = 16;
  int vector_registers = 16;
  int threads = 1;  // the most threads (CPU cores) one kernel may be split across
  // Caches: per core (a GPU: per multiprocessor), and the one all share.
  int64_t l1_bytes = int64_t{48} << 10;
  int64_t l2_bytes = int64_t{1} << 20;
  int64_t l3_bytes = int64_t{32} << 20;  // the cache every core shares (a GPU: its L2)
  // Main memory: the bytes it delivers each thread per cycle while all of them read at once (two
  // cores of an AVX2 EPYC stream about 20 GB/s at about 3 GHz: 3 to 4; of a Zen 5, 65 GB/s: 7
  // to 8). What a weight larger than the caches costs to read (tensor/winograd's choice of method).
  int memory_bytes_per_cycle = 4;
  // What the code generator leaves to the hardware and the language it renders.
  bool native_transcendentals = false;  // float32 exp2/log2/sin are fast vector instructions (else polynomials)
  int widest_vector = 64;               // the most lanes one vector value of the rendered code may have
  // Groups of threads with a memory they share and a barrier (a GPU's blocks); a CPU has none.
  bool has_local = false;
  int64_t shared_bytes = 0;                    // shared memory a block may use
  std::array<int64_t, 3> local_max{0, 0, 0};   // threads per block, per dimension
  int64_t local_total_max = 0;                 // threads per block in all
  std::array<int64_t, 3> global_max{0, 0, 0};  // blocks per launch, per dimension
  std::array<TensorCore, 4> tensor_cores{};    // matrix units: the shapes a GPU has (unused entries: m = 0)

  /// The vector registers a register tile's accumulators may take: half the file, at least 4 (the
  /// rest hold its operands). The optimizer's tiles and the Winograd rule's price of them read it.
  int accumulators() const { return std::max(4, vector_registers / 2); }
  /// How many elements of `t` one vector register holds (at least 1).
  int lanes(DType t) const { return std::max(1, vector_bytes / static_cast<int>(std::max<int64_t>(1, t.itemsize()))); }
  /// This target with the fields `shape` sets.
  Target with(const TargetShape& shape) const {
    Target t = *this;
    if (shape.vector_bytes) t.vector_bytes = shape.vector_bytes;
    if (shape.vector_registers) t.vector_registers = shape.vector_registers;
    if (shape.l1_bytes) t.l1_bytes = shape.l1_bytes;
    if (shape.l2_bytes) t.l2_bytes = shape.l2_bytes;
    if (shape.l3_bytes) t.l3_bytes = shape.l3_bytes;
    if (shape.memory_bytes_per_cycle) t.memory_bytes_per_cycle = shape.memory_bytes_per_cycle;
    return t;
  }
  /// What distinguishes kernels planned for it, for cache keys.
  std::string key() const {
    std::string k = "vector=" + std::to_string(vector_bytes) + "x" + std::to_string(vector_registers) +
                    " threads=" + std::to_string(threads) + " caches=" + std::to_string(l1_bytes) + "/" +
                    std::to_string(l2_bytes) + "/" + std::to_string(l3_bytes) +
                    " memory=" + std::to_string(memory_bytes_per_cycle) + " widest=" + std::to_string(widest_vector) +
                    (native_transcendentals ? " native-transcendentals" : "");
    if (has_local) {
      k += " local=" + std::to_string(shared_bytes) + "/" + std::to_string(local_total_max);
      for (int64_t d : local_max) k += "," + std::to_string(d);
      for (int64_t d : global_max) k += "," + std::to_string(d);
    }
    for (const TensorCore& tc : tensor_cores)
      if (tc.m) k += " tc=" + std::to_string(tc.m) + "x" + std::to_string(tc.n) + "x" + std::to_string(tc.k) + ":" + tc.in.name() + ">" + tc.out.name();
    return k;
  }
  friend bool operator==(const Target&, const Target&) = default;
};

/// Whether two of `t`'s vector registers make at most a cache line (32-byte vectors or narrower):
/// there a block of channels one register wide is too narrow for a register tile's rows, and
/// weights are stored in blocks of two registers (schedule/blocks' Blocks::stored), which the
/// optimizer's tiles pad their channels to (opt/heuristic).
inline bool registers_pair_in_a_line(const Target& t) { return 2 * int64_t{t.vector_bytes} <= kCacheLineBytes; }

}  // namespace lathe
