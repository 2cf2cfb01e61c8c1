// The tangent workspace (base scalar D1) linearizes every quantity of the
// three evaluation stages exactly. Checked against central differences of
// the value workspace along random directions in (q, v, p).
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "slider_crank.hpp"
#include "support/seed_models.hpp"

namespace daedalus {
namespace {
namespace tangent_test {

// The quantities compared, flattened in a fixed order.
Eigen::VectorXd Flatten(const Workspace& ws) {
  std::vector<double> out;
  auto add = [&](const auto& m) {
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      for (Eigen::Index i = 0; i < m.rows(); ++i) out.push_back(m(i, j));
  };
  add(ws.phi), add(ws.J), add(ws.phi_t), add(ws.vel_residual), add(ws.bias);
  add(ws.M), add(ws.h), add(ws.Bu), add(ws.momentum);
  out.push_back(ws.energy);
  out.push_back(ws.L_t);
  return Eigen::Map<Eigen::VectorXd>(out.data(), out.size());
}

Eigen::VectorXd FlattenTangent(const TangentWorkspace& ws) {
  std::vector<double> out;
  auto add = [&](const auto& m) {
    for (Eigen::Index j = 0; j < m.cols(); ++j)
      for (Eigen::Index i = 0; i < m.rows(); ++i) out.push_back(m(i, j).d);
  };
  add(ws.phi), add(ws.J), add(ws.phi_t), add(ws.vel_residual), add(ws.bias);
  add(ws.M), add(ws.h), add(ws.Bu), add(ws.momentum);
  out.push_back(ws.energy.d);
  out.push_back(ws.L_t.d);
  return Eigen::Map<Eigen::VectorXd>(out.data(), out.size());
}

void ExpectTangentMatchesCentralDifference(const Model& model,
                                           double t,
                                           unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  const int n = model.nq(), np = model.num_parameters();
  Eigen::VectorXd q(n), v(n), dq(n), dv(n), dp(np);
  for (int i = 0; i < n; ++i) q[i] = U(rng), v[i] = U(rng);
  for (int i = 0; i < n; ++i) dq[i] = U(rng), dv[i] = U(rng);
  for (int i = 0; i < np; ++i) dp[i] = U(rng) * model.default_parameters()[i];
  const Eigen::VectorXd p = model.default_parameters();

  Workspace ws(model);
  ws.SetState(t, q, v);
  EvaluateAll(&ws);
  TangentWorkspace tws(model);
  SeedTangent(ws, dq, dv, dp, &tws);
  EvaluateAll(&tws);
  const Eigen::VectorXd exact = FlattenTangent(tws);

  // Values of the tangent workspace equal the value workspace exactly.
  EXPECT_DOUBLE_EQ(tws.energy.v, ws.energy);
  for (int i = 0; i < n; ++i) EXPECT_DOUBLE_EQ(tws.h[i].v, ws.h[i]);

  // Central difference with step 1e-5: truncation error ~ h^2 |f'''| ~ 1e-10
  // and round-off ~ eps |f| / h ~ 1e-11 for these O(1)-scaled models, so
  // agreement to 1e-7 of the norm is a sharp check of the exact tangent.
  const double h = 1e-5;
  auto at = [&](double s) {
    Workspace w(model);
    w.SetParameters(p + s * dp);
    w.SetState(t, q + s * dq, v + s * dv);
    EvaluateAll(&w);
    return Flatten(w);
  };
  const Eigen::VectorXd fd = (at(h) - at(-h)) / (2.0 * h);
  ASSERT_EQ(fd.size(), exact.size());
  const double scale = 1.0 + fd.norm();
  EXPECT_LT((fd - exact).norm(), 1e-7 * scale)
      << model.name() << ": fd " << fd.transpose() << "\nexact "
      << exact.transpose();
}

TEST(Tangent, SliderCrankMatchesCentralDifference) {
  const Model model = problems::SliderCrankProblem().model;
  for (unsigned s = 1; s <= 5; ++s)
    ExpectTangentMatchesCentralDifference(model, 0.3, s);
}

TEST(Tangent, RodPairRelativeMatchesCentralDifference) {
  for (unsigned s = 1; s <= 5; ++s)
    ExpectTangentMatchesCentralDifference(testing::RodPairRelative(), 0.0, s);
}

TEST(Tangent, MovingSupportMatchesCentralDifference) {
  for (unsigned s = 1; s <= 5; ++s)
    ExpectTangentMatchesCentralDifference(testing::SeedMovingSupport(), 0.7, s);
}

TEST(Tangent, CoupledWithInputAndDampingMatchesCentralDifference) {
  for (unsigned s = 1; s <= 5; ++s)
    ExpectTangentMatchesCentralDifference(testing::SeedCoupled(), 0.0, s);
}

}  // namespace tangent_test
}  // namespace
}  // namespace daedalus
