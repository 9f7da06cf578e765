// function_program (compile.h): a function of a program with what it calls.
#include <set>
#include <string>
#include <vector>

#include "pypto/driver/compile.h"
#include "pypto/ir/node_memory.h"
#include "pypto/ir/visitor.h"

namespace pypto::driver {
namespace {

// The functions a body calls, each once, in the order first seen.
class CalleeCollector : public ir::IRVisitor {
 public:
  std::vector<std::string> order;
  std::set<std::string> seen;

 protected:
  void visit_call(const ir::Call& c) override {
    if (c.call_kind == ir::CallKind::Function && seen.insert(c.callee).second) {
      order.push_back(c.callee);
    }
    ir::IRVisitor::visit_call(c);
  }
};

}  // namespace

ir::ProgramPtr function_program(const ir::Program& program, const std::string& root) {
  CalleeCollector collector;
  collector.seen.insert(root);
  collector.order.push_back(root);
  for (size_t i = 0; i < collector.order.size(); ++i) {
    ir::FunctionPtr f = program.find_function(collector.order[i]);
    if (f) collector.visit_function(*f);
  }
  std::vector<ir::FunctionPtr> functions;
  for (const auto& f : program.functions) {
    if (collector.seen.count(f->name)) functions.push_back(f);
  }
  auto result =
      ir::make_node<ir::Program>(program.name + "_" + root, std::move(functions), program.source);
  result->target = program.target;
  return result;
}

}  // namespace pypto::driver
