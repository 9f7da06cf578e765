// The combine mode of a store into global memory (pl.AtomicType, the `atomic=` attribute of
// pl.store and pl.assemble): kept in the IR as an integer attribute, as PyPTO's IR keeps it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "pypto/ir/expr.h"

namespace pypto::ir {

// 0 overwrites the destination (pl.AtomicType.None_), 1 adds into it (pl.AtomicType.Add).
constexpr int64_t kAtomicNone = 0;
constexpr int64_t kAtomicAdd = 1;

// "None_" / "Add" -> the mode; nothing for another name.
inline std::optional<int64_t> atomic_mode_from_name(std::string_view name) {
  if (name == "None_") return kAtomicNone;
  if (name == "Add") return kAtomicAdd;
  return std::nullopt;
}

// The mode's member name ("None_", "Add"); nullptr for a value that is no mode.
inline const char* atomic_mode_name(int64_t mode) {
  if (mode == kAtomicNone) return "None_";
  if (mode == kAtomicAdd) return "Add";
  return nullptr;
}

// Whether a call's `atomic=` attribute asks for an adding store.
inline bool is_atomic_add(const Attrs& attrs) {
  const AttrValue* v = find_attr(attrs, "atomic");
  const auto* mode = v ? std::get_if<int64_t>(v) : nullptr;
  return mode && *mode == kAtomicAdd;
}

}  // namespace pypto::ir
