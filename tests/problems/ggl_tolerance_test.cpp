// A library problem found while building the catalogue (reported to the
// lead; DISABLED_ so that CI stays green until the IDAS adapter is fixed).
//
// GGL on IDAS stalls at tolerances that CVODES handles easily: the
// Cartesian pendulum at rtol 1e-8 needs ~3900 steps with atol 1e-8 but
// over 2 million (and 186000 convergence failures) with atol 1e-10, and
// ~16000 at the looser rtol 1e-6, atol 1e-7; the maximal-coordinate rod
// pair fails at t = 0 with IDA_CONV_FAIL at rtol 1e-9, atol 1e-8. Step
// counts of a smooth 10 s swing should not grow 500-fold when only atol
// tightens, nor fall when the tolerances tighten.
#include <gtest/gtest.h>

#include "catalogue_support.hpp"
#include "pendulum.hpp"
#include "rod_pair.hpp"

namespace daedalus {
namespace {

TEST(GglTightTolerance, DISABLED_PendulumStepCountStaysModest) {
  const Problem p = problems::PendulumProblem();
  SimulationOptions o = p.defaults;
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.rtol = 1e-8;
  o.atol = 1e-10;
  o.output_step = o.t_end;  // max_steps counts per output interval
  o.max_steps = 50000;      // CVODES needs ~4000 for the same accuracy
  const testing::Run r = testing::RunProblem(p, o);
  EXPECT_TRUE(r.summary.ok) << r.summary.error;
}

TEST(GglTightTolerance, DISABLED_MaximalRodPairStarts) {
  const Problem p = problems::RodPairMaximalProblem();
  SimulationOptions o = p.defaults;
  o.formulation = Formulation::kGgl;
  o.integrator = Integrator::kIdas;
  o.rtol = 1e-9;
  o.atol = 1e-8;
  const testing::Run r = testing::RunProblem(p, o);
  EXPECT_TRUE(r.summary.ok) << r.summary.error;
}

}  // namespace
}  // namespace daedalus
