#include "eval/function_derivatives.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "eval/chart.hpp"

namespace daedalus::internal {

namespace {

// The dual-number point at x along d (empty components of d are zero),
// with the quaternions normalized in dual arithmetic.
struct DerivDualPoint {
  VecX<D1> q, v, p, qn;
  D1 t;
  DerivDualPoint(const ModelData& md,
                 const StatePoint& x,
                 const StateDirection& d)
      : q(x.q.size()), v(x.v.size()), p(x.p.size()) {
    auto at = [](const Eigen::VectorXd& dv, Eigen::Index i) {
      return dv.size() > i ? dv[i] : 0.0;
    };
    for (Eigen::Index i = 0; i < q.size(); ++i) q[i] = D1(x.q[i], at(d.q, i));
    for (Eigen::Index i = 0; i < v.size(); ++i) v[i] = D1(x.v[i], at(d.v, i));
    for (Eigen::Index i = 0; i < p.size(); ++i) p[i] = D1(x.p[i], at(d.p, i));
    t = D1(x.t, d.t);
    qn = UserCoordinates(md, q, static_cast<int>(x.v.size()));
  }
  Point<D1> point() const { return Point<D1>{qn, v, t, p}; }
};

// The unit direction number k of the 1 + nq + nv + np partials.
StateDirection DerivUnit(const StatePoint& x, Eigen::Index k) {
  StateDirection d;
  const Eigen::Index nq = x.q.size(), nv = x.v.size();
  if (k == 0) {
    d.t = 1.0;
  } else if (k <= nq) {
    d.q = Eigen::VectorXd::Unit(nq, k - 1);
  } else if (k <= nq + nv) {
    d.v = Eigen::VectorXd::Unit(nv, k - 1 - nq);
  } else {
    d.p = Eigen::VectorXd::Unit(x.p.size(), k - 1 - nq - nv);
  }
  return d;
}

[[noreturn]] void DerivNotFinite(const std::string& what,
                                 const StatePoint& x,
                                 Eigen::Index k) {
  std::ostringstream os;
  os << what << ": a non-finite derivative (partial number " << k
     << ") at t = " << x.t;
  throw std::runtime_error(os.str());
}

}  // namespace

double ValueAt(const ModelData& md, const ScalarFn& fn, const StatePoint& x) {
  const Eigen::VectorXd qn =
      UserCoordinates(md, x.q, static_cast<int>(x.v.size()));
  return fn.f0(Point<double>{qn, x.v, x.t, x.p});
}

double DerivativeAlong(const ModelData& md,
                       const ScalarFn& fn,
                       const StatePoint& x,
                       const StateDirection& d) {
  const DerivDualPoint dp(md, x, d);
  return fn.f1(dp.point()).d;
}

ScalarGradient GradientAt(const ModelData& md,
                          const ScalarFn& fn,
                          const StatePoint& x,
                          const std::string& what) {
  const Eigen::Index nq = x.q.size(), nv = x.v.size(), np = x.p.size();
  ScalarGradient g;
  g.value = ValueAt(md, fn, x);
  g.dq.resize(nq);
  g.dv.resize(nv);
  g.dp.resize(np);
  for (Eigen::Index k = 0; k < 1 + nq + nv + np; ++k) {
    const double d = DerivativeAlong(md, fn, x, DerivUnit(x, k));
    if (!std::isfinite(d)) DerivNotFinite(what, x, k);
    if (k == 0)
      g.dt = d;
    else if (k <= nq)
      g.dq[k - 1] = d;
    else if (k <= nq + nv)
      g.dv[k - 1 - nq] = d;
    else
      g.dp[k - 1 - nq - nv] = d;
  }
  return g;
}

void StateGradientAt(const ModelData& md,
                     const ScalarFn& fn,
                     const StatePoint& x,
                     const std::string& what,
                     Eigen::VectorXd* gy,
                     Eigen::VectorXd* gp) {
  const Eigen::Index nq = x.q.size(), nv = x.v.size(), np = x.p.size();
  gy->resize(nq + nv);
  gp->resize(np);
  const auto& support = md.parameter_time_support;  // ParameterTimeSupport
  for (Eigen::Index k = 1; k < 1 + nq + nv + np; ++k) {
    if (k > nq + nv && !support.empty()) {
      const auto& s = support[static_cast<size_t>(k - 1 - nq - nv)];
      if (x.t < s.first || x.t > s.second) {
        (*gp)[k - 1 - nq - nv] = 0.0;  // declared: fn does not read it
        continue;
      }
    }
    const double d = DerivativeAlong(md, fn, x, DerivUnit(x, k));
    if (!std::isfinite(d)) DerivNotFinite(what, x, k);
    if (k <= nq + nv)
      (*gy)[k - 1] = d;
    else
      (*gp)[k - 1 - nq - nv] = d;
  }
}

VectorJacobian JacobianAt(const ModelData& md,
                          const VectorFn& fn,
                          const StatePoint& x,
                          const std::string& what) {
  const Eigen::Index nq = x.q.size(), nv = x.v.size(), np = x.p.size();
  VectorJacobian J;
  {
    const Eigen::VectorXd qn = UserCoordinates(md, x.q, static_cast<int>(nv));
    fn.f0(Point<double>{qn, x.v, x.t, x.p}, J.value);
  }
  const Eigen::Index m = J.value.size();
  J.dt.resize(m);
  J.dq.resize(m, nq);
  J.dv.resize(m, nv);
  J.dp.resize(m, np);
  VecX<D1> out;
  for (Eigen::Index k = 0; k < 1 + nq + nv + np; ++k) {
    const DerivDualPoint dp(md, x, DerivUnit(x, k));
    fn.f1(dp.point(), out);
    if (out.size() != m) {
      std::ostringstream os;
      os << what << ": " << out.size() << " rows with dual numbers, " << m
         << " with doubles";
      throw std::runtime_error(os.str());
    }
    Eigen::VectorXd col(m);
    for (Eigen::Index i = 0; i < m; ++i) {
      col[i] = out[i].d;
      if (!std::isfinite(col[i])) DerivNotFinite(what, x, k);
    }
    if (k == 0)
      J.dt = col;
    else if (k <= nq)
      J.dq.col(k - 1) = col;
    else if (k <= nq + nv)
      J.dv.col(k - 1 - nq) = col;
    else
      J.dp.col(k - 1 - nq - nv) = col;
  }
  return J;
}

}  // namespace daedalus::internal
