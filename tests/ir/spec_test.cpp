#include <gtest/gtest.h>

#include "ir/spec.hpp"
#include "lathe/error.hpp"

namespace lathe {
namespace {

// The message names what is wrong and shows the offending node.
void expect_spec_error(const UOpPtr& root, const std::string& reason, const std::string& node) {
  try {
    verify(root);
    FAIL() << "expected SpecError for " << print_graph(root);
  } catch (const SpecError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(reason), std::string::npos) << msg;
    EXPECT_NE(msg.find(node), std::string::npos) << msg;
  }
}

TEST(Spec, WellFormedGraphPasses) {
  UOpPtr buf = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr(), {}, int64_t{0});
  UOpPtr i = UOp::range(UOp::index_const(16), 0);
  UOpPtr idx = UOp::make(Ops::INDEX, dtypes::float32.ptr(), {buf, i});
  UOpPtr val = UOp::make(Ops::LOAD, dtypes::float32, {idx}) + UOp::const_(dtypes::float32, 1.0);
  UOpPtr store = UOp::make(Ops::STORE, dtypes::void_, {idx, val});
  EXPECT_NO_THROW(verify(UOp::make(Ops::SINK, dtypes::void_, {store})));
}

TEST(Spec, MismatchedOperandDtypes) {
  UOpPtr bad = UOp::make(Ops::ADD, dtypes::float32, {UOp::const_(dtypes::float32, 1.0), UOp::const_(dtypes::int32, 1)});
  expect_spec_error(bad + UOp::const_(dtypes::float32, 2.0), "operands have different dtypes (float32, int32)",
                    "ADD float32");
}

TEST(Spec, ComparisonMustBeBool) {
  UOpPtr a = UOp::variable("a", 0, 3);
  expect_spec_error(UOp::make(Ops::CMPLT, dtypes::index, {a, a}), "comparison must produce bool", "CMPLT index");
}

TEST(Spec, WhereNeedsBoolCondition) {
  UOpPtr a = UOp::variable("a", 0, 3);
  expect_spec_error(UOp::make(Ops::WHERE, dtypes::index, {a, a, a}), "WHERE condition must be bool", "WHERE");
}

TEST(Spec, ConstantMustFitDtype) {
  expect_spec_error(UOp::make(Ops::CONST, dtypes::float32, {}, int64_t{1}), "does not fit dtype float32", "CONST");
}

TEST(Spec, StoreThroughNonPointer) {
  UOpPtr v = UOp::const_(dtypes::float32, 1.0);
  expect_spec_error(UOp::make(Ops::STORE, dtypes::void_, {v, v}), "address must be a pointer", "STORE");
}

TEST(Spec, BindOutsideBounds) {
  UOpPtr n = UOp::variable("n", 1, 8);
  expect_spec_error(UOp::make(Ops::BIND, dtypes::index, {n, UOp::index_const(9)}), "outside [1, 8] of 'n'", "BIND");
}

TEST(Spec, IntegerOnlyOps) {
  UOpPtr f = UOp::const_(dtypes::float32, 1.0);
  expect_spec_error(UOp::make(Ops::MOD, dtypes::float32, {f, f}), "MOD needs an integer dtype", "MOD float32");
  UOpPtr i = UOp::index_const(2);
  expect_spec_error(UOp::make(Ops::FDIV, dtypes::index, {i, i}), "FDIV needs a float dtype", "FDIV");
}

TEST(Spec, BitcastSizesMustMatch) {
  UOpPtr f = UOp::const_(dtypes::float32, 1.0);
  EXPECT_NO_THROW(verify(UOp::make(Ops::BITCAST, dtypes::int32, {f})));
  expect_spec_error(UOp::make(Ops::BITCAST, dtypes::int64, {f}), "different sizes", "BITCAST");
}

TEST(Spec, ReportsTheFirstBadNodeDeepInTheGraph) {
  UOpPtr bad = UOp::make(Ops::SINK, dtypes::float32, {});
  UOpPtr root = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::NOOP, dtypes::void_, {bad})});
  expect_spec_error(root, "SINK has dtype void", "SINK float32");
}

}  // namespace
}  // namespace lathe
