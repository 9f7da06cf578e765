#include "pypto/ir/printer.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/atomic_mode.h"
#include "pypto/ir/system_op_attrs.h"
#include "pypto/ir/visitor.h"

namespace pypto::ir {

namespace {

// Python operator precedence, lowest first; atoms (names, literals, calls) bind tightest.
enum Precedence : int {
  kOr = 1,
  kAnd,
  kNot,
  kCompare,
  kShift,
  kAdditive,
  kMultiplicative,
  kUnaryMinus,
  kAtom,
};

int binary_precedence(BinaryOp op) {
  if (is_comparison(op)) return kCompare;
  switch (op) {
    case BinaryOp::Or:
      return kOr;
    case BinaryOp::And:
      return kAnd;
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      return kShift;
    case BinaryOp::Add:
    case BinaryOp::Sub:
      return kAdditive;
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
      return kMultiplicative;
    default:  // min/max print as calls
      return kAtom;
  }
}

std::string format_float(double v) {
  if (std::isnan(v)) return "float(\"nan\")";
  if (std::isinf(v)) return v > 0 ? "float(\"inf\")" : "float(\"-inf\")";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

std::string format_attr(const AttrValue& v) {
  struct Formatter {
    std::string operator()(int64_t x) const { return std::to_string(x); }
    std::string operator()(double x) const { return format_float(x); }
    std::string operator()(bool x) const { return x ? "True" : "False"; }
    std::string operator()(const std::string& x) const { return quote(x); }
    std::string operator()(DataType x) const { return "pl." + std::string(dtype_name(x)); }
    std::string operator()(MemorySpace x) const {
      return "pl.MemorySpace." + std::string(memory_space_name(x));
    }
    std::string operator()(const std::vector<int64_t>& x) const { return shape_to_string(x); }
    std::string operator()(PadValue x) const {
      return "pl.PadValue." + std::string(pad_value_name(x));
    }
  };
  return std::visit(Formatter{}, v);
}

// An attribute of a call as written in the DSL: atomic= is an integer in the IR and
// pl.AtomicType.<member> in the program, a pipe (set_pipe=, wait_pipe=, pipe=) an integer and
// pl.PipeType.<member>.
std::string call_attr_text(const std::string& key, const AttrValue& v) {
  if (is_pipe_attr(key)) {
    const auto* pipe = std::get_if<int64_t>(&v);
    if (const char* name = pipe ? pipe_type_name(*pipe) : nullptr) {
      return "pl.PipeType." + std::string(name);
    }
  }
  if (key == "atomic") {
    const auto* mode = std::get_if<int64_t>(&v);
    if (const char* name = mode ? atomic_mode_name(*mode) : nullptr) {
      return "pl.AtomicType." + std::string(name);
    }
  }
  return format_attr(v);
}

// A call's argument directions as PyPTO writes them: [pl.adir.input, pl.adir.inout, ...].
std::string arg_directions_text(const AttrValue& v) {
  const auto* list = std::get_if<std::vector<int64_t>>(&v);
  if (!list) return format_attr(v);
  std::string s = "[";
  for (size_t i = 0; i < list->size(); ++i) {
    s += (i ? ", pl.adir." : "pl.adir.") +
         std::string(arg_direction_marker(static_cast<ArgDirection>((*list)[i])));
  }
  return s + "]";
}

// Collects every variable name of a subtree, so generated names (`x_1`) never take a name the
// program uses elsewhere.
class NameCollector : public IRVisitor {
 public:
  std::unordered_set<std::string> names;

 protected:
  void visit_var(const Var& v) override { names.insert(v.name); }
};

class Printer {
 public:
  explicit Printer(std::unordered_set<std::string> reserved) : reserved_(std::move(reserved)) {}

  std::string function(const Function& f, int indent) {
    for (const auto& p : f.params) name_of(p.var.get());
    line(indent, decorator(f));
    // A host sub-worker has no `self`, and its Python body is not the IR's.
    std::string sig = "def " + f.name + (f.attrs.host_python ? "(" : "(self");
    bool first = f.attrs.host_python;
    for (const auto& p : f.params) {
      std::string type = type_to_string(p.var->type());
      if (p.direction != ParamDirection::In) {
        type = "pl." + std::string(param_direction_name(p.direction)) + "[" + type + "]";
      }
      sig += (first ? "" : ", ") + name_of(p.var.get()) + ": " + type;
      first = false;
    }
    sig += ")";
    if (f.return_types.size() == 1) {
      sig += " -> " + type_to_string(f.return_types[0]);
    } else if (f.return_types.size() > 1) {
      sig += " -> " + type_to_string(tuple_type(f.return_types));
    }
    line(indent, sig + ":");
    if (f.attrs.host_python) {
      line(indent + 1, "...  # Python, run by the host");
      return out_.str();
    }
    block(f.body, indent + 1);
    return out_.str();
  }

  // `@pl.function(...)` as PyPTO writes it: a bare `@pl.function` for an Opaque function without
  // attributes.
  static std::string decorator(const Function& f) {
    std::vector<std::string> args;
    if (f.type != FunctionType::Opaque) {
      args.push_back("type=pl.FunctionType." + std::string(function_type_name(f.type)));
    }
    const FunctionAttrs& a = f.attrs;
    if (!a.level.empty()) args.push_back("level=pl.Level." + a.level);
    if (!a.role.empty()) args.push_back("role=pl.Role." + a.role);
    if (!a.extra.empty()) {
      std::string dict;
      for (const auto& [key, value] : a.extra) {
        dict += (dict.empty() ? "" : ", ") + std::string("\"") + key + "\": " + value;
      }
      args.push_back("attrs={" + dict + "}");
    }
    if (a.strict_ssa) args.emplace_back("strict_ssa=True");
    if (a.auto_scope) args.push_back(*a.auto_scope ? "auto_scope=True" : "auto_scope=False");
    if (args.empty()) return "@pl.function";
    std::string text = "@pl.function(";
    for (size_t i = 0; i < args.size(); ++i) text += (i ? ", " : "") + args[i];
    return text + ")";
  }

  void stmt(const StmtPtr& s, int indent) {
    if (!s) return;
    switch (s->kind()) {
      case StmtKind::Assign:
        return assign(*s->as<AssignStmt>(), indent);
      case StmtKind::Eval:
        return line(indent, expr(s->as<EvalStmt>()->expr));
      case StmtKind::Return: {
        const auto& values = s->as<ReturnStmt>()->values;
        return line(indent, values.empty() ? "return" : "return " + expr_list(values));
      }
      case StmtKind::Seq:
        for (const auto& st : s->as<SeqStmts>()->stmts) stmt(st, indent);
        return;
      case StmtKind::For:
        return for_stmt(*s->as<ForStmt>(), indent);
      case StmtKind::If:
        return if_stmt(*s->as<IfStmt>(), indent);
      case StmtKind::While:
        return while_stmt(*s->as<WhileStmt>(), indent);
      case StmtKind::Yield:
        return yield(*s->as<YieldStmt>(), indent);
      case StmtKind::Scope: {
        const auto& scope = *s->as<ScopeStmt>();
        if (scope.is_split_aiv()) return split_aiv_region(scope, indent);
        const std::string hint =
            scope.name_hint.empty() ? "" : ", name_hint=\"" + scope.name_hint + "\"";
        const std::string role = scope.role.empty() ? "" : ", role=pl.Role." + scope.role;
        line(indent, "with pl.at(level=pl.Level." + scope.level + role + hint + "):");
        return block(scope.body, indent + 1);
      }
    }
  }

  std::string expr(const ExprPtr& e) { return expr_prec(e).first; }

  std::string result() const { return out_.str(); }

 private:
  void line(int indent, const std::string& text) {
    for (int i = 0; i < indent; ++i) out_ << "    ";
    out_ << text << '\n';
  }

  // A statement block: never empty in the printed text.
  // `for aiv in pl.split_aiv(2, mode=...)`: the loop variable is the lane the region's first
  // statement binds (aiv = pl.tile.get_subblock_idx()), which the loop header stands for.
  void split_aiv_region(const ScopeStmt& scope, int indent) {
    const auto* seq = scope.body ? scope.body->as<SeqStmts>() : nullptr;
    const StmtPtr& first = seq && !seq->stmts.empty() ? seq->stmts.front() : scope.body;
    const auto* lane = first ? first->as<AssignStmt>() : nullptr;
    const std::string lane_name = lane ? name_of(lane->var.get()) : "_";
    line(indent,
         "for " + lane_name + " in pl.split_aiv(2, mode=pl.SplitMode." + scope.split + "):");
    if (!lane) return block(scope.body, indent + 1);
    if (!seq) return line(indent + 1, "pass");
    if (seq->stmts.size() == 1) return line(indent + 1, "pass");
    for (size_t i = 1; i < seq->stmts.size(); ++i) stmt(seq->stmts[i], indent + 1);
  }

  void block(const StmtPtr& body, int indent) {
    const auto* seq = body ? body->as<SeqStmts>() : nullptr;
    if (!body || (seq && seq->stmts.empty())) {
      line(indent, "pass");
      return;
    }
    stmt(body, indent);
  }

  const std::string& name_of(const Var* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string name = v->name.empty() ? "v" : v->name;
    if (used_.count(name)) {
      // The search resumes after the last suffix given to this name: starting from 1 every
      // time made printing n rebindings of one name quadratic.
      int64_t& k = next_suffix_[name];
      while (true) {
        std::string candidate = name + "_" + std::to_string(++k);
        if (!used_.count(candidate) && !reserved_.count(candidate)) {
          name = std::move(candidate);
          break;
        }
      }
    }
    used_.insert(name);
    return names_.emplace(v, std::move(name)).first->second;
  }

  std::string target_list(const std::vector<VarPtr>& vars) {
    std::string s;
    for (size_t i = 0; i < vars.size(); ++i) {
      if (i) s += ", ";
      s += name_of(vars[i].get());
    }
    return s;
  }

  void assign(const AssignStmt& s, int indent) {
    std::string value = expr(s.value);
    std::string text = name_of(s.var.get());
    const TypePtr& vt = s.var->type();
    bool annotate = vt && (vt->kind() == TypeKind::Tile || vt->kind() == TypeKind::Tensor);
    // A tensor with a run-time extent has no annotation to write: its call says its shape.
    if (const auto* t = vt ? vt->as<TensorType>() : nullptr; t && has_dynamic_extent(t->shape))
      annotate = false;
    if (!annotate && vt && vt->kind() == TypeKind::Scalar) {
      annotate = !types_equal(vt, s.value->type());
    }
    if (annotate) text += ": " + type_to_string(vt);
    line(indent, text + " = " + value);
  }

  void yield(const YieldStmt& s, int indent) {
    std::string call = "pl.yield_(" + expr_list(s.values) + ")";
    if (yield_targets_ && !yield_targets_->empty()) {
      line(indent, target_list(*yield_targets_) + " = " + call);
    } else {
      line(indent, call);
    }
  }

  void for_stmt(const ForStmt& s, int indent) {
    std::string header = "for " + name_of(s.loop_var.get());
    std::string init;
    if (!s.iter_args.empty()) {
      header += ", (" + target_list(s.iter_args) + (s.iter_args.size() == 1 ? ",)" : ")");
      init =
          ", init_values=(" + expr_list(s.init_values) + (s.init_values.size() == 1 ? ",)" : ")");
    }
    auto start = as_const_int(s.start), step = as_const_int(s.step);
    std::string range;
    if (step && *step == 1 && start && *start == 0) {
      range = expr(s.stop);
    } else if (step && *step == 1) {
      range = expr(s.start) + ", " + expr(s.stop);
    } else {
      range = expr(s.start) + ", " + expr(s.stop) + ", " + expr(s.step);
    }
    const char* fn = s.for_kind == ForKind::Unroll     ? "pl.unroll"
                     : s.for_kind == ForKind::Parallel ? "pl.parallel"
                                                       : "pl.range";
    line(indent, header + " in " + fn + "(" + range + init + "):");
    const std::vector<VarPtr>* saved = yield_targets_;
    yield_targets_ = &s.return_vars;
    block(s.body, indent + 1);
    yield_targets_ = saved;
  }

  // Without loop-carried values: `while cond:`. With them, the explicit form the parser reads
  // back: `for (x,) in pl.while_(init_values=(x0,)):` whose body starts with `pl.cond(...)`.
  void while_stmt(const WhileStmt& s, int indent) {
    if (s.iter_args.empty()) {
      line(indent, "while " + expr(s.cond) + ":");
      block(s.body, indent + 1);
      return;
    }
    std::string init = expr_list(s.init_values);
    std::string targets = target_list(s.iter_args);
    const char* one = s.iter_args.size() == 1 ? ",)" : ")";
    line(indent, "for (" + targets + one + " in pl.while_(init_values=(" + init + one + "):");
    line(indent + 1, "pl.cond(" + expr(s.cond) + ")");
    const std::vector<VarPtr>* saved = yield_targets_;
    yield_targets_ = &s.return_vars;
    const auto* seq = s.body ? s.body->as<SeqStmts>() : nullptr;
    if (s.body && !(seq && seq->stmts.empty())) stmt(s.body, indent + 1);
    yield_targets_ = saved;
  }

  void if_stmt(const IfStmt& s, int indent) {
    line(indent, "if " + expr(s.cond) + ":");
    const std::vector<VarPtr>* saved = yield_targets_;
    yield_targets_ = &s.return_vars;
    block(s.then_body, indent + 1);
    if (s.else_body) {
      line(indent, "else:");
      block(s.else_body, indent + 1);
    }
    yield_targets_ = saved;
  }

  std::string expr_list(const std::vector<ExprPtr>& es) {
    std::string s;
    for (size_t i = 0; i < es.size(); ++i) {
      if (i) s += ", ";
      s += expr(es[i]);
    }
    return s;
  }

  std::string wrap(const ExprPtr& e, int min_prec) {
    auto [text, prec] = expr_prec(e);
    return prec < min_prec ? "(" + text + ")" : text;
  }

  std::pair<std::string, int> expr_prec(const ExprPtr& e) {
    if (!e) return {"None", kAtom};
    switch (e->kind()) {
      case ExprKind::IntImm: {
        int64_t v = e->as<IntImm>()->value;
        return {std::to_string(v), v < 0 ? kUnaryMinus : kAtom};
      }
      case ExprKind::FloatImm: {
        double v = e->as<FloatImm>()->value;
        return {format_float(v), std::signbit(v) ? kUnaryMinus : kAtom};
      }
      case ExprKind::BoolImm:
        return {e->as<BoolImm>()->value ? "True" : "False", kAtom};
      case ExprKind::Var:
        return {name_of(e->as<Var>()), kAtom};
      case ExprKind::Binary:
        return binary(*e->as<Binary>());
      case ExprKind::Unary: {
        const auto& u = *e->as<Unary>();
        if (u.op == UnaryOp::Not) return {"not " + wrap(u.a, kNot), kNot};
        // A negative literal under a minus keeps its parentheses: `-(-5)`.
        return {"-" + wrap(u.a, kAtom - (is_negative_literal(u.a) ? 0 : 1)), kUnaryMinus};
      }
      case ExprKind::Call:
        return {call(*e->as<Call>()), kAtom};
      case ExprKind::MakeTuple:
        return {"[" + expr_list(e->as<MakeTuple>()->elements) + "]", kAtom};
      case ExprKind::TupleGetItem: {
        const auto& g = *e->as<TupleGetItem>();
        return {wrap(g.tuple, kAtom) + "[" + std::to_string(g.index) + "]", kAtom};
      }
    }
    return {"?", kAtom};
  }

  static bool is_negative_literal(const ExprPtr& e) {
    if (const auto* i = e->as<IntImm>()) return i->value < 0;
    if (const auto* f = e->as<FloatImm>()) return std::signbit(f->value);
    return false;
  }

  std::pair<std::string, int> binary(const Binary& b) {
    if (b.op == BinaryOp::Min || b.op == BinaryOp::Max) {
      return {std::string(binary_op_symbol(b.op)) + "(" + expr(b.a) + ", " + expr(b.b) + ")",
              kAtom};
    }
    int prec = binary_precedence(b.op);
    // Left-associative: the right operand needs parentheses at equal precedence. Comparisons
    // chain in Python, so a comparison operand of a comparison always needs them.
    int left_min = prec == kCompare ? prec + 1 : prec;
    std::string text =
        wrap(b.a, left_min) + " " + std::string(binary_op_symbol(b.op)) + " " + wrap(b.b, prec + 1);
    return {text, prec};
  }

  std::string call(const Call& c) {
    std::string s = (c.call_kind == CallKind::Op ? "pl." : "self.") + c.callee + "(";
    // A host orchestrator's dispatch `f(..., device=r)` holds r as its last argument.
    const bool dispatch =
        c.call_kind == CallKind::Function && find_attr(c.attrs, "device") && !c.args.empty();
    const size_t positional = c.args.size() - (dispatch ? 1 : 0);
    bool first = true;
    for (size_t i = 0; i < positional; ++i) {
      if (!first) s += ", ";
      first = false;
      s += expr(c.args[i]);
    }
    // A call of a program function's attrs={...} (PyPTO's call attributes), directions first.
    std::string dict;
    if (c.call_kind == CallKind::Function) {
      if (const AttrValue* dirs = find_attr(c.attrs, "arg_directions"))
        dict = "\"arg_directions\": " + arg_directions_text(*dirs);
      if (const AttrValue* overrides = find_attr(c.attrs, "arg_direction_overrides"))
        dict += std::string(dict.empty() ? "" : ", ") +
                "\"arg_direction_overrides\": " + format_attr(*overrides);
    }
    for (const auto& [key, value] : c.attrs) {
      if (c.call_kind == CallKind::Function &&
          (key == "arg_directions" || key == "arg_direction_overrides")) {
        continue;
      }
      if (!first) s += ", ";
      first = false;
      s += key + "=" +
           (dispatch && key == "device" ? expr(c.args.back()) : call_attr_text(key, value));
    }
    if (!dict.empty()) s += std::string(first ? "" : ", ") + "attrs={" + dict + "}";
    return s + ")";
  }

  std::ostringstream out_;
  std::unordered_map<const Var*, std::string> names_;
  std::unordered_set<std::string> used_;
  std::unordered_set<std::string> reserved_;
  std::unordered_map<std::string, int64_t> next_suffix_;  // last suffix given, per base name
  const std::vector<VarPtr>* yield_targets_ = nullptr;
};

std::unordered_set<std::string> names_in(const Function& f) {
  NameCollector c;
  c.visit_function(f);
  return std::move(c.names);
}

}  // namespace

std::string print_program(const Program& p) {
  std::string out = "import pypto.language as pl\n\n\n@pl.program\nclass " + p.name + ":\n";
  for (size_t i = 0; i < p.functions.size(); ++i) {
    if (i) out += "\n";
    Printer printer(names_in(*p.functions[i]));
    out += printer.function(*p.functions[i], 1);
  }
  if (p.functions.empty()) out += "    pass\n";
  return out;
}

std::string print_function(const Function& f) {
  Printer printer(names_in(f));
  return printer.function(f, 0);
}

std::string print_stmt(const StmtPtr& s) {
  NameCollector c;
  c.visit(s);
  Printer printer(std::move(c.names));
  printer.stmt(s, 0);
  return printer.result();
}

std::string print_expr(const ExprPtr& e) {
  NameCollector c;
  c.visit(e);
  Printer printer(std::move(c.names));
  return printer.expr(e);
}

}  // namespace pypto::ir
