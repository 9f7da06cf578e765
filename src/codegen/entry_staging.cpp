#include "entry_staging.h"

#include "pypto/codegen/cpp_emit.h"
#include "pypto/ir/tensor_strides.h"
#include "pypto/ir/visitor.h"

namespace pypto::codegen {

namespace {

// Whether any function of the program calls a communication op (pld.*): a multi-rank program.
bool uses_comm_ops(const ir::Program& program) {
  struct Finder : ir::IRVisitor {
    bool found = false;
    void visit_call(const ir::Call& c) override {
      if (c.call_kind == ir::CallKind::Op && c.callee.rfind("comm_", 0) == 0) found = true;
      IRVisitor::visit_call(c);
    }
  } finder;
  for (const auto& f : program.functions) {
    if (f->body) finder.visit(f->body);
    if (finder.found) return true;
  }
  return false;
}

}  // namespace

std::vector<bool> staged_entry_params(const ir::Program& program, const ir::Function& func) {
  std::vector<bool> staged(func.params.size(), false);
  if (program.entry().get() != &func) return staged;
  bool any = false;
  for (size_t i = 0; i < func.params.size(); ++i) {
    const auto* tt = func.params[i].var->type()->as<ir::TensorType>();
    staged[i] =
        tt && !ir::is_row_major_storage(tt->shape, ir::storage_strides(tt->shape, tt->view));
    any = any || staged[i];
  }
  if (any && uses_comm_ops(program)) staged.assign(staged.size(), false);
  return staged;
}

std::vector<std::string> stage_entry_param(const std::string& name, const std::string& span_var,
                                           const std::string& arg, const ir::TensorType& type,
                                           ir::Span span) {
  for (int64_t d : type.shape) {
    if (d < 0) {
      codegen_error(span,
                    "a strided or DN parameter of the entry function needs a static "
                    "shape, got " +
                        ir::shape_to_string(type.shape));
    }
  }
  const std::vector<int64_t> strides = ir::storage_strides(type.shape, type.view);
  std::vector<std::string> lines;
  lines.push_back("const int64_t " + span_var + " = " +
                  int_literal(ir::storage_span(type.shape, strides)) + ";");
  lines.push_back("PtoTensor " + name + " = rt->create_tensor(rt->ctx, " + dtype_enum(type.dtype) +
                  ", 1, &" + span_var + ");");
  lines.push_back(name + ".ndim = " + std::to_string(type.shape.size()) + ";");
  for (size_t d = 0; d < type.shape.size(); ++d) {
    const std::string at = "[" + std::to_string(d) + "] = ";
    lines.push_back(name + ".shape" + at + int_literal(type.shape[d]) + "; " + name + ".strides" +
                    at + int_literal(strides[d]) + ";");
  }
  lines.push_back("isa->copy_tensor(&" + name + ", &" + arg + ".tensor);");
  return lines;
}

std::vector<std::string> unstage_entry_param(const std::string& name, const std::string& arg) {
  return {"{",
          "  PtoArg copy_args[2] = {pto::tensor_arg(PTO_ARG_IN, " + name +
              "), pto::tensor_arg(PTO_ARG_OUT, " + arg + ".tensor)};",
          "  rt->submit(rt->ctx, \"copy\", pto::copy_task, copy_args, 2);", "}"};
}

}  // namespace pypto::codegen
