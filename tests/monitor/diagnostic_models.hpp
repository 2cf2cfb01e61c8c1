// Test models with closed-form feasibility and conditioning, shared by the
// diagnostics tests.
#pragma once

#include <Eigen/Core>
#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus::testing {

// A 1 kg block on a table (gap y >= 0, unilateral) with an upward pull
// m g c t (1 - t), c = 16/3: the table pushes with lambda = m g (1 - c t
// (1 - t)), negative exactly on (1/4, 3/4), most negative at t = 1/2 with
// -m g / 3.
inline Model LiftedBlock() {
  ModelBuilder b("lifted_block");
  b.Coordinates({"x", "y"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
  b.PotentialEnergy([](const auto& x) { return 9.81 * x.q[1]; });
  b.OtherLoads([](const auto& x) {
    VecX<Scalar<decltype(x)>> f(2);
    f << 0.0, 9.81 * (16.0 / 3.0) * x.t * (1.0 - x.t);
    return f;
  });
  b.Holonomic("table", [](const auto& x) { return x.q[1]; });
  b.Unilateral("table");
  return std::move(b).Build();
}

// A block held by a sticking contact (tangential constraint x = 0) and the
// table (normal, y = 0), pulled sideways by F = c t. The contact needs
// lambda_t = -c t against lambda_n = m g, so the cone |lambda_t| <= mu
// lambda_n fails at t* = mu m g / c = 0.6 s (c = 6.54 N/s, mu = 0.4).
inline Model PulledBlock(double mu) {
  ModelBuilder b("pulled_block");
  b.Coordinates({"x", "y"});
  b.KineticEnergy([](const auto& x) { return 0.5 * x.v.squaredNorm(); });
  b.PotentialEnergy([](const auto& x) { return 9.81 * x.q[1]; });
  b.OtherLoads([](const auto& x) {
    VecX<Scalar<decltype(x)>> f(2);
    f << 6.54 * x.t, 0.0;
    return f;
  });
  b.Holonomic(
      "table", [](const auto& x) { return x.q[1]; }, 1, /*unilateral=*/true);
  b.Holonomic("stick", [](const auto& x) { return x.q[0]; });
  b.FrictionCone("grip", "table", "stick", mu);
  return std::move(b).Build();
}

// A slider-crank (crank angle q, slider x, rod angle p; crank radius
// a = 0.5, rod length 1) driven by its slider along the exact path that
// turns the crank as q(t) = q0 (1 - t): the slider prescribes
// x = X(q) = sqrt(1 - a^2 sin^2 q) + a cos q. At the outer dead centre
// (q = p = 0) the rows loop_x and drive coincide, and J M^-1 J' becomes
// singular like q^2.
constexpr double kCrank = 0.5, kQ0 = 0.5;

inline Model DrivenSliderCrank() {
  ModelBuilder b("driven_slider_crank");
  b.Coordinates({"q", "x", "p"});
  b.KineticEnergy([](const auto& x) {
    return 0.5 * (1.0 * x.v[0] * x.v[0] + 1.0 * x.v[1] * x.v[1] +
                  2.0 * x.v[2] * x.v[2]);
  });
  b.Holonomic("loop_x", [](const auto& x) {
    return x.q[1] - cos(x.q[2]) - kCrank * cos(x.q[0]);
  });
  b.Holonomic("loop_y", [](const auto& x) {
    return -sin(x.q[2]) - kCrank * sin(x.q[0]);
  });
  b.Moving("drive", [](const auto& x) {
    const auto qr = kQ0 * (1.0 - x.t);
    const auto sq = sin(qr);
    return x.q[1] - (sqrt(1.0 - kCrank * kCrank * sq * sq) + kCrank * cos(qr));
  });
  return std::move(b).Build();
}

inline InitialState DrivenSliderCrankStart() {
  const double p = std::asin(-kCrank * std::sin(kQ0));
  return {Eigen::Vector3d(kQ0, std::cos(p) + kCrank * std::cos(kQ0), p),
          Eigen::Vector3d::Zero()};
}

}  // namespace daedalus::testing
