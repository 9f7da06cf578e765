// A Group whose kernels use cross-core pipes, as one task running its kernels together
// (cluster_codegen.h).
#include "cluster_codegen.h"

#include <unordered_map>
#include <vector>

#include "pypto/codegen/cpp_emit.h"
#include "pypto/codegen/kernel_codegen.h"
#include "pypto/codegen/orchestration_codegen.h"
#include "pypto/ir/expr.h"
#include "pypto/ir/stmt.h"
#include "pypto/ir/visitor.h"

namespace pypto::codegen {

namespace {

bool is_pipe_op_name(const std::string& op) {
  return op == "system.reserve_buffer" || op == "system.import_peer_buffer" ||
         op == "system.aic_initialize_pipe" || op == "system.aiv_initialize_pipe" ||
         op == "tpush_to_aiv" || op == "tpush_to_aic" || op == "tpop_from_aic" ||
         op == "tpop_from_aiv" || op == "system.tfree_to_aic" || op == "system.tfree_to_aiv";
}

class PipeUse : public ir::IRVisitor {
 public:
  bool found = false;
  void visit_call(const ir::Call& c) override {
    if (c.call_kind == ir::CallKind::Op && is_pipe_op_name(c.callee)) found = true;
    ir::IRVisitor::visit_call(c);
  }
};

class LaneQuery : public ir::IRVisitor {
 public:
  bool found = false;
  void visit_call(const ir::Call& c) override {
    if (c.call_kind == ir::CallKind::Op && c.callee == "get_subblock_idx") found = true;
    ir::IRVisitor::visit_call(c);
  }
};

bool reads_its_lane(const ir::Function& f) {
  LaneQuery q;
  q.visit_function(f);
  return q.found;
}

bool uses_pipes(const ir::Function& f) {
  PipeUse use;
  use.visit_function(f);
  return use.found;
}

// The kernel calls of the Group's body, in order.
std::vector<const ir::Call*> kernel_calls(const ir::Function& group) {
  std::vector<const ir::Call*> calls;
  std::vector<ir::StmtPtr> stmts;
  if (const auto* seq = group.body->as<ir::SeqStmts>()) {
    stmts = seq->stmts;
  } else {
    stmts.push_back(group.body);
  }
  for (const auto& s : stmts) {
    const ir::Call* call = nullptr;
    if (const auto* e = s->as<ir::EvalStmt>()) call = e->expr->as<ir::Call>();
    if (const auto* a = s->as<ir::AssignStmt>()) call = a->value->as<ir::Call>();
    if (call && call->call_kind != ir::CallKind::Op) {
      calls.push_back(call);
      continue;
    }
    if (s->as<ir::ReturnStmt>()) continue;
    codegen_error(s->span(), "Group '" + group.name +
                                 "' runs its kernels together over cross-core pipes, so its body "
                                 "may only call its AIC and AIV kernels and return");
  }
  return calls;
}

// Whether a function's attrs={"split": ...} names a split of the vector work.
bool splits(const ir::Function& f) {
  for (const auto& [key, text] : f.attrs.extra) {
    if (key != "split") continue;
    if (text.find("UP_DOWN") != std::string::npos || text.find("LEFT_RIGHT") != std::string::npos ||
        text == "1" || text == "2") {
      return true;
    }
  }
  return false;
}

}  // namespace

bool is_pipe_group(const ir::Program& program, const ir::Function& func) {
  if (func.type != ir::FunctionType::Group) return false;
  for (const auto& f : program.functions) {
    if (f.get() == &func || !ir::is_kernel(f->type)) continue;
    bool called = false;
    class Calls : public ir::IRVisitor {
     public:
      explicit Calls(const std::string& name, bool& called) : name_(name), called_(called) {}
      void visit_call(const ir::Call& c) override {
        if (c.call_kind != ir::CallKind::Op && c.callee == name_) called_ = true;
        ir::IRVisitor::visit_call(c);
      }

     private:
      const std::string& name_;
      bool& called_;
    } calls(f->name, called);
    calls.visit_function(func);
    if (called && uses_pipes(*f)) return true;
  }
  return false;
}

std::string generate_pipe_group(const ir::Program& program, const ir::Function& func) {
  std::unordered_map<const ir::Var*, size_t> param_index;
  for (size_t i = 0; i < func.params.size(); ++i) param_index[func.params[i].var.get()] = i;
  bool lanes_split = splits(func);
  std::string body;
  // Each member as {kernel, args, role, lane, name} without its lane: the AIC first, since it
  // runs on the task's own core, then the AIV kernels, one entry per lane.
  std::string aic_member;
  std::vector<std::string> aiv_members;
  size_t count = 0;
  for (const ir::Call* call : kernel_calls(func)) {
    ir::FunctionPtr callee = program.find_function(call->callee);
    if (!callee ||
        (callee->type != ir::FunctionType::AIC && callee->type != ir::FunctionType::AIV)) {
      codegen_error(call->span(), "Group '" + func.name +
                                      "' runs its kernels together over "
                                      "cross-core pipes: it may call pl.FunctionType.AIC and AIV "
                                      "kernels only, and '" +
                                      call->callee + "' is not one");
    }
    const bool aic = callee->type == ir::FunctionType::AIC;
    if (aic && !aic_member.empty()) {
      codegen_error(call->span(), "Group '" + func.name +
                                      "' calls a second AIC kernel; a cluster "
                                      "has one Cube core");
    }
    if (!aic && splits(*callee)) lanes_split = true;
    const std::string args = "member" + std::to_string(count++) + "_args";
    body += "  PtoArg " + args + "[" + std::to_string(call->args.size() + 1) + "];\n";
    for (size_t i = 0; i < call->args.size(); ++i) {
      const ir::ExprPtr& a = call->args[i];
      std::string value;
      if (const auto* v = a->as<ir::Var>(); v && param_index.count(v)) {
        value = "args[" + std::to_string(param_index[v]) + "]";
      } else if (const auto* k = a->as<ir::IntImm>()) {
        const auto* st = k->type()->as<ir::ScalarType>();
        value = "pto::int_arg(" + dtype_enum(st ? st->dtype : ir::DataType::INT64) + ", (int64_t)" +
                int_literal(k->value) + ")";
      } else {
        codegen_error(a->span().valid() ? a->span() : call->span(),
                      "Group '" + func.name +
                          "' runs its kernels together over cross-core pipes: "
                          "pass them the Group's own parameters or integer constants");
      }
      body += "  " + args + "[" + std::to_string(i) + "] = " + value + ";\n";
    }
    const std::string head = "{" + kernel_function_name(callee->name) + ", " + args + ", ";
    const std::string tail = ", " + string_literal(callee->name) + "}";
    if (aic) {
      aic_member = head + "PTO_PIPE_AIC, 0" + tail.substr(0, tail.size() - 1) + ", 1}";
    } else {
      // Whether the kernel tells its lanes apart (the runtime refuses what two identical lanes
      // would get wrong).
      aiv_members.push_back(head + "PTO_PIPE_AIV, %LANE%" + tail.substr(0, tail.size() - 1) +
                            (reads_its_lane(*callee) ? ", 1}" : ", 0}"));
    }
  }
  const int lanes = lanes_split ? 2 : 1;
  std::string expanded;
  size_t n = 0;
  if (!aic_member.empty()) {
    expanded += "    " + aic_member + ",\n";
    ++n;
  }
  for (const std::string& m : aiv_members) {
    for (int lane = 0; lane < lanes; ++lane) {
      std::string e = m;
      e.replace(e.find("%LANE%"), 6, std::to_string(lane));
      expanded += "    " + e + ",\n";
      ++n;
    }
  }
  const std::string cluster = "cluster_" + func.name;
  std::string out =
      "// Group '" + func.name + "': its kernels run together over cross-core pipes.\n";
  out += "static void " + cluster + "(const PtoArg* args, PtoCoreMemory* mem) {\n";
  out += body;
  out += "  const PtoClusterMember members[] = {\n" + expanded + "  };\n";
  out += "  mem->isa->pipes->run_cluster(mem, " + string_literal(func.name) + ", members, " +
         std::to_string(n) + ", " + std::to_string(lanes) + ");\n}\n\n";
  out += "static int32_t " + orchestration_function_name(func.name) +
         "(const PtoRuntimeApi* rt, const PtoArg* params, int32_t nparams) {\n";
  out += "  if (nparams != " + std::to_string(func.params.size()) + ") {\n";
  out += "    rt->fail(rt->ctx, " +
         string_literal("Group '" + func.name + "' takes " + std::to_string(func.params.size()) +
                        " arguments") +
         ");\n    return 1;\n  }\n";
  out += "  rt->submit(rt->ctx, " + string_literal(func.name) + ", " + cluster +
         ", params, nparams);\n";
  out += "  return 0;\n}\n";
  return out;
}

}  // namespace pypto::codegen
