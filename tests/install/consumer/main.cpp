// A user's program: only the installed headers and library.
#include <lathe/lathe.hpp>

#include <iostream>

int main() {
  lathe::UOpPtr n = lathe::UOp::variable("n", 1, 64);
  lathe::UOpPtr e = n + 1;
  std::cout << "lathe " << lathe::kVersion << ": (n + 1) has bounds [" << e->vmin() << ", " << e->vmax() << "]\n";
  return lathe::least_upper_dtype({lathe::dtypes::int8, lathe::dtypes::uint8}) == lathe::dtypes::int16 ? 0 : 1;
}
