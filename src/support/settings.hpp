// Settings: every environment variable lathe reads, declared once with what it means and when it
// is read, and read only through here. PrepareOptions overrides the ones a plan can set
// (runtime/compile_kernel.cpp, runtime/memory_plan.cpp); `lathe info` lists them all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lathe::settings {

/// One environment variable: its name, when lathe reads it, and what it means.
struct Variable {
  const char* name;
  const char* when;  // "at every prepare", "once per process", ...
  const char* meaning;
};

/// Every variable lathe reads, in the order `lathe info` lists them.
const std::vector<Variable>& variables();

/// Whether `name` is one of variables().
bool declared(const std::string& name);

/// The value of the variable `name` (one of variables(): anything else is an InternalError), or
/// nothing when it is unset or empty.
std::optional<std::string> text(const std::string& name);

/// A whole-number switch (NOOPT=1, LATHE_ARENA=0): `otherwise` when unset, else whether the
/// number is nonzero.
bool flag(const std::string& name, bool otherwise = false);

/// A whole number (LATHE_THREADS=4), or `otherwise` when unset or not a whole number.
int64_t number(const std::string& name, int64_t otherwise);

/// DEBUG's level (0 when unset), read once per process.
int debug_level();

}  // namespace lathe::settings
