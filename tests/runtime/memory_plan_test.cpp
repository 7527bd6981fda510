// A plan's intermediates share one arena by lifetime: results do not change, buffers alive at the
// same time never share bytes, and the arena is smaller than the buffers it replaced.
#include "runtime/memory_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "lathe/lathe.hpp"
#include "runtime/arena_check.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

TEST(PlaceByLifetime, BuffersAliveTogetherNeverOverlapAndDeadOnesAreReused) {
  // A chain: each buffer lives from its writer to its reader; the third reuses the first's bytes.
  size_t arena = 0;
  std::vector<size_t> at = place_by_lifetime({{100, 0, 1}, {100, 1, 2}, {100, 2, 3}}, 64, arena);
  EXPECT_EQ(at[0], at[2]);
  EXPECT_NE(at[0], at[1]);
  EXPECT_EQ(arena, 128u + 100u);
  // Random lifetimes and odd sizes (0 and primes among them).
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<Lifetime> ls;
    for (int i = 0; i < 40; ++i) {
      size_t first = rng() % 30, len = rng() % 8;
      ls.push_back({rng() % 5 == 0 ? 0 : rng() % 1009 + 1, first, first + len});
    }
    std::vector<size_t> off = place_by_lifetime(ls, 64, arena);
    size_t peak = 0;
    for (size_t s = 0; s < 40; ++s) {
      size_t live = 0;
      for (const Lifetime& l : ls) live += l.first <= s && s <= l.last ? l.bytes : 0;
      peak = std::max(peak, live);
    }
    EXPECT_GE(arena, peak);
    for (size_t i = 0; i < ls.size(); ++i) {
      EXPECT_EQ(off[i] % 64, 0u);
      EXPECT_LE(off[i] + ls[i].bytes, arena);
      for (size_t j = i + 1; j < ls.size(); ++j) {
        bool time = ls[i].first <= ls[j].last && ls[j].first <= ls[i].last;
        bool memory = ls[i].bytes && ls[j].bytes && off[i] < off[j] + ls[j].bytes && off[j] < off[i] + ls[i].bytes;
        EXPECT_FALSE(time && memory) << "round " << round << ": " << i << " and " << j;
      }
    }
  }
}

// Five layers (each a kernel) with a skip from the first to the last, and a concatenation whose
// halves are written through views of one buffer.
Tensor network(const Tensor& x) {
  Tensor h = x, first;
  for (int layer = 0; layer < 5; ++layer) {
    Tensor w = Tensor::rand({37, 37}, 10 + layer) - 0.5f;
    h = h.matmul(w).relu();
    if (layer == 0) first = h;
  }
  Tensor both = Tensor::cat({h.exp().contiguous(), (first * 3.0f).contiguous()}, 1);
  return (both.sum({1}) + h.sum({1})).contiguous();
}

ExecutionPlan prepared(bool share, bool poison, Tensor& out) {
  Tensor x = Tensor::rand({13, 37}, 1);
  x.realize();
  out = network(x);
  PrepareOptions o;
  o.share_memory = share;
  o.poison = poison;
  return Tensor::prepare({out}, o);
}

TEST(MemoryPlan, SharedArenaAgreesWithABufferEachAndIsSmaller) {
  Tensor a, b;
  ExecutionPlan shared = prepared(true, true, a), alone = prepared(false, false, b);
  for (int run = 0; run < 3; ++run) {  // poison from the last run must not reach the next
    shared.execute();
    alone.execute();
    EXPECT_ALLCLOSE(shared.output_buffer()->to_vector<float>(), alone.output_buffer()->to_vector<float>(), 1e-5, 1e-5);
  }
  testing::expect_no_live_overlap(shared);
  const MemoryStats& m = shared.memory_stats();
  EXPECT_GT(m.intermediate_bytes, 0u);
  EXPECT_LT(m.arena_bytes, m.intermediate_bytes);
  EXPECT_GE(m.arena_bytes, m.peak_live_bytes);
  EXPECT_EQ(alone.memory_stats().arena_bytes, alone.memory_stats().intermediate_bytes);
  EXPECT_EQ(m.io_bytes, alone.memory_stats().io_bytes);
  EXPECT_GT(m.io_bytes, 0u);
}

TEST(MemoryPlan, PoisonFillsEachIntermediateAfterItsLastUse) {
  Tensor out;
  ExecutionPlan plan = prepared(false, true, out);  // a buffer each: nothing else writes over the poison
  plan.execute();
  size_t poisoned = 0, intermediates = 0;
  std::set<const void*> kept;
  for (const Buffer* o : plan.output_buffers()) kept.insert(o->data());
  for (const PreparedKernel* k : plan.prepared_kernels())
    for (size_t pos : k->output_indices) {
      const Buffer& b = plan.buffers()[k->buffer_indices[pos]];
      if (kept.count(b.data()) || b.nbytes() == 0) continue;
      ++intermediates;
      std::vector<unsigned char> bytes(b.nbytes());
      b.copyout(bytes.data(), bytes.size());
      poisoned += std::all_of(bytes.begin(), bytes.end(), [](unsigned char c) { return c == 0xFF; });
    }
  EXPECT_GT(intermediates, 3u);
  EXPECT_EQ(poisoned, intermediates);
}

TEST(MemoryPlan, ReleasedIntermediatesComeBackAndOutputsStay) {
  Tensor out;
  ExecutionPlan plan = prepared(true, false, out);
  plan.execute();
  std::vector<float> want = plan.output_buffer()->to_vector<float>();
  std::vector<uint64_t> released;
  plan.release_intermediate_buffers([&](uint64_t id) { released.push_back(id); });
  ASSERT_FALSE(released.empty());
  for (uint64_t id : released) EXPECT_FALSE(plan.buffer_mut_by_id(id) && plan.buffer_mut_by_id(id)->is_allocated()) << id;
  EXPECT_TRUE(plan.output_buffer()->is_allocated());
  EXPECT_EQ(plan.buffer(out.uop_id()), plan.output_buffer());
  plan.execute();
  EXPECT_EQ(plan.output_buffer()->to_vector<float>(), want);
  testing::expect_no_live_overlap(plan);
}

TEST(MemoryPlan, SeveralOutputsNeverShare) {
  Tensor x = Tensor::rand({8, 16}, 3);
  x.realize();
  Tensor h = x.exp().sum({1}, true).contiguous();
  Tensor y1 = (x / h).contiguous(), y2 = (y1 * 2.0f).sum({0}).contiguous(), y3 = (y1 + 1.0f).max({1}).contiguous();
  ExecutionPlan plan = Tensor::prepare({y1, y2, y3}, PrepareOptions{.poison = true});
  plan.execute();
  testing::expect_no_live_overlap(plan);
  std::vector<float> r1 = plan.output_buffer_at(0)->to_vector<float>(), r2 = plan.output_buffer_at(1)->to_vector<float>();
  std::vector<float> xs = x.to_vector<float>();
  for (int i = 0; i < 8; ++i) {
    float s = 0;
    for (int j = 0; j < 16; ++j) s += std::exp(xs[i * 16 + j]);
    for (int j = 0; j < 16; ++j) EXPECT_NEAR(r1[i * 16 + j], xs[i * 16 + j] / s, 1e-6);
  }
  for (int j = 0; j < 16; ++j) {
    float s = 0;
    for (int i = 0; i < 8; ++i) s += 2 * r1[i * 16 + j];
    EXPECT_NEAR(r2[j], s, 1e-5);
  }
}

}  // namespace
}  // namespace lathe
