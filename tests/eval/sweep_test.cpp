// The value workspace evaluates gradients, Jacobians and mass-matrix
// columns by multi-direction sweeps (kSweepWidth directions per call) and
// serves partial requests (EvalRequest); the tangent workspace keeps the
// single-direction path. Both must give the same numbers: checked on
// models with holonomic, moving and nonholonomic constraints, a Lagrangian
// given directly, inputs and damping, and more coordinates than one sweep
// holds (chunking).
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "chain_reduced.hpp"
#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"
#include "daedalus/model.hpp"
#include "double_pendulum.hpp"
#include "golf_swing.hpp"
#include "moving_support.hpp"
#include "rolling_disk.hpp"
#include "rotating_particle.hpp"
#include "slider_crank.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace sweep_test {

// Constraints declared with Touches on more velocities than two sweeps
// hold: the dense sweeps then seed only the declared directions, and one
// lane checks the others (dynamics_sweeps.cpp). Coordinates x0 .. x7, then
// a quaternion R (q 8 .. 11, v 8 .. 10).
Model TouchedRows(bool wrong_declaration = false) {
  ModelBuilder b(wrong_declaration ? "touched_rows_wrong" : "touched_rows");
  b.Coordinates({"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"});
  b.Quaternion("R");
  b.KineticEnergy([](const auto& x) {
    using S = Scalar<decltype(x)>;
    S t(0.0);
    for (int i = 0; i < 11; ++i) t += 0.5 * (1.0 + 0.1 * i) * x.v[i] * x.v[i];
    return t;
  });
  b.PotentialEnergy([](const auto& x) { return 9.81 * x.q[1] * x.q[2]; });
  b.Holonomic("limit_x4", Touches{{4}},
              [](const auto& x) { return x.q[4] - 0.3; });
  // A wrong declaration lists x6 for a row that also reads x5.
  const std::vector<int> pair =
      wrong_declaration ? std::vector<int>{6} : std::vector<int>{5, 6};
  b.Moving("pair", Touches{pair},
           [](const auto& x) { return x.q[5] * x.q[6] - 0.2 * x.t * x.t; });
  b.Holonomic("tilt", Touches{{8, 9, 10, 11}}, [](const auto& x) {
    return x.q[9] * x.q[10] + x.q[11] * x.q[11] - 0.1;
  });
  b.Nonholonomic("roll", Touches{{1, 7}},
                 [](const auto& x) { return x.q[1] * x.v[7] + x.v[1] + x.t; });
  return std::move(b).Build();
}

std::vector<Model> Models() {
  return {TouchedRows(),
          problems::SliderCrankProblem().model,
          problems::RollingDiskProblem().model,
          problems::MovingSupportProblem().model,
          problems::RotatingParticleProblem().model,
          problems::DoublePendulumProblem().model,
          problems::GolfSwingProblem().model,
          problems::ChainReducedProblem(9).model};
}

using State = testing::RandomState;
State RandomState(const Model& m, unsigned seed) {
  return State(m.nq(), m.nv(), seed, 0.37);
}

// |a - b| within 1e-12 of the larger magnitude (plus 1e-12 absolute): the
// two paths differ only in the order of floating-point operations.
template <class A, class B>
void ExpectClose(const A& a, const B& b, const std::string& what) {
  ASSERT_EQ(a.rows(), b.rows()) << what;
  ASSERT_EQ(a.cols(), b.cols()) << what;
  if (a.size() == 0) return;
  const double scale =
      1.0 + std::max(a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff());
  EXPECT_LE((a - b).cwiseAbs().maxCoeff(), 1e-12 * scale) << what;
}

Eigen::VectorXd Scalar1(double x) { return Eigen::VectorXd::Constant(1, x); }

// The compared quantities of a workspace, flattened; `part` picks the
// value (0) or the tangent (1) of a D1 entry.
template <class S>
Eigen::VectorXd Flatten(const BasicWorkspace<S>& ws, int part) {
  std::vector<double> out;
  auto get = [&](const S& x) {
    if constexpr (std::is_same_v<S, double>) {
      return x;
    } else {
      return part == 0 ? x.v : x.d;
    }
  };
  auto add = [&](const auto& m) {
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      for (Eigen::Index i = 0; i < m.rows(); ++i) out.push_back(get(m(i, j)));
  };
  add(ws.phi), add(ws.J), add(ws.phi_t), add(ws.vel_residual), add(ws.bias);
  add(ws.M), add(ws.h), add(ws.Bu), add(ws.momentum);
  out.push_back(get(ws.energy));
  out.push_back(get(ws.L_t));
  out.push_back(get(ws.lagrangian));
  return Eigen::Map<Eigen::VectorXd>(out.data(), out.size());
}

TEST(Sweeps, ValuePathEqualsTheSingleDirectionPath) {
  for (const Model& m : Models()) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      const State s = RandomState(m, seed);
      Workspace ws(m), ref(m);
      ws.use_compiled = false;  // the sweeps (compiled_test.cpp: programs)
      ref.single_direction = true;
      ws.SetState(s.t, s.q, s.v);
      ref.SetState(s.t, s.q, s.v);
      EvaluateAll(&ws);
      EvaluateAll(&ref);
      const std::string at = m.name() + " seed " + std::to_string(seed);
      ExpectClose(Flatten(ws, 0), Flatten(ref, 0), at);
      EXPECT_EQ(ws.stage(), Stage::kDynamics);
    }
  }
}

TEST(Sweeps, TangentPathEqualsTheSingleDirectionPath) {
  // The tangent workspace sweeps over a D1 base: values and linearizations
  // both equal the single-direction path's.
  for (const Model& m : Models()) {
    const State s = RandomState(m, 5);
    const State dir = RandomState(m, 6);
    Workspace ws(m);
    ws.SetState(s.t, s.q, s.v);
    Eigen::VectorXd dp = Eigen::VectorXd::Zero(m.num_parameters());
    for (int i = 0; i < dp.size(); ++i) dp[i] = 0.1 * (i + 1);
    TangentWorkspace tws(m), ref(m);
    ref.single_direction = true;
    SeedTangent(ws, dir.q, dir.v, dp, &tws);
    SeedTangent(ws, dir.q, dir.v, dp, &ref);
    EvaluateAll(&tws);
    EvaluateAll(&ref);
    ExpectClose(Flatten(tws, 0), Flatten(ref, 0), m.name() + " values");
    ExpectClose(Flatten(tws, 1), Flatten(ref, 1), m.name() + " tangents");
  }
}

// A Touches declaration that leaves out a coordinate the function reads is
// refused by the dense sweeps too, naming the constraint (before, the
// dense path ignored declarations; it now relies on them).
TEST(Sweeps, AWrongTouchesDeclarationIsRefusedNamingTheConstraint) {
  const Model m = TouchedRows(true);
  const State s = RandomState(m, 3);
  Workspace ws(m);
  ws.use_compiled = false;
  ws.SetState(s.t, s.q, s.v);
  try {
    EvaluateAll(&ws);
    ADD_FAILURE() << "the wrong declaration was not noticed";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'pair'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("Touches"), std::string::npos)
        << e.what();
  }
}

TEST(Sweeps, ResidualRequestGivesMassTimesAccelerationPlusBiasForces) {
  for (const Model& m : Models()) {
    const State s = RandomState(m, 7);
    Workspace full(m);
    full.SetState(s.t, s.q, s.v);
    EvaluateAll(&full);
    const Eigen::VectorXd expect = full.M * s.vdot + full.h;

    Workspace ws(m);
    ws.use_compiled = false;
    ws.SetState(s.t, s.q, s.v);
    EvalRequest req;
    req.bias = false;
    req.dynamics = EvalRequest::Dynamics::kResidual;
    req.vdot = s.vdot.data();
    EvaluateAll(&ws, req);
    ExpectClose(ws.Mvdot_h, expect, m.name() + ": M vdot + h");
    ExpectClose(ws.momentum, full.momentum, m.name() + ": momentum");
    ExpectClose(ws.vel_residual, full.vel_residual, m.name() + ": Jv+phi_t");
    ExpectClose(ws.Bu, full.Bu, m.name() + ": Bu");
    // What was skipped is NaN and the workspace does not claim stage 3, so
    // a KKT solve refuses it instead of reading a stale M.
    EXPECT_TRUE(ws.M.array().isNaN().all()) << m.name();
    if (m.nc() > 0) {
      EXPECT_TRUE(ws.bias.array().isNaN().all()) << m.name();
    }
    EXPECT_EQ(ws.stage(), Stage::kVelocity);
    KktSolver kkt(m, KktOptions{});
    KktResult r;
    EXPECT_THROW(kkt.Solve(ws, ws.vel_residual, &r), std::logic_error);
  }
}

TEST(Sweeps, ForcesRequestGivesForcesAndExplicitTimeDerivative) {
  for (const Model& m : Models()) {
    const State s = RandomState(m, 11);
    Workspace full(m);
    full.SetState(s.t, s.q, s.v);
    EvaluateAll(&full);
    Workspace ws(m);
    ws.use_compiled = false;
    ws.SetState(s.t, s.q, s.v);
    EvalRequest req;
    req.bias = false;
    req.dynamics = EvalRequest::Dynamics::kForces;
    EvaluateAll(&ws, req);
    ExpectClose(ws.Bu, full.Bu, m.name() + ": Bu");
    ExpectClose(ws.Dv, full.Dv, m.name() + ": Dv");
    ExpectClose(ws.Qr, full.Qr, m.name() + ": Qr");
    ExpectClose(ws.J, full.J, m.name() + ": J");
    ExpectClose(Scalar1(ws.L_t), Scalar1(full.L_t), m.name() + ": L_t");
    ExpectClose(Scalar1(ws.lagrangian), Scalar1(full.lagrangian),
                m.name() + ": L");
    EXPECT_TRUE(ws.h.array().isNaN().all()) << m.name();
  }
}

TEST(Sweeps, ResidualRequestWithoutAccelerationsIsALogicError) {
  const Model m = problems::SliderCrankProblem().model;
  Workspace ws(m);
  ws.SetState(0.0, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Zero(3));
  EvalRequest req;
  req.dynamics = EvalRequest::Dynamics::kResidual;
  EXPECT_THROW(EvaluateAll(&ws, req), std::logic_error);
}

}  // namespace sweep_test
}  // namespace
}  // namespace daedalus
