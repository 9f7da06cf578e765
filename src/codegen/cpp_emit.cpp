#include "pypto/codegen/cpp_emit.h"

#include "pypto/ir/visitor.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "pypto/ir/expr.h"
#include "pypto/ir/op_registry.h"

namespace pypto::codegen {

namespace {

// Identifiers a DSL variable may not take: C++ keywords and names the generated code uses.
const char* const kReserved[] = {
    "alignas",  "alignof",   "and",      "asm",      "auto",      "bool",     "break",    "case",
    "catch",    "char",      "class",    "const",    "constexpr", "continue", "default",  "delete",
    "do",       "double",    "else",     "enum",     "explicit",  "export",   "extern",   "false",
    "float",    "for",       "friend",   "goto",     "if",        "inline",   "int",      "long",
    "mutable",  "namespace", "new",      "noexcept", "not",       "nullptr",  "operator", "or",
    "private",  "protected", "public",   "register", "return",    "short",    "signed",   "sizeof",
    "static",   "struct",    "switch",   "template", "this",      "throw",    "true",     "try",
    "typedef",  "typeid",    "typename", "union",    "unsigned",  "using",    "virtual",  "void",
    "volatile", "while",     "xor",      "int8_t",   "int16_t",   "int32_t",  "int64_t",  "uint8_t",
    "uint16_t", "uint32_t",  "uint64_t", "args",     "mem",       "rt",       "params",   "nparams",
    "pto",      "msg",       "scratch",  "main",     "std",
};

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

std::string function_symbol(std::string_view prefix, std::string_view name) {
  bool plain = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) plain = plain && is_identifier_char(c);
  if (plain) return std::string(prefix) + "_" + std::string(name);
  static const char kHex[] = "0123456789abcdef";
  std::string out = std::string(prefix) + "x_";
  for (unsigned char c : name) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

VarNames::VarNames() {
  for (const char* word : kReserved) used_.insert(word);
}

std::string VarNames::fresh(std::string_view base) {
  std::string clean;
  for (char c : base) clean.push_back(is_identifier_char(c) ? c : '_');
  if (clean.empty() || (clean[0] >= '0' && clean[0] <= '9')) clean.insert(0, "v");
  // Leading underscores followed by capitals, and double underscores, are reserved in C++.
  if (clean[0] == '_') clean.insert(0, "v");
  std::string candidate = clean;
  if (used_.count(candidate) != 0 || candidate.find("__") != std::string::npos) {
    // `<clean>_<n>` would hold a double underscore: number `v` instead.
    if (clean.find("__") != std::string::npos || clean.back() == '_') clean = "v";
    // The search resumes after the last suffix given to this base: starting from 1 every time
    // made naming n rebindings of one variable quadratic.
    int64_t& n = next_suffix_[clean];
    do {
      candidate = clean + "_" + std::to_string(++n);
    } while (used_.count(candidate) != 0);
  }
  used_.insert(candidate);
  return candidate;
}

const std::string& VarNames::name(const ir::Var* var) {
  auto it = names_.find(var);
  if (it != names_.end()) return it->second;
  return names_.emplace(var, fresh(var->name)).first->second;
}

namespace {

// Every assignment of a function body, by the variable it defines.
struct Definitions : ir::IRVisitor {
  std::unordered_map<const ir::Var*, ir::ExprPtr> values;
  void visit_assign(const ir::AssignStmt& s) override {
    values.emplace(s.var.get(), s.value);
    ir::IRVisitor::visit_assign(s);
  }
};

std::vector<size_t> return_params_at(const ir::Program* program, const ir::Function& f,
                                     const ir::ReturnStmt& ret, int depth);

// The tensor `e` is written into: itself for a variable with no definition (a parameter), the
// target of the pl.store / pl.assemble that defines it, what a plain alias names, or for result
// `index` of a call of another function of `program`, the argument it returns that result in.
const ir::Var* written_tensor(const ir::ExprPtr& e, const Definitions& defs,
                              const ir::Program* program, int depth) {
  ir::ExprPtr at = e;
  int64_t index = 0;  // of a tuple `at` is a result of
  for (int steps = 0; at && steps < 1000; ++steps) {
    if (const auto* item = at->as<ir::TupleGetItem>()) {
      index = item->index;
      at = item->tuple;
      continue;
    }
    const auto* v = at->as<ir::Var>();
    if (!v) return nullptr;
    auto it = defs.values.find(v);
    if (it == defs.values.end()) return v;
    const ir::ExprPtr& value = it->second;
    const auto* call = value->as<ir::Call>();
    if (value->as<ir::Var>() || value->as<ir::TupleGetItem>()) {
      at = value;
    } else if (call && call->call_kind == ir::CallKind::Op && call->callee == "store" &&
               call->args.size() > 2) {
      at = call->args[2];
    } else if (call && call->call_kind == ir::CallKind::Op && call->callee == "assemble" &&
               !call->args.empty()) {
      at = call->args[0];
    } else if (call && call->call_kind == ir::CallKind::Function && program && depth < 16) {
      const ir::FunctionPtr callee = program->find_function(call->callee);
      const ir::ReturnStmt* r = callee ? final_return(*callee) : nullptr;
      if (!r) return v;
      const std::vector<size_t> params = return_params_at(program, *callee, *r, depth + 1);
      if (index < 0 || static_cast<size_t>(index) >= params.size() || params[index] == kNoParam ||
          params[index] >= call->args.size()) {
        return v;
      }
      at = call->args[params[index]];
      index = 0;
    } else {
      return v;
    }
  }
  return nullptr;
}

std::vector<size_t> return_params_at(const ir::Program* program, const ir::Function& f,
                                     const ir::ReturnStmt& ret, int depth) {
  Definitions defs;
  if (f.body) defs.visit(f.body);
  std::vector<bool> taken(f.params.size(), false);
  std::vector<size_t> out(ret.values.size(), kNoParam);
  auto writable = [&](size_t p) { return f.params[p].direction != ir::ParamDirection::In; };
  // A returned scalar is in the Out parameter at its position (passes/kernel_scalar_returns.h).
  std::vector<size_t> writable_params;
  for (size_t p = 0; p < f.params.size(); ++p)
    if (writable(p)) writable_params.push_back(p);
  for (size_t i = 0; i < ret.values.size() && i < writable_params.size(); ++i) {
    if (ret.values[i]->type()->as<ir::TensorType>()) continue;
    out[i] = writable_params[i];
    taken[out[i]] = true;
  }
  for (size_t i = 0; i < ret.values.size(); ++i) {
    if (!ret.values[i]->type()->as<ir::TensorType>()) continue;
    const ir::Var* target = written_tensor(ret.values[i], defs, program, depth);
    for (size_t p = 0; target && p < f.params.size(); ++p) {
      if (f.params[p].var.get() != target || !writable(p) || taken[p]) continue;
      taken[p] = true;
      out[i] = p;
      break;
    }
  }
  size_t next = 0;
  for (size_t i = 0; i < ret.values.size(); ++i) {
    if (out[i] != kNoParam || !ret.values[i]->type()->as<ir::TensorType>()) continue;
    while (next < f.params.size() && (taken[next] || !writable(next))) ++next;
    if (next == f.params.size()) break;
    taken[next] = true;
    out[i] = next;
  }
  return out;
}

}  // namespace

const ir::ReturnStmt* final_return(const ir::Function& f) {
  const ir::Stmt* last = f.body.get();
  while (const auto* seq = last ? last->as<ir::SeqStmts>() : nullptr) {
    if (seq->stmts.empty()) return nullptr;
    last = seq->stmts.back().get();
  }
  return last ? last->as<ir::ReturnStmt>() : nullptr;
}

std::vector<size_t> return_params(const ir::Program* program, const ir::Function& f,
                                  const ir::ReturnStmt& ret) {
  return return_params_at(program, f, ret, 0);
}

std::string cpp_scalar_type(ir::DataType t) {
  switch (t) {
    case ir::DataType::FP32:
    case ir::DataType::FP16:
    case ir::DataType::BF16:
    case ir::DataType::FP8E4M3FN:
    case ir::DataType::FP8E5M2:
    case ir::DataType::FP8E8M0:
    case ir::DataType::FP4:
      return "float";
    case ir::DataType::INT8:
    case ir::DataType::INT4:  // its scalars wrap to four bits where they are stored
      return "int8_t";
    case ir::DataType::INT16:
      return "int16_t";
    case ir::DataType::INT32:
      return "int32_t";
    case ir::DataType::INT64:
      return "int64_t";
    case ir::DataType::UINT8:
    case ir::DataType::UINT4:
      return "uint8_t";
    case ir::DataType::UINT16:
      return "uint16_t";
    case ir::DataType::UINT32:
      return "uint32_t";
    case ir::DataType::UINT64:
      return "uint64_t";
    case ir::DataType::BOOL:
      return "bool";
  }
  return "int64_t";
}

std::string cpp_storage_type(ir::DataType t) {
  switch (t) {
    case ir::DataType::FP32:
      return "float";
    case ir::DataType::FP16:
    case ir::DataType::BF16:
      return "uint16_t";
    case ir::DataType::FP8E4M3FN:
    case ir::DataType::FP8E5M2:
    case ir::DataType::FP8E8M0:
    case ir::DataType::FP4:
    case ir::DataType::INT4:
    case ir::DataType::UINT4:
    case ir::DataType::BOOL:
      return "uint8_t";
    default:
      return cpp_scalar_type(t);
  }
}

std::string dtype_enum(ir::DataType t) { return "PTO_" + std::string(ir::dtype_name(t)); }

std::string memory_space_enum(ir::MemorySpace s) {
  switch (s) {
    case ir::MemorySpace::DDR:
      return "PTO_DDR";
    case ir::MemorySpace::Vec:
      return "PTO_VEC";
    case ir::MemorySpace::Mat:
      return "PTO_MAT";
    case ir::MemorySpace::Left:
      return "PTO_LEFT";
    case ir::MemorySpace::Right:
      return "PTO_RIGHT";
    case ir::MemorySpace::Acc:
      return "PTO_ACC";
    case ir::MemorySpace::Bias:
      return "PTO_BIAS";
    case ir::MemorySpace::LeftScale:
      return "PTO_LEFT_SCALE";
    case ir::MemorySpace::RightScale:
      return "PTO_RIGHT_SCALE";
  }
  return "PTO_VEC";
}

std::string int_literal(int64_t v) {
  if (v == std::numeric_limits<int64_t>::min()) return "INT64_MIN";
  if (v >= -2147483647 && v <= 2147483647) return std::to_string(v);
  return "INT64_C(" + std::to_string(v) + ")";
}

std::string float_literal(double v) {
  if (std::isnan(v)) return "__builtin_nan(\"\")";
  if (std::isinf(v)) return v > 0 ? "__builtin_inf()" : "(-__builtin_inf())";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

size_t tensor_rank(const ir::ExprPtr& e) {
  const auto* tensor = e->type()->as<ir::TensorType>();
  return tensor ? tensor->shape.size() : 0;
}

std::string brace_list(const std::vector<std::string>& items) {
  std::string s = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ", ";
    s += items[i];
  }
  return s + "}";
}

std::string string_literal(std::string_view text) {
  std::string s = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      s.push_back('\\');
      s.push_back(c);
    } else if (c == '\n') {
      s += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      s.push_back(' ');
    } else if (c == '?') {
      s += "\\?";  // no trigraphs
    } else {
      s.push_back(c);
    }
  }
  return s + "\"";
}

std::optional<ir::DataType> scalar_dtype(const ir::ExprPtr& e) {
  if (!e || !e->type()) return std::nullopt;
  if (const auto* st = e->type()->as<ir::ScalarType>()) return st->dtype;
  return std::nullopt;
}

void codegen_error(ir::Span span, const std::string& message) {
  throw ir::CompileError(span, "code generation: " + message);
}

namespace {

bool is_int_type(ir::DataType t) { return !ir::is_float(t); }

std::string binary_expr(const ir::Binary& b, VarNames& names) {
  std::string x = emit_scalar_expr(b.a, names);
  std::string y = emit_scalar_expr(b.b, names);
  auto ta = scalar_dtype(b.a);
  auto tb = scalar_dtype(b.b);
  bool ints = ta && tb && is_int_type(*ta) && is_int_type(*tb);
  const auto* result = b.type() ? b.type()->as<ir::ScalarType>() : nullptr;
  std::string result_type = cpp_scalar_type(result ? result->dtype : ir::DataType::INT64);
  std::string as_result = "(" + result_type + ")";
  std::string operands_int = "((int64_t)(" + x + "), (int64_t)(" + y + "))";
  std::string operands_double = "((double)(" + x + "), (double)(" + y + "))";
  std::string operands_result = "(" + as_result + "(" + x + "), " + as_result + "(" + y + "))";
  switch (b.op) {
    case ir::BinaryOp::Div:
      return as_result + "((double)(" + x + ") / (double)(" + y + "))";
    case ir::BinaryOp::FloorDiv:
      return as_result + "pto::floordiv" + (ints ? operands_int : operands_double);
    case ir::BinaryOp::Mod:
      return as_result + "pto::floormod" + (ints ? operands_int : operands_double);
    case ir::BinaryOp::Min:
      return "pto::min<" + result_type + ">" + operands_result;
    case ir::BinaryOp::Max:
      return "pto::max<" + result_type + ">" + operands_result;
    case ir::BinaryOp::And:
      return "(" + x + " && " + y + ")";
    case ir::BinaryOp::Or:
      return "(" + x + " || " + y + ")";
    case ir::BinaryOp::Shl:
      return as_result + "pto::shift_left" + operands_int;
    case ir::BinaryOp::Shr:
      return as_result + "pto::shift_right" + operands_int;
    default:
      // + - * and the comparisons read the same in C++.
      return "(" + x + " " + std::string(ir::binary_op_symbol(b.op)) + " " + y + ")";
  }
}

bool is_launch_query(const ir::Call& c) {
  const ir::OpDef* def =
      c.call_kind == ir::CallKind::Op ? ir::OpRegistry::global().find(c.callee) : nullptr;
  return def && def->category == ir::OpCategory::LaunchQuery;
}

// pl.system.available_cluster_count / available_aiv_count: every simulated core is a cluster
// of one Cube and one Vector lane, so both count the cores.
bool is_core_count(const ir::Call& c) {
  return c.call_kind == ir::CallKind::Op &&
         (c.callee == "system.available_cluster_count" || c.callee == "system.available_aiv_count");
}

// A launch query reads the kernel's launch context, which the runtime sets for each block's task
// (PtoCoreMemory::block_idx, block_num). The CPU device runs a block's vector work as one lane,
// sub-block 0, except in a Group's cluster of cross-core pipes, whose second AIV lane is 1.
std::string launch_query(const ir::Call& c, const VarNames& names) {
  if (!names.in_kernel()) {
    codegen_error(c.span(), "pl.tile." + c.callee +
                                "() names the block a kernel runs in: read it inside an InCore "
                                "function or a pl.at / pl.spmd scope");
  }
  if (c.callee == "get_block_idx") return "((int64_t)mem->block_idx)";
  if (c.callee == "get_block_num") return "((int64_t)mem->block_num)";
  return "((int64_t)mem->subblock_idx)";
}

}  // namespace

std::string emit_scalar_expr(const ir::ExprPtr& e, VarNames& names) {
  switch (e->kind()) {
    case ir::ExprKind::IntImm: {
      const auto& imm = *e->as<ir::IntImm>();
      auto t = scalar_dtype(e).value_or(ir::DataType::INT64);
      if (t == ir::DataType::INT64) return int_literal(imm.value);
      if (t == ir::DataType::BOOL) return imm.value ? "true" : "false";
      return "(" + cpp_scalar_type(t) + ")" + int_literal(imm.value);
    }
    case ir::ExprKind::FloatImm:
      return float_literal(e->as<ir::FloatImm>()->value);
    case ir::ExprKind::BoolImm:
      return e->as<ir::BoolImm>()->value ? "true" : "false";
    case ir::ExprKind::Var:
      if (!scalar_dtype(e)) {
        codegen_error(e->span(), "expected a scalar, got " + ir::type_to_string(e->type()) +
                                     " variable '" + e->as<ir::Var>()->name + "'");
      }
      return names.name(e->as<ir::Var>());
    case ir::ExprKind::Binary:
      return binary_expr(*e->as<ir::Binary>(), names);
    case ir::ExprKind::Unary: {
      const auto& u = *e->as<ir::Unary>();
      std::string a = emit_scalar_expr(u.a, names);
      return u.op == ir::UnaryOp::Neg ? "(-" + a + ")" : "(!" + a + ")";
    }
    case ir::ExprKind::Call:
      if (const auto* q = e->as<ir::Call>(); is_launch_query(*q)) return launch_query(*q, names);
      if (const auto* q = e->as<ir::Call>(); is_core_count(*q)) {
        // The device's simulated cores: the kernel's core memory or the orchestration's runtime.
        return names.in_kernel() ? "((int32_t)mem->num_cores)" : "((int32_t)rt->num_cores)";
      }
      break;
    default:
      break;
  }
  codegen_error(e->span(), "expected a scalar expression");
}

std::vector<std::string> emit_int_list(const ir::ExprPtr& e, VarNames& names,
                                       std::string_view what) {
  std::vector<std::string> out;
  if (const auto* tuple = e->as<ir::MakeTuple>()) {
    for (const auto& el : tuple->elements) out.push_back("(int64_t)" + emit_scalar_expr(el, names));
    return out;
  }
  codegen_error(e->span(), "expected a list of integers for " + std::string(what));
}

}  // namespace pypto::codegen
