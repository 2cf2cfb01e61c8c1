// Lie-group generalized-alpha and HHT on models with unit quaternions
// (src/integrate/alpha_step.cpp, docs/formulations.md, "Generalized-alpha
// and HHT"): the quaternion updated on the group, q1 = q0 (x) exp(h Dq).
// A torque-free asymmetric body keeps its energy and world angular
// momentum to the scheme's O(h^2) and its quaternion at unit norm to
// round-off; a body pinned at a point converges at second order in q and
// v at fixed steps against a tight IDAS reference, for both schemes; and
// with step-size control the error follows the tolerance as on the
// vector models (tests/integrate/generalized_alpha_test.cpp).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <vector>

#include "daedalus/quaternion.hpp"
#include "daedalus/simulate.hpp"
#include "free_body.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace lie_alpha_test {

using Eigen::Matrix3d;
using Eigen::Vector3d;

constexpr double kMass = 1.5, kGravity = 9.81;
const Vector3d kPin(0.2, -0.1, -0.6);  // centre of mass to the pin, body

// A body (centre of mass x, y, z and a quaternion R: nq = 7, nv = 6)
// with an asymmetric inertia about its centre of mass, under gravity,
// whose body point kPin is held at the world origin (3 holonomic rows).
Model PinnedBody() {
  Matrix3d inertia;
  inertia << 0.20, 0.01, -0.02, 0.01, 0.30, 0.03, -0.02, 0.03, 0.10;
  ModelBuilder b("lie_alpha_pinned_body");
  b.Coordinates({"x", "y", "z"});
  b.Quaternion("R");
  b.KineticEnergy([inertia](const auto& x) {
    using S = typename std::decay_t<decltype(x)>::Scalar;
    const Vec3<S> w = AngularVelocityAt(x.v, 3);
    const Vec3<S> u(x.v[0], x.v[1], x.v[2]);
    return S(0.5 * kMass * u.dot(u) + 0.5 * w.dot(inertia.cast<S>() * w));
  });
  b.PotentialEnergy([](const auto& x) { return kMass * kGravity * x.q[2]; });
  b.Holonomic(
      "pin",
      [](const auto& x) {
        using S = typename std::decay_t<decltype(x)>::Scalar;
        const Vec3<S> p = Vec3<S>(x.q[0], x.q[1], x.q[2]) +
                          RotationAt(x.q, 3) * kPin.cast<S>();
        VecX<S> r(3);
        r << p.x(), p.y(), p.z();
        return r;
      },
      3);
  return std::move(b).Build();
}

// Tilted 0.4 rad about x, spinning at 6 rad/s about its own z and
// precessing; the pin's velocity is zero (consistent start).
InitialState PinnedStart() {
  const Eigen::Vector4d q0(std::cos(0.2), std::sin(0.2), 0.0, 0.0);
  const Vector3d w0(0.5, 1.0, 6.0);
  const Matrix3d R0 = RotationAt<double>(Eigen::VectorXd(q0), 0);
  InitialState x;
  x.q.resize(7);
  x.v.resize(6);
  x.q << -R0 * kPin, q0;
  x.v << -R0 * w0.cross(kPin), w0;
  return x;
}

// The reference: GGL on IDAS at rtol 1e-12 (its error, near 1e-11 over
// these runs, is two orders under the smallest error measured against
// it).
SimulationSummary Reference(const Model& m, double t_end) {
  SimulationOptions o;
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  o.t_end = t_end;
  o.output_step = t_end;
  const SimulationSummary s =
      Simulate(m, PinnedStart(), m.default_parameters(), o);
  EXPECT_TRUE(s.ok) << s.error;
  return s;
}

SimulationOptions AlphaOptions(Integrator scheme, double t_end) {
  SimulationOptions o;
  o.formulation = Formulation::kIndex3;
  o.integrator = scheme;
  o.t_end = t_end;
  o.output_step = t_end;
  return o;
}

// The largest difference of the positions, the quaternion block (from
// index k) sign-aligned (q and -q are the same rotation).
double PositionDistance(const Eigen::VectorXd& a,
                        const Eigen::VectorXd& b,
                        int k) {
  Eigen::VectorXd d = a - b;
  const Eigen::Vector4d s = a.segment<4>(k) + b.segment<4>(k);
  if (s.norm() < d.segment<4>(k).norm()) d.segment<4>(k) = s;
  return d.cwiseAbs().maxCoeff();
}

double MaxDiff(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return (a - b).cwiseAbs().maxCoeff();
}

// Energy and world angular momentum R I w along a run, every sample.
struct Conservation : Observer {
  Matrix3d I;
  Vector3d L0;
  double E0 = 0.0, dL = 0.0, dE = 0.0, w2_min = 1e300;
  void OnSample(const Sample& s) override {
    const Vector3d w = s.v;
    dL = std::max(dL, (RotationAt<double>(s.q, 0) * (I * w) - L0).norm());
    dE = std::max(dE, std::abs(0.5 * w.dot(I * w) - E0));
    w2_min = std::min(w2_min, w[1]);
  }
};

// The catalogue's free_body (I = diag(1, 2, 3), w0 = (1e-3, 5, 1e-3)),
// spun about its intermediate axis through its first flip (w2 changes
// sign near t = 3.5 s; the run ends at 4.5 s), at
// fixed steps h and h/2 with the default rho_inf = 0.8.
TEST(LieAlpha, FreeBodyConservesEnergyAndAngularMomentum) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "four fixed-step runs through the first flip (37 s under the "
      "sanitizers); the Lie-group update and its Newton iteration run there "
      "in the other LieAlpha tests");
  const Problem p = problems::FreeBodyProblem();
  const Eigen::VectorXd par = p.model.default_parameters();
  const Matrix3d I = Vector3d(par[0], par[1], par[2]).asDiagonal();
  const InitialState x0 = p.initial(par);
  for (Integrator scheme : {Integrator::kGeneralizedAlpha, Integrator::kHht}) {
    std::vector<double> dE, dL;
    for (double h : {2e-3, 1e-3}) {
      SimulationOptions o = AlphaOptions(scheme, 4.5);
      o.output_step = 0.01;
      o.step = h;
      o.rtol = 1e-13;  // the Newton tolerance (far below the O(h^2) error)
      o.atol = 1e-15;
      Conservation c;
      c.I = I;
      c.L0 = I * x0.v;
      c.E0 = 0.5 * x0.v.dot(I * x0.v);
      const SimulationSummary s = Simulate(p.model, x0, par, o, &c);
      ASSERT_TRUE(s.ok) << ToString(scheme) << ": " << s.error;
      EXPECT_LT(c.w2_min, -0.9 * par[3]) << "no flip";
      // Retract gives unit quaternions: the norm at round-off after 4500
      // steps (each step renormalizes, so it does not accumulate).
      EXPECT_LT(s.drift_quaternion_max, 1e-14) << ToString(scheme);
      std::printf("free_body %s h %g: |dE|/E0 %.2e, |dL|/|L0| %.2e\n",
                  ToString(scheme), h, c.dE / c.E0, c.dL / c.L0.norm());
      dE.push_back(c.dE / c.E0);
      dL.push_back(c.dL / c.L0.norm());
      // Second order with the frequency w0 = 5 rad/s: relative errors
      // below (w0 h)^2. Measured (2026-12-04, rho_inf 0.8): energy 9.0e-6,
      // 2.2e-6 (generalized-alpha), 1.3e-5, 3.2e-6 (HHT) at h = 2e-3,
      // 1e-3, momentum within 10% of those; about an eighth of the bound.
      const double bound = std::pow(par[3] * h, 2);
      EXPECT_LT(c.dE / c.E0, bound) << ToString(scheme) << " h " << h;
      EXPECT_LT(c.dL / c.L0.norm(), bound) << ToString(scheme) << " h " << h;
    }
    // Halving the step divides both by about 4 (O(h^2); measured 3.98 to
    // 4.01; the bounds [3.4, 4.6] exclude first and third order).
    EXPECT_NEAR(dE[0] / dE[1], 4.0, 0.6) << ToString(scheme);
    EXPECT_NEAR(dL[0] / dL[1], 4.0, 0.6) << ToString(scheme);
  }
}

// Errors of q and v at t = 0.5 s for h0, h0/2, h0/4: observed order 2 +-
// 0.2 (first order, a wrong tangent update, would show 1).
TEST(LieAlpha, SecondOrderOnAPinnedBodyAtFixedStep) {
  const Model m = PinnedBody();
  const double t_end = 0.5;
  const SimulationSummary ref = Reference(m, t_end);
  ASSERT_GT(PositionDistance(ref.final.q, PinnedStart().q, 3), 0.05);
  for (Integrator scheme : {Integrator::kGeneralizedAlpha, Integrator::kHht}) {
    std::vector<double> eq, ev;
    for (int k = 0; k < 3; ++k) {
      const double h = 4e-3 / std::pow(2.0, k);
      SimulationOptions o = AlphaOptions(scheme, t_end);
      o.step = h;
      o.rtol = 1e-13;
      o.atol = 1e-15;
      const SimulationSummary s =
          Simulate(m, PinnedStart(), m.default_parameters(), o);
      ASSERT_TRUE(s.ok) << ToString(scheme) << ": " << s.error;
      EXPECT_EQ(s.stats.steps, std::lround(t_end / h));
      EXPECT_LT(s.drift_quaternion_max, 1e-14);
      // Newton with T(h Dq) = I in its matrix: the iterations stay those
      // of the vector models (measured 3 to 4 a step there).
      EXPECT_LE(s.stats.newton_iterations, 5 * s.stats.steps);
      eq.push_back(PositionDistance(s.final.q, ref.final.q, 3));
      ev.push_back(MaxDiff(s.final.v, ref.final.v));
      std::printf("pinned %s h %g: q %.3e v %.3e, %.2f Newton a step\n",
                  ToString(scheme), h, eq.back(), ev.back(),
                  static_cast<double>(s.stats.newton_iterations) /
                      static_cast<double>(s.stats.steps));
    }
    for (int k = 1; k < 3; ++k) {
      EXPECT_NEAR(std::log2(eq[k - 1] / eq[k]), 2.0, 0.2)
          << ToString(scheme) << " q, h0/" << (1 << k);
      EXPECT_NEAR(std::log2(ev[k - 1] / ev[k]), 2.0, 0.2)
          << ToString(scheme) << " v, h0/" << (1 << k);
    }
  }
}

// Step-size control (the local error per unit step in the tangent space):
// the global error of q at the end within 10 rtol and of v within 1000
// rtol, the bounds of the vector models
// (generalized_alpha_test.cpp, AlphaStepControl).
TEST(LieAlpha, StepControlMeetsTheToleranceOnAPinnedBody) {
  const Model m = PinnedBody();
  const double t_end = 0.5;
  const SimulationSummary ref = Reference(m, t_end);
  // rtol 1e-6 takes 2200 steps a scheme (0.5 s of CPU here in release):
  // the sanitizer build runs rtol 1e-4 only (the same code, 230 steps).
#ifdef DAEDALUS_SANITIZER_BUILD
  const std::vector<double> tolerances = {1e-4};
#else
  const std::vector<double> tolerances = {1e-4, 1e-6};
#endif
  for (Integrator scheme : {Integrator::kGeneralizedAlpha, Integrator::kHht})
    for (double tol : tolerances) {
      SimulationOptions o = AlphaOptions(scheme, t_end);
      o.output_step = 0.05;
      o.rtol = tol;
      o.atol = tol / 100;
      const SimulationSummary s =
          Simulate(m, PinnedStart(), m.default_parameters(), o);
      ASSERT_TRUE(s.ok) << ToString(scheme) << ": " << s.error;
      const double eq = PositionDistance(s.final.q, ref.final.q, 3);
      const double ev = MaxDiff(s.final.v, ref.final.v);
      std::printf("pinned %s rtol %g: %ld steps, errors q %.2e v %.2e\n",
                  ToString(scheme), tol, static_cast<long>(s.stats.steps), eq,
                  ev);
      EXPECT_LT(eq, 10 * tol) << ToString(scheme) << " rtol " << tol;
      EXPECT_LT(ev, 1000 * tol) << ToString(scheme) << " rtol " << tol;
      EXPECT_LT(s.drift_quaternion_max, 1e-14);
      EXPECT_GT(s.stats.steps, 10);
    }
}

}  // namespace lie_alpha_test
}  // namespace
}  // namespace daedalus
