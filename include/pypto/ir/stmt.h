#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pypto/ir/expr.h"

namespace pypto::ir {

enum class StmtKind : uint8_t { Assign, Eval, Return, Seq, For, If, Yield, Scope, While };

class Stmt;
using StmtPtr = std::shared_ptr<const Stmt>;

class Stmt {
 public:
  Stmt(StmtKind kind, Span span) : kind_(kind), span_(span) {}
  virtual ~Stmt() = default;
  StmtKind kind() const { return kind_; }
  Span span() const { return span_; }
  int32_t depth() const { return depth_; }  // see kMaxIRDepth

  template <typename T>
  const T* as() const {
    return kind_ == T::kKind ? static_cast<const T*>(this) : nullptr;
  }

 private:
  StmtKind kind_;
  Span span_;

 protected:
  int32_t depth_ = 1;
};

// `var = value`. Before ConvertToSSA a variable may be assigned several times (the frontend
// reuses one Var per name and scope); after it, each Var is assigned exactly once.
class AssignStmt : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::Assign;
  AssignStmt(VarPtr var, ExprPtr value, Span span = {})
      : Stmt(kKind, span), var(std::move(var)), value(std::move(value)) {
    depth_ = nested_depth(span, {&this->value});
  }
  VarPtr var;
  ExprPtr value;
};

// An expression evaluated for its effect: `self.kernel(a, b, c)` without a result binding.
class EvalStmt : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::Eval;
  explicit EvalStmt(ExprPtr expr, Span span = {}) : Stmt(kKind, span), expr(std::move(expr)) {
    depth_ = nested_depth(span, {&this->expr});
  }
  ExprPtr expr;
};

class ReturnStmt : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::Return;
  explicit ReturnStmt(std::vector<ExprPtr> values, Span span = {})
      : Stmt(kKind, span), values(std::move(values)) {
    depth_ = nested_depth<Expr>(span, {}, deepest_of(this->values));
  }
  std::vector<ExprPtr> values;
};

class SeqStmts : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::Seq;
  explicit SeqStmts(std::vector<StmtPtr> stmts, Span span = {})
      : Stmt(kKind, span), stmts(std::move(stmts)) {
    depth_ = nested_depth<Stmt>(span, {}, deepest_of(this->stmts));
  }
  std::vector<StmtPtr> stmts;
};

// pl.range, pl.unroll, pl.parallel. A Parallel loop's iterations are independent (the program
// says so); the CPU device runs them in order, which gives the same result.
enum class ForKind : uint8_t { Sequential, Unroll, Parallel };

// `for loop_var in pl.range(start, stop, step, init_values=(...))`.
// Loop-carried values: `iter_args[i]` starts as `init_values[i]`; the body ends with a YieldStmt
// giving the next values; after the loop `return_vars[i]` holds the final values.
class ForStmt : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::For;
  ForStmt(VarPtr loop_var, ExprPtr start, ExprPtr stop, ExprPtr step, ForKind for_kind,
          std::vector<VarPtr> iter_args, std::vector<ExprPtr> init_values, StmtPtr body,
          std::vector<VarPtr> return_vars, Span span = {})
      : Stmt(kKind, span),
        loop_var(std::move(loop_var)),
        start(std::move(start)),
        stop(std::move(stop)),
        step(std::move(step)),
        for_kind(for_kind),
        iter_args(std::move(iter_args)),
        init_values(std::move(init_values)),
        body(std::move(body)),
        return_vars(std::move(return_vars)) {
    depth_ =
        nested_depth(span, {&this->start, &this->stop, &this->step},
                     std::max(deepest_of(this->init_values), this->body ? this->body->depth() : 0));
  }
  VarPtr loop_var;
  ExprPtr start, stop, step;
  ForKind for_kind;
  std::vector<VarPtr> iter_args;
  std::vector<ExprPtr> init_values;
  StmtPtr body;
  std::vector<VarPtr> return_vars;
};

// `while cond:` — runs `body` as long as `cond` holds, reading `cond` again before each trip.
// Loop-carried values work as in ForStmt: `iter_args[i]` starts as `init_values[i]`, `cond` and
// the body read the iter_args, the body ends with a YieldStmt giving the next values, and after
// the loop `return_vars[i]` holds the values for which `cond` was false. Before ConvertToSSA a
// while loop has no iter_args and simply rebinds the variables its condition reads.
// `break` and `continue` never reach the IR: the frontend lowers them to a flag that joins the
// condition and ifs that skip the rest of the trip (DESIGN.md, "Loops: while, break, continue").
class WhileStmt : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::While;
  WhileStmt(ExprPtr cond, std::vector<VarPtr> iter_args, std::vector<ExprPtr> init_values,
            StmtPtr body, std::vector<VarPtr> return_vars, Span span = {})
      : Stmt(kKind, span),
        cond(std::move(cond)),
        iter_args(std::move(iter_args)),
        init_values(std::move(init_values)),
        body(std::move(body)),
        return_vars(std::move(return_vars)) {
    depth_ =
        nested_depth(span, {&this->body},
                     std::max(deepest_of(this->init_values), this->cond ? this->cond->depth() : 0));
  }
  ExprPtr cond;
  std::vector<VarPtr> iter_args;
  std::vector<ExprPtr> init_values;
  StmtPtr body;
  std::vector<VarPtr> return_vars;
};

// `if cond: ... else: ...`. With return_vars, each branch ends with a YieldStmt whose values
// become return_vars after the if (the SSA form of variables assigned in the branches).
class IfStmt : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::If;
  IfStmt(ExprPtr cond, StmtPtr then_body, StmtPtr else_body, std::vector<VarPtr> return_vars,
         Span span = {})
      : Stmt(kKind, span),
        cond(std::move(cond)),
        then_body(std::move(then_body)),
        else_body(std::move(else_body)),
        return_vars(std::move(return_vars)) {
    depth_ = nested_depth(span, {&this->then_body, &this->else_body},
                          this->cond ? this->cond->depth() : 0);
  }
  ExprPtr cond;
  StmtPtr then_body;
  StmtPtr else_body;  // may be null
  std::vector<VarPtr> return_vars;
};

// `pl.yield_(v0, v1)`: the values a loop iteration or an if branch hands on.
class YieldStmt : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::Yield;
  explicit YieldStmt(std::vector<ExprPtr> values, Span span = {})
      : Stmt(kKind, span), values(std::move(values)) {
    depth_ = nested_depth<Expr>(span, {}, deepest_of(this->values));
  }
  std::vector<ExprPtr> values;
};

// `with pl.at(level=pl.Level.CORE_GROUP):` — a block of orchestration code that runs on a core.
// OutlineIncoreScopes turns each one into an InCore function and a call.
// `for aiv in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):` is a scope of level kSplitAivLevel
// whose `split` names the mode ("NONE", "UP_DOWN", "LEFT_RIGHT") and whose body starts with
// `aiv = pl.tile.get_subblock_idx()`: a region run once per AIV lane of a cluster, which the
// LowerSplitAiv pass (the first of the pipeline) turns into a loop over the lanes.
// `with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):` (any level above CORE_GROUP) is
// a hierarchy scope: code that runs one level down the machine (a chip's orchestration inside a
// host orchestrator). OutlineHierarchyScopes turns each one into a function of that level and
// role, called where the scope was.
inline constexpr const char* kSplitAivLevel = "SPLIT_AIV";
class ScopeStmt : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::Scope;
  ScopeStmt(std::string level, StmtPtr body, Span span = {}, std::string name_hint = {},
            std::string split = {}, std::string role = {})
      : Stmt(kKind, span),
        level(std::move(level)),
        body(std::move(body)),
        name_hint(std::move(name_hint)),
        split(std::move(split)),
        role(std::move(role)) {
    depth_ = nested_depth(span, {&this->body});
  }
  bool is_split_aiv() const { return level == kSplitAivLevel; }
  bool is_hierarchy() const { return level != "CORE_GROUP" && !is_split_aiv(); }
  std::string level;  // "CORE_GROUP", kSplitAivLevel, or a pl.Level above CORE_GROUP
  StmtPtr body;
  std::string name_hint;  // pl.at(name_hint=...): the outlined function's name; empty: none
  std::string split;      // a split_aiv region's mode; empty for other scopes
  std::string role;       // a hierarchy scope's pl.Role member ("Orchestrator"); empty: none
};

// Flattens nested SeqStmts and returns a single statement when there is only one.
StmtPtr make_seq(std::vector<StmtPtr> stmts, Span span = {});

}  // namespace pypto::ir
