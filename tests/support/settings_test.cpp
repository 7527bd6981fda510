// Settings: every environment variable is declared once, read through one place, and a name that
// is not declared is a bug caught where it is read.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "lathe/error.hpp"
#include "lathe/info.hpp"
#include "support/settings.hpp"

namespace lathe {
namespace {

TEST(Settings, EveryVariableIsDeclaredOnceWithItsMeaning) {
  std::set<std::string> names;
  for (const EnvironmentVariable& v : environment_variables()) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " twice";
    EXPECT_FALSE(v.when.empty()) << v.name;
    EXPECT_FALSE(v.meaning.empty()) << v.name;
  }
  for (const char* name : {"DEBUG", "NOOPT", "BEAM", "LATHE_THREADS", "LATHE_TARGET_SHAPE", "LATHE_CPU_TARGET", "LATHE_CACHE_DIR"})
    EXPECT_TRUE(names.count(name)) << name;
}

TEST(Settings, AnUndeclaredNameIsAnInternalError) {
  EXPECT_THROW(settings::text("LATHE_NO_SUCH_SETTING"), InternalError);
  EXPECT_FALSE(settings::declared("LATHE_NO_SUCH_SETTING"));
}

TEST(Settings, FlagsAndNumbers) {
  ::setenv("LATHE_POISON", "1", 1);
  EXPECT_TRUE(settings::flag("LATHE_POISON"));
  ::setenv("LATHE_POISON", "0", 1);
  EXPECT_FALSE(settings::flag("LATHE_POISON", true));
  ::setenv("LATHE_POISON", "", 1);  // empty is unset
  EXPECT_TRUE(settings::flag("LATHE_POISON", true));
  EXPECT_EQ(settings::text("LATHE_POISON"), std::nullopt);
  ::unsetenv("LATHE_POISON");
  EXPECT_FALSE(settings::flag("LATHE_POISON"));
  ::setenv("LATHE_POOL_MB", "64", 1);
  EXPECT_EQ(settings::number("LATHE_POOL_MB", 7), 64);
  ::setenv("LATHE_POOL_MB", "64MB", 1);  // not a whole number: the default
  EXPECT_EQ(settings::number("LATHE_POOL_MB", 7), 7);
  ::unsetenv("LATHE_POOL_MB");
  EXPECT_EQ(settings::number("LATHE_POOL_MB", 7), 7);
}

}  // namespace
}  // namespace lathe
