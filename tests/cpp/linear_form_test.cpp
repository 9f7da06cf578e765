#include "pypto/ir/linear_form.h"

#include <gtest/gtest.h>

#include <limits>

#include "pypto/ir/types.h"

namespace pypto::ir {
namespace {

ExprPtr var(const char* name) { return make_var(name, scalar_type(DataType::INT64)); }
ExprPtr bin(BinaryOp op, ExprPtr a, ExprPtr b) {
  return make_node<Binary>(op, a, b, scalar_type(DataType::INT64));
}

TEST(LinearForm, CollectsConstantMultiplesOfEachTerm) {
  ExprPtr i = var("i"), j = var("j");
  // (i + 1) * 64 - 2 * (j - i)  ==  66·i - 2·j + 64
  auto form = linear_form(bin(BinaryOp::Sub,
                              bin(BinaryOp::Mul, bin(BinaryOp::Add, i, make_int(1)), make_int(64)),
                              bin(BinaryOp::Mul, make_int(2), bin(BinaryOp::Sub, j, i))));
  ASSERT_TRUE(form);
  EXPECT_EQ(form->constant, 64);
  ASSERT_EQ(form->terms.size(), 2u);
  EXPECT_EQ(form->terms[0].first, i);
  EXPECT_EQ(form->terms[0].second, 66);
  EXPECT_EQ(form->terms[1].second, -2);
}

TEST(LinearForm, BoundsThatDifferByAConstantWhateverTheVariables) {
  ExprPtr k = var("k");
  ExprPtr lower = bin(BinaryOp::Mul, k, make_int(128));
  ExprPtr upper = bin(BinaryOp::Mul, bin(BinaryOp::Add, k, make_int(1)), make_int(128));
  EXPECT_EQ(constant_difference(lower, upper), 128);
  EXPECT_EQ(constant_difference(upper, lower), -128);
  // A product of two variables is one opaque term: equal ones cancel, different ones do not.
  ExprPtr kk = bin(BinaryOp::Mul, k, k);
  EXPECT_EQ(constant_difference(kk, bin(BinaryOp::Add, kk, make_int(3))), 3);
  EXPECT_FALSE(constant_difference(k, bin(BinaryOp::Mul, k, make_int(2))));
  EXPECT_FALSE(constant_difference(k, var("n")));
}

TEST(LinearForm, OverflowingCoefficientsGiveNoForm) {
  ExprPtr big = make_int(std::numeric_limits<int64_t>::max());
  EXPECT_FALSE(linear_form(bin(BinaryOp::Mul, bin(BinaryOp::Mul, var("i"), big), make_int(2))));
  EXPECT_FALSE(linear_form(bin(BinaryOp::Add, bin(BinaryOp::Add, var("i"), big), big)));
}

}  // namespace
}  // namespace pypto::ir
