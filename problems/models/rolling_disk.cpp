// Definitions of the models declared in rolling_disk.hpp, compiled once into a
// library (the headers are included by many tests).
#include "rolling_disk.hpp"

namespace daedalus::problems {

Problem RollingDiskProblem() {
  ModelBuilder b("rolling_disk");
  b.Coordinates({"x", "y", "phi", "theta"});
  const Param m = b.Parameter("m", 1.0, ParamRange::Positive());
  const Param R = b.Parameter("R", 0.5, ParamRange::Positive());
  const Param phid0 = b.Parameter("phidot0", 0.5);
  const Param thd0 = b.Parameter("thetadot0", 2.0);
  const Param tphi = b.Parameter("tau_phi", 0.0);
  const Param tth = b.Parameter("tau_theta", 0.0);
  b.KineticEnergy([=](const auto& x) {
    const auto r2 = x.p[R] * x.p[R];
    return 0.5 * x.p[m] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]) +
           0.5 * (x.p[m] * r2 / 2.0) * x.v[3] * x.v[3] +
           0.5 * (x.p[m] * r2 / 4.0) * x.v[2] * x.v[2];
  });
  b.Nonholonomic(
      "roll",
      [=](const auto& x) {
        VecX<Scalar<decltype(x)>> r(2);
        r[0] = x.v[0] - x.p[R] * x.v[3] * cos(x.q[2]);
        r[1] = x.v[1] - x.p[R] * x.v[3] * sin(x.q[2]);
        return r;
      },
      2);
  auto unit = [](int i) {
    return [i](const auto& x) {
      VecX<Scalar<decltype(x)>> c = VecX<Scalar<decltype(x)>>::Zero(4);
      c[i] = 1.0;
      return c;
    };
  };
  b.Input("tau_phi", unit(2), [=](const auto& x) { return x.p[tphi]; });
  b.Input("tau_theta", unit(3), [=](const auto& x) { return x.p[tth]; });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Vertical disk rolling without slip on a plane (two nonholonomic "
      "rows); heading rate, spin rate and energy are conserved without "
      "torques, and the contact point circles at radius R theta'/phi'.";
  p.initial = [=](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q = Eigen::Vector4d::Zero();
    s.v = Eigen::Vector4d(prm[R] * prm[thd0], 0.0, prm[phid0], prm[thd0]);
    return s;
  };
  p.defaults.t_end = 10.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  // Smooth and nonstiff: Adams is the accurate choice.
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
