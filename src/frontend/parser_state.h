// Private to src/frontend: the parser state class shared by the parser_*.cpp files (its small
// records and free helpers are in parser_records.h). The parser is a recursive-descent parser
// over the lexer's tokens that builds IR directly; each parser_*.cpp file defines the members for
// one concern (see the comment at the top of each). The public interface is
// pypto/frontend/parser.h.
#pragma once

#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "parser_records.h"
#include "pypto/ir/task_types.h"

namespace pypto::frontend::detail {

class Parser {
 public:
  Parser(std::string_view text, std::string_view file_name, Constants constants,
         int32_t line_offset, LexOptions lex_options)
      : Parser(text, file_name, std::move(constants), line_offset, tokenize(text, lex_options)) {}

  // Over tokens made elsewhere (the functions of a jit program, lexed one by one).
  Parser(std::string_view text, std::string_view file_name, Constants constants,
         int32_t line_offset, std::vector<Token> tokens)
      : text_(text),
        file_name_(file_name),
        line_offset_(line_offset),
        constants_(std::move(constants)),
        tokens_(std::move(tokens)) {}

  std::vector<ir::ProgramPtr> parse_module();

  // Module constants that the file's own assignments do not replace (a sweep's parameters):
  // `NAME = ...` at the top level keeps the pinned value, and constants computed from NAME
  // later in the file see it. parse_module() then fails if the file assigns no such name.
  void pin_constants(const Constants& pinned) {
    for (const auto& [name, value] : pinned) {
      constants_.insert_or_assign(name, value);
      pinned_.emplace(name, false);
    }
  }

  ir::ProgramPtr parse_single_program();

  void set_entry_tensors(const std::vector<EntryTensor>& tensors) { entry_tensors_ = tensors; }

  // parser_helpers.cpp: the functions defined outside the program that its scope sees.
  void add_helpers(const Helpers& helpers);

  // parser_jit.cpp: the @pl.jit functions of a whole file; a jit program from tokens holding
  // only jit functions.
  std::vector<JitFunctionSource> list_jit_functions(Constants* module_constants);

  ir::ProgramPtr parse_jit_program(std::string_view entry, const JitArguments& arguments);

 private:
  // -------------------------------- tokens, errors and shared helpers
  const Token& cur() const { return tokens_[pos_]; }

  const Token& peek_token(size_t ahead) const {
    size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }

  bool at(TK kind) const { return cur().kind == kind; }
  bool at_name(std::string_view name) const { return at(TK::Name) && cur().text == name; }

  const Token& advance() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }

  static Span span_of(const Token& t) { return Span{t.line, t.col}; }
  Span here() const { return span_of(cur()); }

  [[noreturn]] void fail(Span span, const std::string& message) const {
    throw CompileError(span, message);
  }

  [[noreturn]] void fail_here(const std::string& message) const { fail(here(), message); }

  [[noreturn]] void expected(const std::string& what) const {
    fail_here("expected " + what + ", got " + describe(cur()));
  }

  // Messages are built only when they are needed: `what` is a string or a callable returning one,
  // so the successful path of the parser never formats text.
  static std::string text_of(const char* s) { return s; }
  static std::string text_of(const std::string& s) { return s; }

  template <typename F, typename = std::enable_if_t<std::is_invocable_v<F>>>
  static std::string text_of(const F& f) {
    return f();
  }

  template <typename What>
  const Token& expect(TK kind, const What& what) {
    if (!at(kind)) expected(text_of(what));
    return advance();
  }

  template <typename What>
  const Token& expect_name(const What& what) {
    return expect(TK::Name, what);
  }

  // Guards the recursion of the parser against deeply nested input.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxNestingDepth) {
        --p_.depth_;
        p_.fail_here("too deeply nested (more than " + std::to_string(kMaxNestingDepth) +
                     " levels of blocks or expressions)");
      }
    }
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };

  // An indented block (or a one-line body) after `owner`'s colon; parser_state_templates.h.
  template <typename What>
  Block parse_block(BlockKind kind, const What& owner);

  static bool same_span(Span a, Span b) { return a.line == b.line && a.col == b.col; }

  template <typename What>
  ExprPtr expect_expr(const Value& v, const What& where) const {
    if (v.kind != Value::Kind::Expr) {
      fail(v.span, "expected an expression in " + text_of(where) + ", got " +
                       std::string(value_kind_description(v)));
    }
    return v.expr;
  }

  static Value expr_value(ExprPtr e, Span span);  // parser_expressions.cpp

  // -------------------------------- module and program level (parser.cpp)

  static std::string describe(const Token& t);

  void expect_end_of_statement();

  // Skips one statement, including the indented block of a compound statement.
  void skip_statement();

  // At an INDENT: skips to just after the matching DEDENT.
  void skip_indented_block();

  // Skips decorator lines; returns whether one of them is `@pl.program`.
  bool skip_decorators();

  // `A = expr` / `A, B = e1, e2` at module level. Returns false (consuming nothing) when the
  // statement is not of that form; a right-hand side that is not constant is skipped and
  // unbinds the names.
  bool try_constant_assignment();

  ir::ProgramPtr parse_class();

  // `is_method`: a method of the class (first parameter `self`); else a module-level function.
  // With `bindings`, the signature of a template is read again as one of its specialisations.
  void parse_function_signature(bool is_method = true, const DynamicBindings* bindings = nullptr);

  // -------------------------------- dynamic dimensions (parser_dynamic.cpp)

  // At the right-hand side of a module-level assignment: `pl.dynamic("M")`, or nothing.
  std::optional<Constant> read_dynamic_dim_definition();

  // The extent of a dynamic dimension where a shape (at dimension `index`) or an expression
  // names it: the specialisation's, a placeholder while a signature is first read, else an error.
  int64_t dynamic_dim_extent(const DynamicDim& dim, Span span, std::optional<size_t> index);

  // Makes a freshly read signature a template when it names dynamic dimensions: `first_shapes`
  // holds, per parameter, the ordinal of its own shape (0: its type has none).
  // A shape's dimension `index` read while dynamic uses are recorded, noting one written as
  // arithmetic on a dynamic dimension with its formula.
  int64_t parse_shape_formula(size_t index);
  // A dimension of a local variable's annotated shape: its constant, or kDynamicExtent for an
  // integer scalar known at run time.
  int64_t parse_local_shape_dim();
  // The value of d's name when its dimension has `extent` (an error at `span` if none fits).
  int64_t solve_dynamic_dim(const DynamicDimAt& d, int64_t extent, Span span,
                            const std::string& function) const;
  void note_dynamic_dims(FunctionSignature& sig, const std::vector<DynamicDimUse>& uses,
                         const std::vector<size_t>& first_shapes);

  // ---------------------- valid regions of kernel tensor parameters (parser_valid_shapes.cpp)

  // A partial pl.TensorView valid_shape read in a kernel parameter's annotation: kept for the
  // parameter being read (current_param_valid_), or an error at `span` where none may stand.
  void note_param_valid_shape(const std::vector<int64_t>& shape, const std::vector<int64_t>& valid,
                              Span span);
  // Stores what note_param_valid_shape kept for parameter `name` of `sig`.
  void finish_param_valid_shape(FunctionSignature& sig, std::string_view name);
  // A specialisation's leading scalar parameters, one per name of sig.valid_symbols.
  void add_valid_symbol_params(FunctionSignature& sig);
  // The values a call passes for those parameters, read from its arguments' valid regions
  // (arguments after the leading ones, as the caller wrote them).
  std::vector<ExprPtr> valid_symbol_arguments(const FunctionSignature& sig,
                                              const std::vector<ExprPtr>& args,
                                              const std::vector<Span>& arg_spans, Span span);
  // `args` of a pl.load whose tensor is a parameter with a declared valid region: the tile's
  // valid region becomes min(requested, declared - offset) per dimension.
  void intersect_load_with_param_valid(std::vector<ExprPtr>& args, Span span);
  // Remembers the valid_shape of a pl.slice bound to `var` (forgotten when var is rebound).
  void note_bound_value(const VarPtr& var, const ExprPtr& value);

  // The specialisation of template `callee` for a call with `args` (made on first use).
  size_t specialise_call(size_t callee, const std::vector<ExprPtr>& args,
                         const std::vector<Span>& arg_spans, Span call_span);

  // The program's entry, when it is a template no call specialised, specialised on the tensors
  // given to parse_program; false when there is nothing to do.
  bool specialise_entry();
  // The one template that nothing specialised and no `self.<name>` call names, if there is one.
  std::optional<size_t> unspecialised_root() const;

  // After a program's functions are read: a template no call specialised is an error.
  void check_unspecialised_templates() const;

  // -------------------------------- the @pl.function decorator (parser_decorators.cpp)

  // At `function` of `@pl.function`: reads the decorator's arguments into `sig`.
  void parse_function_decorator(FunctionSignature& sig);
  ir::FunctionType parse_function_kind();
  // `pl.Role.<member>` at the cursor: its name, checked.
  std::string parse_role();
  bool parse_bool_argument(std::string_view key);
  void parse_function_attrs_dict(ir::FunctionAttrs& attrs);
  void parse_func_attr(BlockKind kind);  // at `pl.func_attr(` as a statement
  void parse_static_check();             // at `pl.static_print(` or `pl.static_assert(`

  // After a block's ':': skips an indented block or the rest of a one-line body.
  template <typename What>
  void skip_block_body(const What& owner);

  ir::FunctionPtr parse_function_body(FunctionSignature& sig);
  // signatures_[index]'s function, read now unless it was read already (by read_returns_of).
  ir::FunctionPtr read_function_body(size_t index);
  // A call of a function whose return types come from its body needs them: its body is read
  // now when it has not been yet, the caller's state kept around it.
  void read_returns_of(size_t callee, Span call_span);

  // The state of the function body being read, put aside while another body is read (a callee
  // whose return types a call needs, a @pl.jit helper on its first call) and restored after.
  struct BodyState {
    size_t pos;
    size_t function;
    std::unordered_map<std::string_view, VarPtr> vars;
    std::vector<std::pair<const ir::Expr*, Span>> var_uses;
    std::map<std::string, std::pair<VarPtr, ExprPtr>, std::less<>> local_constants;
    std::vector<LoopContext> loops;
    std::vector<StmtPtr> inline_stmts;
    const std::vector<TypePtr>* return_types;
    std::vector<TypePtr>* inferred_returns;
    bool returns_known;
    bool strict_ssa;
    bool in_manual_scope;
    const DynamicBindings* dynamic_bindings;
  };
  // Moves the current body's state out (leaving a fresh one) / puts it back.
  BodyState take_body_state();
  void restore_body_state(BodyState&& state);

  void check_recursion();

  // -------------------------------- types and annotations (parser_types.cpp)

  TypePtr parse_param_type(ir::ParamDirection& direction);

  int64_t parse_constant_int(const std::string& what);
  // At '[': whether the list is a comprehension; reading one calls read_item per element.
  bool at_list_comprehension() const;
  void parse_list_comprehension(const std::function<void()>& read_item);

  std::vector<int64_t> parse_shape();

  DataType parse_dtype(const std::string& context);
  DataType parse_scalar_dtype(const std::string& context);  // also pl.TASK_ID

  TypePtr parse_type();

  // PyPTO's older call notation, after pl.Tensor / pl.Tile / pl.Scalar at '(': pl.Tensor((64,
  // 128), pl.FP16), pl.Scalar(pl.FP32).
  TypePtr parse_legacy_call_type(std::string_view kind);

  // The arguments after the dtype of pl.Tile[...] / pl.Tensor[...], up to the closing ']'.
  TypePtr parse_tile_arguments(std::vector<int64_t> shape, DataType dtype);
  TypePtr parse_tensor_arguments(std::vector<int64_t> shape, DataType dtype);

  // -------------------------------- type arguments (parser_type_args.cpp)

  // At pl.MemorySpace.<space> or pl.Mem.<space>: consumes it; no value (and nothing consumed)
  // elsewhere. A space of PyPTO's this device lacks (Bias...) is a located error.
  std::optional<ir::MemorySpace> parse_memory_space_name();

  // At a tensor layout (pl.NZ, pl.TensorLayout.NZ): consumes it; no value elsewhere.
  std::optional<ir::TensorLayout> parse_tensor_layout_name();

  // pl.TileView(...) / pl.TensorView(...), keyword arguments as PyPTO spells them.
  ir::TileView parse_tile_view(const std::vector<int64_t>& shape,
                               std::optional<ir::MemorySpace> space);
  ir::TensorView parse_tensor_view();

  // pl.MemRef(...) in PyPTO's forms: (addr, size, id), (space, addr, size, id) and
  // (base, byte_offset, size). `named_space` receives the space the MemRef itself names.
  // None for a declared allocation (pl.MemRef(), pl.MemRef("name", slots=N)[k]), read and
  // dropped (parser_type_args.cpp).
  std::optional<ir::MemRef> parse_memref(std::optional<ir::MemorySpace>& named_space);
  void skip_declared_allocation();  // after its '(': the name, slots= and ')', and a [slot]
  void skip_slot_subscript();       // `[k]` after a declared allocation, if there

  // `[a, b, ...]` of constant integers (a view's valid_shape or stride).
  std::vector<int64_t> parse_constant_int_list(const std::string& what);

  // The `key=value, ...` arguments of a call such as pl.TileView(...), up to its ')': each key
  // once, each handed to `on_argument` with the cursor at its value.
  void parse_keyword_arguments(std::string_view callee, std::string_view example,
                               const std::function<void(const Token&)>& on_argument);

  // At `pl.<Enum>.<member>`: consumes it and returns the member's token.
  const Token& parse_enum_member(std::string_view enum_name);

  // `pl.<name>` of the type language met in an expression: pl.Mem.<space> is a memory space
  // like pl.MemorySpace.<space>; the others (layouts, views, ...) are located errors. No value
  // (nothing consumed) for any other `pl.<name>`.
  std::optional<Value> parse_type_language_name();

  // -------------------------------- name binding and checks (parser_names.cpp)

  VarPtr lookup_var(std::string_view name) const;

  // The function's one Var for `name`, created with `type` on first assignment; a later binding
  // must keep the shape and dtype.
  VarPtr bind_var(std::string_view name, const TypePtr& type, Span span);
  bool bound_in_this_block(std::string_view name) const;  // a name this block first bound
  bool binding_loop_index_ = false;                       // bind_var of a for loop's index
  // A name bound once to an integer constant (`M = 128`, `M, N = x.shape`) and never assigned
  // again in its function reads as that constant inside lists, so it can give shapes
  // (parser_names.cpp); elsewhere it stays the variable, as written.
  void note_local_constant(const Token& name, const VarPtr& var, const ExprPtr& value);
  bool assigned_later(std::string_view name) const;

  void check_assignable(const Token& t);

  // Applies an assignment's annotation: shape and dtype must match the value; memory space and
  // MemRef come from the annotation (the call's type is rebuilt with them).
  ExprPtr refine(const ExprPtr& value, const TypePtr& annotated, Span span, TypePtr& var_type);

  // A pl.TileView(valid_shape=...) annotation on `value`, which must be a pl.load: the load with
  // those valid_shapes (added when it has none; checked when it has).
  ExprPtr load_with_valid_shape(const ExprPtr& value, const std::vector<int64_t>& valid, Span span);

  // Maps an error span that is a variable's definition to the place where the variable is used
  // in the expression being checked (variables referenced since `mark`).
  Span use_site(Span span, size_t mark) const;

  // -------------------------------- statements (parser_statements.cpp)

  void parse_simple_line(Block& block, BlockKind kind);

  // Both also place the statements of the inline calls in the statement before it
  // (parser_helpers.cpp); the statement itself is parsed by the *_body functions.
  void parse_statement(Block& block, BlockKind kind);
  void parse_statement_body(Block& block, BlockKind kind);

  bool at_pl_member(size_t ahead, std::string_view member) const;

  // An assignment, an expression statement, return, pass or a docstring. Leaves the NEWLINE.
  void parse_simple_statement(Block& block, BlockKind kind, bool allow_semicolon);
  void parse_simple_statement_body(Block& block, BlockKind kind, bool allow_semicolon);

  void parse_expression_statement(Block& block, Span start);

  // `x = e`, `x, y = self.f(...)`, `x = pl.yield_(...)`. Returns false when the targets turn
  // out not to be a plain list of names (the caller parses an expression statement).
  bool parse_assignment(Block& block, BlockKind kind);
  // Reads the `name, name, ... =` of an assignment (a trailing comma is allowed) into `targets`.
  // On anything else it rewinds to where it started and returns false.
  bool parse_assignment_targets(std::vector<const Token*>& targets);
  void bind_targets(Block& block, const std::vector<const Token*>& targets, const Value& v);

  void parse_yield(Block& block, BlockKind kind, const std::vector<const Token*>& targets);
  // At `pl.yield_(` or `(pl.yield_(`: the value of an assignment that yields.
  bool at_yield() const {
    return at_pl_member(0, "yield_") || (at(TK::LParen) && at_pl_member(1, "yield_"));
  }

  void parse_annotated_assignment(Block& block, BlockKind kind);

  // Under strict_ssa=True a name is bound once in a block: refuses `name` if this block bound it
  // already.
  void check_single_assignment(const Token& name);

  StmtPtr parse_return();

  StmtPtr parse_for();

  std::vector<ExprPtr> parse_init_values();

  StmtPtr parse_if();

  // `enclosing`: the loop body or if branch the statement is in, when a pl.yield_ ending the
  // scope's body may be that block's (then left in hoisted_yield_ for the caller to append).
  StmtPtr parse_with(Block* enclosing = nullptr);
  StmtPtr hoisted_yield_;
  // A scope's body, with the yield that ends it moved to `enclosing` (see parse_with).
  std::vector<StmtPtr> scope_body(Block&& body, Block* enclosing);
  // One argument of pl.at (or of pl.spmd, `callee`), by name (a positional one is named by its
  // position).
  void parse_at_argument(const std::string& key, Span key_span, AtScopeArgs& args,
                         std::string_view callee = "pl.at");
  void parse_at_optimizations();
  // `for i in pl.spmd(n, ...)`, after 'in': one SPMD launch of a CORE_GROUP scope of the body.
  StmtPtr parse_spmd_loop(Span span, const Token& loop_name);

  // -------------------------------- pl.split_aiv regions (parser_split_aiv.cpp)

  // `for aiv in pl.split_aiv(2, mode=...)`, after 'in': a region run once per AIV lane.
  StmtPtr parse_split_aiv_loop(Span span, const Token& loop_name);
  // pl.aiv_shard / pl.aic_gather without split=: the enclosing region's mode.
  void add_split_aiv_mode(const ir::OpDef& def, ir::Attrs& attrs, Span span) const;
  const Token& parse_split_mode();  // pl.SplitMode.NAME (or NAME): the NAME token, checked

  // -------------------------------- while, break and continue (parser_loops.cpp)

  void enter_loop(std::string kind, bool allows_exits, bool has_init, Span span);
  LoopContext leave_loop();
  StmtPtr parse_while();
  // `for (x, ...) in pl.while_(init_values=(...)):` whose body starts with `pl.cond(...)`.
  StmtPtr parse_explicit_while();
  // At `for (` or `for x, y in pl.while_`: a pl.while_ loop rather than a pl.range one.
  bool at_explicit_while() const;
  StmtPtr parse_loop_exit();  // `break` or `continue`
  StmtPtr lower_for_exits(const LoopContext& loop, const std::shared_ptr<const ir::ForStmt>& f);
  StmtPtr lower_while_exits(const LoopContext& loop, const std::shared_ptr<const ir::WhileStmt>& w);

  // -------------------------------- expressions (parser_expressions.cpp)

  Value parse_value();

  ExprPtr binary(ir::BinaryOp op, const Value& a, const Value& b, Span op_span);

  // A chain `a + b + ...` builds a left-deep tree whose destruction (and every later traversal)
  // recurses once per operator; bound it like nesting.
  void check_chain_length(int operators) const;

  Value parse_or();

  Value parse_and();

  Value parse_not();

  std::optional<ir::BinaryOp> comparison_op() const;

  Value parse_comparison();

  Value parse_shift();
  Value parse_arith();

  Value parse_term();

  Value parse_factor();

  Value parse_postfix();

  Value parse_atom();

  // `x.shape[i]` after x: the constant extent of dimension i of a tensor or tile.
  Value parse_shape_item(const Value& v);
  // parser_subscripts.cpp: after the '[' of a tensor's or tile's subscript.
  Value parse_value_subscript(const Value& v, Span span);
  std::vector<SubscriptItem> parse_subscript_items();
  SubscriptWindow subscript_window(const std::vector<int64_t>& shape,
                                   const std::vector<SubscriptItem>& items, const std::string& kind,
                                   Span span) const;
  // At `name[`: `name[...] = value` as an assembly into name; false (nothing read) otherwise.
  bool try_subscript_assignment(Block& block);

  Value parse_parenthesized();

  Value parse_list();

  Value parse_min_max();
  Value parse_len();

  // -------------------------------- constant folding and literals (parser_constants.cpp)

  int64_t int_literal(const Token& t) const;

  double float_literal(const Token& t) const;

  Value constant_value(const Constant& c, Span span);

  // -------------------------------- calls (parser_calls.cpp)

  template <typename Name>
  std::vector<CallArg> parse_call_args(const Name& callee_name, bool allow_strings = false,
                                       bool allow_attrs_dict = false);
  // Reads (and drops) an op call's attrs={...} of back-end hints (parser_calls.cpp).
  void skip_op_hints(const std::string& callee_label);
  // pl.store's `shapes` argument (parser_op_spellings.cpp): taken out, then checked.
  std::optional<CallArg> take_store_shapes(std::vector<CallArg>& call_args);
  void check_store_shapes(const CallArg& shapes, const ir::Call& call, const std::string& spelling);
  // pl.mrgsort's two forms: the registry's mrgsort (block_len=) or mrgsort_lists (2 to 4 lists).
  const ir::OpDef* mrgsort_form(const ir::OpDef& def, std::vector<CallArg>* call_args,
                                const std::string& spelling);

  Value parse_pl_member();
  // parser_distributed.cpp: PyPTO's `pld` namespace of multi-rank programs.
  Value parse_pld_member();
  Value parse_pld_call(std::string_view ns, std::string_view name, const std::string& label,
                       Span span);
  TypePtr parse_distributed_tensor_type();
  // A call of a program function with device=r (a host orchestrator's dispatch to rank r).
  ExprPtr with_device(const ExprPtr& call, const ExprPtr& device, Span span);
  // The rank count of the run the program is parsed for (the constant kWorldSizeConstant),
  // when the caller knows it.
  std::optional<int64_t> known_world_size() const;
  Value parse_mask_pattern(Span span);
  bool flat_index_form(const std::vector<CallArg>& call_args);
  Value parse_flat_index_form(const std::string& spelling, std::string_view op,
                              const std::vector<CallArg>& call_args, Span span, size_t uses_mark);

  static std::optional<ir::AttrValue> attr_value(const Value& v);
  ir::Attrs parse_call_attrs_dict(const std::string& callee_label);  // parser_call_attrs.cpp
  int64_t parse_arg_direction_marker();
  bool at_no_dep_marker() const;  // at `pl.no_dep(`
  Value parse_no_dep_marker();    // pl.no_dep(x): x
  void merge_no_dep_overrides(ir::Attrs& attrs, const std::vector<int64_t>& marked, Span span);

  // `spelling` is the callee as written ("pl.tensor.add"), for messages.
  ExprPtr parse_op_call(const ir::OpDef& def, Span span, const std::string& spelling);

  ExprPtr bind_op_call(const ir::OpDef& def, Span span, const std::string& spelling,
                       std::vector<CallArg> call_args, size_t uses_mark);

  // -------------------------------- PyPTO's spellings (parser_op_spellings.cpp)

  // `pl.<op>` / `pl.tile.<op>` / `pl.tensor.<op>` (ns "", "tile" or "tensor") after the op's
  // name: the call, by the registry op that spelling names.
  Value parse_op_spelling(std::string_view ns, std::string_view op, Span span);

  // PyPTO names an op's first parameter after what it takes (`tensor=`, `tile=`, `input=`) and
  // the broadcast operands `row_vec=` / `col_vec=`: the registry's name for such a keyword.
  static std::string_view canonical_keyword(const ir::OpDef& def, std::string_view keyword);

  // The text of a string literal token, without its quotes.
  std::string string_literal(const Token& t) const;

  // The forms that are not one registry op: pl.full, pl.const, pl.cast of a Scalar.
  Value parse_full(const std::string& spelling, bool as_tensor, Span span);
  // addc, subc, addsc, subsc: two adds or subs (parser_op_spellings.cpp).
  Value parse_three_operand(const std::string& spelling, std::string_view op, Span span);
  Value parse_const(Span span);
  Value parse_dim(const std::string& spelling, Span span);
  // pl.tile.extract: a slice, then a move where the memory space changes.
  Value parse_extract(const std::string& spelling, Span span);
  // pl.set_validshape of a tensor: its window with that valid region (parser_valid_shapes.cpp).
  Value parse_set_validshape(const std::string& spelling, Span span);
  // pl.tensor.dump_tag(t): the selective-dump marker, consumed here (parser_gather_row.cpp).
  void parse_dump_list(const std::string& owner);
  Value parse_dump_tag(const std::string& spelling, Span span);
  // The arguments of pl.gather_row and pl.tile.mgather as PyPTO spells them: gather_row's sixth
  // positional argument is transpose=; mgather's scratch= belongs to the Mat form
  // (parser_gather_row.cpp).
  void gather_load_call_args(const ir::OpDef& def, std::vector<CallArg>& call_args,
                             const std::string& spelling);
  std::vector<const CallArg*> bind_form_args(const std::vector<CallArg>& call_args,
                                             const std::vector<std::string_view>& names,
                                             const std::string& spelling, Span span);
  Value parse_cast(const std::string& spelling, Span span);
  ExprPtr scalar_cast(const ExprPtr& value, DataType to, Span span, Span value_span,
                      const std::string& spelling);

  Value parse_self_call();
  // The call of program function `callee` with `args`: arity and argument types checked, a
  // template specialised (parse_self_call and pl.submit).
  Value finish_self_call(size_t callee, std::vector<ExprPtr> args,
                         const std::vector<Span>& arg_spans, ir::Attrs attrs, Span span,
                         const std::string& label_text);

  // -------------------------------- task scopes and dependencies (parser_tasks.cpp)

  ExprPtr parse_dependency_list(std::string_view owner);
  TaskPredicate parse_task_predicate();
  StmtPtr task_options_stmt(ExprPtr deps, const std::optional<TaskPredicate>& predicate, Span span);
  // `task_blocks(core_num)` after a launch's task_options, or null for one block.
  StmtPtr task_blocks_stmt(const ExprPtr& core_num, Span span);
  StmtPtr bind_task_id(const Token& name);
  void parse_submit(Block& block, const std::vector<const Token*>& targets);
  StmtPtr parse_manual_scope(Span span, Block* enclosing);
  StmtPtr parse_spmd_with(Span span);
  StmtPtr parse_hierarchy_scope(Span span, AtScopeArgs args);
  ExprPtr parse_spmd_arguments(AtScopeArgs& args, std::optional<TaskPredicate>* predicate,
                               Span span);
  Value parse_task_namespace(std::string_view ns, Span span);
  Value parse_task_dummy(Span span);
  bool try_task_array_store(Block& block, const VarPtr& array, const Token& name);
  void parse_no_task_assignment(Block& block, const Token& name);
  Value parse_task_invalid(Span span);  // after `pl.system.task_invalid`

  // -------------------------------- pl.system and pl.prefetch (parser_system.cpp)

  // After `pl.prefetch`: the located "not supported yet" of the op it names.
  [[noreturn]] void fail_prefetch(Span span);
  // The arguments of a pl.system call in the registry's form: a constant event id of
  // sync_set / sync_wait is the attribute event_id, a run-time one the argument `event`.
  // Keyword arguments are put in the op's order.
  void system_call_args(const ir::OpDef& def, std::vector<CallArg>& call_args);
  void event_argument(std::vector<CallArg>& call_args);
  // pl.tpop_from_aic / pl.tpop_from_aiv (parser_pipes.cpp): the shape, dtype and memory space
  // of the tile received, from the annotation of the name bound when the call does not say.
  void complete_tpop_args(const std::string& spelling, std::vector<CallArg>& call_args, Span span);
  // `buf: pl.Ptr = pl.tile.alloc(space, size)` (parser_ptr.cpp): read, checked and noted for the
  // pl.MemRef(buf, ...) that name it; no statement.
  bool at_ptr_binding() const;
  void parse_ptr_binding(const Token& name);
  std::optional<ir::MemorySpace> ptr_alloc_space(std::string_view name) const;
  // A local's `pl.TileView(valid_shape=[rows, cols])` naming run-time values (parser_pipes.cpp):
  // read and dropped, and noted, when the value bound is a pl.tpop_from_aic / aiv or a
  // pl.tile.set_validshape, whose region the program gives at run time; else an error.
  bool skip_runtime_valid_shape(Span span);
  void check_runtime_valid_shape(const ExprPtr& value);
  // A flat (row-major) index of `shaped` as one index per dimension.
  std::vector<ExprPtr> flat_index_to_indices(const ExprPtr& shaped, const ExprPtr& flat);
  StmtPtr parse_auto_scope(Span span, Span mode_span,
                           Block* enclosing);  // after `pl.scope(mode=...AUTO`

  // -------------------------------- @pl.jit functions (parser_jit.cpp)

  // At '@': reads one decorator line; its kind when it is @pl.jit or @pl.jit.incore.
  std::optional<JitKind> read_jit_decorator();
  bool jit_annotation_is_dynamic(size_t ahead, size_t* end) const;
  // The jit function being parsed is a @pl.jit.host orchestrator (it dispatches @pl.jit
  // functions with device=).
  bool jit_host_entry_ = false;

  void parse_jit_signature();

  void parse_jit_param_type(JitParam& p);

  void parse_jit_value_type(JitParam& p);

  // A scalar parameter's value as a constant of its dtype (an int for a float parameter is
  // converted; anything else that does not fit is an error at the parameter).
  Constant jit_scalar_constant(const JitParam& p, const Constant& value) const;

  // Parses the body of signatures_[signature]; its return types come from its return statement.
  ir::FunctionPtr parse_jit_body(size_t signature);

  std::optional<size_t> find_jit_helper(std::string_view name) const;
  // At `x.bind_dynamic(dim, D)`: parses and checks it (it adds no statement); false elsewhere.
  bool try_bind_dynamic(Block& block);

  // `helper(args)` after the name: specialises the helper on the first call.
  Value parse_jit_helper_call(size_t helper, const Token& name);

  // -------------------------------- functions defined outside the program (parser_helpers.cpp)

  // At '@' at the top level of a module: registers a @pl.function / @pl.inline function (and
  // skips it); false, consuming nothing, for anything else.
  bool register_module_helper();
  // At '@' in a program class: registers a method of type pl.FunctionType.Inline, whose body
  // `self.<name>(...)` expands as an inline function's; false, consuming nothing, otherwise.
  bool register_inline_method();
  std::map<std::string, size_t, std::less<>> inline_methods_;  // name -> helpers_ index

  std::optional<size_t> find_helper(std::string_view name) const;

  // `name(args)` after the name, for a helper: a call of the function (added to the program on
  // its first call) or the expansion of an inline function's body.
  Value parse_helper_call(size_t helper, const Token& name);
  Value parse_external_function_call(size_t helper, const Token& name);
  Value expand_inline_call(size_t helper, const Token& name);

  // Runs `body` with the parser reading the helper's tokens, constants and scope; errors found
  // there are located in the helper's file.
  template <typename F>
  auto in_helper_source(size_t helper, F&& body);

  // The name of a new variable made by an inline body: `name` unless the program uses it already.
  std::string fresh_inline_name(std::string_view name);
  VarPtr bind_inline_local(std::string_view name, const TypePtr& type, Span span);
  void note_token_names(const std::vector<Token>& tokens);
  // Lexes a helper of another file (or of the program's file, outside the class) on first use.
  void prepare_helper_tokens(ExternalHelper& h);

  // -------------------------------- state

  std::string_view text_;
  std::string_view file_name_;
  int32_t line_offset_;
  Constants constants_;
  std::map<std::string, bool, std::less<>> pinned_;  // name -> assigned at the top level yet
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;

  std::shared_ptr<const ir::SourceInfo> source_;
  // A deque: a call met while a signature is in use may add an external function's signature.
  std::deque<FunctionSignature> signatures_;
  std::vector<std::vector<CallSite>> calls_;  // per function, in source order
  size_t current_function_ = 0;
  bool in_manual_scope_ = false;        // parsing the body of a pl.manual_scope
  bool dump_tag_parsed_ = false;        // the last call parsed was pl.dump_tag (no statement)
  bool task_id_dtype_allowed_ = false;  // parsing pl.array.create's arguments: pl.TASK_ID names
                                        // its element type
  bool strict_ssa_ = false;             // the current function's @pl.function(strict_ssa=...)
  // Under strict_ssa=True, the names bound in each open block (the function's first, with its
  // parameters), innermost last, with the lines that bound them: as in PyPTO, a name is bound
  // once per block, and an inner block (a loop body, an if branch) may bind it again.
  std::vector<std::vector<std::pair<std::string, int>>> ssa_blocks_;
  struct SsaBlock {
    explicit SsaBlock(Parser& p) : parser(p) { parser.ssa_blocks_.emplace_back(); }
    ~SsaBlock() { parser.ssa_blocks_.pop_back(); }
    SsaBlock(const SsaBlock&) = delete;
    SsaBlock& operator=(const SsaBlock&) = delete;
    Parser& parser;
  };
  // The pl.at / pl.spmd scopes around the code being parsed (a split_aiv region in one needs no
  // scope of its own; counted by CountedScope), and the open regions' modes, innermost last.
  int core_scopes_open_ = 0;
  std::vector<int64_t> split_aiv_modes_;
  const std::vector<TypePtr>* return_types_ = nullptr;
  // A jit function's return types, set by its first return statement.
  std::vector<TypePtr>* inferred_returns_ = nullptr;
  bool returns_known_ = false;
  std::vector<JitSignature> jit_functions_;
  std::vector<ir::FunctionPtr> jit_helper_functions_;  // in the order of their first calls
  std::unordered_map<std::string_view, VarPtr> vars_;  // keys view the Vars' own names
  std::vector<LoopContext> loops_;  // the loops around the statement being parsed, innermost last
  std::deque<std::string> synthesized_names_;
  std::deque<ExternalHelper> helpers_;
  HelperScope module_scope_;                   // the helpers the program's own scope sees
  const HelperScope* scope_ = &module_scope_;  // those the code being parsed sees
  InlineFrame* inline_frame_ = nullptr;        // set while an inline body is parsed
  std::vector<StmtPtr> inline_stmts_;          // made by inline calls in the statement being parsed
  std::unordered_set<std::string> taken_names_;  // names an inline local must not take
  bool token_names_noted_ = false;
  // Dynamic dimensions (parser_dynamic.cpp): their extents while a specialisation is read, and
  // where a signature read the first time names them.
  const DynamicBindings* dynamic_bindings_ = nullptr;
  std::vector<EntryTensor> entry_tensors_;
  std::vector<DynamicDimUse>* dynamic_uses_ = nullptr;
  int64_t dynamic_placeholder_ = 1;    // the extent a dynamic name has until a call gives one
  bool runtime_dims_allowed_ = false;  // reading a local's annotation: run-time extents allowed
  TypePtr value_annotation_;  // the annotation of the name the value being read is bound to
  std::map<std::string, ir::MemorySpace, std::less<>> ptr_allocs_;   // pl.tile.alloc names
  std::optional<std::pair<Span, std::string>> runtime_valid_shape_;  // its span, the name
  std::vector<ExprPtr> runtime_valid_exprs_;  // its items, for a pop to read within
  size_t shapes_read_ = 0;
  // Names bound once to integer constants in the function being parsed: their variable and
  // the constant (note_local_constant).
  std::map<std::string, std::pair<VarPtr, ExprPtr>, std::less<>> local_constants_;
  int list_depth_ = 0;
  // Reading a pl.TensorView's valid_shape: a dynamic name there that no parameter's shape
  // gives reads as kDynamicExtent (the view's valid region is known only at run time).
  bool reading_tensor_view_ = false;  // lists being parsed, innermost last (parse_list)
  // Per entry of the last pl.TensorView valid_shape read: the bare name written there (empty:
  // not a bare name), and whether a signature's first reading met a dynamic name in it.
  std::vector<std::string> view_valid_names_;
  bool view_names_dynamic_ = false;
  size_t view_unbound_names_ = 0;  // dynamic names without a value met in that valid_shape
  // Reading a kernel parameter's annotation (parse_function_signature): a partial TensorView
  // valid region is allowed there and kept in current_param_valid_.
  bool reading_kernel_param_ = false;
  bool reading_any_param_ = false;
  std::vector<ValidDim> current_param_valid_;
  // The valid_shape of the pl.slice each tensor variable was last bound to (note_bound_value).
  std::unordered_map<const ir::Var*, std::vector<ExprPtr>> slice_valid_shapes_;
  // The extents a @pl.jit call gives the pl.dynamic dimensions of its entry's annotations.
  DynamicBindings jit_dynamic_bindings_;
  // Variables referenced while parsing the current statement, with where they are written: the
  // IR's Var nodes carry their definition's span, errors must point at the use.
  std::vector<std::pair<const ir::Expr*, Span>> var_uses_;
};

}  // namespace pypto::frontend::detail

#include "parser_state_templates.h"
