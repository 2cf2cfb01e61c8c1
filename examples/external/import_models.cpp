// The same robot from a URDF file and from its MJCF twin, imported through
// an installed Daedalus (find_package(daedalus COMPONENTS urdf mjcf):
// daedalus::urdf and daedalus::mjcf) and run side by side:
//
//   import_models ROBOT.urdf ROBOT.xml [T_END]
//
// Both run without joint limits (daedalus::WithoutJointLimits: the URDF's
// <limit> elements are contacts, docs/contact.md "Joint limits", and the
// MJCF twin arm7.xml, written for the MuJoCo side-by-side, has no ranges),
// start at q = 0, v = 0 and hang under gravity for T_END seconds
// (default 0.5) at rtol = atol = 1e-10 on CVODES BDF; the program prints
// each run's final coordinates and the largest difference between them
// (tests/package/external_project_test.py runs it on problems/data/arm7.urdf
// and arm7.xml: the same masses, frames and axes written twice).
#include <Eigen/Core>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "daedalus/mjcf.hpp"
#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"
#include "daedalus/urdf.hpp"

namespace {

daedalus::SimulationSummary Run(const daedalus::Model& model, double t_end) {
  daedalus::SimulationOptions o;
  o.t_end = t_end;
  o.output_step = t_end;
  o.rtol = o.atol = 1e-10;
  o.integrator = daedalus::Integrator::kCvodesBdf;
  const daedalus::InitialState x0{Eigen::VectorXd::Zero(model.nq()),
                                  Eigen::VectorXd::Zero(model.nv())};
  return daedalus::Simulate(model, x0, model.default_parameters(), o);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: import_models ROBOT.urdf ROBOT.xml [T_END]\n");
    return 2;
  }
  const double t_end = argc > 3 ? std::atof(argv[3]) : 0.5;
  try {
    daedalus::ModelBuilder ub("from_urdf");
    const daedalus::urdf::Robot robot = daedalus::urdf::Import(argv[1], &ub);
    const daedalus::Model from_urdf =
        daedalus::WithoutJointLimits(std::move(ub).Build());
    daedalus::ModelBuilder mb("from_mjcf");
    const daedalus::mjcf::Model m = daedalus::mjcf::Import(argv[2], &mb);
    const daedalus::Model from_mjcf =
        daedalus::WithoutJointLimits(std::move(mb).Build());
    std::printf(
        "urdf: robot '%s', %d coordinates; mjcf: model '%s', %d "
        "coordinates\n",
        robot.name.c_str(), from_urdf.nq(), m.name.c_str(), from_mjcf.nq());
    const daedalus::SimulationSummary a = Run(from_urdf, t_end);
    const daedalus::SimulationSummary b = Run(from_mjcf, t_end);
    if (!a.ok || !b.ok) {
      std::fprintf(stderr, "run failed: %s%s\n", a.error.c_str(),
                   b.error.c_str());
      return 1;
    }
    for (const auto* s : {&a, &b}) {
      std::printf("%s q(%g) =", s == &a ? "urdf" : "mjcf", s->t_reached);
      for (Eigen::Index i = 0; i < s->final.q.size(); ++i)
        std::printf(" %.12f", s->final.q[i]);
      std::printf("\n");
    }
    if (a.final.q.size() != b.final.q.size()) return 1;
    std::printf("max |q_urdf - q_mjcf| = %.3e\n",
                (a.final.q - b.final.q).cwiseAbs().maxCoeff());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "import_models: %s\n", e.what());
    return 2;
  }
  return 0;
}
