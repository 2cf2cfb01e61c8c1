// Definition of the model declared in free_body.hpp.
#include "free_body.hpp"

namespace daedalus::problems {

Problem FreeBodyProblem() {
  ModelBuilder b("free_body");
  b.Quaternion("R");
  const Param i1 = b.Parameter("I1", 1.0, ParamRange::Positive());
  const Param i2 = b.Parameter("I2", 2.0, ParamRange::Positive());
  const Param i3 = b.Parameter("I3", 3.0, ParamRange::Positive());
  const Param w0 = b.Parameter("omega0", 5.0);
  const Param eps = b.Parameter("eps", 1e-3);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * (x.p[i1] * x.v[0] * x.v[0] + x.p[i2] * x.v[1] * x.v[1] +
                  x.p[i3] * x.v[2] * x.v[2]);
  });
  // For adjoint sensitivities (--sens-method adjoint --functional
  // axis2_y): the y component of the body's axis 2 in the world at t_end,
  // (R e2)_y = 1 - 2 (x^2 + z^2), which goes from 1 to -1 on each flip.
  b.TerminalFunctional("axis2_y", [](const auto& x) {
    return 1.0 - 2.0 * (x.q[1] * x.q[1] + x.q[3] * x.q[3]);
  });
  Problem p;
  p.model = std::move(b).Build();
  p.description =
      "Torque-free asymmetric rigid body (I1 < I2 < I3) spun about its "
      "intermediate axis with a small perturbation eps: the orientation as a "
      "unit quaternion R (nq = 4), the body angular velocity w (nv = 3); it "
      "flips over periodically while T and the world angular momentum stay "
      "constant.";
  p.initial = [=](const Eigen::VectorXd& params) {
    InitialState s;
    s.q = Eigen::Vector4d(1.0, 0.0, 0.0, 0.0);
    s.v = Eigen::Vector3d(params[eps], params[w0], params[eps]);
    return s;
  };
  p.defaults.t_end = 10.0;
  p.defaults.output_step = 0.01;
  p.defaults.rtol = 1e-10;
  p.defaults.atol = 1e-12;
  return p;
}

}  // namespace daedalus::problems
