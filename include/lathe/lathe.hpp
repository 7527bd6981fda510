// lathe's public API in one include.
#pragma once

#include "lathe/device.hpp"
#include "lathe/dtype.hpp"
#include "lathe/error.hpp"
#include "lathe/info.hpp"
#include "lathe/kernel.hpp"
#include "lathe/ops.hpp"
#include "lathe/plan.hpp"
#include "lathe/program.hpp"
#include "lathe/tensor.hpp"
#include "lathe/uop.hpp"
#include "lathe/variable.hpp"
#include "lathe/version.hpp"
