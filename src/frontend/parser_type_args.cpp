// The arguments of tensor and tile types as PyPTO writes them: memory spaces (pl.MemorySpace.X
// and its alias pl.Mem.X), tensor layouts (pl.NZ, pl.TensorLayout.NZ), pl.TileView(...),
// pl.TensorView(...) and pl.MemRef(...); and these names met outside an annotation.
#include <array>
#include <cctype>

#include "parser_state.h"

namespace pypto::frontend::detail {

namespace {

// Memory space names that this device does not have.
constexpr std::array<std::string_view, 1> kMissingSpaces = {"ScalarLocal"};
constexpr const char* kSpaceNames =
    "DDR, Vec, Mat, Left, Right, Acc, Bias, LeftScale or RightScale";
constexpr std::array<std::string_view, 5> kLayoutShorthands = {"ND", "DN", "NZ", "MX_A_ZZ",
                                                               "MX_B_NN"};

template <size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::string_view n : names)
    if (n == name) return true;
  return false;
}

}  // namespace

void Parser::parse_keyword_arguments(std::string_view callee, std::string_view example,
                                     const std::function<void(const Token&)>& on_argument) {
  std::vector<std::string_view> seen;
  while (!at(TK::RParen)) {
    if (!(at(TK::Name) && peek_token(1).kind == TK::Assign)) {
      fail(here(), std::string(callee) + " takes keyword arguments only, e.g. " +
                       std::string(example) + "; got " + describe(cur()));
    }
    const Token& key = advance();
    advance();  // =
    if (std::find(seen.begin(), seen.end(), key.text) != seen.end()) {
      fail(span_of(key),
           std::string(callee) + " argument '" + std::string(key.text) + "' given twice");
    }
    seen.push_back(key.text);
    on_argument(key);
    if (!at(TK::Comma)) break;
    advance();
  }
}

std::optional<ir::MemorySpace> Parser::parse_memory_space_name() {
  const bool alias = at_pl_member(0, "Mem");
  if (!alias && !at_pl_member(0, "MemorySpace")) return std::nullopt;
  const std::string written = alias ? "pl.Mem." : "pl.MemorySpace.";
  const Token& item = parse_enum_member(alias ? "Mem" : "MemorySpace");
  if (auto space = ir::memory_space_from_name(item.text)) return space;
  if (contains(kMissingSpaces, item.text)) {
    fail(span_of(item), "memory space " + written + std::string(item.text) +
                            " is not supported on this device (" + kSpaceNames + ")");
  }
  fail(span_of(item), "unknown memory space '" + written + std::string(item.text) + "' (expected " +
                          kSpaceNames + ")");
}

std::optional<ir::TensorLayout> Parser::parse_tensor_layout_name() {
  if (at_name("pl") && peek_token(1).kind == TK::Dot &&
      contains(kLayoutShorthands, peek_token(2).text) && peek_token(3).kind != TK::LParen) {
    advance();
    advance();
    return ir::tensor_layout_from_name(advance().text);
  }
  if (!at_pl_member(0, "TensorLayout")) return std::nullopt;
  const Token& item = parse_enum_member("TensorLayout");
  auto layout = ir::tensor_layout_from_name(item.text);
  if (!layout) {
    fail(span_of(item), "unknown tensor layout 'pl.TensorLayout." + std::string(item.text) +
                            "' (expected ND, DN, NZ, MX_A_ZZ or MX_B_NN)");
  }
  return layout;
}

std::vector<int64_t> Parser::parse_constant_int_list(const std::string& what) {
  expect(TK::LBracket, [&] { return "'[' to start the list of " + what; });
  std::vector<int64_t> values;
  while (!at(TK::RBracket)) {
    if (at(TK::Name) && lookup_var(cur().text)) {
      fail(here(), "the run-time value '" + std::string(cur().text) + "' in " + what +
                       " is not supported: a type holds constants here (a run-time valid "
                       "region is given to pl.load(..., valid_shapes=[...]))");
    }
    values.push_back(parse_constant_int(what));
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RBracket, [&] { return "']' to close the list of " + what; });
  return values;
}

ir::TileView Parser::parse_tile_view(const std::vector<int64_t>& shape,
                                     std::optional<ir::MemorySpace> space) {
  advance();  // pl
  advance();  // .
  advance();  // TileView
  expect(TK::LParen, "'(' after pl.TileView");
  // Fields left out take the implicit values of the tile's shape and memory space.
  ir::TileView view = ir::implicit_tile_view(shape, space);
  auto tile_layout = [&](const std::string& field) {
    if (!at_pl_member(0, "TileLayout")) {
      expected("a tile layout (pl.TileLayout.row_major, col_major or none_box) for " + field);
    }
    const Token& item = parse_enum_member("TileLayout");
    auto layout = ir::tile_layout_from_name(item.text);
    if (!layout) {
      fail(span_of(item), "unknown tile layout 'pl.TileLayout." + std::string(item.text) +
                              "' (expected none_box, row_major or col_major)");
    }
    return *layout;
  };
  parse_keyword_arguments(
      "pl.TileView", "pl.TileView(valid_shape=[48, 64])", [&](const Token& key) {
        const Span value_span = here();
        if (key.text == "valid_shape" && skip_runtime_valid_shape(value_span)) {
          // The annotation of a popped or narrowed tile, whose region is known at run time.
        } else if (key.text == "valid_shape") {
          view.valid_shape = parse_constant_int_list("pl.TileView valid_shape");
          if (view.valid_shape.size() != shape.size()) {
            fail(value_span, "pl.TileView valid_shape " + ir::shape_to_string(view.valid_shape) +
                                 " has " + std::to_string(view.valid_shape.size()) +
                                 " dimensions; the tile has " + std::to_string(shape.size()));
          }
          for (size_t d = 0; d < shape.size(); ++d) {
            if (view.valid_shape[d] < 0 || view.valid_shape[d] > shape[d]) {
              fail(value_span, "pl.TileView valid_shape " + ir::shape_to_string(view.valid_shape) +
                                   " is outside the tile's shape " + ir::shape_to_string(shape));
            }
          }
        } else if (key.text == "stride") {
          view.stride = parse_constant_int_list("pl.TileView stride");
          if (!view.stride.empty() && view.stride != ir::row_major_strides(shape)) {
            fail(value_span, "pl.TileView stride " + ir::shape_to_string(view.stride) +
                                 " is not supported: tiles on this device are dense row-major "
                                 "(stride " +
                                 ir::shape_to_string(ir::row_major_strides(shape)) + ")");
          }
        } else if (key.text == "start_offset") {
          view.start_offset = parse_constant_int("pl.TileView start_offset");
          if (view.start_offset != 0) {
            fail(value_span, "pl.TileView start_offset " + std::to_string(view.start_offset) +
                                 " is not supported: a tile's data starts at its first element "
                                 "here (take part of a tile with pl.slice)");
          }
        } else if (key.text == "blayout") {
          view.blayout = tile_layout("blayout");
        } else if (key.text == "slayout") {
          view.slayout = tile_layout("slayout");
        } else if (key.text == "fractal") {
          view.fractal = parse_constant_int("pl.TileView fractal");
          if (view.fractal <= 0) {
            fail(value_span,
                 "pl.TileView fractal must be positive, got " + std::to_string(view.fractal));
          }
        } else if (key.text == "pad") {
          if (!at_pl_member(0, "PadValue"))
            expected("a pad value (pl.PadValue.zero, min, max, null)");
          const Token& item = parse_enum_member("PadValue");
          if (item.text != "null") {
            view.pad = ir::pad_value_from_name(item.text);
            if (!view.pad) {
              fail(span_of(item), "unknown pad value 'pl.PadValue." + std::string(item.text) +
                                      "' (expected null, zero, min or max)");
            }
          }
        } else if (key.text == "compact") {
          if (!at_pl_member(0, "CompactMode"))
            expected("pl.CompactMode.null or pl.CompactMode.normal");
          const Token& item = parse_enum_member("CompactMode");
          auto mode = ir::compact_mode_from_name(item.text);
          if (!mode) {
            fail(span_of(item), "unknown compact mode 'pl.CompactMode." + std::string(item.text) +
                                    "' (expected null or normal)");
          }
          view.compact = *mode;
        } else {
          fail(span_of(key), "pl.TileView argument '" + std::string(key.text) +
                                 "' is not supported (expected valid_shape, stride, start_offset, "
                                 "blayout, slayout, fractal, pad or compact)");
        }
      });
  expect(TK::RParen, "')' to close pl.TileView(...)");
  const bool partial = !view.valid_shape.empty() && view.valid_shape != shape;
  if (partial && view.pad) {
    // PyPTO's pad describes what a partly valid tile reads as outside its valid region; here
    // that region is undefined until pl.tile.fillpad writes it.
    fail(span_of(tokens_[pos_ - 1]),
         "pl.TileView pad together with a partial valid_shape is not supported: the elements "
         "outside a tile's valid region are written by pl.tile.fillpad(t, pad_value=...)");
  }
  return view;
}

ir::TensorView Parser::parse_tensor_view() {
  advance();  // pl
  advance();  // .
  advance();  // TensorView
  expect(TK::LParen, "'(' after pl.TensorView");
  ir::TensorView view;
  parse_keyword_arguments(
      "pl.TensorView", "pl.TensorView(stride=[64, 1], layout=pl.TensorLayout.ND)",
      [&](const Token& key) {
        if (key.text == "valid_shape") {
          // Each entry's bare name, if it is one: a dynamic name only a view gives is bound by
          // position to a caller's valid extent (parser_valid_shapes.cpp).
          view_valid_names_.clear();
          if (at(TK::LBracket)) {
            int depth = 0;
            size_t entry_start = pos_ + 1;
            for (size_t i = pos_; i < tokens_.size(); ++i) {
              const TK k = tokens_[i].kind;
              if (k == TK::LBracket || k == TK::LParen) ++depth;
              if (k == TK::RBracket || k == TK::RParen) --depth;
              const bool end = depth == 0 || (depth == 1 && k == TK::Comma);
              if (!end) continue;
              const bool bare = i == entry_start + 1 && tokens_[entry_start].kind == TK::Name;
              view_valid_names_.push_back(bare ? std::string(tokens_[entry_start].text) : "");
              entry_start = i + 1;
              if (depth == 0 || k == TK::EndOfFile) break;
            }
          }
          const size_t uses_before = dynamic_uses_ ? dynamic_uses_->size() : 0;
          const Span valid_span = here();
          view_unbound_names_ = 0;
          reading_tensor_view_ = true;
          try {
            view.valid_shape = parse_constant_int_list("pl.TensorView valid_shape");
          } catch (...) {
            reading_tensor_view_ = false;
            throw;
          }
          reading_tensor_view_ = false;
          view_names_dynamic_ = dynamic_uses_ && dynamic_uses_->size() > uses_before;
          size_t bare_unbound = 0;
          for (size_t d = 0; d < view.valid_shape.size() && d < view_valid_names_.size(); ++d) {
            if (view.valid_shape[d] == ir::kDynamicExtent && !view_valid_names_[d].empty())
              ++bare_unbound;
          }
          if (view_unbound_names_ > bare_unbound) {
            fail(valid_span,
                 "an entry of this pl.TensorView valid_shape is computed from a dynamic "
                 "dimension that no parameter's shape gives: a caller's valid extent can give "
                 "the value of a dimension named on its own only (valid_shape=[16, VALID])");
          }
        } else if (key.text == "stride") {
          view.stride = parse_constant_int_list("pl.TensorView stride");
        } else if (key.text == "layout") {
          auto layout = parse_tensor_layout_name();
          if (!layout) expected("a tensor layout (pl.TensorLayout.ND, NZ, ...) for layout");
          view.layout = *layout;
        } else if (key.text == "pad") {
          if (!at_pl_member(0, "PadValue"))
            expected("a pad value (pl.PadValue.zero, min, max, null)");
          const Token& item = parse_enum_member("PadValue");
          if (item.text != "null") {
            view.pad = ir::pad_value_from_name(item.text);
            if (!view.pad) {
              fail(span_of(item), "unknown pad value 'pl.PadValue." + std::string(item.text) +
                                      "' (expected null, zero, min or max)");
            }
          }
        } else {
          fail(span_of(key),
               "pl.TensorView argument '" + std::string(key.text) +
                   "' is not supported (expected valid_shape, stride, layout or pad)");
        }
      });
  expect(TK::RParen, "')' to close pl.TensorView(...)");
  return view;
}

void Parser::skip_slot_subscript() {
  if (!at(TK::LBracket)) return;
  advance();
  Value slot = parse_value();
  expect_expr(slot, "the slot of a declared allocation");
  expect(TK::RBracket, "']' to close the slot of a declared allocation");
}

void Parser::skip_declared_allocation() {
  // pl.MemRef(), pl.MemRef("name"), pl.MemRef(slots=N) or pl.MemRef("name", slots=N), after
  // its '('. PyPTO's author-declared buffers (ping-pong slots) choose addresses for the NPU's
  // memory planner; here InitMemRef and MemoryReuse plan every tile, never letting two live
  // values share memory, so the declaration is read and dropped: what the program computes is
  // the same.
  if (at(TK::String)) {
    advance();
    if (at(TK::Comma)) advance();
  }
  if (at_name("slots") && peek_token(1).kind == TK::Assign) {
    advance();
    advance();
    const Span slots_span = here();
    const int64_t slots = parse_constant_int("slots");
    if (slots < 1 || slots > 16) {
      fail(slots_span,
           "slots= of a declared allocation must be 1 to 16, got " + std::to_string(slots));
    }
  }
  expect(TK::RParen,
         "')' to close pl.MemRef(...): a declared allocation takes a name and "
         "slots=");
  skip_slot_subscript();
}

std::optional<ir::MemRef> Parser::parse_memref(std::optional<ir::MemorySpace>& named_space) {
  const Span span = here();
  advance();  // pl
  advance();  // .
  advance();  // MemRef
  expect(TK::LParen, "'(' after pl.MemRef");
  // The arguments, each a token range, so that the form can be decided before reading them.
  std::vector<size_t> starts;
  bool keywords = false;
  {
    const size_t begin = pos_;
    int depth = 0;
    if (!at(TK::RParen)) starts.push_back(pos_);
    while (!(depth == 0 && at(TK::RParen))) {
      if (at(TK::EndOfFile) || at(TK::Newline)) expected("')' to close pl.MemRef(...)");
      if (depth == 0 && at(TK::Name) && peek_token(1).kind == TK::Assign) keywords = true;
      if (at(TK::LParen) || at(TK::LBracket)) ++depth;
      if (at(TK::RParen) || at(TK::RBracket)) --depth;
      advance();
      if (depth == 0 && at(TK::Comma)) {
        advance();
        if (!at(TK::RParen)) starts.push_back(pos_);
      }
    }
    pos_ = begin;
  }
  const size_t count = starts.size();
  if (count <= 1 || (keywords && count <= 2)) {
    skip_declared_allocation();
    return std::nullopt;
  }
  if (keywords) {
    fail(span,
         "pl.MemRef with slots= takes a name: pl.MemRef(\"name\", slots=N)[k] (a printed "
         "multi-slot buffer is not supported)");
  }
  if (count != 3 && count != 4) {
    fail(span,
         "pl.MemRef takes 3 arguments (addr, size, id) or (base, byte_offset, size), or 4 "
         "(space, addr, size, id); got " +
             std::to_string(count));
  }
  auto comma = [&] { expect(TK::Comma, "',' between the arguments of pl.MemRef"); };
  auto non_negative = [&](const char* what) {
    const Span at_value = here();
    int64_t v = parse_constant_int(std::string("pl.MemRef ") + what);
    if (v < 0) {
      fail(at_value, std::string("pl.MemRef ") + what + " must be >= 0, got " + std::to_string(v));
    }
    return v;
  };
  auto address = [&] {
    const Span at_value = here();
    int64_t v = parse_constant_int("pl.MemRef addr");
    if (v < -1) {
      fail(at_value, "pl.MemRef addr must be >= 0, or -1 before AllocateMemoryAddr, got " +
                         std::to_string(v));
    }
    return v;
  };
  ir::MemRef m;
  if (count == 4) {
    auto space = parse_memory_space_name();
    if (!space) expected("a memory space (pl.Mem.Vec...) as the first argument of pl.MemRef");
    named_space = space;
    comma();
    m.addr = address();
    comma();
    m.size = non_negative("size");
  } else if (at(TK::String) || (at(TK::Name) && !at_name("pl") && !constants_.count(cur().text))) {
    // (base, byte_offset, size): the buffer the compiler names mem_<space>_<id>.
    const Token& base = advance();
    std::string_view name = base.text;
    if (base.kind == TK::String && name.size() >= 2) name = name.substr(1, name.size() - 2);
    const auto second = name.find('_', 4);
    std::optional<ir::MemorySpace> space;
    int64_t id = -1;
    if (name.substr(0, 4) == "mem_" && second != std::string_view::npos) {
      std::string_view space_name = name.substr(4, second - 4);
      for (auto s :
           {ir::MemorySpace::DDR, ir::MemorySpace::Vec, ir::MemorySpace::Mat, ir::MemorySpace::Left,
            ir::MemorySpace::Right, ir::MemorySpace::Acc, ir::MemorySpace::Bias,
            ir::MemorySpace::LeftScale, ir::MemorySpace::RightScale}) {
        std::string lower(ir::memory_space_name(s));
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower == space_name) space = s;
      }
      std::string_view digits = name.substr(second + 1);
      if (!digits.empty() && digits.size() < 18 &&
          digits.find_first_not_of("0123456789") == std::string_view::npos) {
        id = std::stoll(std::string(digits));
      }
    }
    // A name bound by `name: pl.Ptr = pl.tile.alloc(space, size)` (parser_ptr.cpp).
    if (auto allocated = base.kind == TK::Name ? ptr_alloc_space(name) : std::nullopt) {
      space = allocated;
      if (id < 0) id = 0;
    }
    if (!space || id < 0) {
      fail(span_of(base), "pl.MemRef base '" + std::string(name) +
                              "' is not supported: a buffer is named mem_<space>_<id> (e.g. "
                              "mem_vec_0) as the compiler prints it");
    }
    named_space = space;
    comma();
    // PyPTO prints a typed constant offset as pl.const(0, pl.INT64).
    const Span offset_span = here();
    int64_t offset;
    if (at_pl_member(0, "const")) {
      advance();
      advance();
      advance();
      expect(TK::LParen, "'(' after pl.const");
      offset = parse_constant_int("pl.MemRef byte_offset");
      comma();
      parse_dtype("pl.const(...)");
      expect(TK::RParen, "')' to close pl.const(...)");
    } else {
      offset = parse_constant_int("pl.MemRef byte_offset");
    }
    // A tile placed `offset` bytes into its buffer (PyPTO prints a slice of a tile so, and
    // tiles sharing one allocation at offsets): where tiles lie is planned again here
    // (InitMemRef, AllocateMemoryAddr), as for the buffer itself, and no value depends on it.
    if (offset < 0) {
      fail(offset_span, "pl.MemRef byte_offset must be >= 0, got " + std::to_string(offset));
    }
    comma();
    m.size = non_negative("size");
    m.buffer_id = id;
    m.addr = -1;
    if (at(TK::Comma)) advance();
    expect(TK::RParen, "')' after the arguments of pl.MemRef");
    return m;
  } else {
    m.addr = address();
    comma();
    m.size = non_negative("size");
  }
  comma();
  m.buffer_id = non_negative("id");
  if (at(TK::Comma)) advance();
  expect(TK::RParen, "')' after the arguments of pl.MemRef");
  if (at(TK::LBracket)) {
    fail(here(),
         "a slot [k] belongs to a declared allocation, pl.MemRef(\"name\", slots=N)[k]; "
         "pl.MemRef(addr, size, id) is one buffer");
  }
  return m;
}

std::optional<Value> Parser::parse_type_language_name() {
  if (!(at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).kind == TK::Name)) {
    return std::nullopt;
  }
  const Span span = here();
  const std::string_view name = peek_token(2).text;
  if (name == "Mem" || (name == "MemorySpace" && contains(kMissingSpaces, peek_token(4).text))) {
    Value v;
    v.kind = Value::Kind::Space;
    v.space = *parse_memory_space_name();
    v.span = span;
    return v;
  }
  // A layout member is a value only a few op keywords take (bind_op_call); anywhere else
  // expect_expr rejects it by saying where layouts belong.
  if (name == "TileLayout") {
    const Token& item = parse_enum_member("TileLayout");
    if (!ir::tile_layout_from_name(item.text)) {
      fail(span_of(item), "unknown tile layout 'pl.TileLayout." + std::string(item.text) +
                              "' (expected row_major, col_major or none_box)");
    }
    Value v;
    v.kind = Value::Kind::TileLayout;
    v.level = item.text;
    v.span = span;
    return v;
  }
  if (contains(kLayoutShorthands, name) || name == "TensorLayout") {
    auto layout = parse_tensor_layout_name();
    if (!layout) fail(span, "pl." + std::string(name) + " is a tensor layout, not a function");
    Value v;
    v.kind = Value::Kind::TensorLayout;
    v.level = ir::tensor_layout_name(*layout);
    v.span = span;
    return v;
  }
  if (name == "CompactMode") {
    fail(span, "pl.CompactMode is only allowed inside pl.TileView(...) in a pl.Tile annotation");
  }
  if (name == "TileView" || name == "TensorView") {
    fail(span, "pl." + std::string(name) + "(...) is only allowed in a pl." +
                   (name == "TileView" ? "Tile" : "Tensor") + "[...] annotation");
  }
  return std::nullopt;
}

}  // namespace pypto::frontend::detail
