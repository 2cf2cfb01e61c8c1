// A thin disk (mass m, radius R) rolling upright without slipping on a
// horizontal plane: the vertical rolling disk (Bloch, Nonholonomic
// Mechanics and Control, 2003, section 1.4). Coordinates: the contact point
// (x, y), the heading phi of the disk's plane and its spin angle theta;
//
//   T = m (x'^2 + y'^2) / 2 + I theta'^2 / 2 + K phi'^2 / 2,
//   I = m R^2 / 2 (about the axle),  K = m R^2 / 4 (about a diameter),
//   roll (2 rows, nonholonomic): x' - R theta' cos phi = 0,
//                                y' - R theta' sin phi = 0.
//
// The rolling reactions do no work; the energy T, the heading rate phi' and
// the spin rate theta' are first integrals, so the contact point runs on a
// circle of radius R theta' / phi' at constant speed. Optional torques:
// a steering torque tau_phi and an axle torque tau_theta (inputs).
#pragma once

#include <cmath>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

inline Problem RollingDiskProblem() {
  ModelBuilder b("rolling_disk");
  b.Coordinates({"x", "y", "phi", "theta"});
  const Param m = b.Parameter("m", 1.0);
  const Param R = b.Parameter("R", 0.5);
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
