// The scaled Newton convergence test of the IDAS forms with algebraic
// unknowns (GGL, index 3) and of their sensitivity correctors
// (src/integrate/idas.cpp installs them).
#pragma once

#include <sundials/sundials_nonlinearsolver.h>

#include <vector>

#include "formulation/dae_form.hpp"

namespace daedalus::internal {

// The Newton convergence test of GGL and index 3 with the algebraic
// unknowns weighed by the step (DaeForm::AlgebraicWeight): IDAS's own test
// (kept as `inner`) runs on its error weights with the algebraic entries
// replaced by h^power * scale * (the largest q or v weight), h the step
// being attempted. With a fixed weight 1/atol, an index-2 multiplier,
// resolved only to round-off / h, fails the test as the step shrinks, and
// the step shrinks because the test fails: GGL on the four-bar stopped at
// t = 1.9e-14 with IDA_TOO_MUCH_WORK at the default atol 1e-10.
struct NlsFree {
  void operator()(SUNNonlinearSolver s) const { SUNNonlinSolFree(s); }
};

// Index 3: the velocities, too, are resolved only to round-off / h (q =
// q_pred + h v / alpha within a step), so their weight is capped the same
// way, by their effect h dv on q. Without it the velocity increment of
// round-off size failed the test below h ~ 1e-9: at rtol 1e-10 the
// slider-crank and the chain stopped at t = 0 (the slider-crank with
// IDA_CONV_FAIL at h = 2.4e-11, its weighted velocity increment 1e6, the
// same at the first and second iteration), the four-bar at t = 5e-13.
struct ScaledNewtonTest {
  void* mem = nullptr;
  SUNNonlinSolConvTestFn inner = nullptr;
  void* inner_data = nullptr;
  int nq = 0, nv = 0, first_algebraic = 0;
  bool index3 = false;
  std::vector<DaeForm::AlgebraicWeight> weights;
};

// IDAS's Newton test on the state (data: a ScaledNewtonTest).
int ScaledConvTest(SUNNonlinearSolver nls,
                   N_Vector ycor,
                   N_Vector del,
                   realtype tol,
                   N_Vector ewt,
                   void* data);

// The simultaneous sensitivity corrector's test (state and sensitivities).
int ScaledSensSimConvTest(SUNNonlinearSolver nls,
                          N_Vector ycor,
                          N_Vector del,
                          realtype tol,
                          N_Vector ewt,
                          void* data);

// The staggered sensitivity corrector's test (the sensitivities alone).
int ScaledSensStgConvTest(SUNNonlinearSolver nls,
                          N_Vector ycor,
                          N_Vector del,
                          realtype tol,
                          N_Vector ewt,
                          void* data);

}  // namespace daedalus::internal
