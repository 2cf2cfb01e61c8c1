// Stormer-Verlet, implicit symplectic Euler and RATTLE
// (include/daedalus/symplectic.hpp, docs/analysis.md).
#include "daedalus/symplectic.hpp"

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "daedalus/dynamics.hpp"
#include "eval/chart.hpp"
#include "integrate/symplectic_step.hpp"

namespace daedalus {

namespace {

using internal::Combine;
using internal::Evaluator;
using internal::Tangents;

bool IsSymplectic(Integrator i) {
  return i == Integrator::kStormerVerlet || i == Integrator::kSymplecticEuler ||
         i == Integrator::kRattle;
}

}  // namespace

namespace internal {

bool Fits(const Model& model,
          Integrator integrator,
          Evaluator* ev,
          double t,
          const Eigen::VectorXd& q,
          const Eigen::VectorXd& v,
          std::string* why) {
  const std::string scheme = ToString(integrator);
  const std::string where =
      "--integrator " + scheme + " does not fit model '" + model.name() + "': ";
  auto fail = [&](const std::string& m) {
    if (why) *why = where + m;
    return false;
  };
  if (model.has_damping())
    return fail(
        "it declares damping (dissipation contracts phase-space area, so no "
        "symplectic map reproduces it); use a SUNDIALS integrator "
        "(cvodes-bdf, cvodes-adams, idas)");
  for (const auto& c : model.constraints()) {
    if (c.kind == ConstraintKind::kNonholonomic)
      return fail("constraint '" + c.name +
                  "' is nonholonomic (the flow is not Hamiltonian); use a "
                  "SUNDIALS integrator");
    if (integrator != Integrator::kRattle)
      return fail("constraint '" + c.name + "' needs a constrained scheme; " +
                  (c.kind == ConstraintKind::kMoving
                       ? std::string("it moves, so use a SUNDIALS integrator")
                       : std::string("use --integrator rattle")));
    if (c.kind == ConstraintKind::kMoving)
      return fail("constraint '" + c.name +
                  "' moves (Phi_t != 0); RATTLE needs stationary holonomic "
                  "constraints; use a SUNDIALS integrator");
  }
  // Forces must not depend on v: directional derivatives along each e_j.
  const auto& d = model.data();
  const int n = model.nv();
  {
    VecX<D1> q1(model.nq()), v1(n), col;
    for (int i = 0; i < model.nq(); ++i) q1[i] = D1(q[i], 0.0);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) v1[i] = D1(v[i], i == j ? 1.0 : 0.0);
      const Point<D1> x{q1, v1, D1(t, 0.0), ev->p1};
      for (const auto& in : d.inputs) {
        in.column.f1(x, col);
        bool dep = in.value.f1(x).d != 0.0;
        for (Eigen::Index r = 0; r < col.size(); ++r) dep |= col[r].d != 0.0;
        if (dep)
          return fail("input '" + in.name + "' depends on the velocity of '" +
                      model.velocity_names()[j] +
                      "' (a velocity-dependent force is not a Hamiltonian "
                      "kick); use a SUNDIALS integrator");
      }
      if (d.other_loads) {
        d.other_loads.f1(x, col);
        for (Eigen::Index r = 0; r < col.size(); ++r) {
          if (col[r].d != 0.0)
            return fail(
                "the other loads depend on the velocity of '" +
                model.velocity_names()[j] +
                "' (not a Hamiltonian kick); use a SUNDIALS integrator");
        }
      }
    }
  }
  if (!d.quaternions.empty() && (integrator == Integrator::kStormerVerlet ||
                                 integrator == Integrator::kRattle)) {
    // Quaternions (the Lie-group schemes of fixed_step.cpp): the kicks take
    // the velocity-dependent inertial forces implicitly, and need M
    // constant in the velocities. Checked at q rotated along each chart
    // direction by 0.7 rad and at v and v + 1, to the round-off of M.
    Workspace ws(model);
    ws.use_compiled = false;
    ws.SetParameters(ev->p0);
    ws.SetState(t, q, v);
    EvaluateAll(&ws);
    const Eigen::MatrixXd M0 = ws.M;
    const double tol = 64.0 * kEps * M0.cwiseAbs().maxCoeff();
    const Eigen::VectorXd v2 = v + Eigen::VectorXd::Ones(n);
    for (int k = 0; k < n; ++k) {
      Eigen::VectorXd qk = q, dxi = Eigen::VectorXd::Zero(n);
      dxi[k] = 0.7;
      Retract(d, dxi, qk);
      ws.SetState(t, qk, k % 2 ? v : v2);
      EvaluateAll(&ws);
      const double dm = (ws.M - M0).cwiseAbs().maxCoeff();
      if (!(dm <= tol))
        return fail(
            "its mass matrix depends on the configuration (by " +
            std::to_string(dm) + " along the velocity '" +
            model.velocity_names()[k] +
            "'), and with quaternions the Lie-group Stormer-Verlet and "
            "RATTLE need it constant; use --integrator symplectic-euler" +
            (model.nc() > 0 ? std::string(" after removing the constraints, "
                                          "or a SUNDIALS integrator")
                            : std::string()));
    }
    return true;
  }
  if (integrator == Integrator::kStormerVerlet ||
      integrator == Integrator::kRattle) {
    // Separable: L_qv == 0, i.e. M independent of q and no q-dependent
    // terms linear in v. Checked at v and at v + 1 (v = 0 hides M(q)).
    const Eigen::VectorXd v2 = v + Eigen::VectorXd::Ones(n);
    for (const Eigen::VectorXd* vv : {&v, &v2}) {
      const Eigen::MatrixXd Lqv = ev->Hessian(t, q, *vv, false);
      if (Lqv.cwiseAbs().maxCoeff() != 0.0)
        return fail(
            "its Hamiltonian is not separable (the mass matrix or a term "
            "linear in v depends on q: d2L/dq dv != 0 at t = " +
            std::to_string(t) + "); use --integrator symplectic-euler" +
            (model.nc() > 0 ? std::string(" after reducing the constraints, "
                                          "or a SUNDIALS integrator")
                            : std::string()));
    }
  }
  return true;
}

}  // namespace internal

CanonicalState SymplecticEulerStep(const Model& model,
                                   const Eigen::VectorXd& params,
                                   double t,
                                   double h,
                                   const CanonicalState& x,
                                   EulerMomentum variant) {
  Evaluator ev(model, params);
  VecX<double> q = x.q, p = x.p;
  const Eigen::VectorXd guess =
      ev.Velocity<double>(t, q, p, Eigen::VectorXd::Zero(model.nv()));
  ev.EulerStep<double>(t, h, &q, &p, variant, guess);
  return {q, p};
}

Eigen::MatrixXd SymplecticEulerStepJacobian(const Model& model,
                                            const Eigen::VectorXd& params,
                                            double t,
                                            double h,
                                            const CanonicalState& x,
                                            EulerMomentum variant) {
  Evaluator ev(model, params);
  const int n = model.nv();
  const Eigen::VectorXd guess =
      ev.Velocity<double>(t, x.q, x.p, Eigen::VectorXd::Zero(n));
  Eigen::MatrixXd jac(2 * n, 2 * n);
  for (int k = 0; k < 2 * n; ++k) {
    Eigen::VectorXd dq = Eigen::VectorXd::Zero(n), dp = dq;
    if (k < n) {
      dq[k] = 1.0;
    } else {
      dp[k - n] = 1.0;
    }
    VecX<D1> q = Combine<D1>(x.q, dq), p = Combine<D1>(x.p, dp);
    ev.EulerStep<D1>(t, h, &q, &p, variant, guess);
    jac.col(k).head(n) = Tangents(q);
    jac.col(k).tail(n) = Tangents(p);
  }
  return jac;
}

Eigen::VectorXd MomentumAt(const Model& model,
                           const Eigen::VectorXd& params,
                           double t,
                           const Eigen::VectorXd& q,
                           const Eigen::VectorXd& v) {
  Evaluator ev(model, params);
  return ev.Grad<double>(t, q, v, true);
}

Eigen::VectorXd VelocityAt(const Model& model,
                           const Eigen::VectorXd& params,
                           double t,
                           const Eigen::VectorXd& q,
                           const Eigen::VectorXd& p) {
  Evaluator ev(model, params);
  return ev.Velocity<double>(t, q, p, Eigen::VectorXd::Zero(model.nv()));
}

bool SchemeFits(const Model& model,
                Integrator integrator,
                const Eigen::VectorXd& params,
                double t,
                const Eigen::VectorXd& q,
                const Eigen::VectorXd& v,
                std::string* why) {
  if (!IsSymplectic(integrator)) {
    if (why)
      *why = std::string(ToString(integrator)) +
             " is not a structure-preserving scheme";
    return false;
  }
  Evaluator ev(model, params);
  return internal::Fits(model, integrator, &ev, t, q, v, why);
}

EnergyBehaviour AnalyzeEnergy(const std::vector<Sample>& samples,
                              double window) {
  EnergyBehaviour e;
  const size_t n = samples.size();
  if (n == 0) return e;
  const size_t w = std::max<size_t>(1, static_cast<size_t>(window * n));
  double st = 0, se = 0, stt = 0, ste = 0;
  for (size_t i = 0; i < n; ++i) {
    const double t = samples[i].t, r = samples[i].energy_residual;
    e.max_error = std::max(e.max_error, std::abs(r));
    if (i < w) e.early_max = std::max(e.early_max, std::abs(r));
    if (i + w >= n) e.late_max = std::max(e.late_max, std::abs(r));
    st += t;
    se += r;
    stt += t * t;
    ste += t * r;
  }
  const double dn = static_cast<double>(n);
  const double den = dn * stt - st * st;
  e.drift_rate = den > 0.0 ? (dn * ste - st * se) / den : 0.0;
  e.final_error = samples.back().energy_residual;
  return e;
}

}  // namespace daedalus
