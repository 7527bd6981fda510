// lathe's public API in one include.
#pragma once

#include "lathe/dtype.hpp"
#include "lathe/error.hpp"
#include "lathe/ops.hpp"
#include "lathe/uop.hpp"
#include "lathe/version.hpp"
