// The entry's tensors whose pl.TensorView stores elements otherwise than packed row-major (DN,
// explicit strides). The host hands every tensor over packed row-major as its logical array;
// such a parameter lives on the device as its view says: a buffer of the view's span, filled
// from the argument before any task runs and, when the function may write it, copied back
// into the argument once the tasks writing it are done (where the function returns).
#pragma once

#include <string>
#include <vector>

#include "pypto/ir/program.h"

namespace pypto::codegen {

// Per parameter of `func`, whether it is staged: a tensor of the entry function with such a
// view, in a program of one rank (a multi-rank program's entry tensors are the window buffers
// the ranks share, which a private copy would not be).
std::vector<bool> staged_entry_params(const ir::Program& program, const ir::Function& func);

// The C++ statements that make `name`, the staged view of argument `arg` ("params[i]"), the
// buffer's element count in the variable `span_var`.
std::vector<std::string> stage_entry_param(const std::string& name, const std::string& span_var,
                                           const std::string& arg, const ir::TensorType& type,
                                           ir::Span span);

// The statements that copy staged `name` back into argument `arg` after the tasks writing it.
std::vector<std::string> unstage_entry_param(const std::string& name, const std::string& arg);

}  // namespace pypto::codegen
