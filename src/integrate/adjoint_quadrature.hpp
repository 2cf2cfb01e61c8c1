// The CVODES adjoint's parameter quadrature by Gauss-Legendre on the
// backward steps (adjoint_cvodes.cpp), for models whose parameters declare
// time supports (ModelBuilder::ParameterTimeSupport: the controls' spline
// coefficients).
//
// xi(t0) = int_t0^t1 (g_p + mu' f_p) dt. CVODES integrates it as a
// backward quadrature under error control; its integrand has a kink at
// each end of a declared support (every knot of a control), after which
// BDF's error test fails and its order restarts low: 2962 backward steps
// on the 100-knot pendulum of bench/optimal_control_bench, against 100
// forward, and a gradient 1.8e-7 off the closed form. Here the backward
// problem takes its steps under mu's error control alone, and each step
// [tn, tp] is split at the kinks and integrated by the 4-point rule (exact
// for polynomials of degree 7; the spline terms are polynomials between
// knots), with mu from the step's interpolant (CVodeGetDky) and the forward
// state from CVODES's (CVodeGetAdjY), the ones CVODES's own quadrature
// reads: 271 steps there, the gradient within 7e-13 of the closed form.
#pragma once

#include <cvodes/cvodes.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "formulation/sens_programs.hpp"
#include "integrate/sundials_util.hpp"
#include "sensitivity/forward.hpp"

namespace daedalus::internal {

// 4-point Gauss-Legendre on [0, 1] (exact for polynomials of degree 7).
constexpr double kGaussNode[4] = {0.0694318442029737, 0.3300094782075719,
                                  0.6699905217924281, 0.9305681557970263};
constexpr double kGaussWeight[4] = {0.1739274225687269, 0.3260725774312731,
                                    0.3260725774312731, 0.1739274225687269};

// Whether the parameters' quadrature is done by Gauss-Legendre on the
// backward steps (the model declares time supports: its integrand has a
// kink at each end of one, e.g. every knot of a control). CVODES's own
// quadrature, error-controlled, restarts BDF at order 1 after each kink
// and took 2962 backward steps on the 100-knot pendulum (forward: 100);
// on the steps that mu's error control chooses, split at the kinks, the
// 4-point rule integrates each smooth piece to order 8.
inline bool GaussQuadrature(const ModelData& md,
                            const std::vector<SensParameter>& sens) {
  if (md.parameter_time_support.empty() || !AdjointShortcutsEnabled())
    return false;
  for (const SensParameter& sp : sens)
    if (sp.kind == SensParameter::Kind::kModel) return true;
  return false;
}

// The kinks of the quadrature's integrand in (t0, t1), descending: the ends of
// the requested parameters' declared time supports
// (ModelBuilder::ParameterTimeSupport), where the quadrature's integrand
// g_p + mu' f_p switches a column on or off (a control knot).
inline std::vector<double> Breakpoints(const ModelData& md,
                                       const std::vector<SensParameter>& sens,
                                       double t0,
                                       double t1) {
  std::vector<double> b;
  if (md.parameter_time_support.empty() || !AdjointShortcutsEnabled()) return b;
  // Pieces shorter than this are not split off.
  const double gap = 1e-10 * std::max(1.0, std::abs(t1 - t0));
  for (const SensParameter& sp : sens) {
    if (sp.kind != SensParameter::Kind::kModel) continue;
    const auto& s = md.parameter_time_support[static_cast<size_t>(sp.index)];
    for (double x : {s.first, s.second})
      if (x > t0 + gap && x < t1 - gap) b.push_back(x);
  }
  std::sort(b.begin(), b.end(), std::greater<double>());
  std::vector<double> out;
  for (double x : b)
    if (out.empty() || out.back() - x > gap) out.push_back(x);
  return out;
}

// Whether parameter sp's column of the start's linearization s(t0) is zero
// without computing it: a model parameter whose declared time support does
// not hold t0 (no function of the model reads it there) moves the start
// only through the caller's initial tangent (a control's coefficient off
// the first knot span: all but two).
inline bool OffSupportAtStart(const ModelData& md,
                              const SensParameter& sp,
                              double t0,
                              const Eigen::MatrixXd& initial_tangent) {
  const auto& support = md.parameter_time_support;
  if (support.empty() || !AdjointShortcutsEnabled() ||
      sp.kind != SensParameter::Kind::kModel)
    return false;
  const auto& s = support[static_cast<size_t>(sp.index)];
  if (!(t0 < s.first || t0 > s.second)) return false;
  return initial_tangent.size() == 0 || sp.index >= initial_tangent.cols() ||
         initial_tangent.col(sp.index).isZero(0.0);
}

/// Backward from t1 to t0 one CVODES step at a time (the backward problem
/// `which` of `mem`, made without a quadrature), xi added into qB by the
/// 4-point rule on each step's pieces between `breaks` (descending), the
/// integrand -(g_p + mu' f_p) from `quad` (the quadrature right-hand side
/// CVODES would call). yB holds mu(t0) after. Returns "" or the error
/// (`flag_text` for a failed CVodeB).
inline std::string GaussBackward(
    void* mem,
    int which,
    double t0,
    double t1,
    const std::vector<double>& breaks,
    CVQuadRhsFnB quad,
    void* user_data,
    N_Vector yB,
    N_Vector qB,
    SUNContext ctx,
    const std::function<std::string(int, double)>& flag_text) {
  void* mb = CVodeGetAdjCVodeBmem(mem, which);
  const long n = N_VGetLength_Serial(yB);  // = the forward state's size
  VectorPtr yn = MakeVector(n, ctx), mun = MakeVector(n, ctx),
            integrand = MakeVector(N_VGetLength_Serial(qB), ctx);
  auto xi = View(qB);
  // int_a^b of the integrand, subtracted (quad's sign is xi's negative
  // derivative in t).
  auto piece = [&](double a, double b) {
    for (int k = 0; k < 4; ++k) {
      const double tk = a + (b - a) * kGaussNode[k];
      DAEDALUS_SUNDIALS_CHECK(CVodeGetDky(mb, tk, 0, mun.get()));
      DAEDALUS_SUNDIALS_CHECK(CVodeGetAdjY(mem, tk, yn.get()));
      if (quad(tk, yn.get(), mun.get(), integrand.get(), user_data) != 0)
        return false;
      xi -= (b - a) * kGaussWeight[k] * ConstView(integrand.get());
    }
    return true;
  };
  double tp = t1;
  size_t next = 0;  // the next breakpoint
  int stalled = 0;  // returns without a step (tolerated a few times)
  while (tp > t0) {
    const int flag = CVodeB(mem, t0, CV_ONE_STEP);
    if (flag < 0) return flag_text(flag, tp);
    double tn = tp;
    DAEDALUS_SUNDIALS_CHECK(CVodeGetB(mem, which, &tn, yB));
    tn = std::max(tn, t0);
    if (!(tn < tp)) {
      if (++stalled < 10) continue;
      return "adjoint: the backward pass made no progress at t = " +
             std::to_string(tp);
    }
    stalled = 0;
    double b = tp;
    for (; next < breaks.size() && breaks[next] > tn; ++next) {
      if (!piece(breaks[next], b)) return "adjoint quadrature failed";
      b = breaks[next];
    }
    if (!piece(tn, b)) return "adjoint quadrature failed";
    tp = tn;
  }
  DAEDALUS_SUNDIALS_CHECK(CVodeGetDky(mb, t0, 0, yB));
  return "";
}

}  // namespace daedalus::internal
