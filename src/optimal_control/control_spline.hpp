// The spline of one control channel (include/daedalus/optimal_control.hpp,
// ControlBasis), evaluated at every scalar type the model uses.
//
// Piecewise linear, tc = t clamped to [tau_0, tau_{K-1}]:
//   u = c_0 + sum_j (c_{j+1} - c_j) / h_j (r_j - r_{j+1}),  r_j = (tc -
//   tau_j)_+
// (r_j - r_{j+1} is tc - tau_j clamped to [0, h_j]).
// Cubic B-spline: B_j centred on tau_j, on the grid extended by three end
// spacings on each side, as the divided difference
//   B_j(t) = (e_{j+2} - e_{j-2}) [e_{j-2}, ..., e_{j+2}] (. - t)_+^3
// with t clamped to the support first (outside it the five terms would
// cancel with a large round-off); the splines centred on tau_{-1} and
// tau_K carry c_0 and c_{K-1}.
// The recording scalar (Sym) cannot branch on t: the piecewise-linear
// spline records as one node of the expression graph (ExprGraph::PwLinear,
// eval/expr_knots.cpp) that the programs evaluate on the knot interval
// holding t, the cubic one as ramps (x)_+ = (x + |x|) / 2 and min/max by
// |.| over every knot; doubles and dual numbers branch on the value of t
// and touch the 2 (linear) or 4 (cubic) splines that are non-zero there.
// All give the same function.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "daedalus/optimal_control.hpp"
#include "eval/expr_graph.hpp"

namespace daedalus::internal {

class ControlSpline {
 public:
  explicit ControlSpline(const ControlChannel& ch)
      : linear_(ch.basis == ControlBasis::kPiecewiseLinear), tau_(ch.knots) {
    const int k = static_cast<int>(tau_.size());
    if (k < 2)
      throw std::invalid_argument("control '" + ch.input +
                                  "': " + std::to_string(k) +
                                  " knots; give at least 2");
    for (int j = 0; j + 1 < k; ++j) {
      if (!(tau_[j + 1] > tau_[j]) || !std::isfinite(tau_[j + 1]))
        throw std::invalid_argument(
            "control '" + ch.input + "': knots must be finite and strictly " +
            "increasing; knot " + std::to_string(j + 1) + " (" +
            std::to_string(tau_[j + 1]) + ") follows " +
            std::to_string(tau_[j]));
    }
    // The extended grid e_{-3} .. e_{K+2} (index + 3) and each spline's
    // divided-difference weights.
    const double h0 = tau_[1] - tau_[0], h1 = tau_[k - 1] - tau_[k - 2];
    for (int j = 3; j >= 1; --j) ext_.push_back(tau_[0] - j * h0);
    ext_.insert(ext_.end(), tau_.begin(), tau_.end());
    for (int j = 1; j <= 3; ++j) ext_.push_back(tau_[k - 1] + j * h1);
    for (int j = -1; j <= k; ++j) {
      std::array<double, 5> w{};
      const double* e = &ext_[static_cast<size_t>(j - 2 + 3)];
      for (int a = 0; a < 5; ++a) {
        double den = 1.0;
        for (int l = 0; l < 5; ++l)
          if (l != a) den *= e[a] - e[l];
        w[static_cast<size_t>(a)] = (e[4] - e[0]) / den;
      }
      weights_.push_back(w);
    }
  }

  int size() const { return static_cast<int>(tau_.size()); }

  /// The times outside which u does not depend on coefficient j: the
  /// support of its splines (tau_{j-1} .. tau_{j+1} linear, tau_{j-2} ..
  /// tau_{j+2} cubic), unbounded where it reaches an end of the grid (u
  /// holds its end value beyond).
  std::pair<double, double> Support(int j) const {
    const int k = size();
    const int reach = linear_ ? 1 : 2;
    const double inf = std::numeric_limits<double>::infinity();
    return {j - reach <= 0 ? -inf : tau_[static_cast<size_t>(j - reach)],
            j + reach >= k - 1 ? inf : tau_[static_cast<size_t>(j + reach)]};
  }
  const std::vector<double>& knots() const { return tau_; }

  /// u(t) with coefficient j given by coef(j), at scalar type S.
  template <class S, class C>
  S Evaluate(const S& t, C coef) const {
    return Value(t, coef, [](const S& x) { return x; });
  }

  /// The same with the scalar type deduced from `t` (`id` only fixes it).
  template <class S, class C, class Id>
  S Value(const S& t, C coef, Id /*id*/) const {
    const int k = size();
    if constexpr (std::is_same_v<S, Sym>) {
      if (linear_) {
        // One node on the knot table (ExprGraph::PwLinear), evaluated on
        // the interval holding t as the branch below.
        std::vector<int> c(static_cast<std::size_t>(k));
        for (int j = 0; j < k; ++j)
          c[static_cast<std::size_t>(j)] = S(coef(j)).node();
        return Sym::FromNode(ActiveGraph().PwLinear(t.node(), tau_, c));
      }
    }
    const S tc = Clamp(t, tau_[0], tau_[k - 1]);
    if (linear_) {
      if constexpr (!std::is_same_v<S, Sym>) {
        const int j = Interval(Plain(tc));
        const double h = tau_[j + 1] - tau_[j];
        const S a = S(coef(j)), b = S(coef(j + 1));
        return a + (b - a) * ((tc - tau_[j]) / h);
      }
    }
    S u = S(0.0);
    if constexpr (std::is_same_v<S, Sym>) {
      for (int j = -1; j <= k; ++j) u += S(coef(Folded(j))) * Basis(j, tc);
    } else {
      const int i = Interval(Plain(tc));
      for (int j = i - 1; j <= i + 2; ++j)
        u += S(coef(Folded(j))) * Basis(j, tc);
    }
    return u;
  }

 private:
  template <class S>
  static double Plain(const S& x) {
    if constexpr (std::is_same_v<S, double>) {
      return x;
    } else {
      return daedalus::Value(x);
    }
  }
  // (x)_+.
  template <class S>
  static S Ramp(const S& x) {
    if constexpr (std::is_same_v<S, Sym>) {
      return 0.5 * (x + abs(x));
    } else {
      return Plain(x) > 0.0 ? x : S(0.0);
    }
  }
  // t clamped to [a, b].
  template <class S>
  static S Clamp(const S& t, double a, double b) {
    if constexpr (std::is_same_v<S, Sym>) {
      const S lo = 0.5 * (t + a + abs(t - a));  // max(t, a)
      return 0.5 * (lo + b - abs(lo - b));      // min(lo, b)
    } else {
      const double v = Plain(t);
      if (v < a) return S(a);
      if (v > b) return S(b);
      return t;
    }
  }
  // The knot interval [tau_j, tau_{j+1}] holding t (t in [tau_0, tau_K-1]).
  int Interval(double t) const {
    return internal::KnotInterval(tau_.data(), size(), t);
  }
  // The coefficient of spline j (j = -1 .. K: the outer two fold in).
  int Folded(int j) const { return j < 0 ? 0 : (j >= size() ? size() - 1 : j); }
  // B_j(t), j = -1 .. K.
  template <class S>
  S Basis(int j, const S& t) const {
    const double* e = &ext_[static_cast<size_t>(j - 2 + 3)];
    const auto& w = weights_[static_cast<size_t>(j + 1)];
    const S tc = Clamp(t, e[0], e[4]);
    S b = S(0.0);
    for (int a = 0; a < 5; ++a) {
      const S r = Ramp<S>(S(e[a]) - tc);
      b += w[static_cast<size_t>(a)] * (r * r * r);
    }
    return b;
  }

  bool linear_;
  std::vector<double> tau_;
  std::vector<double> ext_;                     // K + 6
  std::vector<std::array<double, 5>> weights_;  // K + 2
};

}  // namespace daedalus::internal
