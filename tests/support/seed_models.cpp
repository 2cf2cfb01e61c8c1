// Definitions of the models declared in seed_models.hpp, compiled once into a
// library (the headers are included by many tests).
#include "seed_models.hpp"

namespace daedalus::testing {

Model SeedOneCoordinate() {
  ModelBuilder b("seed003_one");
  b.Coordinates({"z"});
  b.KineticEnergy([](const auto& x) { return 0.5 * 2.0 * x.v[0] * x.v[0]; });
  b.PotentialEnergy([](const auto& x) { return 0.5 * 3.0 * x.q[0] * x.q[0]; });
  b.Damping([](const auto& x) {
    MatX<Scalar<decltype(x)>> d(1, 1);
    d(0, 0) = 0.2;
    return d;
  });
  return std::move(b).Build();
}

Model SeedCoupled(double u) {
  ModelBuilder b("seed003_coupled");
  b.Coordinates({"z1", "z2"});
  const Param pu = b.Parameter("u", u);
  b.MassMatrix([](const auto& x) {
    MatX<Scalar<decltype(x)>> m(2, 2);
    m << 2.0, 0.4, 0.4, 0.8;
    return m;
  });
  b.PotentialEnergy([](const auto& x) {
    return 0.5 * (3.0 * x.q[0] * x.q[0] + 5.0 * x.q[1] * x.q[1]);
  });
  b.Damping([](const auto& x) {
    MatX<Scalar<decltype(x)>> d = MatX<Scalar<decltype(x)>>::Zero(2, 2);
    d(0, 0) = 0.2;
    d(1, 1) = 0.1;
    return d;
  });
  b.Input(
      "torque",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> c(2);
        c << 1.0, 0.0;
        return c;
      },
      [pu](const auto& x) { return x.p[pu]; });
  return std::move(b).Build();
}

Model SeedConstrainedPair() {
  ModelBuilder b("seed003_pair");
  b.Coordinates({"q1", "q2"});
  b.KineticEnergy([](const auto& x) {
    return 0.5 * (2.0 * x.v[0] * x.v[0] + 3.0 * x.v[1] * x.v[1]);
  });
  b.Input(
      "drive",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> c(2);
        c << 1.0, 0.0;
        return c;
      },
      [](const auto&) { return 10.0; });
  b.Holonomic("tie", [](const auto& x) { return x.q[0] - x.q[1]; });
  return std::move(b).Build();
}

Model SeedMovingSupport() {
  ModelBuilder b("moving_support");
  b.Coordinates({"y"});
  const Param m = b.Parameter("m", 2.0);
  const Param g = b.Parameter("g", 9.81);
  b.KineticEnergy(
      [=](const auto& x) { return 0.5 * x.p[m] * x.v[0] * x.v[0]; });
  b.PotentialEnergy([=](const auto& x) { return x.p[m] * x.p[g] * x.q[0]; });
  b.Moving("support", [](const auto& x) {
    return x.q[0] - (0.3 * x.t + 0.2 * x.t * x.t);
  });
  return std::move(b).Build();
}

Model RodPairAbsolute(double m1, double m2, double l1, double l2, double g) {
  ModelBuilder b("rod_pair_absolute");
  b.Coordinates({"alpha1", "alpha2"});
  const Param u1 = b.Parameter("u1", 0.2);
  const Param u2 = b.Parameter("u2", -0.1);
  b.KineticEnergy([=](const auto& x) {
    using std::cos;
    const auto& a = x.q;
    const auto& w = x.v;
    // Centre velocities from r_C1 = l1 e(a1)/2, r_C2 = l1 e(a1) + l2 e(a2)/2.
    const auto vc1 = 0.25 * l1 * l1 * w[0] * w[0];
    const auto vc2 = l1 * l1 * w[0] * w[0] + 0.25 * l2 * l2 * w[1] * w[1] +
                     l1 * l2 * cos(a[0] - a[1]) * w[0] * w[1];
    return 0.5 * m1 * vc1 + 0.5 * m2 * vc2 +
           0.5 * (m1 * l1 * l1 / 12.0) * w[0] * w[0] +
           0.5 * (m2 * l2 * l2 / 12.0) * w[1] * w[1];
  });
  b.PotentialEnergy([=](const auto& x) {
    using std::cos;
    return -(m1 / 2 + m2) * g * l1 * cos(x.q[0]) -
           m2 * g * l2 * cos(x.q[1]) / 2;
  });
  b.Input(
      "u1",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> c(2);
        c << 1.0, 0.0;
        return c;
      },
      [u1](const auto& x) { return x.p[u1]; });
  b.Input(
      "u2",
      [](const auto& x) {
        VecX<Scalar<decltype(x)>> c(2);
        c << -1.0, 1.0;
        return c;
      },
      [u2](const auto& x) { return x.p[u2]; });
  return std::move(b).Build();
}

Model RodPairRelative(double m1, double m2, double l1, double l2, double g) {
  ModelBuilder b("rod_pair_relative");
  b.Coordinates({"q1", "q2"});
  b.KineticEnergy([=](const auto& x) {
    using std::cos;
    using std::sin;
    const auto s1 = sin(x.q[0]), c1 = cos(x.q[0]);
    const auto s12 = sin(x.q[0] + x.q[1]), c12 = cos(x.q[0] + x.q[1]);
    const auto w1 = x.v[0], w2 = x.v[0] + x.v[1];
    const auto v1x = -0.5 * l1 * w1 * s1, v1y = 0.5 * l1 * w1 * c1;
    const auto v2x = -l1 * w1 * s1 - 0.5 * l2 * w2 * s12;
    const auto v2y = l1 * w1 * c1 + 0.5 * l2 * w2 * c12;
    return 0.5 * m1 * (v1x * v1x + v1y * v1y) +
           0.5 * m2 * (v2x * v2x + v2y * v2y) +
           0.5 * (m1 * l1 * l1 / 12.0) * w1 * w1 +
           0.5 * (m2 * l2 * l2 / 12.0) * w2 * w2;
  });
  b.PotentialEnergy([=](const auto& x) {
    using std::sin;
    return (m1 / 2 + m2) * g * l1 * sin(x.q[0]) +
           m2 * g * l2 / 2 * sin(x.q[0] + x.q[1]);
  });
  return std::move(b).Build();
}

}  // namespace daedalus::testing
