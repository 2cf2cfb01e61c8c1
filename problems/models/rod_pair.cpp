// Definitions of the models declared in rod_pair.hpp, compiled once into a
// library (the headers are included by many tests).
#include "rod_pair.hpp"

namespace daedalus::problems {

Problem RodPairAbsoluteProblem() {
  using namespace rod_pair_detail;
  ModelBuilder b("rod_pair_absolute");
  b.Coordinates({"alpha1", "alpha2"});
  const Params P = Declare(b);
  b.KineticEnergy([=](const auto& x) {
    const auto l1 = x.p[P.l1], l2 = x.p[P.l2];
    const auto w1 = x.v[0], w2 = x.v[1];
    // Centre velocities: d/dt of l1 e(a1)/2 and l1 e(a1) + l2 e(a2)/2, with
    // de/da = (cos a, sin a).
    const auto v1x = 0.5 * l1 * cos(x.q[0]) * w1;
    const auto v1y = 0.5 * l1 * sin(x.q[0]) * w1;
    const auto v2x = l1 * cos(x.q[0]) * w1 + 0.5 * l2 * cos(x.q[1]) * w2;
    const auto v2y = l1 * sin(x.q[0]) * w1 + 0.5 * l2 * sin(x.q[1]) * w2;
    return 0.5 * x.p[P.m1] * (v1x * v1x + v1y * v1y) +
           0.5 * x.p[P.m2] * (v2x * v2x + v2y * v2y) +
           0.5 * (x.p[P.m1] * l1 * l1 / 12.0) * w1 * w1 +
           0.5 * (x.p[P.m2] * l2 * l2 / 12.0) * w2 * w2;
  });
  b.PotentialEnergy([=](const auto& x) {
    const auto y1 = -0.5 * x.p[P.l1] * cos(x.q[0]);
    const auto y2 = -x.p[P.l1] * cos(x.q[0]) - 0.5 * x.p[P.l2] * cos(x.q[1]);
    return x.p[P.g] * (x.p[P.m1] * y1 + x.p[P.m2] * y2);
  });
  b.Input("u1", Column(2, 0, 1.0, 1, 0.0),
          [=](const auto& x) { return x.p[P.u1]; });
  b.Input("u2", Column(2, 0, -1.0, 1, 1.0),
          [=](const auto& x) { return x.p[P.u2]; });
  b.Damping(AbsoluteDamping(2, 0, 1, P.b1, P.b2));
  Problem p;
  p.model = std::move(b).Build();
  p.description = Description("absolute angles (alpha1, alpha2)");
  p.initial = [](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::Vector2d(kRodPairStart[0], kRodPairStart[1]);
    s.v = Eigen::Vector2d(kRodPairStart[2], kRodPairStart[3]);
    return s;
  };
  Defaults(&p);
  return p;
}

Problem RodPairRelativeProblem() {
  using namespace rod_pair_detail;
  ModelBuilder b("rod_pair_relative");
  b.Coordinates({"q1", "q2"});
  const Params P = Declare(b);
  b.KineticEnergy([=](const auto& x) {
    const auto l1 = x.p[P.l1], l2 = x.p[P.l2];
    const auto w1 = x.v[0], w2 = x.v[0] + x.v[1];  // absolute rod rates
    const auto s1 = sin(x.q[0]), c1 = cos(x.q[0]);
    const auto s12 = sin(x.q[0] + x.q[1]), c12 = cos(x.q[0] + x.q[1]);
    // Centres at l1 (c1, s1)/2 and l1 (c1, s1) + l2 (c12, s12)/2.
    const auto v1x = -0.5 * l1 * s1 * w1, v1y = 0.5 * l1 * c1 * w1;
    const auto v2x = -l1 * s1 * w1 - 0.5 * l2 * s12 * w2;
    const auto v2y = l1 * c1 * w1 + 0.5 * l2 * c12 * w2;
    return 0.5 * x.p[P.m1] * (v1x * v1x + v1y * v1y) +
           0.5 * x.p[P.m2] * (v2x * v2x + v2y * v2y) +
           0.5 * (x.p[P.m1] * l1 * l1 / 12.0) * w1 * w1 +
           0.5 * (x.p[P.m2] * l2 * l2 / 12.0) * w2 * w2;
  });
  b.PotentialEnergy([=](const auto& x) {
    const auto y1 = 0.5 * x.p[P.l1] * sin(x.q[0]);
    const auto y2 =
        x.p[P.l1] * sin(x.q[0]) + 0.5 * x.p[P.l2] * sin(x.q[0] + x.q[1]);
    return x.p[P.g] * (x.p[P.m1] * y1 + x.p[P.m2] * y2);
  });
  b.Input("u1", Column(2, 0, 1.0, 1, 0.0),
          [=](const auto& x) { return x.p[P.u1]; });
  b.Input("u2", Column(2, 0, 0.0, 1, 1.0),
          [=](const auto& x) { return x.p[P.u2]; });
  b.Damping([=](const auto& x) {
    using S = Scalar<decltype(x)>;
    MatX<S> d = MatX<S>::Zero(2, 2);
    d(0, 0) = x.p[P.b1];
    d(1, 1) = x.p[P.b2];
    return d;
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description = Description(
      "relative coordinates (q1 = alpha1 - pi/2 from the horizontal, q2 = "
      "alpha2 - alpha1 the elbow angle)");
  p.initial = [](const Eigen::VectorXd&) {
    InitialState s;
    s.q = Eigen::Vector2d(kRodPairStart[0] - M_PI / 2.0,
                          kRodPairStart[1] - kRodPairStart[0]);
    s.v =
        Eigen::Vector2d(kRodPairStart[2], kRodPairStart[3] - kRodPairStart[2]);
    return s;
  };
  Defaults(&p);
  return p;
}

Problem RodPairMaximalProblem() {
  using namespace rod_pair_detail;
  ModelBuilder b("rod_pair_maximal");
  b.Coordinates({"x1", "y1", "a1", "x2", "y2", "a2"});
  const Params P = Declare(b);
  b.KineticEnergy([=](const auto& x) {
    const auto& w = x.v;
    const auto i1 = x.p[P.m1] * x.p[P.l1] * x.p[P.l1] / 12.0;
    const auto i2 = x.p[P.m2] * x.p[P.l2] * x.p[P.l2] / 12.0;
    return 0.5 * x.p[P.m1] * (w[0] * w[0] + w[1] * w[1]) +
           0.5 * i1 * w[2] * w[2] +
           0.5 * x.p[P.m2] * (w[3] * w[3] + w[4] * w[4]) +
           0.5 * i2 * w[5] * w[5];
  });
  b.PotentialEnergy([=](const auto& x) {
    return x.p[P.g] * (x.p[P.m1] * x.q[1] + x.p[P.m2] * x.q[4]);
  });
  b.Holonomic(
      "base",
      [=](const auto& x) {
        VecX<Scalar<decltype(x)>> r(2);
        r[0] = x.q[0] - 0.5 * x.p[P.l1] * sin(x.q[2]);
        r[1] = x.q[1] + 0.5 * x.p[P.l1] * cos(x.q[2]);
        return r;
      },
      2);
  b.Holonomic(
      "elbow",
      [=](const auto& x) {
        VecX<Scalar<decltype(x)>> r(2);
        r[0] = x.q[0] + 0.5 * x.p[P.l1] * sin(x.q[2]) -
               (x.q[3] - 0.5 * x.p[P.l2] * sin(x.q[5]));
        r[1] = x.q[1] - 0.5 * x.p[P.l1] * cos(x.q[2]) -
               (x.q[4] + 0.5 * x.p[P.l2] * cos(x.q[5]));
        return r;
      },
      2);
  b.Input("u1", Column(6, 2, 1.0, 5, 0.0),
          [=](const auto& x) { return x.p[P.u1]; });
  b.Input("u2", Column(6, 2, -1.0, 5, 1.0),
          [=](const auto& x) { return x.p[P.u2]; });
  b.Damping(AbsoluteDamping(6, 2, 5, P.b1, P.b2));
  Problem p;
  p.model = std::move(b).Build();
  p.description = Description(
      "maximal coordinates (each rod's centre and angle, two revolute joints "
      "as holonomic constraints 'base' and 'elbow')");
  p.initial = [P](const Eigen::VectorXd& prm) {
    const double l1 = prm[P.l1], l2 = prm[P.l2];
    const double a1 = kRodPairStart[0], a2 = kRodPairStart[1];
    const double w1 = kRodPairStart[2], w2 = kRodPairStart[3];
    InitialState s;
    s.q.resize(6);
    s.v.resize(6);
    s.q << 0.5 * l1 * std::sin(a1), -0.5 * l1 * std::cos(a1), a1,
        l1 * std::sin(a1) + 0.5 * l2 * std::sin(a2),
        -l1 * std::cos(a1) - 0.5 * l2 * std::cos(a2), a2;
    s.v << 0.5 * l1 * std::cos(a1) * w1, 0.5 * l1 * std::sin(a1) * w1, w1,
        l1 * std::cos(a1) * w1 + 0.5 * l2 * std::cos(a2) * w2,
        l1 * std::sin(a1) * w1 + 0.5 * l2 * std::sin(a2) * w2, w2;
    return s;
  };
  Defaults(&p);
  // Baumgarte on Adams, like the reduced forms: at rtol 1e-9 it meets the
  // same balance as they do (projection needs BDF, whose lower order costs
  // an order of magnitude in accuracy here; GGL on IDAS stalls at these
  // tolerances, see docs/problems.md).
  p.defaults.formulation = Formulation::kBaumgarte;
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

ProblemVariants RodPairVariants() {
  ProblemVariants v;
  v.option = "coordinates";
  v.variants = {{"absolute", RodPairAbsoluteProblem},
                {"relative", RodPairRelativeProblem},
                {"maximal", RodPairMaximalProblem}};
  return v;
}

}  // namespace daedalus::problems
