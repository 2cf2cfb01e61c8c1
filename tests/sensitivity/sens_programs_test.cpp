// The compiled Jacobians of the sensitivity paths
// (src/formulation/sens_programs.hpp) against the dual-number tangent path
// they replace, at random states: the CVODES adjoint's f_y and f_p (and so
// its vector-Jacobian products f_y' mu, f_p' mu), the IDAS adjoint's F_p,
// and the gradient of a running functional.
//
// Tolerance 1e-13 relative to the largest entry: both paths are exact
// (symbolic against dual-number differentiation), so they differ by
// round-off only, amplified by the condition of the KKT matrix at these
// states (measured differences below 1e-14).
#include "formulation/sens_programs.hpp"

#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "daedalus/simulate.hpp"
#include "eval/compiled_model.hpp"
#include "formulation/dae_form.hpp"
#include "formulation/mechanics.hpp"
#include "formulation/ode_form.hpp"
#include "pendulum.hpp"
#include "slider_crank.hpp"

namespace daedalus {
namespace {
namespace sens_programs_test {

constexpr double kRelTol = 1e-13;

void ExpectClose(const Eigen::MatrixXd& a,
                 const Eigen::MatrixXd& b,
                 const std::string& what) {
  ASSERT_EQ(a.rows(), b.rows()) << what;
  ASSERT_EQ(a.cols(), b.cols()) << what;
  ASSERT_TRUE(a.allFinite() && b.allFinite()) << what;
  const double scale = std::max(1.0, b.cwiseAbs().maxCoeff());
  EXPECT_LE((a - b).cwiseAbs().maxCoeff(), kRelTol * scale)
      << what << "\ncompiled:\n"
      << a << "\ntangents:\n"
      << b;
}

struct Case {
  std::string name;
  Model model;
};

std::vector<Case> Models() {
  return {{"slider_crank", problems::SliderCrankProblem().model},
          {"pendulum", problems::PendulumProblem().model}};
}

TEST(SensPrograms, AdjointStateAndParameterJacobiansMatchTangents) {
  for (const Case& c : Models()) {
    for (Formulation f :
         {Formulation::kBaumgarte, Formulation::kUnstabilized}) {
      const Model& m = c.model;
      const std::string at = c.name + " " + ToString(f);
      SimulationOptions o;
      o.formulation = f;
      o.integrator = Integrator::kCvodesBdf;
      auto mech = internal::MakeMechanics(m, o, /*sparse=*/false);
      mech->SetParameters(m.default_parameters());
      internal::OdeForm form(mech.get(), o);
      auto lin = internal::KktLinearization::Make(mech->compiled(), m,
                                                  mech->rows(), o, f);
      ASSERT_NE(lin, nullptr) << at;
      const int nq = m.nq(), nv = m.nv(), n = nq + nv;
      const int np = m.num_parameters();
      std::mt19937 rng(11);
      std::uniform_real_distribution<double> U(-1.0, 1.0);
      for (int trial = 0; trial < 3; ++trial) {
        Eigen::VectorXd y(n);
        for (int i = 0; i < n; ++i) y[i] = U(rng);
        const double t = 0.3 + trial;
        // Tangents: f_y by columns, f_p by parameter directions.
        Eigen::MatrixXd fy;
        form.StateJacobian(t, y.data(), &fy);
        Eigen::MatrixXd fp(nv, np);
        form.PrepareTangents(t, y.data());
        const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
        for (int k = 0; k < np; ++k) {
          Eigen::VectorXd dp = Eigen::VectorXd::Zero(np), da;
          dp[k] = 1.0;
          form.Tangent(zero.data(), dp, &da, nullptr, nullptr);
          fp.col(k) = da;
        }
        // Compiled: -K^-1 dR/d(q, v, p) at the applied KKT solution.
        form.Accelerations(t, y.data());
        const KktResult& r = form.applied();
        ASSERT_TRUE(lin->Linearize(t, y.data(), y.data() + nq,
                                   mech->parameters(), r.vdot, r.lambda))
            << at;
        const Eigen::MatrixXd X = lin->K().solve(lin->Z());
        ExpectClose(-X.topLeftCorner(nv, n), fy.bottomRows(nv), at + " f_y");
        ExpectClose(-X.topRightCorner(nv, np), fp, at + " f_p");
        // The adjoint's products with a random mu.
        Eigen::VectorXd mu(nv);
        for (int i = 0; i < nv; ++i) mu[i] = U(rng);
        ExpectClose(-X.topLeftCorner(nv, n).transpose() * mu,
                    fy.bottomRows(nv).transpose() * mu, at + " f_y' mu");
        // K' solves agree with K's (the forward path's multiplier rows).
        const Eigen::MatrixXd E =
            Eigen::MatrixXd::Identity(nv + m.nc(), nv + m.nc());
        ExpectClose(lin->SolveTransposed(E).transpose(), lin->K().solve(E),
                    at + " K'^-1");
      }
    }
  }
}

TEST(SensPrograms, DaeParameterJacobianMatchesTheSensitivityResidual) {
  for (const Case& c : Models()) {
    for (Formulation f : {Formulation::kBaumgarte, Formulation::kUnstabilized,
                          Formulation::kGgl}) {
      const Model& m = c.model;
      const std::string at = c.name + " " + ToString(f);
      SimulationOptions o;
      o.formulation = f;
      o.integrator = Integrator::kIdas;
      SimulationOptions ad = o;  // the dual-number path
      ad.compiled = false;
      auto mech = internal::MakeMechanics(m, o, /*sparse=*/false);
      internal::DaeForm form(mech.get(), o, nullptr);
      auto fp = internal::DaeParameterJacobian::Make(mech->compiled(), m,
                                                     form.layout());
      ASSERT_NE(fp, nullptr) << at;
      const int n = form.size(), np = m.num_parameters();
      std::mt19937 rng(17);
      std::uniform_real_distribution<double> U(-1.0, 1.0);
      Eigen::VectorXd y(n), yp(n);
      for (int i = 0; i < n; ++i) y[i] = U(rng), yp[i] = U(rng);
      const Eigen::VectorXd p = m.default_parameters();
      Eigen::MatrixXd compiled;
      ASSERT_TRUE(fp->Run(0.7, y.data(), yp.data(), p, &compiled)) << at;
      Eigen::MatrixXd tangents(n, np);
      const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
      for (int k = 0; k < np; ++k) {
        Eigen::VectorXd dp = Eigen::VectorXd::Zero(np);
        dp[k] = 1.0;
        const internal::IdasTangentProbe r =
            internal::ProbeIdasTangent(m, ad, p, 0.7, y, yp, zero, zero, dp);
        ASSERT_FALSE(r.compiled) << at;
        tangents.col(k) = r.residual;
      }
      ExpectClose(compiled, tangents, at + " F_p");
    }
  }
}

TEST(SensPrograms, FunctionalGradientMatchesDualNumbers) {
  const Model m = problems::SliderCrankProblem().model;
  const auto& fun = m.data().functionals.at(0);
  ASSERT_TRUE(static_cast<bool>(fun.running));
  auto g = internal::FunctionalGradient::Make(internal::GetCompiled(m), m,
                                              fun.running);
  ASSERT_NE(g, nullptr);
  const int nq = m.nq(), nv = m.nv(), np = m.num_parameters();
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  Eigen::VectorXd q(nq), v(nv);
  for (int i = 0; i < nq; ++i) q[i] = U(rng);
  for (int i = 0; i < nv; ++i) v[i] = U(rng);
  const Eigen::VectorXd p = m.default_parameters();
  Eigen::VectorXd gy, gp;
  ASSERT_TRUE(g->Run(0.2, q.data(), v.data(), p, &gy, &gp));
  Eigen::VectorXd dual(nq + nv + np);
  for (int k = 0; k < nq + nv + np; ++k) {
    VecX<D1> qd(nq), vd(nv), pd(np);
    for (int i = 0; i < nq; ++i) qd[i] = D1(q[i], k == i ? 1.0 : 0.0);
    for (int i = 0; i < nv; ++i) vd[i] = D1(v[i], k == nq + i ? 1.0 : 0.0);
    for (int i = 0; i < np; ++i) pd[i] = D1(p[i], k == nq + nv + i ? 1.0 : 0.0);
    dual[k] = fun.running.f1(Point<D1>{qd, vd, D1(0.2, 0.0), pd}).d;
  }
  Eigen::VectorXd compiled(nq + nv + np);
  compiled << gy, gp;
  ASSERT_GT(compiled.norm(), 0.0);
  ExpectClose(compiled, dual, "dG/d(q, v, p)");
}

}  // namespace sens_programs_test
}  // namespace
}  // namespace daedalus
