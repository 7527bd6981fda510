// Model::prepare: named input dimensions (dim_param) become variables, so one compiled plan
// serves every size up to the maximum. Checked against building the model for each size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"
#include "onnx/onnx_include.hpp"
#include "runtime/arena_check.hpp"

namespace lathe::onnx {
namespace {

const std::string kModels = LATHE_TEST_MODELS_DIR;

void expect_close(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], tol * (1 + std::fabs(w[i]))) << "element " << i;
}

void check_every_batch(const std::string& name, Shape sample) {
  Model m = Model::load(kModels + "/" + name + "/model.onnx");
  ASSERT_EQ(m.inputs().size(), 1u);
  ASSERT_EQ(m.inputs()[0].dim_params[0], "batch");
  PreparedModel pm = m.prepare({{"batch", 8}});
  // The test data (batch 3) gives ONNX Runtime's answer.
  Tensor x3 = load_tensor_pb(kModels + "/" + name + "/test_data_set_0/input_0.pb");
  expect_close(pm.run({{m.inputs()[0].name, x3}})[0], load_tensor_pb(kModels + "/" + name + "/test_data_set_0/output_0.pb"), 1e-4);
  size_t compiles = kernel_cache_stats().compiles;
  for (int64_t b : {1, 2, 5, 8, 3}) {
    sample[0] = b;
    Tensor x = Tensor::randn(sample, static_cast<uint64_t>(b)).realize();
    std::vector<Tensor> got = pm.run({{m.inputs()[0].name, x}});
    EXPECT_EQ(pm.sizes().at("batch"), b);
    EXPECT_EQ(kernel_cache_stats().compiles, compiles) << name << " batch " << b << ": the prepared model compiled";
    Tensor want = m.build({{m.inputs()[0].name, x}})[0].realize();  // built (and compiled) for this size alone
    expect_close(got[0], want, 1e-4);
    compiles = kernel_cache_stats().compiles;
  }
}

TEST(OnnxPreparedModel, CnnServesEveryBatchFromOnePlan) { check_every_batch("cnn_dynamic_batch", {0, 3, 16, 16}); }
TEST(OnnxPreparedModel, MlpServesEveryBatchFromOnePlan) { check_every_batch("mlp_dynamic_batch", {0, 32}); }

// A scripted loop over a sequence of dynamic length (PyTorch's export: a Loop over x.shape[1]
// appending each state to a sequence, then ConcatFromSequence) runs as a step of one plan for
// every batch and length: ONNX Runtime's answer on the test data, the answer of the model built
// (unrolled) for each size, and nothing compiled after prepare.
TEST(OnnxPreparedModel, AScriptedLoopServesEveryLengthFromOnePlan) {
  const std::string dir = kModels + "/rnn_scripted_loop";
  Model m = Model::load(dir + "/model.onnx");
  PreparedModel pm = m.prepare({{"batch", 4}, {"seq", 12}});
  ASSERT_EQ(pm.rebuilds_because(), "");
  Tensor x = load_tensor_pb(dir + "/test_data_set_0/input_0.pb");
  std::vector<Tensor> got = pm.run({{"sequence", x}});
  expect_close(got[0], load_tensor_pb(dir + "/test_data_set_0/output_0.pb"), 1e-5);
  expect_close(got[1], load_tensor_pb(dir + "/test_data_set_0/output_1.pb"), 1e-5);
  size_t compiles = kernel_cache_stats().compiles;
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 1}, {3, 7}, {4, 12}, {2, 5}}) {
    SCOPED_TRACE("batch " + std::to_string(batch) + " seq " + std::to_string(seq));
    Tensor xs = Tensor::randn({batch, seq, 8}, static_cast<uint64_t>(batch * 100 + seq)).realize();
    got = pm.run({{"sequence", xs}});
    EXPECT_EQ(kernel_cache_stats().compiles, compiles) << "the prepared model compiled";
    std::vector<Tensor> want = m.build({{"sequence", xs}});
    ASSERT_EQ(got[1].shape(), (Shape{batch, seq, 16}));
    expect_close(got[0], want[0].realize(), 1e-5);
    expect_close(got[1], want[1].realize(), 1e-5);
    compiles = kernel_cache_stats().compiles;
  }
}

// A model's initializers are constants: the kernels that read only them (the convolutions' weight
// layouts) run at prepare; everything that reads the input runs in execute(), whatever file the
// input came from, and the answer is ONNX Runtime's.
TEST(OnnxPreparedModel, WeightWorkIsFoldedInputWorkIsNot) {
  Model m = Model::load(kModels + "/cnn_resnet/model.onnx");
  Tensor x = load_tensor_pb(kModels + "/cnn_resnet/test_data_set_0/input_0.pb");
  ExecutionPlan plan = Tensor::prepare(m.build({{m.inputs()[0].name, x}}));
  size_t folded = 0, reading_input = 0;
  for (const PreparedKernel* k : plan.prepared_kernels()) {
    folded += k->constant;
    bool reads_input = std::find(k->buffer_ids.begin(), k->buffer_ids.end(), x.buffer().id()) != k->buffer_ids.end();
    reading_input += reads_input;
    EXPECT_FALSE(reads_input && k->constant) << k->kernel->entry_point;
  }
  EXPECT_GE(reading_input, 1u);  // the input is read where it was given, so the check above means something
  EXPECT_GE(folded, 1u);
  EXPECT_LT(folded, plan.prepared_kernels().size());
  plan.execute();
  Tensor want = load_tensor_pb(kModels + "/cnn_resnet/test_data_set_0/output_0.pb");
  expect_close(Tensor::from_vector(plan.output_buffer()->to_vector<float>(), want.shape()), want, 1e-4);
}

// Every model's intermediates in one arena, each poisoned after its last use: the answers stay
// ONNX Runtime's, no two live buffers share bytes, every output is reachable and the arena is
// smaller than the buffers it replaced.
TEST(OnnxPreparedModel, ModelsAgreeWithTheirIntermediatesInAPoisonedArena) {
  size_t arena = 0, separate = 0;
  for (const std::string name : {"cnn_resnet_bn", "transformer_encoder", "gru_seq", "lstm_tagger", "mlp_bn_silu"}) {
    SCOPED_TRACE(name);
    Model m = Model::load(kModels + "/" + name + "/model.onnx");
    std::map<std::string, Tensor> feeds;
    for (size_t i = 0; i < m.inputs().size(); ++i)
      feeds.emplace(m.inputs()[i].name, load_tensor_pb(kModels + "/" + name + "/test_data_set_0/input_" + std::to_string(i) + ".pb"));
    std::vector<Tensor> outs = m.build(feeds);
    PrepareOptions o;
    o.poison = true;
    ExecutionPlan plan = Tensor::prepare(outs, o);
    plan.execute();
    plan.execute();
    testing::expect_no_live_overlap(plan);
    ASSERT_EQ(plan.num_outputs(), outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      Tensor want = load_tensor_pb(kModels + "/" + name + "/test_data_set_0/output_" + std::to_string(i) + ".pb");
      const Buffer* got = plan.buffer(outs[i].uop_id());
      ASSERT_NE(got, nullptr);
      EXPECT_EQ(*got, *plan.output_buffer_at(i));
      expect_close(Tensor::from_vector(got->to_vector<float>(), want.shape()), want, 1e-4);
    }
    const MemoryStats& mem = plan.memory_stats();
    // A model whose intermediates are all alive together (the GRU's, once its steps write their
    // states into the sequence in place) has nothing to share: its arena matches their sum. Every
    // other model's arena shares bytes.
    EXPECT_LE(mem.arena_bytes, mem.intermediate_bytes) << name;
    if (mem.peak_live_bytes < mem.intermediate_bytes) {
      EXPECT_LT(mem.arena_bytes, mem.intermediate_bytes) << name;
    }
    arena += mem.arena_bytes;
    separate += mem.intermediate_bytes;
    EXPECT_GE(mem.arena_bytes, mem.peak_live_bytes);
    EXPECT_GT(mem.constant_bytes, 0u);
  }
  EXPECT_LT(arena, separate) << "the arenas share bytes between intermediates";
}

TEST(OnnxPreparedModel, BadSizesAreErrorsThatChangeNothing) {
  Model m = Model::load(kModels + "/mlp_dynamic_batch/model.onnx");
  EXPECT_THROW(m.prepare({}), OnnxError);                                // batch has no maximum
  EXPECT_THROW(m.prepare({{"batch", 8}, {"seq", 4}}), OnnxError);        // no dimension named seq
  EXPECT_THROW(m.prepare({{"batch", 0}}), OnnxError);
  PreparedModel pm = m.prepare({{"batch", 4}});
  Tensor x = Tensor::randn({2, 32}, 7).realize();
  Tensor before = pm.run({{"x", x}})[0];
  for (const Tensor& bad : {Tensor::randn({5, 32}, 1), Tensor::randn({2, 31}, 1), Tensor::randn({2, 32, 1}, 1),
                            Tensor::randn({2, 32}, 1).cast(dtypes::float64)}) {
    try {
      pm.run({{"x", bad}});
      FAIL() << shape_to_string(bad.shape());
    } catch (const OnnxError& e) {
      EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(pm.run({}), OnnxError);
  EXPECT_EQ(pm.sizes().at("batch"), 2);
  std::vector<float> out = pm.plan().output_buffer_at(0)->to_vector<float>(), want = before.to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(out[i], want[i]) << "the failed runs changed the output buffer";
}

// A misspelt input is an error naming the model's inputs, in a build and in a prepared model's
// run alike; nothing runs on data made up in its place.
TEST(OnnxPreparedModel, AnInputTheModelLacksIsAnErrorNamingItsInputs) {
  Model m = Model::load(kModels + "/mlp_dynamic_batch/model.onnx");
  Tensor x = Tensor::randn({2, 32}, 7).realize();
  auto expect_named = [](const std::function<void()>& run) {
    try {
      run();
      FAIL() << "no error";
    } catch (const OnnxError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("no input 'xx'"), std::string::npos) << what;
      EXPECT_NE(what.find("'x' (float32, [batch, 32])"), std::string::npos) << what;
    }
  };
  expect_named([&] { m.build({{"x", x}, {"xx", x}}); });
  expect_named([&] { m.build({{"xx", x}}); });
  PreparedModel pm = m.prepare({{"batch", 4}});
  expect_named([&] { pm.run({{"xx", x}}); });
  expect_named([&] { pm.run({{"x", x}, {"xx", x}}); });
}

// x: (n, 4) with n named; `op` applied with `shape` (a 1-element int64 initializer, -1) as its
// second input.
std::string reshape_model(const std::string& op = "Reshape") {
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  ::onnx::GraphProto* g = model.mutable_graph();
  g->set_name("symbolic_reshape");
  ::onnx::ValueInfoProto* x = g->add_input();
  x->set_name("x");
  auto* tt = x->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(::onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param("n");
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  ::onnx::TensorProto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(::onnx::TensorProto::INT64);
  shape->add_dims(1);
  shape->add_int64_data(-1);
  ::onnx::NodeProto* node = g->add_node();
  node->set_name("flatten_it");
  node->set_op_type(op);
  node->add_input("x");
  node->add_input("shape");
  node->add_output("y");
  g->add_output()->set_name("y");
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  return model.SerializeAsString();
}

// A Reshape to -1 over a symbolic size: the plan serves every n.
TEST(OnnxPreparedModel, ReshapeOfASymbolicSize) {
  Model m = Model::from_bytes(reshape_model());
  PreparedModel pm = m.prepare({{"n", 8}});
  for (int64_t n : {8, 3, 1}) {
    std::vector<float> x(static_cast<size_t>(4 * n));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    Tensor y = pm.run({{"x", Tensor::from_vector(x, {n, 4})}})[0];
    EXPECT_EQ(y.shape(), (Shape{4 * n}));
    EXPECT_EQ(y.to_vector<float>(), x);
  }
}

// An operator that reads sizes as numbers (Tile's repeats against a symbolic axis) is named.
TEST(OnnxPreparedModel, AnOperatorThatNeedsStaticSizesIsNamed) {
  Model m = Model::from_bytes(reshape_model("Pad"));
  try {
    m.prepare({{"n", 8}});
    FAIL();
  } catch (const OnnxError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("flatten_it"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Pad"), std::string::npos) << msg;
    EXPECT_NE(msg.find("static sizes"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace lathe::onnx
