// TargetShape (lathe/target.hpp): the optimizer's machine as text, for LATHE_TARGET_SHAPE.
#include <cctype>
#include <cstdlib>

#include "lathe/error.hpp"
#include "lathe/plan.hpp"

namespace lathe {
namespace {

const char* const kSyntax =
    "expected a float32 lane count (1, 2, 4, 8 or 16) or comma-separated fields "
    "lanes=N,registers=N,l1=SIZE,l2=SIZE,l3=SIZE,memory=N "
    "(SIZE in bytes, or with a K or M suffix; memory: bytes a cycle a thread)";

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw Error("target shape '" + text + "': " + why + "; " + kSyntax);
}

// A whole positive number with an optional K or M suffix (when `sizes`); -1 when it is not one.
int64_t number(const std::string& s, bool sizes) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return -1;
  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  if (digits > 12) return -1;
  int64_t n = std::strtoll(s.substr(0, digits).c_str(), nullptr, 10);
  std::string suffix = s.substr(digits);
  if (suffix.empty()) return n;
  if (!sizes) return -1;
  if (suffix == "K" || suffix == "k") return n << 10;
  if (suffix == "M" || suffix == "m") return n << 20;
  return -1;
}

bool valid_lanes(int64_t lanes) { return lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 16; }

std::string size_text(int64_t bytes) {
  if (bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + "M";
  if (bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

}  // namespace

TargetShape TargetShape::parse(const std::string& text) {
  if (int64_t lanes = number(text, false); lanes >= 0) {
    if (!valid_lanes(lanes)) bad(text, "no CPU has " + text + " float32 lanes");
    bool wide = lanes >= 16;
    return TargetShape{static_cast<int>(lanes * 4),
                       wide ? 32 : 16,
                       wide ? int64_t{48} << 10 : int64_t{32} << 10,
                       wide ? int64_t{1} << 20 : int64_t{512} << 10,
                       int64_t{32} << 20,
                       wide ? 7 : 4};
  }
  TargetShape shape;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string field = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    size_t eq = field.find('=');
    if (eq == std::string::npos) bad(text, "the field '" + field + "' has no '='");
    std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    bool size_field = key == "l1" || key == "l2" || key == "l3";
    int64_t n = number(value, size_field);
    if (n <= 0) bad(text, "'" + value + "' is not a positive " + (size_field ? "size" : "whole number") + " for " + key);
    if (key == "lanes") {
      if (!valid_lanes(n)) bad(text, "no CPU has " + value + " float32 lanes");
      shape.vector_bytes = static_cast<int>(n * 4);
    } else if (key == "registers") {
      if (n > 256) bad(text, value + " vector registers is more than any CPU has");
      shape.vector_registers = static_cast<int>(n);
    } else if (key == "l1") {
      shape.l1_bytes = n;
    } else if (key == "l2") {
      shape.l2_bytes = n;
    } else if (key == "l3") {
      shape.l3_bytes = n;
    } else if (key == "memory") {
      if (n > 1024) bad(text, value + " bytes a cycle is more than any memory delivers");
      shape.memory_bytes_per_cycle = static_cast<int>(n);
    } else {
      bad(text, "unknown field '" + key + "'");
    }
  }
  return shape;
}

std::string TargetShape::to_string() const {
  std::string s;
  auto add = [&](const std::string& field) { s += (s.empty() ? "" : ",") + field; };
  if (vector_bytes) add("lanes=" + std::to_string(vector_bytes / 4));
  if (vector_registers) add("registers=" + std::to_string(vector_registers));
  if (l1_bytes) add("l1=" + size_text(l1_bytes));
  if (l2_bytes) add("l2=" + size_text(l2_bytes));
  if (l3_bytes) add("l3=" + size_text(l3_bytes));
  if (memory_bytes_per_cycle) add("memory=" + std::to_string(memory_bytes_per_cycle));
  return s;
}

}  // namespace lathe
