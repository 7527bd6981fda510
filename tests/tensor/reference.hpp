// Helpers for the Tensor op tests: row-major index arithmetic for hand-written reference loops,
// deterministic test data, an allclose comparison with explicit tolerances, and a check that a
// statement throws a given lathe::Error subclass whose message holds given substrings.
//
// Nothing here calls into lathe to compute expected values: references are plain C++ loops.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "lathe/lathe.hpp"

namespace lathe::test {

using Index = std::vector<int64_t>;

inline int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

/// Row-major strides of a contiguous tensor of `shape`.
inline Index strides_of(const Shape& shape) {
  Index s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// The multi-index of flat position `flat` in `shape`.
inline Index unravel(int64_t flat, const Shape& shape) {
  Index idx(shape.size(), 0);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    if (shape[i] == 0) return idx;
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  return idx;
}

/// The flat position of `idx` in a contiguous tensor of `shape`.
inline int64_t ravel(const Index& idx, const Shape& shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + idx[i];
  return flat;
}

/// The flat position in an input of `in_shape` that broadcasts to the output position `out_idx`
/// (numpy rules: align to the right, size-1 axes repeat).
inline int64_t bcast_index(const Index& out_idx, const Shape& in_shape) {
  size_t lead = out_idx.size() - in_shape.size();
  int64_t flat = 0;
  for (size_t i = 0; i < in_shape.size(); ++i) flat = flat * in_shape[i] + (in_shape[i] == 1 ? 0 : out_idx[lead + i]);
  return flat;
}

/// Deterministic values on a 1/8 grid in [-1, 1]: products and short sums of them are exact in
/// float, so kernels that reorder arithmetic still match a loop reference tightly.
inline std::vector<float> grid_data(size_t n, int salt) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((static_cast<int>(i) * 13 + salt) % 17) * 0.125f - 1.0f;
  return v;
}

/// Deterministic pseudo-random values in [lo, hi) (a 64-bit LCG; not lathe's generator).
inline std::vector<float> data(size_t n, uint64_t seed = 1, double lo = -2.0, double hi = 2.0) {
  std::vector<float> v(n);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = static_cast<double>(s >> 11) * 0x1.0p-53;
    v[i] = static_cast<float>(lo + (hi - lo) * u);
  }
  return v;
}

/// Deterministic integers in [lo, hi].
template <class T>
std::vector<T> int_data(size_t n, uint64_t seed, int64_t lo, int64_t hi) {
  std::vector<T> v(n);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = static_cast<T>(lo + static_cast<int64_t>((s >> 33) % static_cast<uint64_t>(hi - lo + 1)));
  }
  return v;
}

template <class T>
std::vector<T> iota(size_t n, T start = T(0), T step = T(1)) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(start + static_cast<T>(i) * step);
  return v;
}

/// Element-wise |actual - expected| <= atol + rtol * |expected|, NaN matching NaN and infinities
/// matching exactly. Reports the first few mismatches.
template <class A, class E>
::testing::AssertionResult all_close(const std::vector<A>& actual, const std::vector<E>& expected, double rtol,
                                     double atol) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << "size " << actual.size() << " != expected size " << expected.size();
  std::ostringstream bad;
  int nbad = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = static_cast<double>(actual[i]), e = static_cast<double>(expected[i]);
    bool ok;
    if (std::isnan(e)) ok = std::isnan(a);
    else if (std::isinf(e)) ok = a == e;
    else ok = !std::isnan(a) && std::fabs(a - e) <= atol + rtol * std::fabs(e);
    if (!ok && nbad++ < 8) bad << "\n  [" << i << "] actual " << a << " expected " << e << " (diff " << (a - e) << ")";
  }
  if (nbad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << nbad << " of " << actual.size() << " elements differ (rtol " << rtol
                                       << ", atol " << atol << "):" << bad.str();
}

/// Exact equality of integer or bool vectors, with a readable report.
template <class A, class E>
::testing::AssertionResult all_equal(const std::vector<A>& actual, const std::vector<E>& expected) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure() << "size " << actual.size() << " != expected size " << expected.size();
  std::ostringstream bad;
  int nbad = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (static_cast<long double>(actual[i]) != static_cast<long double>(expected[i]) && nbad++ < 8) {
      if constexpr (sizeof(A) == 1)
        bad << "\n  [" << i << "] actual " << static_cast<int>(actual[i]) << " expected " << static_cast<int>(expected[i]);
      else
        bad << "\n  [" << i << "] actual " << actual[i] << " expected " << expected[i];
    }
  }
  if (nbad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << nbad << " of " << actual.size() << " elements differ:" << bad.str();
}

#define EXPECT_ALLCLOSE(actual, expected, rtol, atol) EXPECT_TRUE(::lathe::test::all_close((actual), (expected), (rtol), (atol)))
#define EXPECT_ALLEQUAL(actual, expected) EXPECT_TRUE(::lathe::test::all_equal((actual), (expected)))

/// Float32 values of any float tensor (float16/bfloat16/float64 go through a cast).
inline std::vector<float> as_f32(const Tensor& t) {
  return t.dtype() == dtypes::float32 ? t.to_vector<float>() : t.cast(dtypes::float32).to_vector<float>();
}

/// Sets the environment variable `name` to `value` while it lives; then restores it (or unsets it).
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* v = std::getenv(name_.c_str())) old_ = v;
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
    else ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// Sets LATHE_TARGET_SHAPE (a float32 lane count: "4", "8", "16") while it lives, so the graphs
/// built and prepared meanwhile are planned for that shape whatever this CPU is; then restores it.
class ScopedTargetShape : public ScopedEnv {
 public:
  explicit ScopedTargetShape(const std::string& lanes) : ScopedEnv("LATHE_TARGET_SHAPE", lanes) {}
};

/// Makes tensors (and so plans) on the CPU whatever LATHE_DEVICE says, those made while it lasts:
/// for a test of what a CPU Target's plan is made of (its vector blocks, its kernels), which a
/// GPU's differs from (the suite also runs on EMU).
class ScopedCpu : public ScopedEnv {
 public:
  ScopedCpu() : ScopedEnv("LATHE_DEVICE", "CPU") {}
};

/// What `f` throws as lathe::Error, or "(no error)".
inline std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

/// How many kernels the plan computing `t` runs.
inline size_t kernel_count(const Tensor& t) { return t.prepare().prepared_kernels().size(); }

inline Tensor f32(const std::vector<float>& v, Shape shape) { return Tensor::from_vector(v, std::move(shape)); }

/// One query row of attention in doubles: softmax over the keys j < `keys` of score(j, s), where s
/// is the row's dot product with key j (`key(j, p)` its element p) over the `d` columns of `q_row`
/// divided by sqrt(d), and score masks or biases it (-inf shuts the key out); then the weighted sum
/// of the value rows (`value(j, e)`, e < dv).
template <class Key, class Value, class Score>
std::vector<double> attention_row(const float* q_row, int64_t keys, int64_t d, int64_t dv, Key key, Value value, Score score) {
  std::vector<double> p(static_cast<size_t>(keys));
  double top = -std::numeric_limits<double>::infinity(), sum = 0;
  for (int64_t j = 0; j < keys; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < d; ++c) dot += double(q_row[c]) * double(key(j, c));
    p[static_cast<size_t>(j)] = score(j, dot / std::sqrt(double(d)));
    top = std::max(top, p[static_cast<size_t>(j)]);
  }
  for (double& x : p) sum += (x = std::exp(x - top));
  std::vector<double> out(static_cast<size_t>(dv), 0.0);
  for (int64_t e = 0; e < dv; ++e)
    for (int64_t j = 0; j < keys; ++j) out[static_cast<size_t>(e)] += p[static_cast<size_t>(j)] / sum * double(value(j, e));
  return out;
}

/// (batch, n, k) @ (batch, k, m) for contiguous row-major data; an operand not `_batched` is one
/// matrix broadcast over the batch.
template <class T>
inline std::vector<double> matmul_ref(const std::vector<T>& a, const std::vector<T>& b, int64_t batch, bool a_batched, bool b_batched,
                               int64_t n, int64_t k, int64_t m) {
  std::vector<double> out;
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p)
          acc += double(a[(a_batched ? z * n * k : 0) + i * k + p]) * double(b[(b_batched ? z * k * m : 0) + p * m + j]);
        out.push_back(acc);
      }
  return out;
}

/// Pooling of `n` planes of h x w (batch and channels in a row) over a kh x kw window with stride
/// (sh, sw) and padding top, bottom, left, right: the maximum (padding is -inf) or the mean over
/// all kh * kw taps (padding counts as 0).
inline std::vector<double> pool_ref(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh,
                                    int64_t sw, int64_t pt, int64_t pb, int64_t pl, int64_t pr, bool is_max) {
  int64_t oh = (h + pt + pb - kh) / sh + 1, ow = (w + pl + pr - kw) / sw + 1;
  double pad = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
  std::vector<double> out;
  for (int64_t c = 0; c < n; ++c)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xo = 0; xo < ow; ++xo) {
        double acc = pad;
        for (int64_t ky = 0; ky < kh; ++ky)
          for (int64_t kx = 0; kx < kw; ++kx) {
            int64_t iy = y * sh - pt + ky, ix = xo * sw - pl + kx;
            double v = iy >= 0 && iy < h && ix >= 0 && ix < w ? x[static_cast<size_t>((c * h + iy) * w + ix)] : pad;
            acc = is_max ? std::max(acc, v) : acc + v;
          }
        out.push_back(is_max ? acc : acc / double(kh * kw));
      }
  return out;
}
/// The same with padding ph on the top and bottom, pw on the left and right.
inline std::vector<double> pool_ref(const std::vector<float>& x, int64_t n, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh,
                                    int64_t sw, int64_t ph, int64_t pw, bool is_max) {
  return pool_ref(x, n, h, w, kh, kw, sh, sw, ph, ph, pw, pw, is_max);
}

/// A stored float32 tensor of `shape` holding data(n, seed).
inline Tensor random_tensor(const Shape& shape, uint64_t seed) { return f32(data(static_cast<size_t>(numel_of(shape)), seed), shape); }
/// A float32 tensor of grid_data (exact products and short sums).
inline Tensor grid_tensor(const Shape& shape, int salt) { return f32(grid_data(static_cast<size_t>(numel_of(shape)), salt), shape); }

}  // namespace lathe::test

/// `stmt` must throw `Exc` (a lathe::Error subclass) whose what() contains every substring given.
#define EXPECT_THROW_MSG(stmt, Exc, ...)                                                              \
  do {                                                                                                \
    try {                                                                                             \
      (void)(stmt);                                                                                   \
      ADD_FAILURE() << "expected " #Exc " from: " #stmt;                                              \
    } catch (const Exc& e_) {                                                                         \
      std::string what_ = e_.what();                                                                  \
      for (const char* sub_ : {__VA_ARGS__})                                                          \
        EXPECT_NE(what_.find(sub_), std::string::npos) << "message \"" << what_ << "\" lacks \"" << sub_ << "\""; \
    } catch (const std::exception& e_) {                                                              \
      ADD_FAILURE() << "expected " #Exc " from: " #stmt ", got another exception: " << e_.what();     \
    }                                                                                                 \
  } while (0)

namespace lathe::test {

/// out = f(a, b) with numpy broadcasting over row-major inputs.
template <class R, class A, class B, class F>
std::vector<R> broadcast_binary(const std::vector<A>& a, const Shape& sa, const std::vector<B>& b, const Shape& sb,
                                const Shape& out, F f) {
  std::vector<R> r(static_cast<size_t>(numel_of(out)));
  for (int64_t i = 0; i < numel_of(out); ++i) {
    Index idx = unravel(i, out);
    r[i] = static_cast<R>(f(a[bcast_index(idx, sa)], b[bcast_index(idx, sb)]));
  }
  return r;
}

/// Copies the elements of a row-major `src` of `shape` permuted by `order` (out axis i = src axis order[i]).
template <class T>
std::vector<T> permute_ref(const std::vector<T>& src, const Shape& shape, const std::vector<int64_t>& order) {
  Shape out;
  for (int64_t o : order) out.push_back(shape[o]);
  std::vector<T> r(src.size());
  for (int64_t i = 0; i < numel_of(out); ++i) {
    Index oi = unravel(i, out), si(shape.size());
    for (size_t k = 0; k < order.size(); ++k) si[order[k]] = oi[k];
    r[i] = src[ravel(si, shape)];
  }
  return r;
}

}  // namespace lathe::test

namespace lathe::test {

/// Reduces row-major `x` of `shape` over `axes` (non-negative): out = f(out, x) from `init`,
/// laid out as the shape with the reduced axes removed (the same order as keepdim).
template <class R, class T, class F>
std::vector<R> reduce_ref(const std::vector<T>& x, const Shape& shape, const std::vector<int64_t>& axes, R init, F f) {
  Shape kept = shape;
  for (int64_t a : axes) kept[a] = 1;
  std::vector<R> out(static_cast<size_t>(numel_of(kept)), init);
  for (int64_t i = 0; i < numel_of(shape); ++i) {
    Index idx = unravel(i, shape);
    for (int64_t a : axes) idx[a] = 0;
    size_t o = static_cast<size_t>(ravel(idx, kept));
    out[o] = f(static_cast<R>(out[o]), x[i]);  // no references: works for std::vector<bool> too
  }
  return out;
}

}  // namespace lathe::test
