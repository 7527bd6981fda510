#include "schedule/blocks.hpp"

#include <algorithm>

#include "ir/label.hpp"

namespace lathe {

int64_t Blocks::output_channels(int64_t n) const {
  if (lanes == 0) return 0;
  for (int64_t b : {2 * lanes, lanes, lanes / 2})
    if (n % b == 0) return b;
  return 0;
}

namespace {
constexpr int64_t kLine = kCacheLineBytes / 4;  // float32s in a cache line
}  // namespace

int64_t Blocks::activations(int64_t n) const {
  int64_t line = convolution_input(n);
  return line > lanes ? line : std::min(output_channels(n), lanes);
}

int64_t Blocks::convolution_input(int64_t n) const { return lanes != 0 && lanes < kLine && n % kLine == 0 ? kLine : lanes; }

int64_t Blocks::stored(int64_t n) const {
  int64_t b = output_channels(n);
  // Whether n padded with zeros to a multiple of `block` grows by at most an eighth.
  auto pads_to = [n](int64_t block) { return n >= block && ((n + block - 1) / block * block - n) * 8 <= n; };
  if (lanes == 0 || b == 2 * lanes) return b;
  bool odd_vectors = (n + lanes - 1) / lanes % 2 != 0;
  if (pairs && odd_vectors && pads_to(2 * lanes)) return 2 * lanes;
  if (b >= lanes) return b;
  return pads_to(lanes) ? lanes : b;
}

Blocks blocks_for(const Target& target) {
  int64_t lanes = target.lanes(dtypes::float32);
  return Blocks{lanes >= 4 ? lanes : 0, registers_pair_in_a_line(target)};
}

UOpPtr stored_in_blocks(const UOpPtr& x, const Shape& s, size_t n, const std::vector<size_t>& order, int64_t block,
                        const std::vector<std::string>& labels) {
  DType dt = x->dtype();
  int64_t extra = (s[n] + block - 1) / block * block - s[n];
  auto make = [&](Ops op, std::vector<UOpPtr> src, Arg arg) {
    UOpPtr u = UOp::make(op, dt, std::move(src), std::move(arg));
    for (const std::string& l : labels) add_label(u, l);
    return u;
  };
  UOpPtr v = x;
  Shape whole = s;
  if (extra) {
    std::vector<int64_t> pads(2 * s.size(), 0);
    pads[2 * n + 1] = extra;
    v = make(Ops::PAD, {v, UOp::const_(dt, 0.0)}, pads);
    whole[n] += extra;
  }
  Shape split = whole;  // N as (N/B, B) at n, n + 1
  split[n] = whole[n] / block;
  split.insert(split.begin() + static_cast<int64_t>(n) + 1, block);
  std::vector<int64_t> permutation;
  for (size_t a : order) permutation.push_back(static_cast<int64_t>(a > n ? a + 1 : a));  // a base axis in `split`
  permutation.push_back(static_cast<int64_t>(n) + 1);
  v = make(Ops::RESHAPE, {v}, split);
  v = make(Ops::PERMUTE, {v}, permutation);
  v = make(Ops::CONTIGUOUS, {v}, CopyArg{.layout = true});
  v = make(Ops::PERMUTE, {v}, inverse_permutation(permutation));
  v = make(Ops::RESHAPE, {v}, whole);
  if (!extra) return v;
  std::vector<int64_t> keep;
  for (int64_t d : s) keep.insert(keep.end(), {0, d});
  return make(Ops::SHRINK, {v}, keep);
}

UOpPtr reshaped(const UOpPtr& u, const Shape& s, const SymDims& dims, const std::vector<std::string>& labels) {
  std::vector<UOpPtr> src{u};
  if (!std::all_of(dims.begin(), dims.end(), [](const UOpPtr& d) { return d->is_const(); })) src.insert(src.end(), dims.begin(), dims.end());
  return labelled_as(UOp::make(Ops::RESHAPE, u->dtype(), std::move(src), s), labels);
}

UOpPtr permuted(const UOpPtr& u, const std::vector<int64_t>& order, const std::vector<std::string>& labels) {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int64_t>(i)) return labelled_as(UOp::make(Ops::PERMUTE, u->dtype(), {u}, order), labels);
  return u;
}

UOpPtr split_in_blocks(const UOpPtr& x, const Shape& s, const SymDims& dims, size_t n, int64_t block, bool copy,
                       const std::vector<std::string>& labels) {
  UOpPtr v = reshaped(x, split_shape(s, n, block), split_dims(dims, n, s[n], block), labels);
  if (!copy) return v;
  std::vector<int64_t> order;  // the block index in place, its elements innermost
  for (size_t i = 0; i <= s.size(); ++i)
    if (i != n + 1) order.push_back(static_cast<int64_t>(i));
  order.push_back(static_cast<int64_t>(n) + 1);
  v = permuted(v, order, labels);
  v = labelled_as(UOp::make(Ops::CONTIGUOUS, x->dtype(), {v}, CopyArg{.layout = true}), labels);
  return permuted(v, inverse_permutation(order), labels);
}

}  // namespace lathe
