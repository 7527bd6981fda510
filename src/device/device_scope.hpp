// The device a thread makes buffers on while a scope lasts, in place of LATHE_DEVICE's: a plan is
// prepared for its graph's device, and the constants its rules make on the way (Winograd's
// transform matrices, ...) must be made there too.
#pragma once

#include <optional>

#include "lathe/device.hpp"

namespace lathe {

class DefaultDeviceScope {
 public:
  explicit DefaultDeviceScope(DeviceSpec device);
  ~DefaultDeviceScope();
  DefaultDeviceScope(const DefaultDeviceScope&) = delete;
  DefaultDeviceScope& operator=(const DefaultDeviceScope&) = delete;

 private:
  std::optional<DeviceSpec> outer_;
};

}  // namespace lathe
