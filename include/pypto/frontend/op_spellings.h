#pragma once

#include <string>
#include <string_view>

namespace pypto::frontend {

// How the parser reads a call of `pl.<ns>.<name>` (`ns` is "" for `pl.<name>`, "tile",
// "tensor" or "system"): the registry op it names (pl.tile.muls is mul with a scalar operand,
// pl.tile.create is create_tile), a form the parser builds from several ops (pl.full,
// pl.addc...), an op of PyPTO's language this compiler does not have yet, or no op at all. The
// language reference's op table (scripts/gen_ops.py) is made from it.
struct OpSpelling {
  enum class Kind { Op, Form, Unsupported, Unknown };
  Kind kind = Kind::Unknown;
  std::string op;  // the registry op (Op), or the op a form is built on ("add" for pl.addc)
};

OpSpelling resolve_op_spelling(std::string_view ns, std::string_view name);

}  // namespace pypto::frontend
