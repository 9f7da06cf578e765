#include "pypto/codegen/kernel_config.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "pypto/codegen/kernel_codegen.h"
#include "pypto/codegen/orchestration_codegen.h"

namespace pypto::codegen {

namespace {

nlohmann::ordered_json param_json(const ir::Param& p) {
  nlohmann::ordered_json j;
  j["name"] = p.var->name;
  const auto& type = p.var->type();
  if (const auto* tt = type->as<ir::TensorType>()) {
    j["kind"] = "tensor";
    j["direction"] = std::string(ir::param_direction_name(p.direction));
    j["dtype"] = std::string(ir::dtype_name(tt->dtype));
    j["shape"] = tt->shape;
  } else if (const auto* st = type->as<ir::ScalarType>()) {
    j["kind"] = "scalar";
    j["direction"] = "Scalar";
    j["dtype"] = std::string(ir::dtype_name(st->dtype));
    j["shape"] = nlohmann::ordered_json::array();
  } else {
    j["kind"] = "other";
    j["type"] = ir::type_to_string(type);
  }
  return j;
}

// What `f` returns: {"kind", "dtype", "shape"} per value (a reloaded program's signature).
nlohmann::ordered_json returns_json(const ir::Function& f) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& type : f.return_types) {
    nlohmann::ordered_json j;
    if (const auto* tt = type->as<ir::TensorType>()) {
      j["kind"] = "tensor";
      j["dtype"] = std::string(ir::dtype_name(tt->dtype));
      j["shape"] = tt->shape;
    } else if (const auto* st = type->as<ir::ScalarType>()) {
      j["kind"] = "scalar";
      j["dtype"] = std::string(ir::dtype_name(st->dtype));
    } else {
      j["kind"] = "other";
      j["type"] = ir::type_to_string(type);
    }
    out.push_back(std::move(j));
  }
  return out;
}

// The tiles of a kernel grouped by the buffer they live in.
class BufferCollector {
 public:
  struct Buffer {
    int64_t addr = -1;
    int64_t size = 0;
    std::vector<std::string> values;
  };
  using Key = std::tuple<int, int64_t, int64_t>;  // space, addr, buffer id

  void var(const ir::VarPtr& v) {
    if (!v || !seen_.emplace(v.get()).second) return;
    const auto* tt = v->type()->as<ir::TileType>();
    if (!tt || !tt->memref) return;
    const auto& m = *tt->memref;
    Buffer& b = buffers_[Key{static_cast<int>(m.space), m.addr, m.buffer_id}];
    b.addr = m.addr;
    b.size = std::max(b.size, m.size);
    b.values.push_back(v->name);
  }

  void stmt(const ir::StmtPtr& s) {
    if (!s) return;
    switch (s->kind()) {
      case ir::StmtKind::Seq:
        for (const auto& c : s->as<ir::SeqStmts>()->stmts) stmt(c);
        break;
      case ir::StmtKind::Assign:
        var(s->as<ir::AssignStmt>()->var);
        break;
      case ir::StmtKind::For: {
        const auto& f = *s->as<ir::ForStmt>();
        for (const auto& v : f.iter_args) var(v);
        stmt(f.body);
        for (const auto& v : f.return_vars) var(v);
        break;
      }
      case ir::StmtKind::While: {
        const auto& w = *s->as<ir::WhileStmt>();
        for (const auto& v : w.iter_args) var(v);
        stmt(w.body);
        for (const auto& v : w.return_vars) var(v);
        break;
      }
      case ir::StmtKind::If: {
        const auto& i = *s->as<ir::IfStmt>();
        stmt(i.then_body);
        stmt(i.else_body);
        for (const auto& v : i.return_vars) var(v);
        break;
      }
      case ir::StmtKind::Scope:
        stmt(s->as<ir::ScopeStmt>()->body);
        break;
      default:
        break;
    }
  }

  const std::map<Key, Buffer>& buffers() const { return buffers_; }

 private:
  std::map<Key, Buffer> buffers_;
  std::set<const ir::Var*> seen_;
};

}  // namespace

nlohmann::ordered_json build_kernel_config(const ir::Program& program) {
  nlohmann::ordered_json j;
  j["program"] = program.name;
  ir::FunctionPtr entry = program.entry();
  j["entry"] = entry ? nlohmann::ordered_json(entry->name) : nlohmann::ordered_json(nullptr);
  j["kernels"] = nlohmann::ordered_json::array();
  j["orchestration"] = nlohmann::ordered_json::array();
  for (const auto& f : program.functions) {
    nlohmann::ordered_json fj;
    fj["name"] = f->name;
    auto params = nlohmann::ordered_json::array();
    for (const auto& p : f->params) params.push_back(param_json(p));
    fj["returns"] = returns_json(*f);
    if (ir::submits_tasks(f->type)) {
      fj["function"] = orchestration_function_name(f->name);
      fj["params"] = std::move(params);
      j["orchestration"].push_back(std::move(fj));
      continue;
    }
    fj["function"] = kernel_function_name(f->name);
    fj["params"] = std::move(params);
    BufferCollector collector;
    for (const auto& p : f->params) collector.var(p.var);
    collector.stmt(f->body);
    auto buffers = nlohmann::ordered_json::array();
    std::map<int, int64_t> peak;
    for (const auto& [key, b] : collector.buffers()) {
      auto space = static_cast<ir::MemorySpace>(std::get<0>(key));
      nlohmann::ordered_json bj;
      bj["space"] = std::string(ir::memory_space_name(space));
      bj["buffer_id"] = std::get<2>(key);
      bj["addr"] = b.addr;
      bj["size"] = b.size;
      bj["values"] = b.values;
      buffers.push_back(std::move(bj));
      int64_t end = b.addr >= 0 ? b.addr + b.size : b.size;
      peak[std::get<0>(key)] = std::max(peak[std::get<0>(key)], end);
    }
    fj["buffers"] = std::move(buffers);
    nlohmann::ordered_json pj = nlohmann::ordered_json::object();
    for (const auto& [space, bytes] : peak)
      pj[std::string(ir::memory_space_name(static_cast<ir::MemorySpace>(space)))] = bytes;
    fj["peak_bytes"] = std::move(pj);
    j["kernels"].push_back(std::move(fj));
  }
  return j;
}

}  // namespace pypto::codegen
