// The compiled Jacobians of the sensitivity paths
// (src/formulation/sens_programs.hpp) against the dual-number tangent path
// they replace, at random states: the CVODES adjoint's f_y and f_p (and so
// its vector-Jacobian products f_y' mu, f_p' mu), those products by reverse
// mode (KktVjp) against the dense ones, reverse against forward mode on
// every operation, the IDAS adjoint's F_p, and the gradient of a running
// functional.
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
#include "eval/expr_graph.hpp"
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

// The adjoint's products by reverse mode (KktVjp) against the dense
// products with -K^-1 dR/d(q, v, p): mu_v' [a_y a_p] = -w' dR/d(q, v, p),
// w = K^-T [mu_v; 0].
TEST(SensPrograms, AdjointProductsMatchTheDenseLinearization) {
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
      auto vjp =
          internal::KktVjp::Make(mech->compiled(), m, mech->rows(), o, f);
      ASSERT_NE(lin, nullptr) << at;
      ASSERT_NE(vjp, nullptr) << at;
      const int nq = m.nq(), nv = m.nv(), n = nq + nv;
      const int np = m.num_parameters();
      ASSERT_EQ(vjp->rows(), nv + m.nc()) << at;
      std::mt19937 rng(29);
      std::uniform_real_distribution<double> U(-1.0, 1.0);
      for (int trial = 0; trial < 3; ++trial) {
        Eigen::VectorXd y(n), mu(nv);
        for (int i = 0; i < n; ++i) y[i] = U(rng);
        for (int i = 0; i < nv; ++i) mu[i] = U(rng);
        const double t = 0.2 + trial;
        form.Accelerations(t, y.data());
        const KktResult& r = form.applied();
        ASSERT_TRUE(lin->Linearize(t, y.data(), y.data() + nq,
                                   mech->parameters(), r.vdot, r.lambda))
            << at;
        const Eigen::MatrixXd X = lin->K().solve(lin->Z());
        const Eigen::VectorXd dense =
            -X.topRows(nv).transpose() * mu;  // [a_y a_p]' mu
        ASSERT_TRUE(vjp->Prepare(t, y.data(), y.data() + nq, mech->parameters(),
                                 r.vdot, r.lambda))
            << at;
        Eigen::VectorXd e = Eigen::VectorXd::Zero(vjp->rows()), prod;
        e.head(nv) = mu;
        ASSERT_TRUE(vjp->Product(vjp->SolveTransposed(e), &prod)) << at;
        ASSERT_EQ(prod.size(), n + np) << at;
        ASSERT_GT(dense.tail(np).norm(), 0.0) << at;
        ExpectClose(-prod, dense, at + " mu_v' [f_y f_p]");
        // The p entries alone (the adjoint's quadrature): the same numbers.
        auto vjp_p = internal::KktVjp::Make(mech->compiled(), m, mech->rows(),
                                            o, f, nullptr, true);
        ASSERT_NE(vjp_p, nullptr) << at;
        ASSERT_TRUE(vjp_p->Prepare(t, y.data(), y.data() + nq,
                                   mech->parameters(), r.vdot, r.lambda))
            << at;
        Eigen::VectorXd prod_p;
        ASSERT_TRUE(vjp_p->Product(vjp_p->SolveTransposed(e), &prod_p)) << at;
        ASSERT_EQ(prod_p.size(), np) << at;
        ExpectClose(-prod_p, dense.tail(np), at + " mu_v' f_p");
      }
    }
  }
}

// Reverse mode on a graph with every operation against forward mode
// (ExprGraph::Gradient against Derivative, column by column), evaluated.
TEST(SensPrograms, ReverseModeMatchesForwardModeOnEveryOperation) {
  internal::ExprGraph g;
  using internal::Op;
  const int x = g.Input(0), y = g.Input(1), z = g.Input(2);
  const int a = g.Add(g.Mul(x, y), g.Unary(Op::kSin, z));
  const int b = g.Div(g.Sub(a, g.Unary(Op::kCos, x)), g.Add(y, g.Constant(3)));
  const int c = g.Mul(g.Unary(Op::kExp, g.Neg(b)), g.Unary(Op::kTan, y));
  const int d = g.Add(g.Unary(Op::kLog, g.Add(g.Mul(x, x), g.Constant(1))),
                      g.Unary(Op::kSqrt, g.Add(g.Mul(z, z), g.Constant(2))));
  const int e = g.Add(g.Binary(Op::kPow, g.Add(x, g.Constant(2)), y),
                      g.Binary(Op::kPow, z, g.Constant(3)));
  const int h = g.Add(g.Add(g.Unary(Op::kSinh, x), g.Unary(Op::kCosh, y)),
                      g.Unary(Op::kTanh, z));
  const int k = g.Add(g.Add(g.Unary(Op::kAsin, g.Mul(g.Constant(0.3), x)),
                            g.Unary(Op::kAcos, g.Mul(g.Constant(0.2), y))),
                      g.Unary(Op::kAtan, z));
  const int l = g.Mul(g.Binary(Op::kAtan2, x, y), g.Unary(Op::kAbs, z));
  const std::vector<int> out = {a, b, c, d, e, h, k, l};
  std::vector<int> weights;
  for (std::size_t i = 0; i < out.size(); ++i)
    weights.push_back(g.Input(3 + static_cast<int>(i)));
  const std::vector<int> grad = g.Gradient(out, weights, {0, 1, 2});
  std::vector<std::vector<int>> cols;
  for (int j = 0; j < 3; ++j) {
    std::vector<int> seed(3, 0);
    seed[static_cast<std::size_t>(j)] = 1;
    cols.push_back(g.Derivative(out, seed));
  }
  std::vector<double> in = {0.7, 1.3, -0.4};
  for (std::size_t i = 0; i < out.size(); ++i)
    in.push_back(0.1 + 0.37 * static_cast<double>(i));
  const std::vector<double> val = g.Evaluate(in);
  for (int j = 0; j < 3; ++j) {
    double fwd = 0.0;
    for (std::size_t i = 0; i < out.size(); ++i)
      fwd += in[3 + i] * val[static_cast<std::size_t>(cols[j][i])];
    const double rev = val[static_cast<std::size_t>(grad[j])];
    EXPECT_NEAR(rev, fwd, kRelTol * std::max(1.0, std::abs(fwd)))
        << "input " << j;
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
