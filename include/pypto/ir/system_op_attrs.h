// The attributes of the pl.system ops (src/ir/system_ops.h) that codegen and the printer read:
// the hardware pipes of flag synchronisation (pl.PipeType, the `set_pipe=`, `wait_pipe=` and
// `pipe=` attributes), kept in the IR as integers numbered as the language numbers them, and
// the participant set and form of a syncall.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pypto/ir/expr.h"

namespace pypto::ir {

// MTE1 (L1 -> L0), MTE2 (DDR -> UB), MTE3 (UB -> DDR), M (matrix), V (vector), S (scalar),
// FIX (accumulator write-back), ALL (every pipe): 0 .. 7.
inline constexpr std::array<std::string_view, 8> kPipeTypeNames{"MTE1", "MTE2", "MTE3", "M",
                                                                 "V",    "S",    "FIX",  "ALL"};

// "MTE2" -> 1; nothing for another name.
inline std::optional<int64_t> pipe_type_from_name(std::string_view name) {
  for (size_t i = 0; i < kPipeTypeNames.size(); ++i)
    if (kPipeTypeNames[i] == name) return static_cast<int64_t>(i);
  return std::nullopt;
}

// The pipe's member name ("MTE2"); nullptr for a value that is no pipe.
inline const char* pipe_type_name(int64_t pipe) {
  if (pipe < 0 || pipe >= static_cast<int64_t>(kPipeTypeNames.size())) return nullptr;
  return kPipeTypeNames[static_cast<size_t>(pipe)].data();
}

// Whether a call attribute holds a pipe (printed as pl.PipeType.<member>).
inline bool is_pipe_attr(std::string_view key) {
  return key == "set_pipe" || key == "wait_pipe" || key == "pipe";
}

// The participant set of a syncall (its core_type= attribute, "mix" when absent): 0 mix,
// 1 aiv_only, 2 aic_only (PtoSyncallCoreType of device/pto_abi.h); -1 for another name.
inline int32_t syncall_core_type(const Attrs& attrs) {
  const AttrValue* v = find_attr(attrs, "core_type");
  const auto* s = v ? std::get_if<std::string>(v) : nullptr;
  if (!s || *s == "mix") return 0;
  if (*s == "aiv_only") return 1;
  if (*s == "aic_only") return 2;
  return -1;
}

// Whether a syncall is the soft form (mode="soft"), which takes a workspace and a count.
inline bool syncall_is_soft(const Attrs& attrs) {
  const AttrValue* v = find_attr(attrs, "mode");
  const auto* s = v ? std::get_if<std::string>(v) : nullptr;
  return s && *s == "soft";
}

}  // namespace pypto::ir
