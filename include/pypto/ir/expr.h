#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "pypto/ir/span.h"
#include "pypto/ir/types.h"

namespace pypto::ir {

enum class ExprKind : uint8_t {
  IntImm,
  FloatImm,
  BoolImm,
  Var,
  Binary,
  Unary,
  Call,
  MakeTuple,
  TupleGetItem,
};

class Expr;
using ExprPtr = std::shared_ptr<const Expr>;

// Every IR node records its nesting depth (1 for a leaf, 1 + the deepest child otherwise, counted
// through statements and expressions alike). Building a node deeper than kMaxIRDepth
// throws a located CompileError, so no IR tree exists that the recursive walkers (passes,
// printer, verifier, interpreter, codegen, destructors) could not walk on any thread's stack.
constexpr int32_t kMaxIRDepth = 2000;
// Throws the CompileError for a node at `span` that would nest `depth` levels deep.
[[noreturn]] void throw_nesting_too_deep(Span span, int32_t depth);
// 1 + the deepest of the nodes' depths (null nodes count 0), checked against the limit.
template <typename Node>
int32_t nested_depth(Span span, std::initializer_list<const std::shared_ptr<const Node>*> one,
                     int32_t deepest = 0) {
  for (const auto* p : one) {
    if (*p) deepest = std::max(deepest, (*p)->depth());
  }
  if (deepest >= kMaxIRDepth) throw_nesting_too_deep(span, deepest + 1);
  return deepest + 1;
}
template <typename Node>
int32_t deepest_of(const std::vector<std::shared_ptr<const Node>>& nodes) {
  int32_t deepest = 0;
  for (const auto& n : nodes) {
    if (n) deepest = std::max(deepest, n->depth());
  }
  return deepest;
}

// Expression nodes are immutable and shared; every node carries its type and source position.
//
// The fields are ordered, and the depth kept in 16 bits, so that the base ends in padding a
// derived node's first small field (Call::call_kind) fills: a kernel's IR is mostly calls,
// variables and literals, and a large one is walked from memory by every pass (the git history of
// bench/README.md, "Pass pipeline per IR node"). ir_node_size_test.cpp pins the sizes.
class Expr {
 public:
  Expr(ExprKind kind, TypePtr type, Span span) : type_(std::move(type)), span_(span), kind_(kind) {}
  virtual ~Expr() = default;
  ExprKind kind() const { return kind_; }
  const TypePtr& type() const { return type_; }
  Span span() const { return span_; }
  int32_t depth() const { return depth_; }

  template <typename T>
  const T* as() const {
    return kind_ == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

 private:
  TypePtr type_;
  Span span_;
  ExprKind kind_;

 protected:
  static_assert(kMaxIRDepth < INT16_MAX, "an Expr's depth is kept in 16 bits");
  int16_t depth_ = 1;
};

class IntImm : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::IntImm;
  IntImm(int64_t value, DataType dtype = DataType::INT64, Span span = {})
      : Expr(kKind, scalar_type(dtype), span), value(value) {}
  int64_t value;
};

class FloatImm : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  FloatImm(double value, DataType dtype = DataType::FP32, Span span = {})
      : Expr(kKind, scalar_type(dtype), span), value(value) {}
  double value;
};

class BoolImm : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::BoolImm;
  explicit BoolImm(bool value, Span span = {})
      : Expr(kKind, scalar_type(DataType::BOOL), span), value(value) {}
  bool value;
};

// A variable. Identity is the node itself (pointer equality), not the name: after ConvertToSSA
// several distinct variables may share a name, and the printer makes their names unique.
class Var : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::Var;
  Var(std::string name, TypePtr type, Span span = {})
      : Expr(kKind, std::move(type), span), name(std::move(name)) {}
  std::string name;
};
using VarPtr = std::shared_ptr<const Var>;

// Scalar arithmetic, comparison and logic on loop indices and scalar values.
enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div /* true division */,
  FloorDiv,
  Mod,
  Min,
  Max,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or,
  // Integer shifts (Python's << and >>: a count of 64 or more shifts every bit out, a negative
  // count is an error).
  Shl,
  Shr,
};
std::string_view binary_op_symbol(BinaryOp op);  // "+", "//", "==", "and", "min" ...
bool is_comparison(BinaryOp op);

class Binary : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::Binary;
  Binary(BinaryOp op, ExprPtr a, ExprPtr b, TypePtr type, Span span = {})
      : Expr(kKind, std::move(type), span), op(op), a(std::move(a)), b(std::move(b)) {
    depth_ = nested_depth(span, {&this->a, &this->b});
  }
  BinaryOp op;
  ExprPtr a, b;
};

enum class UnaryOp : uint8_t { Neg, Not };

class Unary : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::Unary;
  Unary(UnaryOp op, ExprPtr a, TypePtr type, Span span = {})
      : Expr(kKind, std::move(type), span), op(op), a(std::move(a)) {
    depth_ = nested_depth(span, {&this->a});
  }
  UnaryOp op;
  ExprPtr a;
};

// A keyword-argument value of an op call: `target_memory=pl.MemorySpace.Mat`, `dtype=pl.FP32`.
using AttrValue = std::variant<int64_t, double, bool, std::string, DataType, MemorySpace,
                               std::vector<int64_t>, PadValue>;
using Attrs = std::vector<std::pair<std::string, AttrValue>>;  // in source order
const AttrValue* find_attr(const Attrs& attrs, std::string_view key);

// The attributes of a call: one immutable list behind a shared pointer, so that the versions of a
// call that passes build with new arguments or types share it instead of copying it, and a call
// without attributes (most of them) holds no list at all. Reads like a const Attrs.
class AttrList {
 public:
  AttrList() = default;
  AttrList(Attrs attrs);  // NOLINT(google-explicit-constructor): a built list converts
  const Attrs& get() const { return list_ ? *list_ : no_attrs(); }
  operator const Attrs&() const { return get(); }  // NOLINT(google-explicit-constructor)
  Attrs::const_iterator begin() const { return get().begin(); }
  Attrs::const_iterator end() const { return get().end(); }
  size_t size() const { return get().size(); }
  bool empty() const { return get().empty(); }
  const Attrs::value_type& operator[](size_t i) const { return get()[i]; }
  friend bool operator==(const AttrList& a, const AttrList& b) {
    return a.list_ == b.list_ || a.get() == b.get();
  }
  friend bool operator!=(const AttrList& a, const AttrList& b) { return !(a == b); }

 private:
  static const Attrs& no_attrs();
  std::shared_ptr<const Attrs> list_;
};

enum class CallKind : uint8_t {
  Op,        // a registered tile/tensor op (see op_registry.h): `pl.add(a, b)`
  Function,  // a function of the same program: `self.kernel(a, b, c)`
};

class Call : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::Call;
  Call(CallKind call_kind, std::string callee, std::vector<ExprPtr> args, AttrList attrs,
       TypePtr type, Span span = {})
      : Expr(kKind, std::move(type), span),
        call_kind(call_kind),
        callee(std::move(callee)),
        args(std::move(args)),
        attrs(std::move(attrs)) {
    depth_ = nested_depth<Expr>(span, {}, deepest_of(this->args));
  }
  CallKind call_kind;
  std::string callee;  // op name without the "pl." prefix ("add", "load"), or a function name
  std::vector<ExprPtr> args;
  AttrList attrs;
};

// A list of scalars, used for offsets and shapes: `[0, k * 64]`.
class MakeTuple : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::MakeTuple;
  MakeTuple(std::vector<ExprPtr> elements, TypePtr type, Span span = {})
      : Expr(kKind, std::move(type), span), elements(std::move(elements)) {
    depth_ = nested_depth<Expr>(span, {}, deepest_of(this->elements));
  }
  std::vector<ExprPtr> elements;
};

// Element `index` of a tuple-typed value (a call returning several tensors).
class TupleGetItem : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::TupleGetItem;
  TupleGetItem(ExprPtr tuple, int64_t index, TypePtr type, Span span = {})
      : Expr(kKind, std::move(type), span), tuple(std::move(tuple)), index(index) {
    depth_ = nested_depth(span, {&this->tuple});
  }
  ExprPtr tuple;
  int64_t index;
};

// Convenience constructors that infer the result type.
ExprPtr make_int(int64_t v, Span span = {});
ExprPtr make_float(double v, Span span = {});
ExprPtr make_bool(bool v, Span span = {});
VarPtr make_var(std::string name, TypePtr type, Span span = {});
// Scalar binary op with the usual promotion (INT64 op FP32 -> FP32; comparisons -> BOOL).
ExprPtr make_binary(BinaryOp op, ExprPtr a, ExprPtr b, Span span = {});
ExprPtr make_tuple(std::vector<ExprPtr> elements, Span span = {});
ExprPtr make_tuple_get_item(ExprPtr tuple, int64_t index, Span span = {});

// The constant value of an integer expression, if it is an IntImm.
std::optional<int64_t> as_const_int(const ExprPtr& e);

}  // namespace pypto::ir
