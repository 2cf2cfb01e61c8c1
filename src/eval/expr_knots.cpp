// The expression graph's piecewise-linear interpolation on knot tables
// (expr_graph.hpp, kPwLinear ... kHatSlope): the nodes, their exact
// derivatives in forward and reverse mode. A control's spline
// (optimal_control/control_spline.hpp) recorded as one such node is
// evaluated on the knot interval holding t, O(1) in the number of knots
// after a binary search, where a sum of ramps (x)_+ over every knot made
// each program run O(knots) (docs/optimal_control.md, "Cost").
#include <stdexcept>

#include "eval/expr_graph.hpp"

namespace daedalus::internal {

int ExprGraph::Knots(const std::vector<double>& knots) {
  if (knots.size() < 2)
    throw std::logic_error("ExprGraph: a knot table needs 2 knots");
  for (std::size_t j = 0; j + 1 < knots.size(); ++j)
    if (!(knots[j + 1] > knots[j]))
      throw std::logic_error("ExprGraph: knots must be increasing");
  const auto it = knot_index_.find(knots);
  if (it != knot_index_.end()) return it->second;
  knot_sets_.push_back(knots);
  const int k = static_cast<int>(knot_sets_.size()) - 1;
  knot_index_.emplace(knots, k);
  return k;
}

int ExprGraph::PwLinear(int t,
                        const std::vector<double>& knots,
                        const std::vector<int>& coef) {
  const int k = Knots(knots);
  if (coef.size() != knots.size())
    throw std::logic_error("ExprGraph::PwLinear: one coefficient per knot");
  return KnotNode(Op::kPwLinear, t, k, coef, 0);
}

int ExprGraph::KnotNode(
    Op op, int t, int knots, const std::vector<int>& coef, int j) {
  const std::vector<double>& kn = knot_sets_[static_cast<std::size_t>(knots)];
  const int n = static_cast<int>(kn.size());
  if (op == Op::kHat || op == Op::kHatSlope) {
    if (IsConstant(t))
      return Constant(KnotOpValue(
          op, kn.data(), n, nodes_[t].value, [](int) { return 0.0; }, j));
    return Make(op, t, knots, static_cast<double>(j));
  }
  bool all_zero = true, all_constant = IsConstant(t), all_same = true;
  for (int c : coef) {
    all_zero = all_zero && IsZero(c);
    all_constant = all_constant && IsConstant(c);
    all_same = all_same && c == coef[0];
  }
  if (all_zero) return 0;
  if (all_same) return op == Op::kPwLinear ? coef[0] : 0;
  if (all_constant)
    return Constant(KnotOpValue(
        op, kn.data(), n, nodes_[t].value,
        [&](int i) { return nodes_[coef[static_cast<std::size_t>(i)]].value; },
        0));
  const auto key = std::make_pair(knots, coef);
  auto it = table_index_.find(key);
  if (it == table_index_.end()) {
    tables_.push_back({knots, coef});
    it = table_index_.emplace(key, static_cast<int>(tables_.size()) - 1).first;
  }
  return Make(op, t, it->second, 0.0);
}

// d/dt of kPwLinear is kPwSlope on the same table; the derivative along
// the coefficients' derivatives dc is the same operation on dc (linear in
// the coefficients), or hat_i dc_i when one dc_i is non-zero (a Jacobian
// column). kPwSlope and kHatSlope are piecewise constant in t.
int ExprGraph::KnotRule(int id, const std::vector<int>& d) {
  const ExprNode n = nodes_[id];  // a copy: making nodes may reallocate
  const int dt = d[n.a];
  if (n.op == Op::kHat || n.op == Op::kHatSlope) {
    if (n.op == Op::kHatSlope || IsZero(dt)) return 0;
    return Mul(KnotNode(Op::kHatSlope, n.a, n.b, {}, static_cast<int>(n.value)),
               dt);
  }
  const KnotTable tab = tables_[static_cast<std::size_t>(n.b)];
  std::vector<int> dc(tab.coef.size(), 0);
  int nonzero = 0, last = -1;
  for (std::size_t i = 0; i < dc.size(); ++i) {
    dc[i] = d[tab.coef[i]];
    if (!IsZero(dc[i])) ++nonzero, last = static_cast<int>(i);
  }
  int r = 0;
  if (n.op == Op::kPwLinear && !IsZero(dt))
    r = Mul(KnotNode(Op::kPwSlope, n.a, tab.knots, tab.coef, 0), dt);
  if (nonzero == 1) {
    const Op hat = n.op == Op::kPwLinear ? Op::kHat : Op::kHatSlope;
    r = Add(r, Mul(KnotNode(hat, n.a, tab.knots, {}, last),
                   dc[static_cast<std::size_t>(last)]));
  } else if (nonzero > 1) {
    r = Add(r, KnotNode(n.op, n.a, tab.knots, dc, 0));
  }
  return r;
}

void ExprGraph::KnotAdjoint(int id, int g, std::vector<int>* bar) {
  const ExprNode n = nodes_[id];  // a copy: making nodes may reallocate
  auto to = [&](int node, int c) {
    (*bar)[static_cast<std::size_t>(node)] =
        Add((*bar)[static_cast<std::size_t>(node)], c);
  };
  switch (n.op) {
    case Op::kHat:
      to(n.a, Mul(g, KnotNode(Op::kHatSlope, n.a, n.b, {},
                              static_cast<int>(n.value))));
      return;
    case Op::kHatSlope:
      return;
    case Op::kPwLinear:
    case Op::kPwSlope: {
      const KnotTable tab = tables_[static_cast<std::size_t>(n.b)];
      if (n.op == Op::kPwLinear)
        to(n.a, Mul(g, KnotNode(Op::kPwSlope, n.a, tab.knots, tab.coef, 0)));
      const Op hat = n.op == Op::kPwLinear ? Op::kHat : Op::kHatSlope;
      for (std::size_t i = 0; i < tab.coef.size(); ++i)
        to(tab.coef[i],
           Mul(g, KnotNode(hat, n.a, tab.knots, {}, static_cast<int>(i))));
      return;
    }
    default:
      throw std::logic_error("ExprGraph::KnotAdjoint: not a knot operation");
  }
}

}  // namespace daedalus::internal
