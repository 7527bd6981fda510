#include "device/cpu/cpu_target.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

#include "lathe/error.hpp"
#include "support/settings.hpp"

namespace lathe {

std::string cpu_target_from_env() {
  return settings::text("LATHE_CPU_TARGET").value_or("native");
}

void check_cpu_name(const std::string& name) {
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      throw Error("LATHE_CPU_TARGET '" + name + "' is not a CPU name (letters, digits, '-', '_', '.')");
}

std::string cannot_run_message(const std::string& target, std::vector<std::string> missing) {
  if (missing.empty()) return "";
  std::sort(missing.begin(), missing.end());
  std::string list;
  for (const std::string& f : missing) list += (list.empty() ? "" : ", ") + f;
  return "LATHE_CPU_TARGET '" + target + "' builds code for CPU features this machine lacks (" + list +
         "): unset LATHE_CPU_TARGET to build for this machine, or name a CPU it can run";
}

std::vector<std::string> macros_missing(const std::string& target_macros, const std::string& host_macros) {
  // A feature macro is "#define __NAME__ 1" or "#define __ARM_FEATURE_NAME 1" with NAME in upper
  // case (tuning macros such as __znver4__ or __tune_znver4__ are lower case).
  auto features = [](const std::string& macros) {
    std::set<std::string> out;
    std::istringstream lines(macros);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream in(line);
      std::string define, name, value, rest;
      if (!(in >> define >> name >> value) || (in >> rest) || define != "#define" || value != "1") continue;
      bool upper = name.size() > 4 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
      });
      bool x86 = name.size() > 4 && name.rfind("__", 0) == 0 && name.compare(name.size() - 2, 2, "__") == 0;
      bool arm = name.rfind("__ARM_FEATURE_", 0) == 0;
      if (!upper || (!x86 && !arm)) continue;
      std::string f = x86 ? name.substr(2, name.size() - 4) : name.substr(14);
      std::transform(f.begin(), f.end(), f.begin(), [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
      out.insert(f);
    }
    return out;
  };
  std::set<std::string> target = features(target_macros), host = features(host_macros);
  std::vector<std::string> missing;
  std::set_difference(target.begin(), target.end(), host.begin(), host.end(), std::back_inserter(missing));
  return missing;
}

Target cpu_target_of(bool avx512, bool avx, bool neon) {
  constexpr int64_t kSmallL1 = 32 << 10, kSmallL2 = 512 << 10, kL3 = int64_t{32} << 20;
  // Memory's bytes a cycle a thread: AVX-512 parts are the newer ones, with more channels of
  // faster memory per core (Target::memory_bytes_per_cycle); the rest keep the Target's 4.
  if (avx512) return Target{64, 32, 1, 48 << 10, 1 << 20, kL3, 7};
  if (avx) return Target{32, 16, 1, kSmallL1, kSmallL2, kL3};
  if (neon) return Target{16, 32, 1, kSmallL1, kSmallL2, kL3};
  return Target{16, 16, 1, kSmallL1, kSmallL2, kL3};
}

}  // namespace lathe
