// Dynamic dimensions (`M = pl.dynamic("M")`): a function whose parameter shapes name one is a
// template. Its signature is read once to learn where the dynamic dimensions are; each call then
// gives them the extents of its arguments' shapes, and the function is read again with those
// extents as one specialisation per distinct set of extents (the first keeps the function's
// name). Everything after the parser sees only static shapes, as with @pl.jit: a program that
// runs with other extents is another specialisation, never a slower generic one.
#include <algorithm>

#include "parser_state.h"

namespace pypto::frontend::detail {

namespace {

// The name of the specialisation after the first: `kernel_M128_N64`.
std::string specialisation_name(const std::string& base, const std::vector<std::string>& names,
                                const DynamicBindings& bindings) {
  std::string out = base;
  for (const std::string& n : names) out += "_" + n + std::to_string(bindings.at(n));
  return out;
}

// `type` (a parameter's, read with the names' extents) with its dynamic dimensions set to the
// argument's own extents.
TypePtr with_dynamic_extents(const TypePtr& type, const std::vector<int64_t>& argument_shape,
                             const std::vector<DynamicDimAt>& dims) {
  auto patch = [&](std::vector<int64_t> shape) {
    for (const auto& d : dims) shape[d.dim] = argument_shape[d.dim];
    return shape;
  };
  if (const auto* t = type->as<ir::TensorType>()) {
    return ir::tensor_type(patch(t->shape), t->dtype, t->view, t->memref);
  }
  if (const auto* t = type->as<ir::TileType>()) {
    return ir::tile_type(patch(t->shape), t->dtype, t->space, t->memref, t->view);
  }
  return type;
}

}  // namespace

std::optional<Constant> Parser::read_dynamic_dim_definition() {
  if (!(at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).text == "dynamic" &&
        peek_token(3).kind == TK::LParen)) {
    return std::nullopt;
  }
  const Span span = here();
  for (int i = 0; i < 4; ++i) advance();
  if (!at(TK::String)) fail(span, "pl.dynamic takes the dimension's name, e.g. pl.dynamic(\"M\")");
  std::string name = string_literal(advance());
  if (!at(TK::RParen)) fail_here("pl.dynamic takes one argument, the dimension's name");
  advance();
  return Constant(DynamicDim{std::move(name)});
}

int64_t Parser::dynamic_dim_extent(const DynamicDim& dim, Span span, std::optional<size_t> index) {
  if (dynamic_bindings_) {
    auto it = dynamic_bindings_->find(dim.name);
    if (it != dynamic_bindings_->end()) return it->second;
  }
  if (dynamic_uses_) {
    // A signature read for the first time: where the name stands is recorded, and a placeholder
    // extent keeps the types well formed until a call gives the real one.
    if (index)
      dynamic_uses_->push_back(DynamicDimUse{shapes_read_, *index, dim.name, false});
    else
      dynamic_uses_->push_back(DynamicDimUse{0, 0, dim.name, reading_tensor_view_});
    return dynamic_placeholder_;
  }
  if (reading_tensor_view_) {
    ++view_unbound_names_;  // counted: only a bare name can take a caller's valid extent
    return ir::kDynamicExtent;
  }
  fail(span, "dynamic dimension '" + dim.name +
                 "' has no extent here: it is known only through the shapes of a function's "
                 "parameters, which each call fixes");
}

void Parser::note_dynamic_dims(FunctionSignature& sig, const std::vector<DynamicDimUse>& uses,
                               const std::vector<size_t>& first_shapes) {
  if (uses.empty()) return;
  sig.is_template = true;
  sig.dynamic_dims.assign(sig.params.size(), {});
  for (const DynamicDimUse& use : uses) {
    if (use.in_tensor_view) continue;  // a view's valid region takes no value from a call
    if (std::find(sig.dynamic_names.begin(), sig.dynamic_names.end(), use.name) ==
        sig.dynamic_names.end()) {
      sig.dynamic_names.push_back(use.name);
    }
    // A parameter's own shape is the first one read after its name (views and return types
    // read others): only those give a call's extents.
    for (size_t p = 0; p < first_shapes.size(); ++p) {
      if (first_shapes[p] != 0 && use.shape == first_shapes[p])
        sig.dynamic_dims[p].push_back(DynamicDimAt{use.dim, use.name, use.scale, use.offset});
    }
  }
}

size_t Parser::specialise_call(size_t callee, const std::vector<ExprPtr>& args,
                               const std::vector<Span>& arg_spans, Span call_span) {
  const FunctionSignature& tmpl = signatures_[callee];
  // A name takes the extent of the first parameter whose shape has it (what the body's uses of
  // the name see); each parameter keeps its argument's own extents, as in PyPTO, where every
  // tensor carries its shape and one name in two shapes does not make them equal.
  DynamicBindings bindings;
  std::vector<std::vector<int64_t>> shapes(tmpl.params.size());
  for (size_t p = 0; p < tmpl.dynamic_dims.size() && p < args.size(); ++p) {
    if (tmpl.dynamic_dims[p].empty()) continue;
    const ir::Type& type = *args[p]->type();
    const std::vector<int64_t>* shape = nullptr;
    if (const auto* t = type.as<ir::TensorType>()) shape = &t->shape;
    if (const auto* t = type.as<ir::TileType>()) shape = &t->shape;
    const ir::Type& want = *tmpl.params[p].var->type();
    const size_t want_rank = want.as<ir::TensorType>() ? want.as<ir::TensorType>()->shape.size()
                             : want.as<ir::TileType>() ? want.as<ir::TileType>()->shape.size()
                                                       : 0;
    if (!shape || shape->size() != want_rank) {
      fail(arg_spans[p], "expected a " + std::to_string(want_rank) + "-D " +
                             (want.as<ir::TileType>() ? "tile" : "tensor") + ", got " +
                             ir::type_to_string(args[p]->type()) + " in argument " +
                             std::to_string(p + 1) + " of '" + tmpl.name + "'");
    }
    shapes[p] = *shape;
    for (const DynamicDimAt& d : tmpl.dynamic_dims[p]) {
      bindings.emplace(d.name, solve_dynamic_dim(d, (*shape)[d.dim], arg_spans[p], tmpl.name));
    }
  }
  for (const std::string& name : tmpl.dynamic_names) {
    if (!bindings.count(name)) {
      fail(call_span, "dynamic dimension '" + name + "' of '" + tmpl.name +
                          "' is not the extent of any parameter's shape, so a call cannot "
                          "give it a value");
    }
  }
  for (size_t s : tmpl.specialisations) {
    if (signatures_[s].argument_shapes == shapes) return s;
  }
  // Read the signature again with the extents; the body is read with the program's other
  // functions (parse_class reads signatures_ to the end).
  const size_t index = signatures_.size();
  const size_t saved_pos = pos_;
  pos_ = tmpl.decl_start;
  auto read = [&] { parse_function_signature(tmpl.is_method, &bindings); };
  if (tmpl.helper) {
    in_helper_source(*tmpl.helper, read);
  } else {
    read();
  }
  pos_ = saved_pos;
  FunctionSignature& spec = signatures_[index];
  FunctionSignature& base = signatures_[callee];
  spec.helper = base.helper;
  spec.specialisation_of = callee;
  spec.argument_shapes = shapes;
  std::vector<TypePtr> read_types;  // with the names' extents, before each argument's own
  for (size_t p = 0; p < spec.params.size(); ++p) {
    ir::Param& param = spec.params[p];
    read_types.push_back(param.var->type());
    if (base.dynamic_dims[p].empty()) continue;
    param.var = ir::make_var(
        param.var->name, with_dynamic_extents(param.var->type(), shapes[p], base.dynamic_dims[p]),
        param.var->span());
  }
  // A return type written like an output parameter's type (`c: pl.Out[pl.Tensor[[M, N], ..]]`,
  // `-> pl.Tensor[[M, N], ..]`) is that parameter's: the function returns what it wrote there.
  std::vector<bool> taken(spec.params.size(), false);
  for (TypePtr& ret : spec.return_types) {
    for (size_t p = 0; p < spec.params.size(); ++p) {
      if (taken[p] || spec.params[p].direction == ir::ParamDirection::In ||
          !ir::types_equal(read_types[p], ret)) {
        continue;
      }
      taken[p] = true;
      ret = spec.params[p].var->type();
      break;
    }
  }
  if (!base.specialisations.empty()) {
    spec.name = specialisation_name(base.name, base.dynamic_names, bindings);
    for (int n = 2; std::any_of(
             signatures_.begin(), signatures_.end(),
             [&](const FunctionSignature& s) { return &s != &spec && s.name == spec.name; });
         ++n) {
      spec.name =
          specialisation_name(base.name, base.dynamic_names, bindings) + "_" + std::to_string(n);
    }
  }
  add_valid_symbol_params(spec);
  base.specialisations.push_back(index);
  calls_.emplace_back();
  return index;
}

int64_t Parser::solve_dynamic_dim(const DynamicDimAt& d, int64_t extent, Span span,
                                  const std::string& function) const {
  if (d.scale == 1 && d.offset == 0) return extent;
  const int64_t rest = extent - d.offset;
  if (rest % d.scale != 0 || rest / d.scale <= 0) {
    fail(span, "dimension " + std::to_string(d.dim) + " of this argument of '" + function +
                   "' is " + std::to_string(extent) + ", which is not " + std::to_string(d.scale) +
                   " * " + d.name + (d.offset ? " + " + std::to_string(d.offset) : "") +
                   " for a positive integer " + d.name);
  }
  return rest / d.scale;
}

int64_t Parser::parse_shape_formula(size_t index) {
  // A dimension written as arithmetic on one dynamic dimension (`M * 2`, `N + 1`) while a
  // signature is first read: it is read with three values of the name, and when they lie on a
  // line, extent = scale * name + offset lets a call's extent give the name its value.
  const size_t start = pos_;
  const size_t uses_before = dynamic_uses_->size();
  const int64_t saved_placeholder = dynamic_placeholder_;
  std::vector<int64_t> at;
  for (int64_t probe : {64, 128, 192}) {
    pos_ = start;
    dynamic_uses_->resize(uses_before);
    dynamic_placeholder_ = probe;
    at.push_back(parse_constant_int("shape"));
  }
  dynamic_placeholder_ = saved_placeholder;
  std::vector<DynamicDimUse>& uses = *dynamic_uses_;
  if (uses.size() == uses_before) return at[0];  // no dynamic name in it
  for (size_t i = uses_before + 1; i < uses.size(); ++i) {
    if (uses[i].name != uses[uses_before].name) return at[0];  // two names: not solvable
  }
  const int64_t scale = (at[1] - at[0]) / 64;
  const int64_t offset = at[0] - 64 * scale;
  if (scale <= 0 || at[1] - at[0] != 64 * scale || at[2] != 192 * scale + offset) return at[0];
  DynamicDimUse use{shapes_read_, index, uses[uses_before].name, false, scale, offset};
  uses.resize(uses_before);
  uses.push_back(std::move(use));
  return at[0];
}

bool Parser::specialise_entry() {
  if (entry_tensors_.empty()) return false;
  std::optional<size_t> entry = unspecialised_root();
  if (!entry) return false;
  const FunctionSignature& sig = signatures_[*entry];
  bool by_name = true;
  for (const ir::Param& p : sig.params) {
    by_name = by_name && std::any_of(entry_tensors_.begin(), entry_tensors_.end(),
                                     [&](const EntryTensor& t) { return t.name == p.var->name; });
  }
  if (!by_name && entry_tensors_.size() != sig.params.size()) {
    fail(sig.span, "the entry '" + sig.name + "' has " + std::to_string(sig.params.size()) +
                       " parameters but the program runs with " +
                       std::to_string(entry_tensors_.size()) +
                       " tensors: its dynamic dimensions take their extents from them");
  }
  std::vector<ExprPtr> args;
  std::vector<Span> spans;
  for (size_t p = 0; p < sig.params.size(); ++p) {
    const ir::Var& param = *sig.params[p].var;
    const EntryTensor* t = &entry_tensors_[p < entry_tensors_.size() ? p : 0];
    if (by_name) {
      t = &*std::find_if(entry_tensors_.begin(), entry_tensors_.end(),
                         [&](const EntryTensor& e) { return e.name == param.name; });
    }
    args.push_back(ir::make_var(param.name, ir::tensor_type(t->shape, t->dtype), param.span()));
    spans.push_back(param.span());
  }
  current_function_ = *entry;
  const size_t spec = specialise_call(*entry, args, spans, sig.span);
  if (!signatures_[spec].valid_symbols.empty()) {
    const FunctionSignature& s = signatures_[spec];
    fail(s.span, "the entry '" + s.name +
                     "' has a parameter whose pl.TensorView valid_shape "
                     "names '" +
                     s.valid_symbols.front() +
                     "', which takes its value from a "
                     "caller's argument; call '" +
                     s.name +
                     "' from an orchestration that passes "
                     "a window with that valid_shape");
  }
  return true;
}

std::optional<size_t> Parser::unspecialised_root() const {
  // Functions of templates are not read before they are specialised, so their calls are not
  // known: a root is a template no `self.<name>` of the program's text mentions.
  std::optional<size_t> root;
  for (size_t i = 0; i < signatures_.size(); ++i) {
    const FunctionSignature& sig = signatures_[i];
    if (!sig.is_template || !sig.specialisations.empty() || sig.helper) continue;
    bool called = false;
    for (size_t t = 0; t + 2 < tokens_.size() && !called; ++t) {
      called = tokens_[t].kind == TK::Name && tokens_[t].text == "self" &&
               tokens_[t + 1].kind == TK::Dot && tokens_[t + 2].text == sig.name;
    }
    if (called) continue;
    if (root) return std::nullopt;  // two roots: neither is the entry
    root = i;
  }
  return root;
}

void Parser::check_unspecialised_templates() const {
  if (std::optional<size_t> root = unspecialised_root()) {
    const FunctionSignature& sig = signatures_[*root];
    std::string names;
    for (const std::string& n : sig.dynamic_names) names += (names.empty() ? "" : ", ") + n;
    // A name only a pl.TensorView valid_shape uses is bound there, not listed as a dimension.
    if (names.empty()) names = "in a pl.TensorView valid_shape";
    fail(sig.span, "the entry '" + sig.name + "' has dynamic dimensions (" + names +
                       "): the program is compiled for the tensors it runs with (pypto.run, or "
                       "program.specialise(tensors)), which give them their extents");
  }
  for (const FunctionSignature& sig : signatures_) {
    if (!sig.is_template || !sig.specialisations.empty()) continue;
    std::string names;
    for (const std::string& n : sig.dynamic_names) names += (names.empty() ? "" : ", ") + n;
    fail(sig.span, "function '" + sig.name + "' has dynamic dimensions (" + names +
                       ") and nothing in the program calls it: their extents come from a "
                       "call's arguments, or for the program's entry from the tensors it runs "
                       "with (pypto.run and the runner specialise it)");
  }
}

}  // namespace pypto::frontend::detail
