// The scaled Newton convergence tests declared in idas_newton.hpp.
#include "integrate/idas_newton.hpp"

#include <idas/idas.h>
#include <sunnonlinsol/sunnonlinsol_newton.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "integrate/sundials_util.hpp"

namespace daedalus::internal {

namespace {

// The weight of an algebraic unknown is the smaller of IDAS's own,
// 1 / (rtol |lambda| + atol), which applies where the step is long enough
// to resolve it, and this factor times the weight of its effect on q or v
// within the step. Multiplier errors are systematic from step to step, so
// that effect is kept well below the differential components' Newton
// tolerance. Measured on the slider-crank's kinetic-energy integral at
// rtol 1e-10, atol 1e-8 (reference 3.336606799482804): factor 1 and 100
// end 3.7e-7 and 5.6e-8 (relative) from it, 1e4 within 1e-8, as IDAS's
// own weights; 1e8 is tight enough to stop the four-bar's GGL run again
// (t = 2.3 of 10 s at the defaults).
constexpr double kAlgebraicWeightFactor = 1e4;

// The factor is capped so that round-off can pass the test: a Newton
// increment carries round-off of about eps |q|_inf in q (eps |v|_inf in
// v), which an unknown resolved through h^power shows amplified by
// 1/h^power; weighed as above it counts factor * w * eps |q|_inf, which
// must stay well below the test's threshold (about 0.33) at every step
// size. Without the cap the slider-crank's index-3 run at rtol 1e-12
// stalled at t = 0 with the multipliers' weighted increment at 0.46 (pure
// round-off, the same at every iteration and every h). The linear solve
// amplifies round-off by its conditioning: at 1e-2 the index-3 run with
// forward sensitivities on the support-matrix chain still stalled at
// t = 0.566 (rtol 1e-10), the multipliers' sensitivities at weighted
// increments 0.1 to 0.35 while their q and v had converged; hence 1e-3.
constexpr double kRoundoffShare = 1e-3;

// Rescales the Newton weights w of one vector of the layout (q, v,
// algebraic) at step h, given the magnitudes of q and v it refers to.
void ScaleNewtonWeights(const ScaledNewtonTest& s,
                        double h,
                        double qmax,
                        double vmax,
                        Eigen::Ref<Eigen::VectorXd> w) {
  const double wq = w.head(s.nq).maxCoeff();
  const double wv = w.segment(s.nq, s.nv).maxCoeff();
  constexpr double eps = std::numeric_limits<double>::epsilon();
  // The factor for an unknown acting on q (on v): capped by round-off.
  const auto factor = [&](double weight, double magnitude) {
    const double floor = eps * magnitude * weight;
    return floor > 0.0
               ? std::min(kAlgebraicWeightFactor, kRoundoffShare / floor)
               : kAlgebraicWeightFactor;
  };
  const double fq = factor(wq, qmax), fv = factor(wv, vmax);
  if (s.index3)
    for (int i = 0; i < s.nv; ++i) {
      double& wi = w[s.nq + i];
      wi = std::min(wi, fq * h * wq);
    }
  for (size_t j = 0; j < s.weights.size(); ++j) {
    const DaeForm::AlgebraicWeight& a = s.weights[j];
    const double hp = a.power == 2 ? h * h : h;
    double& wj = w[s.first_algebraic + static_cast<Eigen::Index>(j)];
    wj = std::min(wj, (a.on_q ? fq * wq : fv * wv) * hp * a.scale);
  }
}

double CurrentStep(void* mem) {
  realtype h = 0.0;
  IDAGetCurrentStep(mem, &h);
  return std::abs(h);
}

// The magnitudes of q and v in the current iterate y (for the round-off
// cap), or 0 when IDAS has none yet.
std::pair<double, double> StateMagnitudes(const ScaledNewtonTest& s,
                                          N_Vector ycur) {
  if (ycur == nullptr) return {0.0, 0.0};
  const auto y = View(ycur);
  return {y.head(s.nq).cwiseAbs().maxCoeff(),
          y.segment(s.nq, s.nv).cwiseAbs().maxCoeff()};
}

}  // namespace

int ScaledConvTest(SUNNonlinearSolver nls,
                   N_Vector ycor,
                   N_Vector del,
                   realtype tol,
                   N_Vector ewt,
                   void* data) {
  auto* s = static_cast<ScaledNewtonTest*>(data);
  N_Vector ycur = nullptr;
  IDAGetCurrentY(s->mem, &ycur);
  const auto [qmax, vmax] = StateMagnitudes(*s, ycur);
  ScaleNewtonWeights(*s, CurrentStep(s->mem), qmax, vmax, View(ewt));
  return s->inner(nls, ycor, del, tol, ewt, s->inner_data);
}

namespace {

// The simultaneous corrector of forward sensitivities iterates on the
// state and its ns sensitivities at once, its weights a "sens wrapper"
// vector of ns + 1 vectors. SUNDIALS 6.4 does not install the header of
// that vector type (src/sundials/sundials_nvector_senswrapper.h); its
// content is this struct, read only to reach the member vectors.
struct SensWrapperContent {
  N_Vector* vecs;
  int nvecs;
  booleantype own_vecs;
};

// Each member's weights are rescaled like the state's: a sensitivity
// is resolved to round-off / h^power relative to its own magnitude just
// as the state is (the same Newton matrix), so without this the
// sensitivity corrector stalled where the state's no longer did (index 3
// with forward sensitivities on the support-matrix chain: IDA_CONV_FAIL
// at t = 5.8e-11). The simultaneous corrector's weights are a sens wrapper
// of the state's and the ns sensitivities'; the staggered one's (it
// iterates on the sensitivities once the state has converged) of the
// sensitivities' alone. Without the rescaling there, the multiplier
// sensitivities of GGL, held to atol by IDAS's own test, could not
// converge at small atol (slider_crank --formulation ggl --sens a --atol
// 1e-10: IDA_CONV_FAIL at t = 0, h = 5.6e-16).
int ScaledSensConvTest(SUNNonlinearSolver nls,
                       N_Vector ycor,
                       N_Vector del,
                       realtype tol,
                       N_Vector ewt,
                       void* data,
                       bool with_state) {
  auto* s = static_cast<ScaledNewtonTest*>(data);
  const double h = CurrentStep(s->mem);
  N_Vector ycur = nullptr;
  if (with_state) IDAGetCurrentY(s->mem, &ycur);
  N_Vector* yS = nullptr;
  IDAGetCurrentYSens(s->mem, &yS);
  auto* c = static_cast<SensWrapperContent*>(ewt->content);
  const int first_sens = with_state ? 1 : 0;
  for (int k = 0; k < c->nvecs; ++k) {
    N_Vector of = k < first_sens ? ycur : yS ? yS[k - first_sens] : nullptr;
    const auto [qmax, vmax] = StateMagnitudes(*s, of);
    ScaleNewtonWeights(*s, h, qmax, vmax, View(c->vecs[k]));
  }
  return s->inner(nls, ycor, del, tol, ewt, s->inner_data);
}

}  // namespace

int ScaledSensSimConvTest(SUNNonlinearSolver nls,
                          N_Vector ycor,
                          N_Vector del,
                          realtype tol,
                          N_Vector ewt,
                          void* data) {
  return ScaledSensConvTest(nls, ycor, del, tol, ewt, data, true);
}

int ScaledSensStgConvTest(SUNNonlinearSolver nls,
                          N_Vector ycor,
                          N_Vector del,
                          realtype tol,
                          N_Vector ewt,
                          void* data) {
  return ScaledSensConvTest(nls, ycor, del, tol, ewt, data, false);
}

}  // namespace daedalus::internal
