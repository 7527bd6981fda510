// The importer on good and bad input: bad files and inputs raise OnnxError, never crash.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <sstream>

#include "ir/toposort.hpp"
#include "schedule/shape.hpp"
#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"
#include "onnx/node_model.hpp"
#include "tensor/reference.hpp"

namespace lathe::onnx {
namespace {

const std::string kNode = "/usr/share/libonnx-testdata/data/node/";

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(OnnxModel, LoadsInputsOutputsAndRuns) {
  Model m = Model::load(kNode + "test_add_bcast/model.onnx");
  ASSERT_EQ(m.inputs().size(), 2u);
  EXPECT_EQ(m.inputs()[0].dtype, dtypes::float32);
  EXPECT_EQ(m.outputs().size(), 1u);
  Tensor x = load_tensor_pb(kNode + "test_add_bcast/test_data_set_0/input_0.pb");
  Tensor y = load_tensor_pb(kNode + "test_add_bcast/test_data_set_0/input_1.pb");
  std::vector<Tensor> out = m.build({{m.inputs()[0].name, x}, {m.inputs()[1].name, y}});
  Tensor want = load_tensor_pb(kNode + "test_add_bcast/test_data_set_0/output_0.pb");
  EXPECT_EQ(out[0].to_vector<float>(), want.to_vector<float>());
}

// Pow with a constant scalar exponent (LayerNorm's square as PyTorch exports it before opset 17)
// multiplies: no kernel computes POW, and the values are x * x (x^3 for 3). An exponent the
// caller gives is still a power.
TEST(OnnxPow, AConstantScalarExponentIsANumber) {
  std::vector<float> xs;
  for (int i = 0; i < 2 * 37; ++i) xs.push_back(static_cast<float>(i % 11) * 0.37f - 1.5f);
  Tensor x = Tensor::from_vector(xs, {2, 37});
  for (float e : {2.0f, 3.0f}) {
    NodeModel pow("Pow", {{"x", {2, 37}}}, 1);
    pow.initializer("e", {})->add_float_data(e);
    Tensor y = pow.model().build({{"x", x}})[0];
    ExecutionPlan plan = y.prepare();
    for (const auto& k : plan.prepared_kernels())
      for (const UOpPtr& u : toposort(k->ast)) EXPECT_TRUE(e != 2.0f || u->op() != Ops::POW) << "exponent " << e;
    std::vector<float> got = y.to_vector<float>();
    ASSERT_EQ(got.size(), xs.size());
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(got[i], std::pow(xs[i], e), 1e-5 * (1 + std::abs(std::pow(xs[i], e)))) << e << " at " << i;
  }
  NodeModel given("Pow", {{"x", {2, 37}}, {"e", {}}}, 1);
  std::vector<float> got = given.model().build({{"x", x.abs()}, {"e", Tensor::full({}, 0.5, dtypes::float32)}})[0].to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(got[i], std::sqrt(std::abs(xs[i])), 1e-5) << i;
}

// MaxPool with ceil_mode drops a last window that would start in the end padding, for both of its
// outputs (the values and indices ONNX Runtime 1.30 and PyTorch give; the model's own declared
// shape, 4 x 4 in PyTorch's export of this pool, is wrong).
TEST(OnnxMaxPool, CeilModeDropsAWindowThatStartsInTheEndPadding) {
  std::vector<float> xs(25);
  for (int i = 0; i < 25; ++i) xs[static_cast<size_t>(i)] = static_cast<float>(i / 5 * 5 + 4 - i % 5);  // rows reversed
  NodeModel pool("MaxPool", {{"x", {1, 1, 5, 5}}}, 2);
  pool.attr_ints("kernel_shape", {2, 2}).attr_ints("strides", {2, 2}).attr_ints("pads", {1, 1, 1, 1}).attr_i("ceil_mode", 1);
  std::vector<Tensor> y = pool.model().build({{"x", Tensor::from_vector(xs, {1, 1, 5, 5})}});
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(y[0].to_vector<float>(), (std::vector<float>{4, 3, 1, 14, 13, 11, 24, 23, 21}));
  EXPECT_EQ(y[1].to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 3, 10, 11, 13, 20, 21, 23}));
}

// A reference 3-D convolution in plain loops: x (N, C, D, H, W), w (M, C/g, KD, KH, KW), pads
// (begin d, h, w, end d, h, w).
std::vector<double> conv3d_ref(const std::vector<float>& x, const Shape& xs, const std::vector<float>& w, const Shape& ws,
                               const std::vector<float>& b, int64_t groups, const std::vector<int64_t>& st,
                               const std::vector<int64_t>& dl, const std::vector<int64_t>& pads, Shape& out) {
  int64_t n = xs[0], c = xs[1], m = ws[0], cg = ws[1], og = m / groups;
  out = {n, m};
  for (int i = 0; i < 3; ++i) out.push_back((xs[2 + i] + pads[i] + pads[3 + i] - dl[i] * (ws[2 + i] - 1) - 1) / st[i] + 1);
  std::vector<double> y;
  for (int64_t b0 = 0; b0 < n; ++b0)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t z = 0; z < out[2]; ++z)
        for (int64_t r = 0; r < out[3]; ++r)
          for (int64_t q = 0; q < out[4]; ++q) {
            double acc = b.empty() ? 0.0 : b[static_cast<size_t>(o)];
            for (int64_t i = 0; i < cg; ++i)
              for (int64_t kd = 0; kd < ws[2]; ++kd)
                for (int64_t kh = 0; kh < ws[3]; ++kh)
                  for (int64_t kw = 0; kw < ws[4]; ++kw) {
                    int64_t zd = z * st[0] + kd * dl[0] - pads[0], rh = r * st[1] + kh * dl[1] - pads[1], qw = q * st[2] + kw * dl[2] - pads[2];
                    if (zd < 0 || zd >= xs[2] || rh < 0 || rh >= xs[3] || qw < 0 || qw >= xs[4]) continue;
                    int64_t ch = (o / og) * cg + i;
                    acc += static_cast<double>(x[static_cast<size_t>((((b0 * c + ch) * xs[2] + zd) * xs[3] + rh) * xs[4] + qw)]) *
                           w[static_cast<size_t>((((o * cg + i) * ws[2] + kd) * ws[3] + kh) * ws[4] + kw)];
                  }
            y.push_back(acc);
          }
  return y;
}

// A 3-D convolution runs as a 2-D one whose batch holds the depth positions and whose channels
// hold the depth taps: values against plain loops for strides, dilations and padding that differ
// per axis (asymmetric too), groups, a batch, prime and unit sizes, no bias; and its
// multiply-add kernel is vectorized as a 2-D convolution's (it ran scalar, 2.7 GFLOP/s, before).
TEST(OnnxConv, ThreeSpatialAxesAgainstPlainLoops) {
  struct Case {
    Shape x, w;
    int64_t groups;
    std::vector<int64_t> strides, dilations, pads;
    bool bias;
  };
  for (const Case& k : {Case{{1, 3, 5, 7, 11}, {8, 3, 3, 3, 3}, 1, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, true},
                        Case{{2, 4, 7, 6, 5}, {6, 2, 2, 3, 1}, 2, {2, 1, 2}, {1, 2, 1}, {0, 1, 0, 1, 2, 0}, false},
                        Case{{1, 16, 4, 9, 9}, {32, 16, 3, 3, 3}, 1, {2, 2, 2}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, true},
                        Case{{1, 5, 1, 3, 3}, {7, 5, 1, 1, 1}, 1, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, true},
                        Case{{1, 6, 3, 5, 4}, {6, 1, 3, 2, 2}, 6, {1, 1, 1}, {2, 1, 1}, {2, 0, 1, 2, 1, 0}, true}}) {
    std::string what = shape_to_string(k.x) + " * " + shape_to_string(k.w);
    NodeModel conv("Conv", {{"x", k.x}}, 1);
    conv.attr_ints("strides", k.strides).attr_ints("dilations", k.dilations).attr_ints("pads", k.pads);
    conv.node->add_attribute()->CopyFrom([&] {
      ::onnx::AttributeProto a;
      a.set_name("group");
      a.set_type(::onnx::AttributeProto::INT);
      a.set_i(k.groups);
      return a;
    }());
    std::vector<float> xs, ws, bs;
    for (int64_t i = 0; i < shape_numel(k.x); ++i) xs.push_back(static_cast<float>((i * 7919) % 23) * 0.125f - 1.25f);
    ::onnx::TensorProto* wt = conv.initializer("w", k.w);
    for (int64_t i = 0; i < shape_numel(k.w); ++i) ws.push_back(static_cast<float>((i * 104729) % 17) * 0.0625f - 0.5f), wt->add_float_data(ws.back());
    if (k.bias) {
      ::onnx::TensorProto* bt = conv.initializer("b", {k.w[0]});
      for (int64_t i = 0; i < k.w[0]; ++i) bs.push_back(static_cast<float>(i) * 0.25f - 0.5f), bt->add_float_data(bs.back());
    }
    Tensor y = conv.model().build({{"x", Tensor::from_vector(xs, k.x)}})[0];
    Shape out;
    std::vector<double> ref = conv3d_ref(xs, k.x, ws, k.w, bs, k.groups, k.strides, k.dilations, k.pads, out);
    ASSERT_EQ(y.shape(), out) << what;
    std::vector<float> got = y.to_vector<float>();
    ASSERT_EQ(got.size(), ref.size()) << what;
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-4 * (1 + std::abs(ref[i]))) << what << " at " << i;
  }
  NodeModel conv("Conv", {{"x", {1, 16, 6, 10, 10}}}, 1);
  conv.attr_ints("pads", {1, 1, 1, 1, 1, 1});
  ::onnx::TensorProto* wt = conv.initializer("w", {32, 16, 3, 3, 3});
  std::vector<float> ws;
  for (int i = 0; i < 32 * 16 * 27; ++i) ws.push_back(static_cast<float>(i % 13) * 0.01f), wt->add_float_data(ws.back());
  std::vector<float> xs(16 * 6 * 10 * 10);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>((i * 7919) % 23) * 0.125f - 1.25f;
  // Its 3x3 taps of 16 channels may take Winograd's method (as this CPU's Target prices it): values
  // against plain loops, then the direct method's kernel.
  Shape out;
  std::vector<double> ref = conv3d_ref(xs, {1, 16, 6, 10, 10}, ws, {32, 16, 3, 3, 3}, {}, 1, {1, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, out);
  std::vector<float> got = conv.model().build({{"x", Tensor::from_vector(xs, {1, 16, 6, 10, 10})}})[0].to_vector<float>();
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-4 * (1 + std::abs(ref[i]))) << "at " << i;
  test::ScopedEnv direct("LATHE_WINOGRAD", "0");
  ExecutionPlan plan = conv.model().build({{"x", Tensor::full({1, 16, 6, 10, 10}, 0.5, dtypes::float32)}})[0].prepare();
  int64_t vectorized = 0;
  for (const PreparedKernel* pk : plan.prepared_kernels())
    if (pk->work.ops > 32 * 16 * 27 * 6 * 10 * 10 && pk->kernel->opts.find("UPCAST") != std::string::npos) ++vectorized;
  EXPECT_EQ(vectorized, 1);
}

// ONNX Resize in plain loops, one axis (x is rows x n, resized along n to m), per the operator's
// definition: nearest (round_prefer_floor), linear and cubic (a = -0.75) with the edge repeated.
std::vector<double> resize_ref(const std::vector<double>& x, int64_t rows, int64_t n, int64_t m, double scale, const std::string& mode,
                               const std::string& ct) {
  std::vector<double> y;
  auto at = [&](int64_t r, int64_t i) { return x[static_cast<size_t>(r * n + std::clamp<int64_t>(i, 0, n - 1))]; };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < m; ++o) {
      double xo = ct == "half_pixel" ? (o + 0.5) / scale - 0.5 : ct == "asymmetric" ? o / scale : m > 1 ? o * double(n - 1) / double(m - 1) : 0.0;
      double f = std::floor(xo), t = xo - f;
      auto i = static_cast<int64_t>(f);
      if (mode == "nearest") {
        y.push_back(at(r, t > 0.5 ? i + 1 : i));
      } else if (mode == "linear") {
        double c = std::clamp(xo, 0.0, double(n - 1));
        i = static_cast<int64_t>(std::floor(c)), t = c - std::floor(c);
        y.push_back((1 - t) * at(r, i) + t * at(r, i + 1));
      } else {
        double a = -0.75, v = 0;
        for (int j = -1; j <= 2; ++j) {
          double d = std::abs(t - j);
          double k = d <= 1 ? ((a + 2) * d - (a + 3)) * d * d + 1 : ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
          v += k * at(r, i + j);
        }
        y.push_back(v);
      }
    }
  return y;
}

// Resize by whole ratios (up by 2 and 3, down by 2 and 3) as shifted views, and by a ratio that
// is not whole or with align_corners as a matrix: values against plain loops for every mode and
// coordinate transform, on sizes 1, 5 and 7 (the edge repeated past both ends); a bilinear
// upsampling by 2 multiplies no matrix (no kernel reduces).
TEST(OnnxResize, WholeRatiosAgainstPlainLoops) {
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* ct : {"half_pixel", "asymmetric", "align_corners"})
      for (auto [n, m] : {std::pair<int64_t, int64_t>{5, 10}, {7, 21}, {1, 3}, {6, 3}, {9, 3}, {4, 6}}) {
        std::string what = std::string(mode) + " " + ct + " " + std::to_string(n) + " -> " + std::to_string(m);
        double scale = double(m) / double(n);
        NodeModel resize("Resize", {{"x", {2, 3, n}}}, 1);
        resize.attr_s("mode", mode).attr_s("coordinate_transformation_mode", ct);
        resize.initializer("roi", {0});
        ::onnx::TensorProto* sc = resize.initializer("scales", {3});
        for (double v : {1.0, 1.0, scale}) sc->add_float_data(static_cast<float>(v));
        std::vector<float> xs;
        for (int64_t i = 0; i < 6 * n; ++i) xs.push_back(static_cast<float>((i * 37) % 11) * 0.5f - 2.0f);
        Tensor y = resize.model().build({{"x", Tensor::from_vector(xs, {2, 3, n})}})[0];
        ASSERT_EQ(y.shape(), (Shape{2, 3, m})) << what;
        std::vector<double> ref = resize_ref(std::vector<double>(xs.begin(), xs.end()), 6, n, m, scale, mode, ct);
        std::vector<float> got = y.to_vector<float>();
        for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-5 * (1 + std::abs(ref[i]))) << what << " at " << i;
      }
  NodeModel resize("Resize", {{"x", {1, 4, 9, 11}}}, 1);
  resize.attr_s("mode", "linear");
  resize.initializer("roi", {0});
  ::onnx::TensorProto* sc = resize.initializer("scales", {4});
  for (float v : {1.0f, 1.0f, 2.0f, 2.0f}) sc->add_float_data(v);
  ExecutionPlan plan = resize.model().build({{"x", Tensor::full({1, 4, 9, 11}, 1.5, dtypes::float32)}})[0].prepare();
  for (const PreparedKernel* k : plan.prepared_kernels())
    for (const UOpPtr& u : toposort(k->ast)) EXPECT_NE(u->op(), Ops::REDUCE) << k->kernel->entry_point;
}

// A strided ConvTranspose runs as one convolution per output phase (no zeros multiplied) where
// the phases pay for their kernels, else as the spread input's convolution (at these sizes, on any
// Target): values against plain loops (scatter each input times the kernel) for strides 2 and 3,
// kernels larger than, equal to and smaller than the stride, uneven padding, output_padding,
// groups, a batch and a 1-D case.
TEST(OnnxConvTranspose, StridedAgainstPlainLoops) {
  struct Case {
    Shape x, w;  // (N, C, H, W), (C, M/group, KH, KW)
    int64_t groups;
    std::vector<int64_t> strides, pads, output_padding;
  };
  for (const Case& k : {Case{{1, 3, 4, 5}, {3, 4, 4, 4}, 1, {2, 2}, {1, 1, 1, 1}, {0, 0}},
                        Case{{2, 4, 3, 3}, {4, 3, 3, 2}, 2, {3, 2}, {0, 1, 2, 0}, {1, 1}},
                        Case{{1, 2, 5, 1}, {2, 5, 1, 1}, 1, {2, 3}, {0, 0, 0, 0}, {1, 2}},
                        Case{{1, 6, 2, 3}, {6, 1, 2, 2}, 3, {2, 2}, {0, 0, 0, 0}, {0, 0}},
                        Case{{1, 2, 7}, {2, 3, 5}, 1, {3}, {2, 1}, {2}}}) {
    bool one_d = k.x.size() == 3;
    Shape xs = one_d ? Shape{k.x[0], k.x[1], 1, k.x[2]} : k.x, ws = one_d ? Shape{k.w[0], k.w[1], 1, k.w[2]} : k.w;
    std::vector<int64_t> st = one_d ? std::vector<int64_t>{1, k.strides[0]} : k.strides;
    std::vector<int64_t> pb = one_d ? std::vector<int64_t>{0, k.pads[0]} : std::vector<int64_t>{k.pads[0], k.pads[1]};
    std::vector<int64_t> pe = one_d ? std::vector<int64_t>{0, k.pads[1]} : std::vector<int64_t>{k.pads[2], k.pads[3]};
    std::vector<int64_t> op = one_d ? std::vector<int64_t>{0, k.output_padding[0]} : k.output_padding;
    std::string what = shape_to_string(k.x) + " by " + shape_to_string(k.w);
    NodeModel ct("ConvTranspose", {{"x", k.x}}, 1);
    ct.attr_ints("strides", k.strides).attr_ints("pads", k.pads).attr_ints("output_padding", k.output_padding);
    ::onnx::AttributeProto* g = ct.node->add_attribute();
    g->set_name("group");
    g->set_type(::onnx::AttributeProto::INT);
    g->set_i(k.groups);
    std::vector<float> xv, wv, bv;
    for (int64_t i = 0; i < shape_numel(k.x); ++i) xv.push_back(static_cast<float>((i * 13) % 19) * 0.125f - 1.0f);
    ::onnx::TensorProto* wt = ct.initializer("w", k.w);
    for (int64_t i = 0; i < shape_numel(k.w); ++i) wv.push_back(static_cast<float>((i * 7) % 23) * 0.0625f - 0.7f), wt->add_float_data(wv.back());
    int64_t og = ws[1], m = og * k.groups, cg = xs[1] / k.groups;
    ::onnx::TensorProto* bt = ct.initializer("b", {m});
    for (int64_t i = 0; i < m; ++i) bv.push_back(0.25f * static_cast<float>(i) - 0.5f), bt->add_float_data(bv.back());
    int64_t oh = (xs[2] - 1) * st[0] + ws[2] - pb[0] - pe[0] + op[0], ow = (xs[3] - 1) * st[1] + ws[3] - pb[1] - pe[1] + op[1];
    std::vector<double> ref(static_cast<size_t>(xs[0] * m * oh * ow));
    for (int64_t n = 0; n < xs[0]; ++n)
      for (int64_t o = 0; o < m; ++o)
        for (int64_t i = 0; i < oh * ow; ++i) ref[static_cast<size_t>((n * m + o) * oh * ow + i)] = bv[static_cast<size_t>(o)];
    for (int64_t n = 0; n < xs[0]; ++n)
      for (int64_t c = 0; c < xs[1]; ++c)
        for (int64_t i = 0; i < xs[2]; ++i)
          for (int64_t j = 0; j < xs[3]; ++j)
            for (int64_t q = 0; q < og; ++q)
              for (int64_t a = 0; a < ws[2]; ++a)
                for (int64_t b = 0; b < ws[3]; ++b) {
                  int64_t y = i * st[0] + a - pb[0], z = j * st[1] + b - pb[1], o = (c / cg) * og + q;
                  if (y < 0 || y >= oh || z < 0 || z >= ow) continue;
                  ref[static_cast<size_t>(((n * m + o) * oh + y) * ow + z)] +=
                      static_cast<double>(xv[static_cast<size_t>(((n * xs[1] + c) * xs[2] + i) * xs[3] + j)]) *
                      wv[static_cast<size_t>(((c * og + q) * ws[2] + a) * ws[3] + b)];
                }
    Tensor y = ct.model().build({{"x", Tensor::from_vector(xv, k.x)}})[0];
    Shape want = one_d ? Shape{xs[0], m, ow} : Shape{xs[0], m, oh, ow};
    ASSERT_EQ(y.shape(), want) << what;
    std::vector<float> got = y.to_vector<float>();
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(got[i], ref[i], 1e-4 * (1 + std::abs(ref[i]))) << what << " at " << i;
  }
  // The work is the input times the kernel (64 * 256 pixels * 64 * 4 * 4 multiply-adds), not the
  // output times the kernel over a spread input (four times as many): the phases save 50M
  // multiply-adds, more than four kernels cost on one core of any CPU (tensor/transposed_phases).
  NodeModel ct("ConvTranspose", {{"x", {1, 64, 16, 16}}}, 1);
  ct.attr_ints("strides", {2, 2}).attr_ints("pads", {1, 1, 1, 1});
  ::onnx::TensorProto* wt = ct.initializer("w", {64, 64, 4, 4});
  for (int i = 0; i < 64 * 64 * 16; ++i) wt->add_float_data(static_cast<float>(i % 7) * 0.1f);
  Tensor y = ct.model().build({{"x", Tensor::full({1, 64, 16, 16}, 0.5, dtypes::float32)}})[0];
  ExecutionPlan plan = Tensor::prepare({y}, {.threads = 1, .shape = TargetShape::parse("8")});
  int64_t ops = 0, macs = int64_t{64} * 256 * 64 * 16;
  for (const PreparedKernel* k : plan.prepared_kernels()) ops += k->work.ops;
  EXPECT_LT(ops, 3 * macs);
}

// A model's initializers become tensors once, at load: two builds read the same weight buffer
// (before, each build copied every weight out of the parsed file again).
TEST(OnnxModel, BuildsShareTheInitializers) {
  NodeModel add("Add", {{"x", {2, 3}}}, 1);
  ::onnx::TensorProto* t = add.initializer("w", {2, 3});
  for (int i = 0; i < 6; ++i) t->add_float_data(static_cast<float>(i) * 0.5f);
  Model m = add.model();
  auto buffers = [](const Tensor& y) {
    std::set<const UOp*> out;
    for (const UOpPtr& u : toposort(y.uop()))
      if (u->op() == Ops::BUFFER) out.insert(u.get());
    return out;
  };
  Tensor y1 = m.build({{"x", Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}).reshape({2, 3})}})[0];
  Tensor y2 = m.build({{"x", Tensor::from_vector<float>({6, 5, 4, 3, 2, 1}).reshape({2, 3})}})[0];
  std::set<const UOp*> b1 = buffers(y1), b2 = buffers(y2), shared;
  std::set_intersection(b1.begin(), b1.end(), b2.begin(), b2.end(), std::inserter(shared, shared.end()));
  EXPECT_EQ(shared.size(), 1u);
  EXPECT_EQ(y1.to_vector<float>(), (std::vector<float>{1.0f, 2.5f, 4.0f, 5.5f, 7.0f, 8.5f}));
  EXPECT_EQ(y2.to_vector<float>(), (std::vector<float>{6.0f, 5.5f, 5.0f, 4.5f, 4.0f, 3.5f}));
}

TEST(OnnxModel, MissingTruncatedAndWrongInputsAreOnnxErrors) {
  EXPECT_THROW(Model::load("/nonexistent/model.onnx"), OnnxError);
  std::string bytes = slurp(kNode + "test_relu/model.onnx");
  EXPECT_THROW(Model::from_bytes(bytes.substr(0, bytes.size() / 2)), OnnxError);
  EXPECT_THROW(Model::from_bytes("not a model at all"), OnnxError);
  ::onnx::ModelProto no_graph;
  no_graph.add_opset_import()->set_version(17);
  try {
    Model::from_bytes(no_graph.SerializeAsString());
    ADD_FAILURE() << "a model without a graph loaded";
  } catch (const OnnxError& e) {
    EXPECT_NE(std::string(e.what()).find("no graph"), std::string::npos) << e.what();
  }
  Model m = Model::load(kNode + "test_relu/model.onnx");
  EXPECT_THROW(m.build({}), OnnxError);  // input not given
  try {
    m.build({{m.inputs()[0].name, Tensor::ones({3, 4, 5}, dtypes::int32)}});
    FAIL();
  } catch (const OnnxError& e) {
    EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(m.build({{m.inputs()[0].name, Tensor::ones({2, 2})}}), OnnxError);  // wrong shape
}

TEST(OnnxModel, UnsupportedOperatorNamesTheNode) {
  // test_relu with its operator renamed to one that does not exist (same length, still valid protobuf).
  std::string bytes = slurp(kNode + "test_relu/model.onnx");
  size_t at = bytes.find("Relu");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 4, "Relv");
  Model m = Model::from_bytes(bytes);
  try {
    m.build({{m.inputs()[0].name, load_tensor_pb(kNode + "test_relu/test_data_set_0/input_0.pb")}});
    FAIL();
  } catch (const OnnxError& e) {
    EXPECT_NE(std::string(e.what()).find("operator Relv is not supported"), std::string::npos) << e.what();
  }
}

TEST(OnnxValue, KindsAndTheirErrors) {
  Value t = Tensor::ones({2});
  EXPECT_TRUE(t.is_tensor());
  EXPECT_THROW(t.items("t"), OnnxError);
  Value s = Value::sequence({Tensor::ones({2}), Tensor::zeros({3})}, dtypes::float32);
  EXPECT_TRUE(s.is_sequence());
  EXPECT_EQ(s.items().size(), 2u);
  EXPECT_THROW(s.tensor("s"), OnnxError);
  EXPECT_THROW(Value::sequence({Tensor::ones({2}, dtypes::int32)}, dtypes::float32), OnnxError);
  Value none = Value::none();
  EXPECT_TRUE(none.is_none());
  EXPECT_FALSE(none.is_tensor() || none.is_sequence());
  EXPECT_THROW(none.tensor("n"), OnnxError);
}

TEST(OnnxSequence, InsertAtBackAppendsAndChecksTheInputKind) {
  std::string dir = kNode + "test_sequence_insert_at_back/";
  Model m = Model::load(dir + "model.onnx");
  ASSERT_EQ(m.inputs()[0].kind, ValueKind::kSequence);
  EXPECT_EQ(m.inputs()[0].dtype, dtypes::int64);
  Value seq = Value::sequence({Tensor::from_vector<int64_t>({1, 2}), Tensor::from_vector<int64_t>({3, 4, 5})}, dtypes::int64);
  Tensor item = Tensor::from_vector<int64_t>({7, 8, 9});
  std::vector<Value> out = m.build_values({{m.inputs()[0].name, seq}, {m.inputs()[1].name, item}});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].items().size(), 3u);
  EXPECT_EQ(out[0].items()[0].to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(out[0].items()[2].to_vector<int64_t>(), (std::vector<int64_t>{7, 8, 9}));
  // The data files read as the same values.
  Value from_file = load_value_pb(dir + "test_data_set_0/input_0.pb", ValueKind::kSequence);
  EXPECT_TRUE(from_file.is_sequence());
  // A tensor where the model wants a sequence, and a sequence through build(), are errors naming the input.
  try {
    m.build_values({{m.inputs()[0].name, item}, {m.inputs()[1].name, item}});
    FAIL();
  } catch (const OnnxError& e) {
    EXPECT_NE(std::string(e.what()).find(m.inputs()[0].name), std::string::npos) << e.what();
  }
  EXPECT_THROW(m.build({{m.inputs()[0].name, item}, {m.inputs()[1].name, item}}), OnnxError);
  // An element of the wrong dtype.
  Value floats = Value::sequence({Tensor::ones({2})}, dtypes::float32);
  EXPECT_THROW(m.build_values({{m.inputs()[0].name, floats}, {m.inputs()[1].name, item}}), OnnxError);
}

TEST(OnnxSequence, EmptyOptionalOnlyWhereTheModelAllowsIt) {
  Model opt = Model::load(kNode + "test_optional_has_element_empty/model.onnx");
  std::vector<Value> out = opt.build_values({{opt.inputs()[0].name, Value::none()}});
  EXPECT_FALSE(out[0].tensor().item<bool>());
  out = opt.build_values({{opt.inputs()[0].name, Tensor::full({}, int32_t{4}, dtypes::int32)}});
  EXPECT_TRUE(out[0].tensor().item<bool>());
  Model relu = Model::load(kNode + "test_relu/model.onnx");
  EXPECT_THROW(relu.build_values({{relu.inputs()[0].name, Value::none()}}), OnnxError);
}

// Randomly mutated model bytes: every outcome is a model, or an OnnxError/Error; never a crash,
// a hang or (under ASan) a memory error.
TEST(OnnxFuzz, MutatedModelBytesNeverCrash) {
  const char* cases[] = {"test_conv_with_strides_padding", "test_gemm_default_single_elem_vector_bias", "test_reshape_reordered_all_dims",
                         "test_slice", "test_softmax_axis_1", "test_transpose_all_permutations_0"};
  std::mt19937 rng(1234);
  int loaded = 0, rejected = 0;
  for (const char* name : cases) {
    std::string dir = kNode + name + "/";
    std::string bytes = slurp(dir + "model.onnx");
    ASSERT_FALSE(bytes.empty()) << dir;
    for (int iter = 0; iter < 60; ++iter) {
      std::string m = bytes;
      // Half the mutants change one byte, which often keeps the protobuf readable and so reaches
      // the importer's own checks; the rest insert, erase and overwrite more freely.
      int edits = iter % 2 ? 1 + static_cast<int>(rng() % 4) : 1;
      for (int e = 0; e < edits; ++e) {
        size_t at = rng() % m.size();
        switch (iter % 2 ? rng() % 3 : 0) {
          case 0: m[at] = static_cast<char>(rng()); break;
          case 1: m.erase(at, 1 + rng() % 8); break;
          default: m.insert(at, 1, static_cast<char>(rng()));
        }
        if (m.empty()) m = "x";
      }
      try {
        Model model = Model::from_bytes(m, dir);
        std::map<std::string, Tensor> in;
        for (size_t i = 0; i < model.inputs().size(); ++i)
          in.emplace(model.inputs()[i].name, load_tensor_pb(dir + "test_data_set_0/input_" + std::to_string(i) + ".pb"));
        for (Tensor& t : model.build(in)) t.realize();
        ++loaded;
      } catch (const Error&) {
        ++rejected;
      }
    }
  }
  std::cout << "onnx fuzz: " << loaded << " mutated models ran, " << rejected << " were rejected with an error\n";
  // Enough mutants must get past parsing, or this would only be testing protobuf.
  EXPECT_GE(loaded, 30);
}


// A recurrent operator's steps share their kernels: the input's projection is one matmul over the
// whole sequence and each step reads its rows as a view, so a longer sequence adds launches, not
// kernels to compile.
TEST(OnnxRecurrent, StepsShareTheirKernelsWhateverTheSequenceLength) {
  auto distinct_kernels = [](const std::string& op, int64_t gates, int64_t seq) {
    NodeModel m(op, {{"x", {seq, 2, 3}}, {"w", {1, gates * 4, 3}}, {"r", {1, gates * 4, 4}}}, 2);
    std::map<std::string, Tensor> in{{"x", Tensor::rand({seq, 2, 3}, 1)},
                                     {"w", Tensor::rand({1, gates * 4, 3}, 2)},
                                     {"r", Tensor::rand({1, gates * 4, 4}, 3)}};
    ExecutionPlan plan = Tensor::prepare(m.model().build(in));
    std::set<const CachedKernel*> kernels;
    for (const PreparedKernel* k : plan.prepared_kernels()) kernels.insert(k->kernel.get());
    return kernels.size();
  };
  for (const auto& [op, gates] : std::vector<std::pair<std::string, int64_t>>{{"LSTM", 4}, {"GRU", 3}, {"RNN", 1}}) {
    SCOPED_TRACE(op);
    size_t short_seq = distinct_kernels(op, gates, 5), long_seq = distinct_kernels(op, gates, 17);
    EXPECT_EQ(long_seq, short_seq);
    EXPECT_LE(short_seq, 12u);
  }
}

}  // namespace
}  // namespace lathe::onnx
