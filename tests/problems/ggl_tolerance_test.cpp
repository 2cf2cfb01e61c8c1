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
//
// Diagnosis (by temporarily patching src/idas_integrate.cpp, not
// committed):
//  1. IDASetQuadErrCon(SUNTRUE) puts the energy-balance quadratures in the
//     local error test, and their integrands (lambda J v, -lambda Phi_t and
//     the GGL correction power, which uses mu) depend on the index-2
//     algebraic variables, whose errors are O(atol / h) and deliberately
//     left out of the error test (IDASetSuppressAlg). With quadrature error
//     control off the pendulum at rtol 1e-8, atol 1e-10 takes 3895 steps
//     instead of 2012814 (and its energy residual falls from 1.4e-3 to
//     6.4e-6 J).
//  2. IDAS's first step is of order 1e-15 s here; at such steps the
//     index-2 Newton matrix (condition ~ 1/h^2) is singular in double
//     precision, so the corrector fails at t = 0. IDASetInitStep(1e-6) (with
//     1) lets the maximal rod pair at rtol 1e-9, atol 1e-11 and
//     particle_sphere at rtol 1e-10, atol 1e-12 run (3239 and 2798 steps,
//     energy residuals 2.8e-8 and 4.9e-9 J). four_bar still fails mid-run
//     (IDA_CONV_FAIL with h ~ 1e-11), the same ill-conditioning once the
//     step shrinks; scaling the index-2 rows or variables by h is the usual
//     cure.
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
