// GGL and index 3 on IDAS with default options across the catalogue's
// constrained problems (issue 19, part): before the algebraic unknowns were
// weighed by the step in the Newton test (and, for index 3, the velocities
// left out of the error test), GGL stopped at t = 1.9e-14 on the four-bar
// at atol 1e-10 and index 3 failed at t = 0 on every catalogue problem
// (docs/formulations.md, "Scaling of the algebraic unknowns"). Each run is
// compared with a Baumgarte run on CVODES BDF at rtol 1e-10.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "atwood.hpp"
#include "bead_parabola.hpp"
#include "catalogue_support.hpp"
#include "chaplygin_sleigh.hpp"
#include "double_pendulum.hpp"
#include "four_bar.hpp"
#include "four_bar_mb.hpp"
#include "golfer_3d.hpp"
#include "moving_support.hpp"
#include "particle_sphere.hpp"
#include "pendulum.hpp"
#include "rod_pair.hpp"
#include "rolling_disk.hpp"
#include "rotating_particle.hpp"
#include "slider_crank.hpp"
#include "slider_crank_mb.hpp"
#include "stiff_linkage.hpp"
#include "support/test_support.hpp"

namespace daedalus {
namespace {
namespace dae_defaults_test {

struct Case {
  const char* name;
  Problem (*make)();
  // The position-error bounds below were set on the four-bar, whose crank
  // turns about 5 rad in the 0.5 s window. A turning crank's error is
  // mostly phase, which grows with the angle turned, so a problem whose
  // crank turns farther scales the bounds by that ratio: stiff_linkage's
  // crank turns about 500 rad (1e3 rad/s), hence 100. Its own test
  // (stiff_linkage_test.cpp) holds it to about three times its measured
  // errors at every tolerance from 1e-4 to 1e-12.
  double scale = 1.0;
};

const Case kCases[] = {
    {"pendulum", problems::PendulumProblem},
    {"double_pendulum", problems::DoublePendulumProblem},
    {"four_bar", problems::FourBarProblem},
    {"slider_crank", problems::SliderCrankProblem},
    {"rolling_disk", problems::RollingDiskProblem},
    {"chaplygin_sleigh", problems::ChaplyginSleighProblem},
    {"moving_support", problems::MovingSupportProblem},
    {"particle_sphere", problems::ParticleSphereProblem},
    {"bead_parabola", problems::BeadParabolaConstrainedProblem},
    {"atwood", problems::AtwoodConstrainedProblem},
    {"rotating_particle", problems::RotatingParticleProblem},
    {"rod_pair_maximal", problems::RodPairMaximalProblem},
    {"stiff_linkage", problems::StiffLinkageProblem, 100.0},
    // The two written as multibody descriptions (the same mechanisms).
    {"four_bar_mb", problems::FourBarMbProblem},
    {"slider_crank_mb", problems::SliderCrankMbProblem},
};

class DaeDefaults : public ::testing::TestWithParam<Case> {};

// The reference runs: Baumgarte on CVODES BDF at rtol 1e-10, atol 1e-12.
SimulationOptions ReferenceOptions(SimulationOptions o) {
  o.formulation = Formulation::kBaumgarte;
  o.integrator = Integrator::kCvodesBdf;
  o.rtol = 1e-10;
  o.atol = 1e-12;
  return o;
}

// The worst position error over the samples against the reference.
double PositionError(const testing::Run& a, const testing::Run& ref) {
  double e = 0.0;
  for (size_t i = 0; i < std::min(a.samples.size(), ref.samples.size()); ++i)
    e = std::max(e,
                 (a.samples[i].q - ref.samples[i].q).lpNorm<Eigen::Infinity>());
  return e;
}

TEST_P(DaeDefaults, GglAndIndexThreeRunAndConverge) {
  // stiff_linkage's five runs took 47 s under the sanitizers; there
  // StiffLinkage.GglBalancesEnergyAndHoldsTheConstraints runs its GGL form
  // through the same code.
  if (std::string(GetParam().name) == "stiff_linkage") {
    DAEDALUS_RELEASE_BUILD_ONLY("stiff_linkage: 47 s here");
  }
  const Problem p = GetParam().make();
  SimulationOptions base = p.defaults;
  base.t_end = base.t0 + 0.5;
  base.output_step = 0.05;
  const testing::Run ref = testing::RunProblem(p, ReferenceOptions(base));
  ASSERT_TRUE(ref.summary.ok) << ref.summary.error;
  struct Tol {
    Formulation f;
    double tol, bound;
  };
  // rtol = atol = tol, as a user would pass them. `bound` on the position
  // error over 0.5 s; measured worst (the four-bar, its crank at 10 rad/s):
  // GGL 4.6e-3 at 1e-4 and 4.3e-9 at 1e-10; index 3, which keeps only the
  // positions under error control, 8.7e-3 at 1e-6 and 5.8e-4 at 1e-8.
  // stiff_linkage (scale 100): GGL 0.11 and 1.2e-6, index 3 0.35 and 0.10.
  const Tol tols[] = {{Formulation::kGgl, 1e-4, 2e-2},
                      {Formulation::kGgl, 1e-10, 1e-7},
                      {Formulation::kIndex3, 1e-6, 2e-2},
                      {Formulation::kIndex3, 1e-8, 2e-3}};
  double index3_error[2] = {0.0, 0.0};
  for (const Tol& t : tols) {
    SimulationOptions o = base;
    o.formulation = t.f;
    o.integrator = Integrator::kIdas;
    o.rtol = o.atol = t.tol;
    const testing::Run run = testing::RunProblem(p, o);
    const std::string what =
        std::string(ToString(t.f)) + " at " + std::to_string(t.tol);
    ASSERT_TRUE(run.summary.ok) << what << ": " << run.summary.error;
    EXPECT_DOUBLE_EQ(run.summary.t_reached, o.t_end) << what;
    const double e = PositionError(run, ref);
    EXPECT_LT(e, t.bound * GetParam().scale) << what;
    if (t.f == Formulation::kIndex3) index3_error[t.tol < 1e-7] = e;
  }
  // Index 3 converges: 100 times tighter tolerances, at least 2 times
  // smaller errors (measured 3 to 70), down to the reference's own error.
  EXPECT_LE(index3_error[1], std::max(index3_error[0] / 2.0, 1e-10));
}

// Issue 19's claim, as a user would run it: GGL and index 3 start and run
// to the end with default options at every rtol = atol from 1e-4 to 1e-12
// (accuracy is checked above and, for stiff_linkage, at every tolerance in
// stiff_linkage_test.cpp).
TEST_P(DaeDefaults, GglAndIndexThreeRunAtEveryTolerance) {
  DAEDALUS_RELEASE_BUILD_ONLY(
      "130 runs of the forms GglAndIndexThreeRunAndConverge runs");
  const Problem p = GetParam().make();
  SimulationOptions o = p.defaults;
  o.t_end = o.t0 + 0.5;
  o.output_step = 0.05;
  o.integrator = Integrator::kIdas;
  for (const Formulation f : {Formulation::kGgl, Formulation::kIndex3})
    for (const double tol : {1e-4, 1e-6, 1e-8, 1e-10, 1e-12}) {
      o.formulation = f;
      o.rtol = o.atol = tol;
      const testing::Run run = testing::RunProblem(p, o);
      const std::string what =
          std::string(ToString(f)) + " at " + std::to_string(tol);
      EXPECT_TRUE(run.summary.ok) << what << ": " << run.summary.error;
      EXPECT_DOUBLE_EQ(run.summary.t_reached, o.t_end) << what;
    }
}

// The multibody golfer (a ball-jointed shoulder on a unit quaternion, the
// trail hand closing a loop on the grip, a flexible shaft): GGL and index 3
// with default options at every rtol = atol from 1e-4 to 1e-12, each run to
// its impact event, whose time agrees with Baumgarte on CVODES BDF at rtol
// 1e-10 (`golfer_3d --formulation ggl --integrator idas --rtol T --atol T`).
// Measured differences (the swing of bench/golfer_search.py, impact at
// 0.3219 s): GGL 2.3e-6, 3.9e-8, 1.8e-9, 1.0e-11, 9.8e-12 and index 3
// 1.6e-4, 2.1e-6, 1.7e-7, 8.1e-9, 9.4e-11 at 1e-4 ... 1e-12 (index 3 keeps
// only the positions under error control, so its event time is one to two
// orders less accurate); the bounds below are 10 x tol (GGL) and 30 x tol
// (index 3), floored at the reference's own accuracy. (On the energy form,
// whose M and h differ from the recursive ones by round-off, index 3 at
// 1e-8 was 6.0e-7 off: its error is not under control, docs/formulations.md;
// these bounds are the recursive form's.)
TEST(DaeDefaultsMultibody, Golfer3dRunsToImpactAtEveryTolerance) {
  DAEDALUS_RELEASE_BUILD_ONLY("eleven golfer runs on dual numbers");
  // The recursive form, golfer_3d's default on the command line (the
  // energy form's M and h on dual numbers take 50 times longer).
  const Problem p = problems::Golfer3dProblemForm(mb::DynamicsForm::kRecursive);
  const testing::Run ref = testing::RunProblem(p, ReferenceOptions(p.defaults));
  ASSERT_TRUE(ref.summary.ok) << ref.summary.error;
  ASSERT_EQ(ref.summary.events.size(), 1u);
  ASSERT_EQ(ref.summary.events[0].name, "impact");
  const double t_impact = ref.summary.events[0].t;
  EXPECT_GT(t_impact, 0.2);
  for (const Formulation f : {Formulation::kGgl, Formulation::kIndex3})
    for (const double tol : {1e-4, 1e-6, 1e-8, 1e-10, 1e-12}) {
      SimulationOptions o = p.defaults;
      o.formulation = f;
      o.integrator = Integrator::kIdas;
      o.rtol = o.atol = tol;
      const testing::Run run = testing::RunProblem(p, o);
      const std::string what =
          std::string(ToString(f)) + " at " + std::to_string(tol);
      ASSERT_TRUE(run.summary.ok) << what << ": " << run.summary.error;
      ASSERT_EQ(run.summary.events.size(), 1u) << what;
      EXPECT_TRUE(run.summary.events[0].stopped) << what;
      const double bound = f == Formulation::kGgl ? std::max(10 * tol, 1e-10)
                                                  : std::max(30 * tol, 1e-8);
      EXPECT_LT(std::abs(run.summary.events[0].t - t_impact), bound) << what;
    }
}

INSTANTIATE_TEST_SUITE_P(Catalogue,
                         DaeDefaults,
                         ::testing::ValuesIn(kCases),
                         [](const auto& info) {
                           return std::string(info.param.name);
                         });

}  // namespace dae_defaults_test
}  // namespace
}  // namespace daedalus
