// One IDAS integration of a DAE form from a consistent start (a segment):
// the IDAS memory, its callbacks (trampolines into the form), linear and
// nonlinear solvers, tolerances and quadratures, and its forward
// sensitivities. The IDAS adapter (idas.cpp) starts a new segment at the
// start, at a drift escalation and after an event's reset.
#pragma once

#include <idas/idas.h>
#include <sunnonlinsol/sunnonlinsol_newton.h>

#include <Eigen/Core>
#include <memory>
#include <vector>

#include "formulation/dae_form.hpp"
#include "formulation/roots.hpp"
#include "integrate/common.hpp"
#include "integrate/idas_newton.hpp"
#include "integrate/sundials_util.hpp"

namespace daedalus::internal {

/// The state the IDAS callbacks share (user data).
struct IdasRun : CallbackGuard {
  DaeForm* form = nullptr;
  const RootSet* roots = nullptr;
  std::vector<Eigen::VectorXd> directions;  // per sensitivity parameter
  // Quadrature sensitivities of the model's own quadratures only (the
  // energy-balance entries zero): when they are out of the error test.
  bool user_quad_sens_only = false;
  // IDAS's staggered corrector evaluates F at the converged state of every
  // step and hands it to the sensitivity residuals, which here ignore it
  // (SkipsConvergedResidual): that call is skipped. `newton_delta` is the
  // state corrector's residual vector (its calls are never skipped) and
  // `state_converged` says the state corrector has just converged.
  bool skip_converged_residual = false;
  bool state_converged = false;
  N_Vector newton_delta = nullptr;
  // Error weights (EwtFn): rtol, the absolute tolerances of the current
  // segment, and its layout.
  double rtol = 0.0;
  Eigen::VectorXd atol;
  int nq = 0, nv = 0;
};

struct Segment {
  ~Segment() {
    if (mem) IDAFree(&mem);
  }
  void* mem = nullptr;
  VectorPtr y, yp, id, yq, atol, qtol;
  MatrixPtr A;
  LinSolPtr LS;
  // Freed after IDAFree (members outlive the destructor's body); IDAS
  // does not free a solver it was given.
  std::unique_ptr<std::remove_pointer_t<SUNNonlinearSolver>, NlsFree> NLS;
  ScaledNewtonTest test;
  // The sensitivity corrector (simultaneous or staggered) and its
  // wrapped test.
  std::unique_ptr<std::remove_pointer_t<SUNNonlinearSolver>, NlsFree> NLSsim;
  ScaledNewtonTest sens_test;
};

/// Staggered unless asked otherwise (idas_segment.cpp).
bool Staggered(const SensitivityOptions& so);

/// Whether IDAS's staggered corrector's residual at the converged state
/// can be skipped (idas_segment.cpp).
bool SkipsConvergedResidual(const SimulationOptions& o, bool staggered);

/// A new segment of `form` from the consistent (y0, yp0) at t0 with the
/// quadratures at quad0 and `num_roots` root functions in `directions`.
std::unique_ptr<Segment> StartSegment(DaeForm* form,
                                      IdasRun* run,
                                      const SimulationOptions& options,
                                      SUNContext ctx,
                                      double t0,
                                      const Eigen::VectorXd& y0,
                                      const Eigen::VectorXd& yp0,
                                      const Eigen::VectorXd& quad0,
                                      const std::vector<int>& directions,
                                      bool skip_converged_residual);

/// Forward sensitivities on segment `seg`: ns directions starting at
/// (yS, ypS) and the quadratures' at qS (all owned by the caller, sized
/// like the segment's vectors); `has_quad_sens` whether the quadratures'
/// sensitivities are integrated (IdasRun::user_quad_sens_only says
/// which). DQ parameters when options ask for difference quotients:
/// IDAS keeps the pointers to pvals, plist and pbar, which must outlive
/// the segment.
void StartSensitivities(Segment* seg,
                        IdasRun* run,
                        DaeForm* form,
                        const SimulationOptions& options,
                        SUNContext ctx,
                        int ns,
                        N_Vector* yS,
                        N_Vector* ypS,
                        N_Vector* qS,
                        bool has_quad_sens,
                        Eigen::VectorXd* pvals,
                        std::vector<int>* plist,
                        Eigen::VectorXd* pbar);

}  // namespace daedalus::internal
