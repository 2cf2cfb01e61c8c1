// Quaternion models (nq != nv) on the sparse evaluator and KKT path and on
// the fixed-step schemes (docs/support.md, "Models with quaternions"): the
// sparse evaluation against the dense one at random states, runs on both
// paths against each other, the heavy top's closed-form steady precession
// and conserved momenta, the free body's conserved energy and angular
// momentum, and the fixed-step schemes' orders of convergence against a
// tight CVODES reference.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <random>

#include "daedalus/dynamics.hpp"
#include "daedalus/quaternion.hpp"
#include "daedalus/simulate.hpp"
#include "daedalus/sparse_dynamics.hpp"
#include "free_body.hpp"
#include "golfer_3d.hpp"
#include "heavy_top.hpp"
#include "support/quaternion_models.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace quaternion_paths_test {

using Eigen::Matrix3d;
using Eigen::Vector3d;
using testing::AsymmetricInertia;
using testing::PinnedFreeBody;
using testing::PivotTop;
using testing::RandomQuaternion;

constexpr double kMass = testing::kQuatMass, kGravity = testing::kQuatGravity;
const Vector3d kCom = testing::TopCentreOfMass();  // pivot to centre, body

double RelDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  const double s = b.cwiseAbs().maxCoeff();
  return (a - b).cwiseAbs().maxCoeff() / (s > 0.0 ? s : 1.0);
}

// The sparse evaluator seeds the chart direction by direction
// (src/eval/sparse_chart.hpp); the dense one differentiates through the
// whole chart at once. Same derivatives of the same functions in another
// order: agreement to a few ulps of the largest entry, asserted 1e-13
// (measured, printed: at most ~1e-15). Quaternions of norm 1.3 on every
// other trial (the functions see them normalized on both paths).
TEST(QuaternionSparse, EvaluatorAgreesWithTheDenseOneAtRandomStates) {
  const problems::Golfer3d golfer = problems::MakeGolfer3d();
  const Model models[] = {PinnedFreeBody(AsymmetricInertia(), -kCom, false),
                          PinnedFreeBody(AsymmetricInertia(), -kCom, true),
                          PivotTop(AsymmetricInertia(), kCom, kGravity),
                          golfer.problem.model};
  std::mt19937 rng(17);
  std::normal_distribution<double> n(0.0, 1.0);
  for (const Model& m : models) {
    double worst = 0.0;
    for (int trial = 0; trial < 10; ++trial) {
      Eigen::VectorXd q(m.nq()), v(m.nv());
      for (int i = 0; i < m.nq(); ++i) q[i] = 0.3 * n(rng);
      for (int i = 0; i < m.nv(); ++i) v[i] = 2.0 * n(rng);
      for (const auto& b : m.quaternions())
        q.segment<4>(b.q) = RandomQuaternion(&rng, trial % 2 ? 1.3 : 1.0);
      Workspace dense(m);
      dense.use_compiled = false;
      dense.SetParameters(m.default_parameters());
      dense.SetState(0.3, q, v);
      EvaluateAll(&dense);
      SparseWorkspace sparse(m);
      sparse.SetParameters(m.default_parameters());
      sparse.SetState(0.3, q, v);
      EvaluateSparseAll(&sparse);
      const struct {
        const char* what;
        Eigen::MatrixXd a, b;
      } pairs[] = {
          {"M", Eigen::MatrixXd(sparse.M), dense.M},
          {"h", sparse.h, dense.h},
          {"momentum", sparse.momentum, dense.momentum},
          {"J", Eigen::MatrixXd(sparse.J), dense.J},
          {"phi", sparse.phi, dense.phi},
          {"bias", sparse.bias, dense.bias},
          {"J v + Phi_t", sparse.vel_residual, dense.vel_residual},
      };
      for (const auto& p : pairs) {
        if (p.b.size() == 0) continue;
        const double d = RelDiff(p.a, p.b);
        worst = std::max(worst, d);
        EXPECT_LT(d, 1e-13)
            << m.name() << " trial " << trial << ": " << p.what << "\n"
            << p.a << "\nvs\n"
            << p.b;
      }
      EXPECT_NEAR(sparse.energy, dense.energy,
                  1e-13 * (1.0 + std::abs(dense.energy)))
          << m.name();
    }
    std::printf(
        "%s: sparse vs dense evaluation, largest relative "
        "difference %.1e\n",
        m.name().c_str(), worst);
  }
}

SimulationOptions Options(Formulation f, Integrator i, double t_end) {
  SimulationOptions o;
  o.formulation = f;
  o.integrator = i;
  o.t_end = t_end;
  o.output_step = t_end;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  return o;
}

// The pinned body (the heavy top about its pin) on the sparse KKT path
// against the dense path, formulation by formulation. The integrators
// take other steps on the two paths (BDF's Newton systems by GMRES with
// the sparse preconditioner against a dense LU; Adams by fixed-point
// iteration against Newton), so the runs agree to their tolerance, not
// to round-off: 1e-7 on q and w after 1 s at rtol 1e-10 (index 3: 1e-5,
// its velocities outside the error test); measured (printed) 5e-11 to
// 7.5e-10 on q, 4e-10 to 4e-9 on v, index 3 6e-8 and 3e-6. The pin holds
// and the quaternion stays unit on both. (The evaluations themselves
// agree to round-off: EvaluatorAgreesWithTheDenseOneAtRandomStates.)
TEST(QuaternionSparse, RunsAgreeWithTheDensePath) {
  const Model m = PinnedFreeBody(AsymmetricInertia(), -kCom, true);
  const Eigen::Vector4d q0 = Eigen::Vector4d(0.9, 0.3, -0.2, 0.1).normalized();
  const Vector3d w0(0.5, -1.0, 6.0);
  const Matrix3d R0 = RotationAt<double>(Eigen::VectorXd(q0), 0);
  Eigen::VectorXd q(7), v(6);
  q << R0 * kCom, q0;
  v << R0 * w0.cross(kCom), w0;
  const struct {
    Formulation f;
    Integrator i;
  } cells[] = {{Formulation::kBaumgarte, Integrator::kCvodesAdams},
               {Formulation::kUnstabilized, Integrator::kCvodesBdf},
               {Formulation::kProjection, Integrator::kCvodesBdf},
               {Formulation::kBaumgarte, Integrator::kIdas},
               {Formulation::kGgl, Integrator::kIdas},
               {Formulation::kIndex3, Integrator::kIdas}};
  for (const auto& c : cells) {
    const std::string cell = std::string(ToString(c.f)) + "/" + ToString(c.i);
    SimulationOptions o = Options(c.f, c.i, 1.0);
    o.kkt.method = KktMethod::kSchur;
    const SimulationSummary dense =
        Simulate(m, InitialState{q, v}, m.default_parameters(), o);
    o.kkt.method = KktMethod::kSparseLu;
    const SimulationSummary sparse =
        Simulate(m, InitialState{q, v}, m.default_parameters(), o);
    ASSERT_TRUE(dense.ok) << cell << ": " << dense.error;
    ASSERT_TRUE(sparse.ok) << cell << ": " << sparse.error;
    const double tol = c.f == Formulation::kIndex3 ? 1e-5 : 1e-7;
    const double dq = (sparse.final.q - dense.final.q).cwiseAbs().maxCoeff();
    const double dv = (sparse.final.v - dense.final.v).cwiseAbs().maxCoeff();
    std::printf("%s: sparse vs dense after 1 s: |dq| %.1e, |dv| %.1e\n",
                cell.c_str(), dq, dv);
    EXPECT_LT(dq, tol) << cell;
    EXPECT_LT(dv, 100 * tol) << cell;
    EXPECT_LT(sparse.drift_position_max,
              c.f == Formulation::kBaumgarte ? 1e-7 : 1e-9)
        << cell;
    EXPECT_LT(sparse.drift_quaternion_max,
              c.f == Formulation::kProjection ? 1e-14 : 1e-7)
        << cell;
    EXPECT_NEAR(sparse.final.energy, dense.final.energy,
                (c.f == Formulation::kIndex3 ? 1e-6 : 1e-8) *
                    std::abs(dense.final.energy))
        << cell;
  }
}

// The catalogue's free_body on the sparse path: it flips (w2 changes
// sign) while T and the world angular momentum R I w stay at their
// initial values at every sample, to 1e-8 relative (100 rtol over the
// run's ~4 flips, as on the dense path, quaternion_test.cpp).
TEST(QuaternionSparse, FreeBodyConservesEnergyAndAngularMomentum) {
  const Problem p = problems::FreeBodyProblem();
  const Eigen::VectorXd par = p.model.default_parameters();
  const Matrix3d I = Vector3d(par[0], par[1], par[2]).asDiagonal();
  const InitialState x0 = p.initial(par);
  const Vector3d L0 = I * x0.v;
  const double E0 = 0.5 * x0.v.dot(I * x0.v);
  for (Integrator in : {Integrator::kCvodesBdf, Integrator::kCvodesAdams}) {
    SimulationOptions o = p.defaults;
    o.integrator = in;
    o.formulation = Formulation::kUnstabilized;
    o.kkt.method = KktMethod::kSparseCholesky;
    struct Check : Observer {
      Matrix3d I;
      Vector3d L0;
      double E0 = 0.0, dL = 0.0, dE = 0.0, w2_min = 1e300;
      void OnSample(const Sample& s) override {
        const Vector3d w = s.v;
        const Eigen::VectorXd q = s.q.normalized();
        dL = std::max(dL, (RotationAt<double>(q, 0) * (I * w) - L0).norm());
        dE = std::max(dE, std::abs(0.5 * w.dot(I * w) - E0));
        w2_min = std::min(w2_min, w[1]);
      }
    } check;
    check.I = I;
    check.L0 = L0;
    check.E0 = E0;
    const SimulationSummary s = Simulate(p.model, x0, par, o, &check);
    ASSERT_TRUE(s.ok) << ToString(in) << ": " << s.error;
    EXPECT_LT(check.w2_min, -0.9 * par[3]) << "no flip";
    EXPECT_LT(check.dE, 1e-8 * E0) << ToString(in);
    EXPECT_LT(check.dL, 1e-8 * L0.norm()) << ToString(in);
    EXPECT_LT(s.drift_quaternion_max, 1e-7) << ToString(in);
  }
}

// The symmetric heavy top as a quaternion about its pivot (inertia
// diag(I1, I1, I3), centre of mass on the axis at l), started at the
// closed-form steady precession rate (heavy_top_detail::
// SteadyPrecessionRate; body angular velocity (0, psi' sin theta, w3) at
// psi = phi = 0, Z-X-Z angles as in problems/heavy_top.hpp), on the sparse
// path (CVODES BDF, --kkt sparse-cholesky, rtol 1e-11): the axis keeps its
// angle to the vertical, and p_phi = I3 w3, p_psi = e_z . R I w and the
// energy stay at their initial values, to the integration error (asserted
// 1e-8, 1e-9 relative; measured and printed), while a top released
// without precession swings by more than 1e-2.
TEST(QuaternionSparse, HeavyTopSteadyPrecessionAndConservedMomenta) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "15 s here; the sparse path's quaternion code runs under the "
      "sanitizers in RunsAgreeWithTheDensePath and "
      "FreeBodyConservesEnergyAndAngularMomentum");
  const double I1 = 1.0, I3 = 0.5, l = 0.7, th = 0.5, w3 = 30.0;
  const Matrix3d I = Vector3d(I1, I1, I3).asDiagonal();
  const Model m = PivotTop(I, Vector3d(0.0, 0.0, l), kGravity);
  const double rate = problems::heavy_top_detail::SteadyPrecessionRate(
      kMass, l, I1, I3, kGravity, th, w3);
  struct Check : Observer {
    Matrix3d I;
    double th = 0.0, w3 = 0.0, p0 = 0.0, e0 = 0.0;
    double dcos = 0.0, dspin = 0.0, dp = 0.0, de = 0.0;
    bool first = true;
    void OnSample(const Sample& s) override {
      const Matrix3d R =
          RotationAt<double>(Eigen::VectorXd(s.q.normalized()), 0);
      const Vector3d w = s.v;
      const double p_psi = (R * (I * w)).z();
      if (first) {
        p0 = p_psi;
        e0 = s.energy;
        first = false;
      }
      dcos = std::max(dcos, std::abs(R(2, 2) - std::cos(th)));
      dspin = std::max(dspin, std::abs(w[2] - w3));
      dp = std::max(dp, std::abs(p_psi - p0));
      de = std::max(de, std::abs(s.energy - e0));
    }
  };
  for (double psid : {rate, 0.0}) {
    Check c;
    c.I = I;
    c.th = th;
    c.w3 = w3;
    SimulationOptions o =
        Options(Formulation::kUnstabilized, Integrator::kCvodesBdf, 5.0);
    o.output_step = 0.01;
    o.rtol = 1e-11;
    o.atol = 1e-13;
    o.kkt.method = KktMethod::kSparseCholesky;
    const Eigen::Vector4d q0(std::cos(0.5 * th), std::sin(0.5 * th), 0.0, 0.0);
    const Vector3d w0(0.0, psid * std::sin(th), w3);
    const SimulationSummary s =
        Simulate(m, InitialState{q0, w0}, m.default_parameters(), o, &c);
    ASSERT_TRUE(s.ok) << s.error;
    EXPECT_NE(s.evaluator.find("sparse path"), std::string::npos)
        << s.evaluator;
    std::printf(
        "quaternion heavy top on the sparse path, psi' = %.6g: |cos theta - "
        "cos theta0| %.1e, spin %.1e, p_psi %.1e, E %.1e\n",
        psid, c.dcos, c.dspin / w3, c.dp / (I3 * w3),
        c.de / (0.5 * I3 * w3 * w3));
    if (psid == 0.0) {
      EXPECT_GT(c.dcos, 1e-2);
      continue;
    }
    EXPECT_LT(c.dcos, 1e-8);
    EXPECT_LT(c.dspin, 1e-9 * w3);
    EXPECT_LT(c.dp, 1e-9 * I3 * w3);
    EXPECT_LT(c.de, 1e-9 * 0.5 * I3 * w3 * w3);
  }
}

}  // namespace quaternion_paths_test
}  // namespace
}  // namespace daedalus
