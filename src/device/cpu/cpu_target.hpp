// What both CPU compilers (the C backend and the LLVM JIT) decide the same way: which names may
// name a target CPU and the vector registers a CPU's features give the optimizer.
#pragma once

#include <string>
#include <vector>

#include "lathe/target.hpp"

namespace lathe {

/// The CPU to build for: LATHE_CPU_TARGET, else "native" (this machine).
std::string cpu_target_from_env();

/// Throws Error unless `name` is a plain CPU name (letters, digits, '-', '_', '.'): it reaches a
/// compiler's command line.
void check_cpu_name(const std::string& name);

/// Why code built for `target` cannot run on this machine, which lacks the CPU features `missing`
/// (empty when none is missing).
std::string cannot_run_message(const std::string& target, std::vector<std::string> missing);

/// The instruction-set features a C compiler's predefined macros for a target name (`#define
/// __AVX512F__ 1`, `#define __ARM_FEATURE_SVE 1`) that its macros for this machine do not: lower
/// case, sorted ("avx512f").
std::vector<std::string> macros_missing(const std::string& target_macros, const std::string& host_macros);

/// The Target of a CPU with these features (one thread: a plan sets how many): AVX-512 64-byte vectors (32 registers,
/// 48 KB L1, 1 MB L2: Zen 5 and recent Intel cores), AVX 32 bytes (16 registers, 32 KB and 512
/// KB: Zen 2 and 3), NEON 16 bytes (32), else 16 bytes (16); a 32 MB L3 for each (a Zen CCD's; an
/// Intel server core's share of its mesh is less, a client chip's 12-36 MB). The lane counts of
/// LATHE_TARGET_SHAPE (16, 8, 4) name the same shapes, so the suite's runs at each shape are what
/// such a CPU gets. Known debt: the caches are the class's, not read from the CPU.
Target cpu_target_of(bool avx512, bool avx, bool neon);

}  // namespace lathe
