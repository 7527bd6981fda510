#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

#include "lathe/error.hpp"
#include "lathe/uop.hpp"

namespace lathe {
namespace {

TEST(UOp, EqualNodesAreTheSameObject) {
  UOpPtr a = UOp::variable("a", 0, 10);
  UOpPtr x = a + 3;
  UOpPtr y = UOp::variable("a", 0, 10) + UOp::index_const(3);
  EXPECT_EQ(x, y);
  EXPECT_EQ(x->id(), y->id());
  EXPECT_NE(x, a + 4);
  EXPECT_NE(a, UOp::variable("a", 0, 11));
  EXPECT_NE(UOp::const_(dtypes::int32, 3), UOp::const_(dtypes::int64, 3));
}

TEST(UOp, FieldsAreWhatWasMade) {
  UOpPtr c = UOp::const_(dtypes::float32, 1.5);
  UOpPtr r = UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {c}, ReduceArg{Ops::MAX, {0, 2}});
  EXPECT_EQ(r->op(), Ops::REDUCE_AXIS);
  EXPECT_EQ(r->dtype(), dtypes::float32);
  ASSERT_EQ(r->src().size(), 1u);
  EXPECT_EQ(r->src(0), c);
  EXPECT_EQ(r->arg_as<ReduceArg>().op, Ops::MAX);
  EXPECT_EQ(r->arg_as<ReduceArg>().axes, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(c->const_value(), ConstValue(1.5));
}

TEST(UOp, ConstantsTakeTheirDtypesRepresentation) {
  EXPECT_EQ(UOp::const_(dtypes::uint8, int64_t{-1})->const_value(), ConstValue(uint64_t{255}));
  EXPECT_EQ(UOp::const_(dtypes::float32, int64_t{2})->const_value(), ConstValue(2.0));
  EXPECT_EQ(UOp::const_(dtypes::bool_, int64_t{7})->const_value(), ConstValue(true));
  EXPECT_EQ(UOp::const_(dtypes::int32, 2.0), UOp::const_(dtypes::int32, int64_t{2}));
}

TEST(UOp, FloatConstantsInternByBitPattern) {
  double nan = std::nan("");
  EXPECT_EQ(UOp::const_(dtypes::float32, nan), UOp::const_(dtypes::float32, nan));
  EXPECT_NE(UOp::const_(dtypes::float32, 0.0), UOp::const_(dtypes::float32, -0.0));
}

TEST(UOp, IdsAreUniqueAndIncreasing) {
  UOpPtr a = UOp::variable("ids_a", 0, 1);
  UOpPtr b = UOp::variable("ids_b", 0, 1);
  EXPECT_LT(a->id(), b->id());
  EXPECT_LT(b->id(), (a + b)->id());
}

TEST(UOp, WrongArityIsAnInternalError) {
  UOpPtr c = UOp::index_const(1);
  EXPECT_THROW(UOp::make(Ops::ADD, dtypes::index, {c}), InternalError);
  EXPECT_THROW(UOp::make(Ops::CONST, dtypes::index, {c}, int64_t{1}), InternalError);
  EXPECT_THROW(UOp::make(Ops::WHERE, dtypes::index, {c, c}), InternalError);
  EXPECT_THROW(UOp::make(Ops::ADD, dtypes::index, {c, nullptr}), InternalError);
  try {
    UOp::make(Ops::ADD, dtypes::index, {c, c, c});
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("ADD takes 2 sources, got 3"), std::string::npos) << e.what();
  }
}

TEST(UOp, VariableWithEmptyRangeIsRejected) { EXPECT_THROW(UOp::variable("n", 5, 4), Error); }

TEST(UOp, ConstValueOfNonConstIsAnInternalError) {
  EXPECT_THROW(UOp::variable("v", 0, 1)->const_value(), InternalError);
}

TEST(UOp, BuildersMakeTheExpectedOps) {
  UOpPtr x = UOp::variable("x", 0, 9);
  UOpPtr y = UOp::variable("y", 0, 9);
  EXPECT_EQ((x - y)->op(), Ops::SUB);
  EXPECT_EQ(idiv(x, 2)->op(), Ops::IDIV);
  EXPECT_EQ((x % y)->op(), Ops::MOD);
  EXPECT_EQ(lt(x, y)->dtype(), dtypes::bool_);
  EXPECT_EQ(ne(x, y)->op(), Ops::CMPNE);
  EXPECT_EQ(where(lt(x, y), x, y)->dtype(), dtypes::index);
  EXPECT_EQ(cast(x, dtypes::int32)->dtype(), dtypes::int32);
  UOpPtr m = min(x, y);  // -max(-x, -y)
  EXPECT_EQ(m->op(), Ops::NEG);
  EXPECT_EQ(m->src(0)->op(), Ops::MAX);
}

TEST(UOp, OpTableProperties) {
  EXPECT_TRUE(op_has(Ops::ADD, kCommutative));
  EXPECT_FALSE(op_has(Ops::SUB, kCommutative));
  EXPECT_TRUE(op_has(Ops::CMPLT, kComparison));
  EXPECT_TRUE(op_has(Ops::PERMUTE, kMovement));
  EXPECT_TRUE(op_has(Ops::REDUCE_AXIS, kReduce));
  EXPECT_TRUE(is_alu(Ops::WHERE));
  EXPECT_TRUE(is_alu(Ops::EXP2));
  EXPECT_FALSE(is_alu(Ops::LOAD));
  EXPECT_EQ(op_name(Ops::DEFINE_VAR), "DEFINE_VAR");
  EXPECT_EQ(op_info(Ops::WHERE).min_src, 3);
  EXPECT_EQ(op_info(Ops::SINK).max_src, -1);
}

// Threads building the same graph at once must all get the same nodes.
TEST(UOp, InterningIsThreadSafe) {
  constexpr int kThreads = 8;
  std::vector<UOpPtr> roots(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &roots] {
      UOpPtr acc = UOp::variable("shared", 0, 100);
      for (int i = 0; i < 2000; ++i) {
        acc = acc * 3 + i;
        if (i % 100 == 0) (void)(UOp::variable("scratch", 0, t) + i);  // churn: made and dropped
      }
      roots[t] = acc;
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(roots[t], roots[0]);
}

// Threads making and dropping the same nodes at once: one thread finds a node in the table while
// another drops its last reference. Looking it up must never release that reference under the
// table's lock (the deleter then waits on the same lock: this test hung). A hang fails the test
// after a minute; every node built twice while others churn it must be the same node.
TEST(UOp, InterningWhileOtherThreadsReleaseTheSameNodesDoesNotDeadlock) {
  constexpr int kThreads = 4, kRounds = 20000;
  std::atomic<int64_t> same{0};
  std::promise<void> finished;
  std::future<void> done = finished.get_future();
  std::thread driver([&] {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&same] {
        UOpPtr x = UOp::variable("x", 0, 10);
        for (int round = 0; round < kRounds; ++round) {
          UOpPtr n = (x + round % 7) * 3;  // made, found by the other threads, dropped
          same += n == (x + round % 7) * 3;
        }
      });
    }
    for (auto& th : threads) th.join();
    finished.set_value();
  });
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "interning from " << kThreads << " threads did not finish in a minute: deadlock";
    std::fflush(stdout);
    std::_Exit(1);  // the hung threads cannot be joined
  }
  driver.join();
  EXPECT_EQ(same.load(), kThreads * kRounds);
}

}  // namespace
}  // namespace lathe
