// The compiler tests' kernel: out[i] = in[i] + 1 over 4 floats, bufs = {out, in}.
#pragma once

#include <gtest/gtest.h>

#include "lathe/program.hpp"

namespace lathe::testing {

/// Runs `prog` once and expects out = in + 1.
inline void expect_adds_one(const Program& prog) {
  float in[4] = {1, 2, 3, 4}, out[4] = {};
  void* bufs[2] = {out, in};
  prog.execute(bufs, nullptr, {1, 1, 1}, std::nullopt);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], in[i] + 1.0f) << i;
}

}  // namespace lathe::testing
