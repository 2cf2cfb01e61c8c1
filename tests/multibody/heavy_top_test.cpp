// The symmetric heavy top (problems/heavy_top): the multibody description's
// M and h against the top written by hand with energies, the closed-form
// steady precession, and the conserved momenta p_psi, p_phi and energy
// (docs/problems.md, "heavy_top").
#include "heavy_top.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/simulate.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace heavy_top_test {

namespace fs = std::filesystem;
namespace ht = problems::heavy_top_detail;

// The top by hand: Z-X-Z Euler angles, T = I1 (theta'^2 + psi'^2 sin^2
// theta) / 2 + I3 (psi' cos theta + phi')^2 / 2, V = m g l cos theta, with
// the parameters in the problem's order.
Model HandTop() {
  ModelBuilder b("heavy_top_by_hand");
  b.Coordinates({"psi", "theta", "phi"});
  const ht::Params P = ht::DeclareParameters(&b);
  b.KineticEnergy([P](const auto& x) {
    const auto s = sin(x.q[1]);
    const auto w3 = x.v[0] * cos(x.q[1]) + x.v[2];
    return 0.5 * x.p[P.I1] * (x.v[1] * x.v[1] + x.v[0] * x.v[0] * s * s) +
           0.5 * x.p[P.I3] * w3 * w3;
  });
  b.PotentialEnergy([P](const auto& x) {
    return x.p[P.m] * x.p[P.g] * x.p[P.l] * cos(x.q[1]);
  });
  return std::move(b).Build();
}

double RelDiff(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

// Random valid parameters: I1 > m l^2 (the inertia about the centre of
// mass is positive), theta0 and spin are not used by M and h.
Eigen::VectorXd RandomParameters(std::mt19937& gen) {
  Eigen::VectorXd prm = testing::RandomVector(gen, 7, 0.2, 2.0);
  prm[2] = prm[0] * prm[1] * prm[1] + prm[2];  // I1 = m l^2 + I_C
  prm[4] *= 9.81;
  return prm;
}

// M, h, the momenta and both energies of the description (energy and
// recursive forms, compiled programs and dual numbers) against the hand
// top at random states and parameters. Both compute the same closed forms
// in a different order (a rotation-matrix walk against sin and cos of
// theta), so they agree to a few ulps of the largest entry: 1e-13.
TEST(HeavyTop, MassMatrixAndBiasAgreeWithHandWrittenEnergies) {
  const Model hand = HandTop();
  const Problem energy =
      problems::HeavyTopProblemForm(mb::DynamicsForm::kEnergy);
  const Problem recursive =
      problems::HeavyTopProblemForm(mb::DynamicsForm::kRecursive);
  EXPECT_EQ(energy.model.coordinate_names(), hand.coordinate_names());
  EXPECT_EQ(energy.model.parameter_names(), hand.parameter_names());
  ASSERT_EQ(energy.model.nc(), 0);
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> angle(-M_PI, M_PI), nut(0.2, 2.9);
  double worst_M = 0.0, worst_h = 0.0;
  for (unsigned seed = 1; seed <= 8; ++seed) {
    testing::RandomState s(3, 3, seed, 0.0);
    s.q = Eigen::Vector3d(angle(gen), nut(gen), angle(gen));
    s.v *= 20.0;
    const Eigen::VectorXd prm =
        seed <= 4 ? hand.default_parameters() : RandomParameters(gen);
    Workspace a(hand);
    a.SetParameters(prm);
    a.SetState(s.t, s.q, s.v);
    EvaluateAll(&a);
    for (const Problem* pb : {&energy, &recursive}) {
      for (bool compiled : {true, false}) {
        SCOPED_TRACE("seed " + std::to_string(seed) +
                     (pb == &energy ? " energy" : " recursive") +
                     (compiled ? " compiled" : " dual numbers"));
        Workspace b(pb->model);
        b.use_compiled = compiled;
        b.SetParameters(prm);
        b.SetState(s.t, s.q, s.v);
        EvaluateAll(&b);
        worst_M = std::max(worst_M, RelDiff(b.M, a.M));
        worst_h = std::max(worst_h, RelDiff(b.h, a.h));
        EXPECT_LT(RelDiff(b.M, a.M), 1e-13) << b.M << "\nvs\n" << a.M;
        EXPECT_LT(RelDiff(b.h, a.h), 1e-13)
            << b.h.transpose() << " vs " << a.h.transpose();
        EXPECT_LT(RelDiff(b.momentum, a.momentum), 1e-13);
        EXPECT_NEAR(b.kinetic, a.kinetic, 1e-13 * a.kinetic);
        EXPECT_NEAR(b.potential, a.potential,
                    1e-13 * (std::abs(a.potential) + a.kinetic));
      }
    }
    // The closed form of M itself (order psi, theta, phi).
    const double I1 = prm[2], I3 = prm[3], c = std::cos(s.q[1]);
    const double sn = std::sin(s.q[1]);
    Eigen::Matrix3d M;
    M << I1 * sn * sn + I3 * c * c, 0.0, I3 * c, 0.0, I1, 0.0, I3 * c, 0.0, I3;
    EXPECT_LT(RelDiff(a.M, M), 1e-14);
  }
  std::printf(
      "heavy_top vs by hand: largest relative difference M %.1e, "
      "h %.1e\n",
      worst_M, worst_h);
}

struct Collector : Observer {
  void OnSample(const Sample& s) override { samples.push_back(s); }
  std::vector<Sample> samples;
};

// p_psi, p_phi (dL/dv, from the model) and E at every sample of a run.
struct Invariants {
  double p_psi_drift = 0.0, p_phi_drift = 0.0, energy_drift = 0.0;
  double theta_min = 1e300, theta_max = -1e300;
  double psid_min = 1e300, psid_max = -1e300;
  Eigen::Vector3d p0;
  double e0 = 0.0;
};
Invariants RunTop(const Problem& pb,
                  const Eigen::VectorXd& prm,
                  const InitialState& x0,
                  double t_end) {
  SimulationOptions o = pb.defaults;
  o.t_end = t_end;
  o.rtol = 1e-11;
  o.atol = 1e-13;
  Collector c;
  const SimulationSummary sum = Simulate(pb.model, x0, prm, o, &c);
  EXPECT_TRUE(sum.ok) << sum.error;
  Workspace ws(pb.model);
  ws.SetParameters(prm);
  Invariants inv;
  for (size_t k = 0; k < c.samples.size(); ++k) {
    const Sample& s = c.samples[k];
    ws.SetState(s.t, s.q, s.v);
    EvaluateAll(&ws);
    if (k == 0) {
      inv.p0 = ws.momentum;
      inv.e0 = ws.energy;
    }
    inv.p_psi_drift =
        std::max(inv.p_psi_drift, std::abs(ws.momentum[0] - inv.p0[0]));
    inv.p_phi_drift =
        std::max(inv.p_phi_drift, std::abs(ws.momentum[2] - inv.p0[2]));
    inv.energy_drift = std::max(inv.energy_drift, std::abs(ws.energy - inv.e0));
    inv.theta_min = std::min(inv.theta_min, s.q[1]);
    inv.theta_max = std::max(inv.theta_max, s.q[1]);
    inv.psid_min = std::min(inv.psid_min, s.v[0]);
    inv.psid_max = std::max(inv.psid_max, s.v[0]);
  }
  EXPECT_NEAR(c.samples.back().t, t_end, 1e-12);
  return inv;
}

// Started at the closed-form rate (either root), theta and psi' stay
// constant, phi' = w3 - psi' cos theta0 too. The run is at rtol = 1e-11,
// atol = 1e-13 over 5 s (about 1.7 slow precession periods, 25 fast
// ones). The steady motion is uniform (psi and phi linear in t, theta''
// zero up to the round-off of the rate), which the integrator follows to
// round-off: measured 1e-14 (printed); asserted below kSteady = 1e-11 rad
// and 1e-11 relative to psi', far below what a start off the rate by
// 1e-6 relative gives (theta swings by 8e-8 rad, asserted more than 1e3
// kSteady), or a top
// released with psi' = 0 (more than 1e-3 rad): the check distinguishes
// steady from nutating motion.
constexpr double kSteady = 1e-11;
TEST(HeavyTop, SteadyPrecessionAtTheClosedFormRate) {
  const Problem pb = problems::HeavyTopProblem();
  const Eigen::VectorXd prm = pb.model.default_parameters();
  const double m = prm[0], l = prm[1], I1 = prm[2], I3 = prm[3], g = prm[4];
  const double th = prm[5], w3 = prm[6];
  const double slow = ht::SteadyPrecessionRate(m, l, I1, I3, g, th, w3);
  const double fast = ht::FastPrecessionRate(m, l, I1, I3, g, th, w3);
  // Both are roots of I1 cos(theta) W^2 - I3 w3 W + m g l = 0, and the
  // slow one tends to the gyroscopic m g l / (I3 w3).
  for (double r : {slow, fast})
    EXPECT_NEAR(I1 * std::cos(th) * r * r - I3 * w3 * r + m * g * l, 0.0,
                1e-13 * I3 * w3 * std::abs(r));
  EXPECT_NEAR(slow, m * g * l / (I3 * w3),
              2.0 * I1 * m * g * l * std::cos(th) / (I3 * w3 * I3 * w3) * slow);
  EXPECT_GT(fast, 10.0 * slow);
  // The problem's start is the slow root.
  const InitialState x0 = pb.initial(prm);
  EXPECT_EQ(x0.v[0], slow);
  EXPECT_NEAR(x0.v[0] * std::cos(th) + x0.v[2], w3, 1e-14 * w3);
  for (double rate : {slow, fast}) {
    SCOPED_TRACE(rate == slow ? "slow root" : "fast root");
    InitialState x = x0;
    x.v = Eigen::Vector3d(rate, 0.0, w3 - rate * std::cos(th));
    const Invariants inv = RunTop(pb, prm, x, 5.0);
    const double dth = std::max(inv.theta_max - th, th - inv.theta_min);
    const double dpsi =
        std::max(inv.psid_max - rate, rate - inv.psid_min) / rate;
    std::printf(
        "steady precession at psi' = %.6g rad/s: |theta - theta0| "
        "<= %.1e rad, |psi' - rate| / rate <= %.1e\n",
        rate, dth, dpsi);
    EXPECT_LT(dth, kSteady);
    EXPECT_LT(dpsi, kSteady);
  }
  // Off the rate by 1e-6 relative (w3 kept), theta swings by far more.
  InitialState off = x0;
  off.v = Eigen::Vector3d(slow * (1.0 + 1e-6), 0.0,
                          w3 - slow * (1.0 + 1e-6) * std::cos(th));
  const Invariants near = RunTop(pb, prm, off, 5.0);
  std::printf("started 1e-6 off the slow rate: theta swings by %.1e rad\n",
              near.theta_max - near.theta_min);
  EXPECT_GT(near.theta_max - near.theta_min, 1e3 * kSteady);
  InitialState released = x0;
  released.v = Eigen::Vector3d(0.0, 0.0, w3);
  const Invariants inv = RunTop(pb, prm, released, 1.0);
  EXPECT_GT(inv.theta_max - inv.theta_min, 1e-3);
}

// A nutating top (released with psi' = 0, and with an extra theta' kick)
// keeps p_psi = I3 w3 cos(theta0) (at release), p_phi = I3 w3 and E. At
// rtol = 1e-11 the drifts are the integration error, measured at most
// 8e-11 relative (printed); asserted below 1e-9 relative to I3 w3 and to
// the kinetic energy scale I3 w3^2 / 2.
TEST(HeavyTop, ConservesPPsiPPhiAndEnergyWhileNutating) {
  for (const auto form :
       {mb::DynamicsForm::kEnergy, mb::DynamicsForm::kRecursive}) {
    SCOPED_TRACE(mb::ToString(form));
    const Problem pb = problems::HeavyTopProblemForm(form);
    const Eigen::VectorXd prm = pb.model.default_parameters();
    const double I3 = prm[3], th = prm[5], w3 = prm[6];
    for (double kick : {0.0, 2.0}) {
      InitialState x = pb.initial(prm);
      x.v = Eigen::Vector3d(0.0, kick, w3);
      const Invariants inv = RunTop(pb, prm, x, 5.0);
      EXPECT_NEAR(inv.p0[0], I3 * w3 * std::cos(th), 1e-14 * I3 * w3);
      EXPECT_NEAR(inv.p0[2], I3 * w3, 1e-14 * I3 * w3);
      EXPECT_GT(inv.theta_max - inv.theta_min, 1e-3);  // it does nutate
      const double scale = I3 * w3, e_scale = 0.5 * I3 * w3 * w3;
      std::printf(
          "nutating top (%s, theta' = %g): drift p_psi %.1e, p_phi "
          "%.1e, E %.1e (relative)\n",
          mb::ToString(form), kick, inv.p_psi_drift / scale,
          inv.p_phi_drift / scale, inv.energy_drift / e_scale);
      EXPECT_LT(inv.p_psi_drift, 1e-9 * scale);
      EXPECT_LT(inv.p_phi_drift, 1e-9 * scale);
      EXPECT_LT(inv.energy_drift, 1e-9 * e_scale);
    }
  }
}

// Bad input: a top too slow for steady precession, and an inertia about
// the tip below m l^2, are refused by name with the fix.
TEST(HeavyTop, RefusesAStartWithoutSteadyPrecession) {
  const Problem pb = problems::HeavyTopProblem();
  Eigen::VectorXd prm = pb.model.default_parameters();
  prm[6] = 1.0;  // spin 1 rad/s: far below the 29 rad/s needed
  try {
    pb.initial(prm);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no steady precession"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--param spin"), std::string::npos);
  }
  prm = pb.model.default_parameters();
  prm[2] = 0.004;  // I1 < m l^2 = 0.005
  try {
    pb.initial(prm);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("must exceed m l^2"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace heavy_top_test
}  // namespace
}  // namespace daedalus
