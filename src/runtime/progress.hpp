// A line on stderr that says how far a slow step of prepare is (compiling a plan's kernels, a
// BEAM search): rewritten in place, shown once the step has taken `after`, and only on a terminal.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace lathe {

class ProgressLine {
 public:
  explicit ProgressLine(std::chrono::milliseconds after) : after_(after) {}
  ~ProgressLine() { done(); }

  void show(const std::string& what) {
    if (!shown_ && (std::chrono::steady_clock::now() - start_ < after_ || !isatty(fileno(stderr)))) return;
    shown_ = true;
    std::fprintf(stderr, "\rlathe: %s\033[K", what.c_str());
    std::fflush(stderr);
  }
  /// Ends the line (if one was shown).
  void done() {
    if (shown_) std::fprintf(stderr, "\n");
    shown_ = false;
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::milliseconds after_;
  bool shown_ = false;
};

}  // namespace lathe
