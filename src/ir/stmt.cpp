#include "pypto/ir/stmt.h"

namespace pypto::ir {

StmtPtr make_seq(std::vector<StmtPtr> stmts, Span span) {
  std::vector<StmtPtr> flat;
  flat.reserve(stmts.size());
  for (auto& s : stmts) {
    if (!s) continue;
    if (const auto* seq = s->as<SeqStmts>()) {
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat.front();
  return ir::make_node<SeqStmts>(std::move(flat), span);
}

}  // namespace pypto::ir
