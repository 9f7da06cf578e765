#include "pypto/runtime/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "pypto/support/element_ops.h"
#include "tile_simd.h"

namespace pypto::runtime {
namespace {

using ir::DataType;

// One element, kept exactly: integers as their 64-bit value (a double cannot hold every int64
// or uint64), `is_unsigned` saying whether `i` holds a uint64's bits.
struct Value {
  bool is_int = false;
  bool is_unsigned = false;
  int64_t i = 0;
  double d = 0;

  long double exact() const {
    return is_unsigned ? static_cast<long double>(static_cast<uint64_t>(i))
                       : static_cast<long double>(i);
  }
};

Value load(const HostTensor& t, int64_t n) {
  Value v;
  support::with_dtype(static_cast<int32_t>(t.dtype), [&](auto type) {
    using T = decltype(type);
    typename T::S raw;
    std::memcpy(&raw, static_cast<const uint8_t*>(t.data) + n * sizeof raw, sizeof raw);
    const auto x = T::get(raw);
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      v.d = x;
    } else {
      v.is_int = true;
      v.is_unsigned = std::is_unsigned_v<decltype(x)>;
      v.i = static_cast<int64_t>(x);
      v.d = static_cast<double>(x);
    }
  });
  return v;
}

bool matches(const Value& a, const Value& e, const CompareOptions& o) {
  if (a.is_int && e.is_int) {
    // long double holds every int64 and uint64, and their differences, exactly on x86-64
    // (64-bit mantissa).
    long double diff = std::fabs(a.exact() - e.exact());
    return diff <= o.atol + o.rtol * std::fabs(e.exact());
  }
  if (std::isnan(e.d)) return true;        // don't care
  if (std::isinf(e.d)) return a.d == e.d;  // only the same infinity (the formula allows any)
  if (std::isnan(a.d)) return false;
  return std::fabs(a.d - e.d) <= o.atol + o.rtol * std::fabs(e.d);
}

std::string format(const Value& v, DataType dtype) {
  if (v.is_int) {
    if (dtype == DataType::BOOL) return v.i ? "true" : "false";
    return v.is_unsigned ? std::to_string(static_cast<uint64_t>(v.i)) : std::to_string(v.i);
  }
  char buf[64];
  // Shortest text that reads back to the same value in the tensor's own precision.
  auto res = ir::is_float(dtype) ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v.d))
                                 : std::to_chars(buf, buf + sizeof buf, v.d);
  return std::string(buf, res.ptr);
}

std::string format_index(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t k = 0; k < index.size(); ++k) s += (k ? ", " : "") + std::to_string(index[k]);
  return s + "]";
}

std::vector<int64_t> unravel(int64_t n, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    index[k] = n % shape[k];
    n /= shape[k];
  }
  return index;
}

std::string tolerances(const CompareOptions& o) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(rtol=%g, atol=%g)", o.rtol, o.atol);
  return buf;
}

}  // namespace

CompareResult compare_tensors(const HostTensor& actual, const HostTensor& expected,
                              const CompareOptions& options) {
  CompareResult r;
  const std::string what = "output '" + (actual.name.empty() ? expected.name : actual.name) + "'";
  r.total = expected.num_elements();
  if (actual.shape != expected.shape) {
    r.ok = false;
    r.mismatches = r.total;
    r.message = what + ": shape " + format_index(actual.shape) +
                " differs from the expected shape " + format_index(expected.shape);
    return r;
  }
  // FP32 against FP32 (the common case) goes block by block through a vector check that a block
  // matches entirely; only a block where it does not is walked element by element, which counts
  // and lists its mismatches exactly as for any other dtype.
  const bool fp32 = actual.dtype == DataType::FP32 && expected.dtype == DataType::FP32;
  constexpr int64_t kBlock = 4096;
  for (int64_t start = 0; start < r.total; start += kBlock) {
    const int64_t end = std::min(r.total, start + kBlock);
    if (fp32 && simd::all_close_f32(static_cast<const float*>(actual.data) + start,
                                    static_cast<const float*>(expected.data) + start, end - start,
                                    options.rtol, options.atol))
      continue;
    for (int64_t n = start; n < end; ++n) {
      Value a = load(actual, n), e = load(expected, n);
      if (matches(a, e, options)) continue;
      if (r.first.size() < options.max_listed) {
        Mismatch m{unravel(n, expected.shape), a.d, e.d, {}};
        m.text = format_index(m.index) + ": got " + format(a, actual.dtype) + ", expected " +
                 format(e, expected.dtype);
        r.first.push_back(std::move(m));
      }
      ++r.mismatches;
    }
  }
  r.ok = r.mismatches == 0;
  if (r.ok) {
    r.message =
        what + ": all " + std::to_string(r.total) + " elements match " + tolerances(options);
    return r;
  }
  r.message = what + ": " + std::to_string(r.mismatches) + " of " + std::to_string(r.total) +
              " elements differ " + tolerances(options) + "; first mismatches: ";
  for (size_t i = 0; i < r.first.size(); ++i) r.message += (i ? "; " : "") + r.first[i].text;
  if (r.mismatches > static_cast<int64_t>(r.first.size())) {
    r.message +=
        "; ... (" + std::to_string(r.mismatches - static_cast<int64_t>(r.first.size())) + " more)";
  }
  return r;
}

}  // namespace pypto::runtime
