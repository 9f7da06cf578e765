// `buf: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)`: the allocations PyPTO prints after its memory
// passes, which tiles then place with `pl.MemRef(buf, 0, 16384)`. Here InitMemRef and MemoryReuse
// plan memory again, so an allocation is read and checked, its name noted with its memory space
// (for the MemRefs that name it, parser_type_args.cpp), and it leaves no statement: printed
// back, those MemRefs name the buffer as `"mem_<space>_<id>"`.
#include "parser_state.h"

namespace pypto::frontend::detail {

bool Parser::at_ptr_binding() const {
  return at_pl_member(0, "Ptr") && peek_token(3).kind == TK::Assign;
}

void Parser::parse_ptr_binding(const Token& name) {
  for (int i = 0; i < 3; ++i) advance();  // pl . Ptr
  advance();                              // =
  const Span span = here();
  if (!(at_pl_member(0, "tile") && peek_token(3).kind == TK::Dot &&
        peek_token(4).text == "alloc")) {
    fail(span, "a pl.Ptr names an allocation: '" + std::string(name.text) +
                   ": pl.Ptr = pl.tile.alloc(pl.Mem.Vec, size)'");
  }
  for (int i = 0; i < 5; ++i) advance();  // pl . tile . alloc
  expect(TK::LParen, "'(' after pl.tile.alloc");
  const Span space_span = here();
  auto space = parse_memory_space_name();
  if (!space) fail(space_span, "pl.tile.alloc takes a memory space first (pl.Mem.Vec, ...)");
  if (*space == ir::MemorySpace::DDR) {
    fail(space_span,
         "pl.tile.alloc allocates on-chip memory (Vec, Mat, Left, Right, Acc), not DDR");
  }
  expect(TK::Comma, "',' after the memory space of pl.tile.alloc");
  const Span size_span = here();
  const int64_t size = parse_constant_int("the size of pl.tile.alloc");
  if (size <= 0)
    fail(size_span, "the size of pl.tile.alloc must be positive, got " + std::to_string(size));
  if (at(TK::Comma)) {
    advance();
    if (at_name("pinned")) {
      advance();
      expect(TK::Assign, "'=' after pinned");
      if (!at_name("True") && !at_name("False")) fail(here(), "pinned= takes True or False");
      advance();
    }
  }
  expect(TK::RParen, "')' to close pl.tile.alloc(...)");
  ptr_allocs_[std::string(name.text)] = *space;
}

std::optional<ir::MemorySpace> Parser::ptr_alloc_space(std::string_view name) const {
  auto it = ptr_allocs_.find(name);
  if (it == ptr_allocs_.end()) return std::nullopt;
  return it->second;
}

}  // namespace pypto::frontend::detail
