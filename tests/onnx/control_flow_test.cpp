// Loop and Scan whose trip counts, conditions or carried values come from a model's inputs: the
// model is prepared once, its body a plan of its own that a step runs per iteration, so a new
// input (a new count, a new sequence length) compiles nothing; the answers are plain loops'.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "lathe/lathe.hpp"
#include "lathe/onnx.hpp"
#include "onnx/graph_parts.hpp"

namespace lathe::onnx {
namespace {

// A node `op` over `ins` making `outs`.
void add_node_outs(::onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(outs[0] + "_node");
  for (const std::string& in : ins) n->add_input(in);
  for (const std::string& out : outs) n->add_output(out);
}

// A body input or output: a name and a type (sizes left to the graph).
void add_typed(google::protobuf::RepeatedPtrField<::onnx::ValueInfoProto>* list, const std::string& name, int elem_type) {
  auto* v = list->Add();
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

constexpr int kFloat = ::onnx::TensorProto::FLOAT, kInt64 = ::onnx::TensorProto::INT64, kBool = ::onnx::TensorProto::BOOL;

// big = sum(x) > t, and an If on it whose branches are one node each over `in` (`then_op` and
// `else_op`, giving `elem_type`), its output named `picked`.
void add_if_on_sum(::onnx::GraphProto* g, const std::string& in, const std::string& then_op, const std::string& else_op, int elem_type,
                   const std::string& picked) {
  add_node(g, "ReduceSum", {"x"}, "total");
  set_last_node_int(g, "keepdims", 0);
  add_node(g, "Greater", {"total", "t"}, "big");
  ::onnx::GraphProto yes, no;
  yes.set_name("then");
  add_node(&yes, then_op, {in}, "then_out");
  add_typed(yes.mutable_output(), "then_out", elem_type);
  no.set_name("else");
  add_node(&no, else_op, {in}, "else_out");
  add_typed(no.mutable_output(), "else_out", elem_type);
  add_node_outs(g, "If", {"big"}, {picked});
  set_last_node_graph(g, "then_branch", yes);
  set_last_node_graph(g, "else_branch", no);
}

// for i in range(M) while sum(x) < limit: x = 2x + i, each x kept: M, limit (read by the body from
// the graph around it) and x's length n are inputs, so one plan serves every count.
::onnx::ModelProto doubling_loop() {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "doubling_loop");
  add_sized_input(g, "M", {}, kInt64);
  add_sized_input(g, "limit", {});
  add_sized_input(g, "x", {"n"});
  add_float(g, "two", 2.0f);
  ::onnx::GraphProto body;
  body.set_name("body");
  add_typed(body.mutable_input(), "i", kInt64);
  add_typed(body.mutable_input(), "cond_in", kBool);
  add_typed(body.mutable_input(), "x_in", kFloat);
  add_node(&body, "Cast", {"i"}, "fi");
  set_last_node_int(&body, "to", kFloat);
  add_node(&body, "Mul", {"x_in", "two"}, "x2");
  add_node(&body, "Add", {"x2", "fi"}, "x_out");
  add_node(&body, "ReduceSum", {"x_out"}, "total");
  set_last_node_int(&body, "keepdims", 0);
  add_node(&body, "Less", {"total", "limit"}, "cond_out");
  add_node(&body, "Identity", {"x_out"}, "kept");
  for (const char* out : {"cond_out", "x_out", "kept"}) add_typed(body.mutable_output(), out, kFloat);
  add_node_outs(g, "Loop", {"M", "", "x"}, {"x_final", "xs"});
  set_last_node_graph(g, "body", body);
  add_output(g, "x_final");
  add_output(g, "xs");
  return proto;
}

// A count M given as an input has no bound, and the scan output needs one: the model is built for
// each input instead (the loop unrolled), and answers the same.
TEST(LoopAsAStep, ScanOutputsOfAnUnboundedCountFallBackToBuildingForEachInput) {
  PreparedModel pm = model_of(doubling_loop()).prepare({{"n", 6}});
  EXPECT_NE(pm.rebuilds_because().find("no largest size"), std::string::npos) << pm.rebuilds_because();
  std::vector<Tensor> got = pm.run({{"M", Tensor::full({}, int64_t{3}, dtypes::int64)}, {"limit", Tensor::full({}, 1e9f, dtypes::float32)},
                                    {"x", Tensor::from_vector<float>({1, -1}, {2})}});
  EXPECT_EQ(got[0].to_vector<float>(), (std::vector<float>{12, -4}));  // x = 2x + i for i = 0, 1, 2
  EXPECT_EQ(got[1].shape(), (Shape{3, 2}));
}

// The same loop with the count a constant (its scan output's bound) and the condition and
// length from the inputs: prepared once for n up to 6, every run compiles nothing.
TEST(LoopAsAStep, PreparedOnceForEveryConditionAndLength) {
  ::onnx::ModelProto proto = doubling_loop();
  ::onnx::GraphProto* g = proto.mutable_graph();
  g->mutable_input()->erase(g->mutable_input()->begin());  // M becomes a constant
  add_int64s(g, "M", {7}, {});
  Model m = model_of(proto);
  PreparedModel pm = m.prepare({{"n", 6}});
  ASSERT_EQ(pm.rebuilds_because(), "");
  size_t compiles = kernel_cache_stats().compiles;
  for (int64_t n : {1, 3, 6})
    for (float limit : {-1.0f, 10.0f, 200.0f, 1e9f}) {
      SCOPED_TRACE("n " + std::to_string(n) + " limit " + std::to_string(limit));
      std::vector<float> x(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) x[static_cast<size_t>(j)] = 0.25f * static_cast<float>(j) - 0.5f;
      std::vector<Tensor> got = pm.run({{"limit", Tensor::from_vector<float>({limit}, {})}, {"x", Tensor::from_vector(x, {n})}});
      std::vector<float> want = x, kept;
      int64_t trips = 0;
      for (bool cond = true; trips < 7 && cond; ++trips) {
        float total = 0;
        for (float& v : want) v = 2 * v + static_cast<float>(trips), total += v;
        kept.insert(kept.end(), want.begin(), want.end());
        cond = total < limit;
      }
      EXPECT_EQ(got[0].shape(), (Shape{n}));
      EXPECT_EQ(got[0].to_vector<float>(), want);
      EXPECT_EQ(got[1].shape(), (Shape{trips, n}));
      EXPECT_EQ(got[1].to_vector<float>(), kept);
      EXPECT_EQ(kernel_cache_stats().compiles, compiles) << "a run compiled";
    }
}

// Nodes ("Op:output", its inputs) added to `g` in order.
void add_nodes(::onnx::GraphProto* g, const std::vector<std::pair<std::string, std::vector<std::string>>>& nodes) {
  for (const auto& [op_out, ins] : nodes) add_node(g, op_out.substr(0, op_out.find(':')), ins, op_out.substr(op_out.find(':') + 1));
}

// A Loop over M iterations (an input) carrying a and b (3 floats each) through a body of `nodes`
// ("Op:output", its inputs) that returns `a_out` and `b_out` as the new a and b; the graph also
// holds W = (7, 8, 9) and `two` for a body to read.
::onnx::ModelProto two_carried_values(const std::vector<std::pair<std::string, std::vector<std::string>>>& nodes, const char* a_out,
                                      const char* b_out) {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "two_carried");
  add_sized_input(g, "M", {}, kInt64);
  add_sized_input(g, "a", {"3"});
  add_sized_input(g, "b", {"3"});
  ::onnx::TensorProto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(::onnx::TensorProto::FLOAT);
  w->add_dims(3);
  for (float v : {7.0f, 8.0f, 9.0f}) w->add_float_data(v);
  add_float(g, "two", 2.0f);
  ::onnx::GraphProto body;
  body.set_name("body");
  add_typed(body.mutable_input(), "i", kInt64);
  add_typed(body.mutable_input(), "c", kBool);
  add_typed(body.mutable_input(), "a_in", kFloat);
  add_typed(body.mutable_input(), "b_in", kFloat);
  add_node(&body, "Identity", {"c"}, "c_out");
  add_nodes(&body, nodes);
  for (const char* out : {"c_out", a_out, b_out}) add_typed(body.mutable_output(), out, kFloat);
  add_node_outs(g, "Loop", {"M", "", "a", "b"}, {"a_final", "b_final"});
  set_last_node_graph(g, "body", body);
  add_output(g, "a_final");
  add_output(g, "b_final");
  return proto;
}

// Two carried values swapped each iteration, M times (M an input; no scan output, so no bound is
// needed): the body's outputs are its inputs' own memory, read before either is written. M = 0
// returns the initial values.
TEST(LoopAsAStep, SwappedValuesCarriedThroughTheBodysOwnMemory) {
  ::onnx::ModelProto proto = two_carried_values({}, "b_in", "a_in");
  PreparedModel pm = model_of(proto).prepare({});
  ASSERT_EQ(pm.rebuilds_because(), "");
  std::vector<float> a{1, 2, 3}, b{4, 5, 6};
  for (int64_t trips : {0, 1, 2, 5}) {
    std::vector<Tensor> got = pm.run({{"M", Tensor::full({}, trips, dtypes::int64)}, {"a", Tensor::from_vector(a, {3})}, {"b", Tensor::from_vector(b, {3})}});
    EXPECT_EQ(got[0].to_vector<float>(), trips % 2 ? b : a) << trips;
    EXPECT_EQ(got[1].to_vector<float>(), trips % 2 ? a : b) << trips;
  }
}

// Carried values in each arrangement a hand-off must survive, M = 0..5 from the inputs: one fed
// from the other (Fibonacci: cur + prev, and prev the old cur: the second reads what the first
// swap would move), two outputs of one buffer (x * 2 and the same value again), and a weight
// carried out (each iteration returns the initializer; it must stay the weight).
TEST(LoopAsAStep, CarriedValuesHandedOffInEveryArrangement) {
  std::map<std::string, PreparedModel> prepared;  // one per arrangement, run at every count
  auto run_loop = [&prepared](const std::vector<std::pair<std::string, std::vector<std::string>>>& nodes, int64_t trips) {
    ::onnx::ModelProto proto = two_carried_values(nodes, "a_out", "b_out");
    std::string key;
    for (const auto& [n, ins] : nodes) key += n + ";";
    auto it = prepared.find(key);
    if (it == prepared.end()) it = prepared.emplace(key, model_of(proto).prepare({})).first;
    EXPECT_EQ(it->second.rebuilds_because(), "");
    std::vector<Tensor> got = it->second.run({{"M", Tensor::from_vector<int64_t>({trips}, {})},
                                              {"a", Tensor::from_vector<float>({1, 2, 3}, {3})},
                                              {"b", Tensor::from_vector<float>({0, 1, 1}, {3})}});
    return std::pair{got[0].to_vector<float>(), got[1].to_vector<float>()};
  };
  for (int64_t m = 0; m <= 5; ++m) {
    SCOPED_TRACE("M " + std::to_string(m));
    std::vector<float> cur{1, 2, 3}, prev{0, 1, 1}, x{1, 2, 3}, y{0, 1, 1}, v{1, 2, 3};
    for (int64_t i = 0; i < m; ++i) {
      std::vector<float> next(3);
      for (size_t k = 0; k < 3; ++k) next[k] = cur[k] + prev[k];
      prev = cur, cur = next;
      for (float& e : x) e *= 2;
      y = x;
      v = {7, 8, 9};
    }
    EXPECT_EQ(run_loop({{"Add:a_out", {"a_in", "b_in"}}, {"Identity:b_out", {"a_in"}}}, m), (std::pair{cur, prev}));
    EXPECT_EQ(run_loop({{"Mul:a_out", {"a_in", "two"}}, {"Identity:b_out", {"a_out"}}}, m), (std::pair{x, y}));
    EXPECT_EQ(run_loop({{"Identity:a_out", {"W"}}, {"Add:b_out", {"b_in", "a_in"}}}, m).first, v);
  }
}

// A carried value that grows each iteration (a Concat) has no shape a plan can keep: the model is
// built again for each input, and still answers right.
TEST(LoopAsAStep, AValueThatChangesShapeFallsBackToBuildingForEachInput) {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "growing_loop");
  add_sized_input(g, "M", {}, kInt64);
  add_sized_input(g, "x", {"2"});
  ::onnx::GraphProto body;
  body.set_name("body");
  add_typed(body.mutable_input(), "i", kInt64);
  add_typed(body.mutable_input(), "c", kBool);
  add_typed(body.mutable_input(), "x_in", kFloat);
  add_node(&body, "Identity", {"c"}, "c_out");
  add_node(&body, "Concat", {"x_in", "x_in"}, "x_out");
  set_last_node_int(&body, "axis", 0);
  for (const char* out : {"c_out", "x_out"}) add_typed(body.mutable_output(), out, kFloat);
  add_node_outs(g, "Loop", {"M", "", "x"}, {"x_final"});
  set_last_node_graph(g, "body", body);
  add_output(g, "x_final");
  PreparedModel pm = model_of(proto).prepare({});
  EXPECT_NE(pm.rebuilds_because().find("changes shape"), std::string::npos) << pm.rebuilds_because();
  for (int64_t trips : {0, 2, 3}) {
    std::vector<Tensor> got = pm.run({{"M", Tensor::full({}, trips, dtypes::int64)}, {"x", Tensor::from_vector<float>({1, 2}, {2})}});
    EXPECT_EQ(got[0].shape(), (Shape{int64_t{2} << trips})) << trips;
  }
}

// A Loop over x's length n that appends x * i to a sequence each iteration (as exporters collect
// values), then the sequence joined along axis 1 (no new axis) and its length: the appended values
// are stacked as the plan runs. A body that also reads the sequence (its length) cannot be a step,
// and the model is built for each input instead, with the same answers.
::onnx::ModelProto appending_loop(bool body_reads_the_sequence) {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "appending_loop");
  add_sized_input(g, "x", {"2", "n"});
  add_node(g, "Shape", {"x"}, "x_shape");
  add_int64s(g, "one", {1}, {});
  add_node(g, "Gather", {"x_shape", "one"}, "count");
  add_node(g, "SequenceEmpty", {}, "empty");
  ::onnx::GraphProto body;
  body.set_name("body");
  add_typed(body.mutable_input(), "i", kInt64);
  add_typed(body.mutable_input(), "c", kBool);
  body.add_input()->set_name("seq_in");
  add_node(&body, "Cast", {"i"}, "fi");
  set_last_node_int(&body, "to", kFloat);
  add_node(&body, "Mul", {"x", "fi"}, "scaled");
  add_node(&body, "SequenceInsert", {"seq_in", "scaled"}, "seq_out");
  if (body_reads_the_sequence) {
    add_node(&body, "SequenceLength", {"seq_in"}, "length");
    add_node(&body, "Identity", {"length"}, "seen");
  } else {
    add_node(&body, "Identity", {"i"}, "seen");
  }
  add_node(&body, "Identity", {"c"}, "c_out");
  add_typed(body.mutable_output(), "c_out", kBool);
  body.add_output()->set_name("seq_out");
  add_typed(body.mutable_output(), "seen", kInt64);
  add_node_outs(g, "Loop", {"count", "", "empty"}, {"collected", "seens"});
  set_last_node_graph(g, "body", body);
  add_node(g, "ConcatFromSequence", {"collected"}, "joined");
  set_last_node_int(g, "axis", 1);
  add_node(g, "SequenceLength", {"collected"}, "length");
  add_output(g, "joined");
  add_output(g, "length");
  add_output(g, "seens");
  return proto;
}

// A sequence read item by item after the loop (SequenceAt) cannot be stacked: the model is built
// for each input instead, with the same answers.
TEST(LoopAsAStep, AnAppendedSequenceReadItemByItemFallsBack) {
  ::onnx::ModelProto proto = appending_loop(false);
  ::onnx::GraphProto* g = proto.mutable_graph();
  add_int64s(g, "last", {-1}, {});
  add_node(g, "SequenceAt", {"collected", "last"}, "last_item");
  add_output(g, "last_item");
  PreparedModel pm = model_of(proto).prepare({{"n", 5}});
  EXPECT_NE(pm.rebuilds_because().find("SequenceAt"), std::string::npos) << pm.rebuilds_because();
  for (int64_t n : {2, 4}) {
    std::vector<float> x;
    for (int64_t j = 0; j < 2 * n; ++j) x.push_back(static_cast<float>(j) + 1);
    std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {2, n})}});
    std::vector<float> want;
    for (float v : x) want.push_back(v * static_cast<float>(n - 1));
    EXPECT_EQ(got[3].to_vector<float>(), want) << n;
  }
}

TEST(LoopAsAStep, ValuesAppendedToASequenceAreStacked) {
  for (bool reads : {false, true}) {
    SCOPED_TRACE(reads ? "the body reads the sequence" : "the body only appends");
    PreparedModel pm = model_of(appending_loop(reads)).prepare({{"n", 5}});
    if (reads) EXPECT_NE(pm.rebuilds_because(), "");
    else EXPECT_EQ(pm.rebuilds_because(), "");
    for (int64_t n : {1, 3, 5}) {
      std::vector<float> x;
      for (int64_t j = 0; j < 2 * n; ++j) x.push_back(static_cast<float>(j) + 1);
      std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {2, n})}});
      std::vector<float> joined;  // (2, n * n): row r holds x[r] * i for i = 0..n-1, one after another
      std::vector<int64_t> seens;
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) joined.push_back(x[static_cast<size_t>(r * n + j)] * static_cast<float>(i));
      for (int64_t i = 0; i < n; ++i) seens.push_back(i);  // i, or the length before the append: the same
      EXPECT_EQ(got[0].shape(), (Shape{2, n * n})) << n;
      EXPECT_EQ(got[0].to_vector<float>(), joined) << n;
      EXPECT_EQ(got[1].to_vector<int64_t>(), (std::vector<int64_t>{n})) << n;
      EXPECT_EQ(got[2].to_vector<int64_t>(), seens) << n;
    }
  }
}

// Scan over a sequence of run-time length t: a running sum (the state) kept at each step (axis
// 0), and the input read backwards kept along axis 1 (a body output that is its input). Prepared
// once for t up to 6 and run at 1, 4 and 6, compiling nothing.
TEST(ScanAsAStep, RunningSumOverASequenceOfRunTimeLength) {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "running_sum");
  add_sized_input(g, "s0", {"3"});
  add_sized_input(g, "x", {"t", "3"});
  add_float(g, "half", 0.5f);
  ::onnx::GraphProto body;
  body.set_name("body");
  add_typed(body.mutable_input(), "s_in", kFloat);
  add_typed(body.mutable_input(), "x_t", kFloat);
  add_typed(body.mutable_input(), "r_t", kFloat);
  add_node(&body, "Add", {"s_in", "x_t"}, "s_out");
  add_node(&body, "Mul", {"s_out", "half"}, "y");
  for (const char* out : {"s_out", "y", "r_t"}) add_typed(body.mutable_output(), out, kFloat);
  add_node_outs(g, "Scan", {"s0", "x", "x"}, {"s_final", "ys", "rs"});
  set_last_node_graph(g, "body", body);
  set_last_node_int(g, "num_scan_inputs", 2);
  set_last_node_ints(g, "scan_input_directions", {0, 1});
  set_last_node_ints(g, "scan_output_axes", {0, 1});
  for (const char* out : {"s_final", "ys", "rs"}) add_output(g, out);
  PreparedModel pm = model_of(proto).prepare({{"t", 6}});
  ASSERT_EQ(pm.rebuilds_because(), "");
  size_t compiles = kernel_cache_stats().compiles;
  std::vector<float> s0{0.5f, -1.0f, 2.0f};
  for (int64_t t : {1, 4, 6}) {
    SCOPED_TRACE("t " + std::to_string(t));
    std::vector<float> x;
    for (int64_t i = 0; i < 3 * t; ++i) x.push_back(static_cast<float>((i * 7) % 5) - 1.5f);
    std::vector<Tensor> got = pm.run({{"s0", Tensor::from_vector(s0, {3})}, {"x", Tensor::from_vector(x, {t, 3})}});
    std::vector<float> s = s0, ys, rs(static_cast<size_t>(3 * t));
    for (int64_t i = 0; i < t; ++i) {
      for (size_t j = 0; j < 3; ++j) s[j] += x[static_cast<size_t>(i) * 3 + j], ys.push_back(s[j] * 0.5f);
      for (int64_t j = 0; j < 3; ++j) rs[static_cast<size_t>(j * t + i)] = x[static_cast<size_t>((t - 1 - i) * 3 + j)];  // (3, t): step i is column i
    }
    EXPECT_EQ(got[0].to_vector<float>(), s);
    EXPECT_EQ(got[1].shape(), (Shape{t, 3}));
    EXPECT_EQ(got[1].to_vector<float>(), ys);
    EXPECT_EQ(got[2].shape(), (Shape{3, t}));
    EXPECT_EQ(got[2].to_vector<float>(), rs);
  }
  EXPECT_EQ(kernel_cache_stats().compiles, compiles) << "a run compiled";
}

// A Scan node in `g` over `inputs` (its state s0, then one scan input x; opset 8 puts its
// sequence lengths first) through a body of `nodes` ("Op:output", its inputs) that reads s_in
// and x_t and returns s_out and y: the graph's outputs s_final and ys.
void add_state_scan(::onnx::GraphProto* g, const std::vector<std::string>& inputs,
                    const std::vector<std::pair<std::string, std::vector<std::string>>>& nodes) {
  ::onnx::GraphProto body;
  body.set_name("body");
  add_typed(body.mutable_input(), "s_in", kFloat);
  add_typed(body.mutable_input(), "x_t", kFloat);
  add_nodes(&body, nodes);
  for (const char* out : {"s_out", "y"}) add_typed(body.mutable_output(), out, kFloat);
  add_node_outs(g, "Scan", inputs, {"s_final", "ys"});
  set_last_node_graph(g, "body", body);
  set_last_node_int(g, "num_scan_inputs", 1);
  add_output(g, "s_final");
  add_output(g, "ys");
}

// A state that becomes the slice just read (s = x_t, a body input other than the state passed
// through): handed off by copying, so the next slice is read where it should be.
TEST(ScanAsAStep, AStateThatIsTheSliceJustRead) {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "previous");
  add_sized_input(g, "s0", {"2"});
  add_sized_input(g, "x", {"t", "2"});
  add_state_scan(g, {"s0", "x"}, {{"Identity:s_out", {"x_t"}}, {"Add:y", {"s_in", "x_t"}}});
  PreparedModel pm = model_of(proto).prepare({{"t", 5}});
  ASSERT_EQ(pm.rebuilds_because(), "");
  for (int64_t t : {1, 2, 5}) {
    std::vector<float> x;
    for (int64_t i = 0; i < 2 * t; ++i) x.push_back(static_cast<float>(i * i));
    std::vector<Tensor> got = pm.run({{"s0", Tensor::from_vector<float>({-1, -2}, {2})}, {"x", Tensor::from_vector(x, {t, 2})}});
    std::vector<float> s{-1, -2}, ys;
    for (int64_t i = 0; i < t; ++i) {
      for (size_t j = 0; j < 2; ++j) ys.push_back(s[j] + x[static_cast<size_t>(i) * 2 + j]);
      s = {x[static_cast<size_t>(i) * 2], x[static_cast<size_t>(i) * 2 + 1]};
    }
    EXPECT_EQ(got[0].to_vector<float>(), s) << t;
    EXPECT_EQ(got[1].to_vector<float>(), ys) << t;
  }
}

// Opset 8's Scan has a batch axis first on every input and output: each batch scanned on its own.
TEST(ScanAsAStep, OpsetEightScansEachBatch) {
  ::onnx::ModelProto proto;
  proto.set_ir_version(3);
  proto.add_opset_import()->set_version(8);
  ::onnx::GraphProto* g = proto.mutable_graph();
  g->set_name("scan8");
  add_sized_input(g, "s0", {"2", "2"});
  add_sized_input(g, "x", {"2", "t", "2"});
  add_state_scan(g, {"", "s0", "x"}, {{"Add:s_out", {"s_in", "x_t"}}, {"Identity:y", {"s_out"}}});
  PreparedModel pm = model_of(proto).prepare({{"t", 5}});
  ASSERT_EQ(pm.rebuilds_because(), "");
  for (int64_t t : {1, 5}) {
    std::vector<float> x;
    for (int64_t i = 0; i < 4 * t; ++i) x.push_back(static_cast<float>(i));
    std::vector<Tensor> got = pm.run({{"s0", Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2})}, {"x", Tensor::from_vector(x, {2, t, 2})}});
    std::vector<float> s{1, 2, 3, 4}, ys;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          s[static_cast<size_t>(b * 2 + j)] += x[static_cast<size_t>((b * t + i) * 2 + j)];
          ys.push_back(s[static_cast<size_t>(b * 2 + j)]);
        }
    EXPECT_EQ(got[0].to_vector<float>(), s) << t;
    EXPECT_EQ(got[1].shape(), (Shape{2, t, 2}));
    EXPECT_EQ(got[1].to_vector<float>(), ys) << t;
  }
}

}  // namespace
}  // namespace lathe::onnx

namespace lathe::onnx {
namespace {

// If over a condition from the inputs (sum(x) > t): each branch a plan of its own, and each run
// runs the branch picked, reading x and t from the graph around it. Output 0 has x's length n in
// both branches; output 1 has 2n in one and 1 in the other, a size each run decides.
TEST(IfAsAStep, RunsTheBranchItsConditionPicks) {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "if_model");
  add_sized_input(g, "x", {"n"});
  add_sized_input(g, "t", {});
  add_float(g, "two", 2.0f);
  add_node(g, "ReduceSum", {"x"}, "total");
  set_last_node_int(g, "keepdims", 0);
  add_node(g, "Greater", {"total", "t"}, "big");
  ::onnx::GraphProto yes, no;
  yes.set_name("then");
  add_node(&yes, "Mul", {"x", "two"}, "y_then");
  add_node(&yes, "Concat", {"x", "x"}, "w_then");
  set_last_node_int(&yes, "axis", 0);
  for (const char* out : {"y_then", "w_then"}) add_typed(yes.mutable_output(), out, kFloat);
  no.set_name("else");
  add_node(&no, "Sub", {"x", "t"}, "y_else");
  add_node(&no, "ReduceSum", {"x"}, "w_else");
  set_last_node_int(&no, "keepdims", 1);
  for (const char* out : {"y_else", "w_else"}) add_typed(no.mutable_output(), out, kFloat);
  add_node_outs(g, "If", {"big"}, {"y", "w"});
  set_last_node_graph(g, "then_branch", yes);
  set_last_node_graph(g, "else_branch", no);
  add_output(g, "y");
  add_output(g, "w");
  PreparedModel pm = model_of(proto).prepare({{"n", 8}});
  ASSERT_EQ(pm.rebuilds_because(), "");
  size_t compiles = kernel_cache_stats().compiles;
  for (int64_t n : {1, 5, 8})
    for (float t : {-100.0f, 100.0f}) {
      SCOPED_TRACE("n " + std::to_string(n) + " t " + std::to_string(t));
      std::vector<float> x;
      float total = 0;
      for (int64_t i = 0; i < n; ++i) x.push_back(static_cast<float>(i) - 1.5f), total += x.back();
      std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {n})}, {"t", Tensor::from_vector<float>({t}, {})}});
      std::vector<float> y, w;
      for (float v : x) y.push_back(total > t ? 2 * v : v - t);
      if (total > t) w = x, w.insert(w.end(), x.begin(), x.end());
      else w = {total};
      EXPECT_EQ(got[0].to_vector<float>(), y);
      EXPECT_EQ(got[1].shape(), (Shape{static_cast<int64_t>(w.size())}));
      EXPECT_EQ(got[1].to_vector<float>(), w);
      EXPECT_EQ(kernel_cache_stats().compiles, compiles) << "a run compiled";
    }
}

// Sizes computed outside and read inside as values (Shape(x), a dimension of the prepared range):
// the body plan reads each run's value, not the largest it was prepared for. The If's branch
// returns the shape; the Loop adds its length to a carried value on each of 3 iterations.
TEST(IfAsAStep, ASizeReadInsideIsThisRunsSize) {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "sizes_inside");
  add_sized_input(g, "x", {"n"});
  add_sized_input(g, "t", {});
  add_node(g, "Shape", {"x"}, "s");
  add_if_on_sum(g, "s", "Identity", "Neg", kInt64, "picked");
  add_int64s(g, "three", {3}, {});
  add_int64s(g, "h0", {0}, {1});
  ::onnx::GraphProto body;
  body.set_name("body");
  add_typed(body.mutable_input(), "i", kInt64);
  add_typed(body.mutable_input(), "c", kBool);
  add_typed(body.mutable_input(), "h_in", kInt64);
  add_node(&body, "Add", {"h_in", "s"}, "h_out");
  add_node(&body, "Identity", {"c"}, "c_out");
  add_typed(body.mutable_output(), "c_out", kBool);
  add_typed(body.mutable_output(), "h_out", kInt64);
  add_node_outs(g, "Loop", {"three", "big", "h0"}, {"h"});
  set_last_node_graph(g, "body", body);
  add_output(g, "picked");
  add_output(g, "h");
  PreparedModel pm = model_of(proto).prepare({{"n", 8}});
  ASSERT_EQ(pm.rebuilds_because(), "");
  for (int64_t n : {3, 8, 1})
    for (float t : {-100.0f, 100.0f}) {
      std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(std::vector<float>(static_cast<size_t>(n), 1.0f), {n})},
                                        {"t", Tensor::from_vector<float>({t}, {})}});
      bool big = static_cast<float>(n) > t;
      EXPECT_EQ(got[0].to_vector<int64_t>(), (std::vector<int64_t>{big ? n : -n})) << n << " " << t;
      EXPECT_EQ(got[1].to_vector<int64_t>(), (std::vector<int64_t>{big ? 3 * n : 0})) << n << " " << t;  // a false condition runs no iteration
    }
}

// A model built for each input (a Reshape to a shape given as an input) with an If on the
// inputs: the condition is read while the graph is built and keys the plans kept, so a new shape
// or a new condition is never answered by an old plan.
TEST(IfAsAStep, AModelBuiltForEachInputKeysItsPlansByTheCondition) {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "if_rebuilt");
  add_sized_input(g, "x", {"4"});
  add_sized_input(g, "shape", {"2"}, kInt64);
  add_sized_input(g, "t", {});
  add_node(g, "ReduceSum", {"x"}, "total");
  set_last_node_int(g, "keepdims", 0);
  add_node(g, "Greater", {"total", "t"}, "big");
  ::onnx::GraphProto yes, no;
  yes.set_name("then");
  add_node(&yes, "Reshape", {"x", "shape"}, "y_then");
  add_typed(yes.mutable_output(), "y_then", kFloat);
  no.set_name("else");
  add_node(&no, "Neg", {"x"}, "negated");
  add_node(&no, "Reshape", {"negated", "shape"}, "y_else");
  add_typed(no.mutable_output(), "y_else", kFloat);
  add_node_outs(g, "If", {"big"}, {"y"});
  set_last_node_graph(g, "then_branch", yes);
  set_last_node_graph(g, "else_branch", no);
  add_output(g, "y");
  PreparedModel pm = model_of(proto).prepare({});
  EXPECT_NE(pm.rebuilds_because(), "");
  std::vector<float> x{1, 2, 3, 4};
  for (auto [shape, t] : std::vector<std::pair<std::vector<int64_t>, float>>{{{2, 2}, 0}, {{4, 1}, 0}, {{4, 1}, 100}, {{2, 2}, 100}, {{2, 2}, 0}}) {
    std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {4})}, {"shape", Tensor::from_vector(shape, {2})}, {"t", Tensor::from_vector<float>({t}, {})}});
    EXPECT_EQ(got[0].shape(), (Shape{shape[0], shape[1]}));
    std::vector<float> want = x;
    if (t > 10)
      for (float& v : want) v = -v;
    EXPECT_EQ(got[0].to_vector<float>(), want) << t;
  }
}

// A branch that reads a value whose size is an expression of sizes (x flattened: 2n) cannot be a
// plan of its own: both branches are built into the graph and each output picked as it runs.
TEST(IfAsAStep, BranchesThatCannotBePlansOfTheirOwnArePickedInTheGraph) {
  ::onnx::ModelProto proto;
  ::onnx::GraphProto* g = start_graph(proto, "if_flat");
  add_sized_input(g, "x", {"n", "2"});
  add_sized_input(g, "t", {});
  add_node(g, "Flatten", {"x"}, "flat2");
  set_last_node_int(g, "axis", 0);
  add_int64s(g, "minus_one", {-1}, {1});
  add_node(g, "Reshape", {"flat2", "minus_one"}, "flat");
  add_if_on_sum(g, "flat", "Identity", "Neg", kFloat, "y");
  add_output(g, "y");
  PreparedModel pm = model_of(proto).prepare({{"n", 4}});
  ASSERT_EQ(pm.rebuilds_because(), "");
  for (int64_t n : {1, 3})
    for (float t : {-100.0f, 100.0f}) {
      std::vector<float> x;
      for (int64_t i = 0; i < 2 * n; ++i) x.push_back(static_cast<float>(i) + 0.5f);
      std::vector<Tensor> got = pm.run({{"x", Tensor::from_vector(x, {n, 2})}, {"t", Tensor::from_vector<float>({t}, {})}});
      std::vector<float> want = x;
      if (t > 0)
        for (float& v : want) v = -v;
      EXPECT_EQ(got[0].to_vector<float>(), want) << n << " " << t;
    }
}

}  // namespace
}  // namespace lathe::onnx
