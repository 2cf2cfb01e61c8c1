// Definition of the model declared in squat_to_stand.hpp, compiled once into
// a library (the header is included by the tests).
#include "squat_to_stand.hpp"

#include <string>

namespace daedalus::problems {

Problem SquatToStandProblem() {
  using namespace squat_detail;
  ModelBuilder b("squat_to_stand");
  b.Coordinates({"q_ankle", "q_knee", "q_hip", "q_lumbar"});
  Params P;
  P.mass = b.Parameter("mass", 75.0, ParamRange::Positive());
  P.height = b.Parameter("height", 1.75, ParamRange::Positive());
  P.g = b.Parameter("g", 9.81);
  P.lumbar_fraction =
      b.Parameter("lumbar_fraction", 0.25, ParamRange::Between(0.05, 0.95));
  // The squat (docs/problems.md, "squat_to_stand"): 15 deg dorsiflexion,
  // 90 deg knee flexion, 110 deg hip flexion, 30 deg lumbar flexion; the
  // centre of mass 6 cm behind the ankle.
  const double deg = 3.14159265358979323846 / 180.0;
  const double squat[4] = {15.0 * deg, 90.0 * deg, 110.0 * deg, 30.0 * deg};
  for (size_t k = 0; k < 4; ++k)
    P.squat[k] = b.Parameter(std::string("squat_") + kSquatJoints[k], squat[k]);

  for (size_t k = 0; k < 4; ++k)
    P.tau_max[k] = b.Parameter(std::string("tau_max_") + kSquatJoints[k],
                               kTauMax[k], ParamRange::Positive());

  b.KineticEnergy([=](const auto& x) { return KineticEnergy(x, P); });
  b.PotentialEnergy([=](const auto& x) { return PotentialEnergy(x, P); });
  for (int k = 0; k < 4; ++k) {
    b.Input(
        kSquatJoints[size_t(k)],
        [=](const auto& x) {
          VecX<Scalar<decltype(x)>> c = VecX<Scalar<decltype(x)>>::Zero(4);
          c[k] = x.p[P.tau_max[size_t(k)]];
          return c;
        },
        [=](const auto& x) {
          return HoldTorques(x.p, P)[k] / x.p[P.tau_max[size_t(k)]];
        });
  }
  // The joint angles and rates at the end of the run (or at an event):
  // the optimal control's end conditions and joint-limit path constraints.
  for (int k = 0; k < 4; ++k) {
    const std::string joint = kSquatJoints[size_t(k)];
    b.TerminalFunctional("q_" + joint, [k](const auto& x) { return x.q[k]; });
    b.TerminalFunctional("v_" + joint, [k](const auto& x) { return x.v[k]; });
  }
  // The whole body's centre of mass ahead of the ankle [m] (the feet are
  // fixed, so nothing keeps it over them; reported, not constrained).
  b.TerminalFunctional("com_x", [=](const auto& x) {
    using S = Scalar<decltype(x)>;
    const Segments<S> s =
        Anthropometry(x.p[P.mass], x.p[P.height], x.p[P.lumbar_fraction]);
    const auto com = ComPositions(s, x.q);
    S mx = S(0.0), m = S(0.0);
    for (size_t i = 0; i < 4; ++i) {
      mx += s.m[i] * com[i][0];
      m += s.m[i];
    }
    return mx / m;
  });

  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Planar torque-driven human (Winter 2009 anthropometry, 75 kg, "
      "1.75 m), feet fixed: joint angles q_ankle, q_knee, q_hip, q_lumbar "
      "(0 upright, flexion positive), a torque input per joint as a "
      "fraction of its peak torque tau_max_*. By default "
      "the torques hold the squat (squat_* parameters) at rest; "
      "--optimize examples/optimal_control/squat_to_stand.json finds the "
      "minimum-effort rise to standing within the joint ranges.";
  p.initial = [P](const Eigen::VectorXd& prm) {
    InitialState s;
    s.q.resize(4);
    for (size_t k = 0; k < 4; ++k) s.q[Eigen::Index(k)] = prm[P.squat[k]];
    s.v = Eigen::VectorXd::Zero(4);
    return s;
  };
  p.defaults.t_end = 1.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-9;
  p.defaults.atol = 1e-11;
  // Smooth and not stiff: Adams takes fewer steps than BDF at the tight
  // tolerances of the optimal control.
  p.defaults.integrator = Integrator::kCvodesAdams;
  return p;
}

}  // namespace daedalus::problems
