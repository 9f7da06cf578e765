#include "pypto/ir/valid_extent.h"

#include <algorithm>

namespace pypto::ir {

ExprPtr extent_within(const ExprPtr& requested, const ExprPtr& limit, const ExprPtr& offset,
                      Span span) {
  const auto off = as_const_int(offset), lim = as_const_int(limit);
  ExprPtr available;
  if (off && lim) {
    available = make_int(std::max<int64_t>(0, *lim - *off), span);
  } else if (off && *off == 0) {
    available = limit;
  } else {
    available = make_binary(BinaryOp::Max, make_int(0, span),
                            make_binary(BinaryOp::Sub, limit, offset, span), span);
  }
  const auto req = as_const_int(requested), avail = as_const_int(available);
  if (req && avail) return make_int(std::min(*req, *avail), span);
  return make_binary(BinaryOp::Min, requested, available, span);
}

}  // namespace pypto::ir
