// Definitions of the models declared in chain.hpp, compiled once into a
// library (the headers are included by many tests).
#include "chain.hpp"

namespace daedalus::problems {

Problem ChainProblem(int n) {
  if (n < 1)
    throw std::invalid_argument("chain: --bodies must be at least 1, got " +
                                std::to_string(n));
  ModelBuilder b("chain");
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    names.push_back(IndexedName("x", i));
    names.push_back(IndexedName("y", i));
    names.push_back(IndexedName("theta", i));
  }
  b.Coordinates(names);
  const Param g = b.Parameter("g", 9.81);
  const Param len = b.Parameter("length", 1.0, ParamRange::Positive());
  const Param mass = b.Parameter("mass", 1.0, ParamRange::Positive());
  const double nd = n;
  for (int i = 0; i < n; ++i) {
    const int x = 3 * i, y = x + 1, th = x + 2;
    // T_i = (m (vx^2 + vy^2) + I omega^2) / 2: the constant 3 x 3 block
    // diag(m, m, I).
    b.ConstantBodyMass(Touches{{x, y, th}}, [=](const Eigen::VectorXd& p) {
      const double m = p[mass] / nd, l = p[len] / nd;
      return Eigen::Vector3d(m, m, m * l * l / 12.0)
          .asDiagonal()
          .toDenseMatrix();
    });
    b.PotentialEnergyTerm(Touches{{y}}, [=](const auto& s) {
      return s.p[mass] / nd * s.p[g] * s.q[y];
    });
  }
  b.Holonomic(
      "pivot", Touches{{0, 1, 2}},
      [=](const auto& s) {
        using S = Scalar<decltype(s)>;
        const S h = 0.5 * s.p[len] / nd;
        Eigen::Matrix<S, 2, 1> r;
        S sn, cs;
        SinCos(s.q[2], &sn, &cs);  // one sincos for both
        r << s.q[0] - h * sn, s.q[1] + h * cs;
        return r;
      },
      2);
  for (int i = 1; i < n; ++i) {
    const int a = 3 * (i - 1), c = 3 * i;
    b.Holonomic(
        IndexedName("joint", i), Touches{{a, a + 1, a + 2, c, c + 1, c + 2}},
        [=](const auto& s) {
          using S = Scalar<decltype(s)>;
          const S h = 0.5 * s.p[len] / nd;
          Eigen::Matrix<S, 2, 1> r;
          S sa, ca, sc, cc;
          SinCos(s.q[a + 2], &sa, &ca);
          SinCos(s.q[c + 2], &sc, &cc);
          r << (s.q[a] + h * sa) - (s.q[c] - h * sc),
              (s.q[a + 1] - h * ca) - (s.q[c + 1] + h * cc);
          return r;
        },
        2);
  }
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Planar chain of N uniform links (total length 1 m, mass 1 kg) in "
      "maximal coordinates (x, y, theta per body), revolute joints as two "
      "constraint rows each, the first joint to a fixed pivot; released at "
      "rest straight at 0.3 rad from the hanging vertical.";
  p.initial = [n, len](const Eigen::VectorXd& params) {
    const double l = params[len] / n, a = kChainReleaseAngle;
    InitialState s;
    s.q.resize(3 * n);
    s.v = Eigen::VectorXd::Zero(3 * n);
    for (int i = 0; i < n; ++i) {
      s.q[3 * i] = (i + 0.5) * l * std::sin(a);
      s.q[3 * i + 1] = -(i + 0.5) * l * std::cos(a);
      s.q[3 * i + 2] = a;
    }
    return s;
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-6;
  p.defaults.atol = 1e-8;
  // The released chain's step size is set by accuracy (its fast links), not
  // by stiffness: high-order Adams takes fewer steps than BDF here
  // (docs/performance.md).
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
