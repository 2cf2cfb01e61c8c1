#include "expr_program.hpp"

#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

namespace daedalus::internal {

namespace {
// One instruction computes sin into dst and cos into dst + 1.
constexpr std::uint32_t kSinCosOp = 255;
}  // namespace

ExprProgram::ExprProgram(const ExprGraph& g,
                         const std::vector<int>& inputs,
                         const std::vector<int>& outputs)
    : num_inputs_(static_cast<int>(inputs.size())) {
  const int n = g.size();
  // The cone of the outputs.
  std::vector<char> need(static_cast<std::size_t>(n), 0);
  for (int o : outputs) need[o] = 1;
  for (int id = n - 1; id >= 0; --id) {
    if (!need[id]) continue;
    const ExprNode& nd = g.node(id);
    if (nd.a >= 0) need[nd.a] = 1;
    if (nd.b >= 0) need[nd.b] = 1;
  }
  std::vector<std::int64_t> slot(static_cast<std::size_t>(n), -1);
  for (int i = 0; i < num_inputs_; ++i) {
    const int node = g.InputNode(inputs[i]);
    if (node >= 0) slot[node] = i;
  }
  std::uint32_t next = static_cast<std::uint32_t>(num_inputs_);
  // Constants, then sin/cos partners by argument.
  std::unordered_map<int, int> sin_of, cos_of;
  for (int id = 0; id < n; ++id) {
    if (!need[id]) continue;
    const ExprNode& nd = g.node(id);
    if (nd.op == Op::kConst) {
      slot[id] = next;
      constants_.emplace_back(next, nd.value);
      ++next;
    } else if (nd.op == Op::kInput && slot[id] < 0) {
      throw std::logic_error("ExprProgram: an output needs graph input " +
                             std::to_string(static_cast<int>(nd.value)) +
                             ", which the program's inputs do not list");
    } else if (nd.op == Op::kSin) {
      sin_of[nd.a] = id;
    } else if (nd.op == Op::kCos) {
      cos_of[nd.a] = id;
    }
  }
  for (int id = 0; id < n; ++id) {
    if (!need[id] || slot[id] >= 0) continue;
    const ExprNode& nd = g.node(id);
    if (nd.op == Op::kSin || nd.op == Op::kCos) {
      const auto s = sin_of.find(nd.a), c = cos_of.find(nd.a);
      if (s != sin_of.end() && c != cos_of.end()) {
        slot[s->second] = next;
        slot[c->second] = next + 1;
        code_.push_back(
            {kSinCosOp, next, static_cast<std::uint32_t>(slot[nd.a]), 0});
        next += 2;
        continue;
      }
    }
    slot[id] = next;
    code_.push_back({static_cast<std::uint32_t>(nd.op), next,
                     static_cast<std::uint32_t>(slot[nd.a]),
                     nd.b >= 0 ? static_cast<std::uint32_t>(slot[nd.b]) : 0});
    ++next;
  }
  num_slots_ = next;
  for (int o : outputs) {
    out_slots_.push_back(static_cast<std::uint32_t>(slot[o]));
    out_zero_.push_back(g.IsZero(o) ? 1 : 0);
  }
}

void ExprProgram::InitScratch(std::vector<double>* scratch) const {
  scratch->assign(num_slots_, 0.0);
  for (const auto& [s, value] : constants_) (*scratch)[s] = value;
}

void ExprProgram::Run(const double* in, double* out, double* s) const {
  for (int i = 0; i < num_inputs_; ++i) s[i] = in[i];
  for (const Instr& c : code_) {
    const double a = s[c.a];
    double r;
    switch (c.op) {
      case static_cast<std::uint32_t>(Op::kAdd):
        r = a + s[c.b];
        break;
      case static_cast<std::uint32_t>(Op::kSub):
        r = a - s[c.b];
        break;
      case static_cast<std::uint32_t>(Op::kMul):
        r = a * s[c.b];
        break;
      case static_cast<std::uint32_t>(Op::kDiv):
        r = a / s[c.b];
        break;
      case static_cast<std::uint32_t>(Op::kNeg):
        r = -a;
        break;
      case kSinCosOp:
        s[c.dst + 1] = std::cos(a);
        r = std::sin(a);
        break;
      case static_cast<std::uint32_t>(Op::kSin):
        r = std::sin(a);
        break;
      case static_cast<std::uint32_t>(Op::kCos):
        r = std::cos(a);
        break;
      case static_cast<std::uint32_t>(Op::kTan):
        r = std::tan(a);
        break;
      case static_cast<std::uint32_t>(Op::kExp):
        r = std::exp(a);
        break;
      case static_cast<std::uint32_t>(Op::kLog):
        r = std::log(a);
        break;
      case static_cast<std::uint32_t>(Op::kSqrt):
        r = std::sqrt(a);
        break;
      case static_cast<std::uint32_t>(Op::kPow):
        r = std::pow(a, s[c.b]);
        break;
      case static_cast<std::uint32_t>(Op::kSinh):
        r = std::sinh(a);
        break;
      case static_cast<std::uint32_t>(Op::kCosh):
        r = std::cosh(a);
        break;
      case static_cast<std::uint32_t>(Op::kTanh):
        r = std::tanh(a);
        break;
      case static_cast<std::uint32_t>(Op::kAsin):
        r = std::asin(a);
        break;
      case static_cast<std::uint32_t>(Op::kAcos):
        r = std::acos(a);
        break;
      case static_cast<std::uint32_t>(Op::kAtan):
        r = std::atan(a);
        break;
      case static_cast<std::uint32_t>(Op::kAtan2):
        r = std::atan2(a, s[c.b]);
        break;
      case static_cast<std::uint32_t>(Op::kAbs):
        r = std::abs(a);
        break;
      case static_cast<std::uint32_t>(Op::kSign):
        r = a < 0.0 ? -1.0 : 1.0;
        break;
      default:
        r = std::numeric_limits<double>::quiet_NaN();
    }
    s[c.dst] = r;
  }
  const std::size_t no = out_slots_.size();
  for (std::size_t k = 0; k < no; ++k) out[k] = s[out_slots_[k]];
}

}  // namespace daedalus::internal
