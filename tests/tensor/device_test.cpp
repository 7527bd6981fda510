// Tensors on devices: Tensor::to moves values (through the host between two devices), what is
// computed from them runs where they are, and one computation never reads two devices.
#include <gtest/gtest.h>

#include "device/cuda/gpu_target.hpp"
#include "lathe/lathe.hpp"
#include "tensor/reference.hpp"
#include "tensor/winograd.hpp"

namespace lathe {
namespace {

std::vector<double> doubles(const std::vector<float>& v) { return {v.begin(), v.end()}; }

TEST(TensorDevice, WhatIsComputedFromAMovedTensorRunsOnItsDevice) {
  test::ScopedCpu cpu;
  Tensor a = Tensor::rand({3, 7}, 1);
  std::vector<float> expected = ((a * 2.0f + 1.0f).sum({1})).to_vector<float>();
  Tensor e = a.to("EMU");
  EXPECT_EQ(e.device().type, "EMU");
  EXPECT_EQ(e.buffer().device().type, "EMU");
  Tensor y = (e * 2.0f + 1.0f).sum({1});
  ExecutionPlan plan = Tensor::prepare({y});
  EXPECT_EQ(plan.device().type, "EMU");
  for (const PreparedKernel* k : plan.prepared_kernels()) EXPECT_EQ(k->device.type, "EMU");
  EXPECT_ALLCLOSE(y.to_vector<float>(), doubles(expected), 1e-6, 1e-6);
  Tensor back = y.to("cpu");
  EXPECT_EQ(back.buffer().device().type, "CPU");
  EXPECT_EQ(back.to_vector<float>(), y.to_vector<float>());
  EXPECT_EQ(a.to("CPU").uop(), a.uop());  // already there: itself
}

TEST(TensorDevice, AComputationReadingTwoDevicesIsRefused) {
  test::ScopedCpu cpu;
  Tensor a = Tensor::rand({4}, 1), b = Tensor::rand({4}, 2).to("EMU");
  try {
    (a + b).realize();
    FAIL() << "a plan read a CPU buffer and an EMU buffer";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("two devices"), std::string::npos) << what;
    EXPECT_NE(what.find("CPU"), std::string::npos) << what;
    EXPECT_NE(what.find("EMU"), std::string::npos) << what;
    EXPECT_NE(what.find("Tensor::to"), std::string::npos) << what;
  }
  EXPECT_THROW(a.to("TPU"), Error);
}

// Winograd's transform matrices are made while the plan is prepared: on the plan's device, not
// LATHE_DEVICE's (a plan refuses a buffer on another device).
TEST(TensorDevice, ConstantsTheRulesMakeAreMadeOnThePlansDevice) {
  test::ScopedCpu cpu;
  Tensor x = Tensor::rand({1, 64, 40, 39}, 1);
  Tensor w = (Tensor::rand({64, 64, 3, 3}, 2) * 0.05f).realize();
  w.buffer().set_constant();
  ASSERT_TRUE(detail::winograd_pays(x, w, {1, 1}, {1, 1}, {1, 1}, 1, gpu_target(80))) << "the rule must fire on the emulator's GPU";
  std::vector<float> expected = x.conv2d(w, std::nullopt, {1, 1}, {1, 1}).to_vector<float>();
  Tensor we = w.to("EMU");
  we.buffer().set_constant();
  Tensor y = x.to("EMU").conv2d(we, std::nullopt, {1, 1}, {1, 1});
  EXPECT_ALLCLOSE(y.to_vector<float>(), doubles(expected), 1e-4, 1e-4);
}

TEST(TensorDevice, ConstantsAndLazyGraphsMoveToo) {
  test::ScopedCpu cpu;
  Tensor c = Tensor::full({2, 3}, 1.5f);  // no buffer: on the default device
  EXPECT_EQ(c.device().type, "CPU");
  Tensor moved = (c + Tensor::arange(3).cast(dtypes::float32)).to("EMU");
  EXPECT_TRUE(moved.is_realized());
  EXPECT_EQ(moved.to_vector<float>(), (std::vector<float>{1.5f, 2.5f, 3.5f, 1.5f, 2.5f, 3.5f}));
}

TEST(TensorDevice, ASymbolicTensorMovesItsValues) {
  test::ScopedCpu cpu;
  Variable n("n", 1, 9);
  Tensor x = Tensor::arange(9).cast(dtypes::float32).shrink({{0, n.bind(5)}}) * 3.0f;
  Tensor e = x.to("EMU");
  EXPECT_EQ(e.device().type, "EMU");
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{0, 3, 6, 9, 12}));
}

TEST(TensorDevice, ZeroSizedTensorsMove) {
  test::ScopedCpu cpu;
  Tensor z = Tensor::rand({0, 4}, 1).to("EMU");
  EXPECT_EQ(z.shape(), (Shape{0, 4}));
  EXPECT_TRUE(z.to_vector<float>().empty());
}

}  // namespace
}  // namespace lathe
