#include "schedule/blocks.hpp"

#include <algorithm>

namespace lathe {

int64_t Blocks::output_channels(int64_t n) const {
  if (lanes == 0) return 0;
  for (int64_t b : {2 * lanes, lanes, lanes / 2})
    if (n % b == 0) return b;
  return 0;
}

int64_t Blocks::activations(int64_t n) const { return std::min(output_channels(n), lanes); }

int64_t Blocks::stored(int64_t n) const {
  int64_t b = output_channels(n);
  if (lanes == 0 || b >= lanes || n < lanes) return b;
  return ((n + lanes - 1) / lanes * lanes - n) * 8 <= n ? lanes : b;
}

Blocks blocks_for(const Target& target) {
  int64_t lanes = target.lanes(dtypes::float32);
  return Blocks{lanes >= 4 ? lanes : 0};
}

}  // namespace lathe
