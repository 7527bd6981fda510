// Linked into every test program: the suite runs with the default optimizer whatever BEAM or
// NOOPT the developer's shell has set (a test that wants either sets PrepareOptions).
#include <cstdlib>

namespace {

const bool kCleared = [] {
  ::unsetenv("BEAM");
  ::unsetenv("NOOPT");
  ::unsetenv("LATHE_TARGET_SHAPE");
  return true;
}();

}  // namespace
