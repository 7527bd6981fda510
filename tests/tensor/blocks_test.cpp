// The blocks the Tensor front end stores values in (schedule/blocks.hpp says their widths) are
// those of the Target a graph built now is planned for.
#include <gtest/gtest.h>

#include "tensor/blocks.hpp"
#include "tensor/reference.hpp"

namespace lathe {
namespace {

// A graph built now is planned for LATHE_TARGET_SHAPE where it is set.
TEST(Blocks, BuiltForTheShapeAskedFor) {
  for (int lanes : {4, 8, 16}) {
    test::ScopedTargetShape shape(std::to_string(lanes));
    EXPECT_EQ(detail::build_blocks().lanes, lanes);
  }
}

}  // namespace
}  // namespace lathe
