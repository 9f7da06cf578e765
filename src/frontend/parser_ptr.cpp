// `buf: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)` (or pl.tensor.alloc): the allocations PyPTO
// prints after its memory passes, which tiles then place with `pl.MemRef(buf, 0, 16384)`. Here
// InitMemRef and MemoryReuse plan memory again, so an allocation is read and checked, its name
// noted with its memory space (for the MemRefs that name it, parser_type_args.cpp), and it leaves
// no statement: printed back, those MemRefs name the buffer as `"mem_<space>_<id>"`.
#include "parser_state.h"

namespace pypto::frontend::detail {

bool Parser::at_ptr_binding() const {
  return at_pl_member(0, "Ptr") && peek_token(3).kind == TK::Assign;
}

void Parser::parse_ptr_binding(const Token& name) {
  for (int i = 0; i < 3; ++i) advance();  // pl . Ptr
  advance();                              // =
  const Span span = here();
  const bool tile = at_pl_member(0, "tile");
  if (!((tile || at_pl_member(0, "tensor")) && peek_token(3).kind == TK::Dot &&
        peek_token(4).text == "alloc")) {
    fail(span, "a pl.Ptr names an allocation: '" + std::string(name.text) +
                   ": pl.Ptr = pl.tile.alloc(pl.Mem.Vec, size)'");
  }
  // pl.tile.alloc for on-chip buffers, pl.tensor.alloc for a tensor's (in any space).
  const std::string op = tile ? "pl.tile.alloc" : "pl.tensor.alloc";
  for (int i = 0; i < 5; ++i) advance();  // pl . tile . alloc
  expect(TK::LParen, "'(' after " + op);
  const Span space_span = here();
  auto space = parse_memory_space_name();
  if (!space) fail(space_span, op + " takes a memory space first (pl.Mem.Vec, ...)");
  if (tile && *space == ir::MemorySpace::DDR) {
    fail(space_span, op + " allocates on-chip memory (Vec, Mat, Left, Right, Acc, Bias, LeftScale, "
                          "RightScale), not DDR");
  }
  expect(TK::Comma, "',' after the memory space of " + op);
  const Span size_span = here();
  const int64_t size = parse_constant_int("the size of " + op);
  if (size <= 0)
    fail(size_span, "the size of " + op + " must be positive, got " + std::to_string(size));
  if (at(TK::Comma)) {
    advance();
    if (at_name("pinned")) {
      advance();
      expect(TK::Assign, "'=' after pinned");
      if (!at(TK::KwTrue) && !at(TK::KwFalse)) fail(here(), "pinned= takes True or False");
      advance();
    }
  }
  expect(TK::RParen, "')' to close " + op + "(...)");
  ptr_allocs_[std::string(name.text)] = *space;
}

std::optional<ir::MemorySpace> Parser::ptr_alloc_space(std::string_view name) const {
  auto it = ptr_allocs_.find(name);
  if (it == ptr_allocs_.end()) return std::nullopt;
  return it->second;
}

}  // namespace pypto::frontend::detail
