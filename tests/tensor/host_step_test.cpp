// Host steps: a step whose output sizes depend on its input values runs inside the plan, and the
// kernels after it read the sizes it decides; the plan is prepared once.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "lathe/lathe.hpp"

namespace lathe {
namespace {

// The positive elements of a float vector, in order, and their positions: both of the size
// `kept`, which each run decides. Counts its runs in `*runs`.
std::shared_ptr<HostStep> keep_positives(const std::string& name, int64_t n, int* runs = nullptr) {
  auto step = std::make_shared<HostStep>();
  step->name = name;
  Variable kept(name + "_kept", 0, n);
  step->sizes = {kept};
  step->outputs = {{dtypes::float32, {kept}}, {dtypes::int64, {kept}}};
  step->run = [runs](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
    if (runs) ++*runs;
    const float* x = in[0].as<float>();
    float* values = out[0].as<float>();
    int64_t* where = out[1].as<int64_t>();
    int64_t k = 0;
    for (int64_t i = 0; i < in[0].numel(); ++i)
      if (x[i] > 0) values[k] = x[i], where[k] = i, ++k;
    return std::vector<int64_t>{k};
  };
  return step;
}

std::vector<float> positives(const std::vector<float>& x) {
  std::vector<float> out;
  for (float v : x)
    if (v > 0) out.push_back(v);
  return out;
}

TEST(HostStep, ItsOutputsHaveTheSizesItDecides) {
  std::vector<float> x{3, -1, 4, -1, -5, 9, 2};  // seven elements: a prime
  std::vector<Tensor> kept = Tensor::host_step(keep_positives("positives", 7), {Tensor::from_vector(x)});
  ASSERT_EQ(kept.size(), 3u);  // its two outputs, then the vector of the sizes it decided
  EXPECT_EQ(kept[0].shape(), (Shape{7}));  // at its largest until it runs
  EXPECT_EQ(kept[0].to_vector<float>(), positives(x));
  EXPECT_EQ(kept[1].to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 5, 6}));
  EXPECT_EQ(kept[2].to_vector<int64_t>(), (std::vector<int64_t>{4}));
  Tensor r = kept[0];
  r.realize();
  EXPECT_EQ(r.shape(), (Shape{4}));
}

TEST(HostStep, KernelsAfterItReadItsSizesInOnePreparedPlan) {
  Tensor x = Tensor::from_vector(std::vector<float>{1, -2, 3, -4, 5});
  int runs = 0;
  std::vector<Tensor> kept = Tensor::host_step(keep_positives("positives", 5, &runs), {x});
  Tensor doubled = kept[0] * 2.0f + kept[1].cast(dtypes::float32);  // elementwise over the decided size
  Tensor total = kept[0].sum();                                     // a reduction over it
  ExecutionPlan plan = Tensor::prepare({doubled, total});
  size_t kernels = plan.prepared_kernels().size();
  struct Case {
    std::vector<float> x;
  };
  for (const Case& c : {Case{{1, -2, 3, -4, 5}}, Case{{-1, -1, -1, -1, -1}}, Case{{7, 7, 7, 7, 7}}, Case{{0, 0, 0, 0, 2}}}) {
    plan.buffer_mut_by_id(x.uop_id())->copyin(c.x.data(), c.x.size() * sizeof(float));
    plan.execute();
    std::vector<float> want, want_doubled;
    float want_total = 0;
    for (size_t i = 0; i < c.x.size(); ++i)
      if (c.x[i] > 0) want_doubled.push_back(c.x[i] * 2 + static_cast<float>(i)), want_total += c.x[i];
    Tensor got = doubled.read_from(plan, 0);
    EXPECT_EQ(got.shape(), (Shape{static_cast<int64_t>(want_doubled.size())}));
    EXPECT_EQ(got.to_vector<float>(), want_doubled);
    EXPECT_FLOAT_EQ(total.read_from(plan, 1).item<float>(), want_total);
  }
  EXPECT_EQ(runs, 4);  // once per run, for both outputs
  EXPECT_EQ(plan.prepared_kernels().size(), kernels);
}

// What reads only the decided size (not the outputs) still runs after the step, and runs it.
TEST(HostStep, ComputingWithADecidedSizeRunsTheStepFirst) {
  Tensor x = Tensor::from_vector(std::vector<float>{5, -1, 2});
  int runs = 0;
  std::vector<Tensor> kept = Tensor::host_step(keep_positives("count", 3, &runs), {x});
  Tensor twice = kept[2] * Tensor::full({}, int64_t{2}, dtypes::int64);
  ExecutionPlan plan = twice.prepare();
  for (const std::vector<float>& values : {std::vector<float>{5, -1, 2}, std::vector<float>{-5, -1, -2}, std::vector<float>{1, 1, 1}}) {
    plan.buffer_mut_by_id(x.uop_id())->copyin(values.data(), values.size() * sizeof(float));
    plan.execute();
    EXPECT_EQ(twice.read_from(plan, 0).item<int64_t>(), 2 * static_cast<int64_t>(positives(values).size()));
  }
  EXPECT_EQ(runs, 3);
}

TEST(HostStep, NothingKeptGivesEmptyOutputs) {
  Tensor x = Tensor::from_vector(std::vector<float>{-1, -2, -3});
  std::vector<Tensor> kept = Tensor::host_step(keep_positives("none", 3), {x});
  Tensor scaled = kept[0] * 3.0f;
  ExecutionPlan plan = Tensor::prepare({scaled, kept[0].sum(), kept[0].max()});
  plan.execute();
  EXPECT_EQ(scaled.read_from(plan, 0).shape(), (Shape{0}));
  EXPECT_TRUE(scaled.read_from(plan, 0).to_vector<float>().empty());
  EXPECT_FLOAT_EQ(kept[0].sum().read_from(plan, 1).item<float>(), 0.0f);
  EXPECT_EQ(plan.variable_values().at("none_kept"), 0);
}

TEST(HostStep, AnEmptyInputAndASingleElement) {
  for (const std::vector<float>& x : {std::vector<float>{}, std::vector<float>{2.5f}, std::vector<float>{-2.5f}}) {
    auto n = static_cast<int64_t>(x.size());
    std::vector<Tensor> kept = Tensor::host_step(keep_positives("odd", n), {Tensor::from_vector(x, {n})});
    EXPECT_EQ((kept[0] + 1.0f).to_vector<float>(), positives(std::vector<float>(x.begin(), x.end())).empty()
                                                       ? std::vector<float>{}
                                                       : std::vector<float>{3.5f});
  }
}

TEST(HostStep, ReadsAnInputOfSymbolicSizeAtItsRunSize) {
  Variable n("n", 1, 8);
  Buffer data(dtypes::float32, 8);
  std::vector<float> all{1, -1, 2, -2, 3, -3, 4, -4};
  data.copyin(all.data(), all.size() * sizeof(float));
  Tensor x = Tensor::from_buffer(data, SymShape{n.bind(8)});
  std::vector<Tensor> kept = Tensor::host_step(keep_positives("sym", 8), {x * 10.0f});
  Tensor y = kept[0] + 1.0f;
  ExecutionPlan plan = y.prepare();
  for (int64_t size : {8, 5, 1}) {
    plan.execute_with_vars({{"n", size}});
    std::vector<float> want;
    for (int64_t i = 0; i < size; ++i)
      if (all[static_cast<size_t>(i)] > 0) want.push_back(all[static_cast<size_t>(i)] * 10 + 1);
    EXPECT_EQ(y.read_from(plan, 0).to_vector<float>(), want) << "n = " << size;
  }
}

// read_from gives every output at the run's sizes: a bound variable as execute_with_vars rebound
// it, not as the graph was built.
TEST(HostStep, ReadFromGivesTheSizesOfTheRun) {
  Variable n("rows", 1, 6);
  Buffer data(dtypes::float32, 6);
  std::vector<float> all{1, 2, 3, 4, 5, 6};
  data.copyin(all.data(), all.size() * sizeof(float));
  Tensor y = Tensor::from_buffer(data, SymShape{n.bind(6)}) * 2.0f;
  ExecutionPlan plan = y.prepare();
  for (int64_t rows : {6, 2, 5}) {
    plan.execute_with_vars({{"rows", rows}});
    Tensor got = y.read_from(plan, 0);
    EXPECT_EQ(got.shape(), (Shape{rows}));
    std::vector<float> want;
    for (int64_t i = 0; i < rows; ++i) want.push_back(all[static_cast<size_t>(i)] * 2);
    EXPECT_EQ(got.to_vector<float>(), want);
  }
}

TEST(HostStep, ASizeOutsideItsRangeIsAnErrorNamingTheStep) {
  auto step = keep_positives("liar", 3);
  step->run = [](const std::vector<HostTensor>&, const std::vector<HostTensor>&) { return std::vector<int64_t>{4}; };
  std::vector<Tensor> out = Tensor::host_step(step, {Tensor::from_vector(std::vector<float>{1, 2, 3})});
  try {
    out[0].realize();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("host step 'liar' decided the size liar_kept = 4, outside [0, 3]"), std::string::npos) << e.what();
  }
}

TEST(HostStep, ItsSizesCannotBeBoundFromOutside) {
  std::vector<Tensor> kept = Tensor::host_step(keep_positives("decides", 3), {Tensor::from_vector(std::vector<float>{1, 2, 3})});
  ExecutionPlan plan = (kept[0] + 1.0f).prepare();
  EXPECT_THROW(plan.execute_with_vars({{"decides_kept", 2}}), Error);
}

TEST(HostStep, AStepWithoutARunFunctionOrOutputsIsRefused) {
  auto step = std::make_shared<HostStep>();
  step->name = "empty";
  EXPECT_THROW(Tensor::host_step(step, {}), Error);
  step->run = [](const std::vector<HostTensor>&, const std::vector<HostTensor>&) { return std::vector<int64_t>{}; };
  EXPECT_THROW(Tensor::host_step(step, {}), Error);
  EXPECT_THROW(Tensor::host_step(nullptr, {}), Error);
}

TEST(HostStep, AStepsErrorReachesTheCaller) {
  auto step = keep_positives("throws", 2);
  step->run = [](const std::vector<HostTensor>&, const std::vector<HostTensor>&) -> std::vector<int64_t> { throw Error("bad boxes"); };
  std::vector<Tensor> out = Tensor::host_step(step, {Tensor::from_vector(std::vector<float>{1, 2})});
  EXPECT_THROW(out[0].realize(), Error);
}

// A step's pieces split across the plan's threads: every piece once, on one thread where the plan
// has one, and the first error thrown in a piece reaches the caller once every thread has stopped.
TEST(HostStep, ItsPiecesSplitAcrossThePlansThreads) {
  for (int threads : {1, 2, 3}) {
    std::vector<int> seen(37, 0);
    std::atomic<int> done{0};
    auto step = keep_positives("pieces", 4);
    step->run = [&](const std::vector<HostTensor>& in, const std::vector<HostTensor>& out) {
      host_parallel_for(37, [&](int64_t i) {
        ++seen[static_cast<size_t>(i)];
        int inner = 0;
        host_parallel_for(3, [&](int64_t) { ++inner; });  // nested: on this piece's thread
        EXPECT_EQ(inner, 3);
      });
      host_parallel_for(0, [&](int64_t) { ADD_FAILURE() << "no pieces"; });
      EXPECT_THROW(host_parallel_for(9, [&](int64_t i) {
                     ++done;
                     if (i == 4) throw Error("piece 4");
                   }),
                   Error);
      EXPECT_GE(done.load(), 5);  // pieces 0-4 at least; a thread stops at its error
      EXPECT_LE(done.load(), 9);
      done = 0;
      out[0].as<float>()[0] = in[0].as<float>()[0];
      return std::vector<int64_t>{1};
    };
    std::vector<Tensor> out = Tensor::host_step(step, {Tensor::from_vector(std::vector<float>{3, 1, 4, 1})});
    ExecutionPlan plan = Tensor::prepare({out[0]}, {.threads = threads});
    plan.execute();
    EXPECT_EQ(seen, std::vector<int>(37, 1)) << threads << " threads";
  }
  std::vector<int64_t> order;  // outside a step: in order, on this thread
  host_parallel_for(4, [&](int64_t i) { order.push_back(i); });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace lathe
