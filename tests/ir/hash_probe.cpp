// Prints the structural hash of a fixed graph, built in the order argv[1] names ("forward" or
// "backward") after allocating an unrelated number of nodes, so runs differ in addresses, ids
// and creation order but not in content.
#include <cstdio>
#include <cstring>
#include <vector>

#include "lathe/uop.hpp"

using namespace lathe;

static UOpPtr build(bool backward) {
  UOpPtr a, b;
  if (backward) {
    b = UOp::variable("b", 0, 7);
    a = UOp::variable("a", 1, 64);
  } else {
    a = UOp::variable("a", 1, 64);
    b = UOp::variable("b", 0, 7);
  }
  UOpPtr r = UOp::range(a, 0);
  UOpPtr e = where(lt(r, b), idiv(r * 4 + b, 3), r % 5);
  UOpPtr f = UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {cast(e, dtypes::float32)}, ReduceArg{Ops::ADD, {1}});
  return UOp::make(Ops::SINK, dtypes::void_, {f, UOp::const_(dtypes::float16, 0.5)});
}

int main(int argc, char** argv) {
  bool backward = argc > 1 && std::strcmp(argv[1], "backward") == 0;
  std::vector<UOpPtr> noise;
  for (int i = 0; i < (backward ? 1000 : 17); ++i) noise.push_back(UOp::index_const(1000000 + i));
  std::printf("%016llx\n", static_cast<unsigned long long>(build(backward)->hash()));
  return 0;
}
