#include <gtest/gtest.h>

#include "lathe/lathe.hpp"

namespace lathe {
namespace {

TEST(Smoke, IssueExample) {
  Tensor a = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::arange(6).reshape({2, 3}).cast(dtypes::float32);
  Tensor c = (a * b + 1.0f).relu().sum({1});
  std::vector<float> v = c.to_vector<float>();
  ASSERT_EQ(v.size(), 2u);
  EXPECT_FLOAT_EQ(v[0], 1 + 3 + 7);     // 1*0+1, 2*1+1, 3*2+1
  EXPECT_FLOAT_EQ(v[1], 13 + 21 + 31);  // 4*3+1, 5*4+1, 6*5+1
  ExecutionPlan plan = c.prepare();
  EXPECT_EQ(plan.prepared_kernels().size(), 1u);
  plan.execute();
  EXPECT_EQ(plan.output_buffer()->to_vector<float>(), v);
  std::vector<float> fresh{0, 0, 0, 1, 1, 1};
  plan.buffer_mut_by_id(a.uop_id())->copyin(fresh.data(), fresh.size() * sizeof(float));
  plan.execute();
  EXPECT_EQ(plan.output_buffer()->to_vector<float>(), (std::vector<float>{3, 3 + 4 + 5 + 3}));
  for (const CachedKernel& k : plan.kernels()) EXPECT_NE(k.code.find("void"), std::string::npos);
}

}  // namespace
}  // namespace lathe
