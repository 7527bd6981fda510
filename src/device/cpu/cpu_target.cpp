#include "device/cpu/cpu_target.hpp"

#include <cctype>
#include <cstdlib>

#include "lathe/error.hpp"

namespace lathe {

std::string cpu_target_from_env() {
  const char* target = std::getenv("LATHE_CPU_TARGET");
  return target && *target ? target : "native";
}

void check_cpu_name(const std::string& name) {
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      throw Error("LATHE_CPU_TARGET '" + name + "' is not a CPU name (letters, digits, '-', '_', '.')");
}

OptTarget cpu_vectors(bool avx512, bool avx, bool neon) {
  if (avx512) return OptTarget{64, 32, 1};
  if (avx) return OptTarget{32, 16, 1};
  if (neon) return OptTarget{16, 32, 1};
  return OptTarget{16, 16, 1};
}

}  // namespace lathe
