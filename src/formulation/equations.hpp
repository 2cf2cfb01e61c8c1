// The equations of the formulations, stated once (docs/formulations.md).
//
// Each function here is a template over the workspace type W it reads:
//   Workspace         values (dense evaluation),
//   TangentWorkspace  exact tangents (Jacobian columns, sensitivities),
//   SymbolicModel     expressions (compiled programs, eval/compiled_model.hpp),
//   SparseWorkspace   values (sparse evaluation, eval/sparse_dynamics).
// All four carry the stage outputs under the same names (t, q, v, p, phi, J,
// phi_t, vel_residual, bias, M, h, Bu, Dv, Qr, L_t, ...), so that one
// statement of each equation serves the numeric path, its linearization and
// its compiled form. The runtime objects that integrators talk to
// (ode_form.hpp, dae_form.hpp) call these through a Mechanics
// (mechanics.hpp).
#pragma once

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/simulate.hpp"
#include "daedalus/sparse_dynamics.hpp"
#include "eval/chart.hpp"
#include "model/invoke.hpp"

namespace daedalus::internal {

/// Which stacked constraint rows have a position level (holonomic and
/// moving constraints: the G of GGL and of the position projection), and
/// which are stationary (Phi_t = 0 by declaration).
struct ConstraintRows {
  explicit ConstraintRows(const Model& m);
  int nc = 0;
  std::vector<bool> holonomic;      // nc
  std::vector<bool> stationary;     // nc: kHolonomic rows
  std::vector<int> holonomic_rows;  // indices of the holonomic rows
  int nh() const { return static_cast<int>(holonomic_rows.size()); }
  bool all_holonomic() const { return nh() == nc; }
};

/// Order of the energy-balance quadrature vector:
///   [input work (nu) | damping loss | other work | constraint power (nc) |
///    ideal constraint power -lambda Phi_t (nc) | explicit time -L_t |
///    stabilization power | user quadratures (nuq)]
struct QuadLayout {
  int nu = 0, nc = 0, nuq = 0;
  explicit QuadLayout(const Model& m)
      : nu(m.num_inputs()), nc(m.nc()), nuq(m.num_quadratures()) {}
  int size() const { return nu + 3 + 2 * nc + 1 + nuq; }
  int damping() const { return nu; }
  int other() const { return nu + 1; }
  int constraint() const { return nu + 2; }
  int ideal() const { return nu + 2 + nc; }
  int time() const { return nu + 2 + 2 * nc; }
  int stabilization() const { return time() + 1; }
  int user() const { return stabilization() + 1; }
};

template <class W>
inline constexpr bool kIsSparse =
    std::is_same_v<std::decay_t<W>, SparseWorkspace>;

/// The q the model's functions receive (quaternions normalized; the dense
/// workspaces' user_q(), eval/chart.hpp); q itself elsewhere.
template <class W>
const auto& UserQ(const W& ws) {
  if constexpr (std::is_same_v<std::decay_t<W>, Workspace> ||
                std::is_same_v<std::decay_t<W>, TangentWorkspace>) {
    return ws.user_q();
  } else {
    return ws.q;
  }
}

/// J v row by row at the workspace state (nc). Dense: one row dot product
/// per row; sparse: one product.
template <class W>
VecX<typename W::Scalar> ConstraintRates(const W& ws) {
  using S = typename W::Scalar;
  if constexpr (kIsSparse<W>) {
    return ws.J * ws.v;
  } else {
    VecX<S> jv(ws.J.rows());
    for (Eigen::Index i = 0; i < ws.J.rows(); ++i)
      jv[i] = ws.J.row(i).dot(ws.v);
    return jv;
  }
}

/// QuadratureIntegrands with the constraint rates J v given (nc; unused
/// when nc = 0), for a caller that has them already.
template <class W, class VJ, class VL, class VO>
void QuadratureIntegrandsAtRates(const QuadLayout& L,
                                 const W& ws,
                                 const VJ& jv,
                                 const VL& lambda,
                                 const typename W::Scalar& stabilization_power,
                                 VO&& out) {
  using S = typename W::Scalar;
  for (int i = 0; i < L.nu; ++i) out[i] = ws.v.dot(ws.B.col(i)) * ws.u[i];
  out[L.damping()] = ws.v.dot(ws.Dv);
  out[L.other()] = ws.v.dot(ws.Qr);
  if (L.nc > 0) {
    for (int i = 0; i < L.nc; ++i) {
      out[L.constraint() + i] = lambda[i] * jv[i];
      out[L.ideal() + i] = -lambda[i] * ws.phi_t[i];
    }
  }
  out[L.time()] = -ws.L_t;
  out[L.stabilization()] = stabilization_power;
  const auto& quads = ws.model().data().quadratures;
  const Point<S> x{UserQ(ws), ws.v, ws.t, ws.p};
  for (int k = 0; k < L.nuq; ++k) {
    const S g = Invoke(quads[k].second, x);
    if constexpr (!std::is_same_v<S, Sym>) {
      if (!std::isfinite(Value(g))) {
        throw std::runtime_error(
            "model '" + ws.model().name() + "': quadrature '" + quads[k].first +
            "' returned a non-finite value at " + DescribeState(ws));
      }
    }
    out[L.user() + k] = g;
  }
}

/// Integrands of QuadLayout at the workspace state (stages through the
/// forces evaluated) for multipliers `lambda` and the stabilization power
/// `stabilization_power` of the formulation.
template <class W, class VL, class VO>
void QuadratureIntegrands(const QuadLayout& L,
                          const W& ws,
                          const VL& lambda,
                          const typename W::Scalar& stabilization_power,
                          VO&& out) {
  using S = typename W::Scalar;
  const VecX<S> jv = L.nc > 0 ? ConstraintRates(ws) : VecX<S>();
  QuadratureIntegrandsAtRates(L, ws, jv, lambda, stabilization_power,
                              std::forward<VO>(out));
}

/// The acceleration-level constraint right-hand side of the index-1 forms:
/// b, plus for Baumgarte 2 alpha (J v + Phi_t) + beta^2 Phi (holonomic
/// rows) or alpha (A v + a) (nonholonomic rows) (docs/formulations.md).
template <class W>
VecX<typename W::Scalar> StabilizedBias(const W& ws,
                                        Formulation f,
                                        double alpha,
                                        double beta,
                                        const std::vector<bool>& holonomic) {
  using S = typename W::Scalar;
  VecX<S> bias = ws.bias;
  if (f == Formulation::kBaumgarte) {
    for (Eigen::Index i = 0; i < bias.size(); ++i) {
      if (holonomic[i])
        bias[i] +=
            S(2.0 * alpha) * ws.vel_residual[i] + S(beta * beta) * ws.phi[i];
      else
        bias[i] += S(alpha) * ws.vel_residual[i];
    }
  }
  return bias;
}

/// The unknowns of the DAE forms on IDAS:
///   y = [q (nq) | v (nv) | lambda (nc) | mu (nh, GGL only)].
struct DaeLayout {
  Formulation form = Formulation::kGgl;
  int nq = 0, nv = 0, nc = 0, nh = 0;
  /// The model's description, for q' = N(q) v when it has quaternions
  /// (null otherwise: q' = v).
  const ModelData* chart = nullptr;
  double alpha = 0.0, beta = 0.0;  // Baumgarte gains (index-1 Baumgarte)
  std::vector<int> hrows;          // holonomic rows (the G of GGL)
  std::vector<bool> holonomic;     // nc

  DaeLayout(const Model& m,
            const ConstraintRows& rows,
            const SimulationOptions& o)
      : form(o.formulation),
        nq(m.nq()),
        nv(m.nv()),
        nc(m.nc()),
        nh(rows.nh()),
        chart(m.quaternions().empty() ? nullptr : &m.data()),
        alpha(o.baumgarte_alpha),
        beta(o.baumgarte_beta),
        hrows(rows.holonomic_rows),
        holonomic(rows.holonomic) {}
  int iq() const { return 0; }
  int iv() const { return nq; }
  int il() const { return nq + nv; }
  int im() const { return nq + nv + nc; }
  int size() const {
    return nq + nv + nc + (form == Formulation::kGgl ? nh : 0);
  }
  /// Only the index-1 residuals read the acceleration bias.
  bool needs_bias() const {
    return form != Formulation::kGgl && form != Formulation::kIndex3;
  }
};

/// G' mu of the GGL position correction (zero for the other forms).
template <class W, class VY>
VecX<typename W::Scalar> GtMu(const DaeLayout& L, const W& w, const VY& y) {
  using S = typename W::Scalar;
  VecX<S> r = VecX<S>::Zero(L.nv);
  if (L.form != Formulation::kGgl) return r;
  if constexpr (kIsSparse<W>) {
    Eigen::VectorXd mu = Eigen::VectorXd::Zero(L.nc);
    for (int k = 0; k < L.nh; ++k) mu[L.hrows[k]] = y[L.im() + k];
    r = w.J.transpose() * mu;
  } else {
    for (int k = 0; k < L.nh; ++k)
      r += w.J.row(L.hrows[k]).transpose() * y[L.im() + k];
  }
  return r;
}

/// The DAE residual F(t, y, yp) of the IDAS forms from a workspace evaluated
/// at (t, q, v) (docs/formulations.md):
///   q' - v (+ G' mu for GGL)
///   M v' + h - B u - J' lambda
///   GGL:     J v + Phi_t (all rows), Phi (holonomic rows)
///   index 3: Phi (holonomic rows), A v + a (nonholonomic rows)
///   index 1: J v' + b (+ the Baumgarte terms)
/// The value workspaces are evaluated with EvalRequest::kResidual, which
/// gives M v' + h (Mvdot_h) without forming M on the dense path; the
/// symbolic model's Mvdot_h is built on the inputs that the compiled
/// programs make v'.
template <class W, class VY, class VF>
void AssembleDae(
    const DaeLayout& L, const W& w, const VY& y, const VY& yp, VF& F) {
  using S = typename W::Scalar;
  const auto lambda = y.segment(L.il(), L.nc);
  const auto qp = yp.segment(L.iq(), L.nq);
  const auto vp = yp.segment(L.iv(), L.nv);
  // Written in place, without temporaries (this runs once per residual).
  auto Fq = F.segment(L.iq(), L.nq);
  if (L.chart != nullptr) {
    // q' = N(q) (v - G' mu) (eval/chart.hpp): G' mu is a chart direction.
    VecX<S> rate = w.v;
    if (L.form == Formulation::kGgl) rate -= GtMu(L, w, y);
    VecX<S> qd(L.nq);
    CoordinateRates<S>(*L.chart, w.q, rate, qd);
    Fq = qp - qd;
  } else {
    Fq = qp - w.v;
    if (L.form == Formulation::kGgl) {
      if constexpr (kIsSparse<W>) {
        Fq += GtMu(L, w, y);
      } else {
        for (int k = 0; k < L.nh; ++k)
          Fq += w.J.row(L.hrows[k]).transpose() * y[L.im() + k];
      }
    }
  }
  auto Fv = F.segment(L.iv(), L.nv);
  if constexpr (kIsSparse<W>) {
    Fv = w.h - w.Bu;
    Fv.noalias() += w.M * vp;
  } else if constexpr (!std::is_same_v<S, D1>) {
    Fv = w.Mvdot_h - w.Bu;
  } else {
    Fv = w.h - w.Bu;
    Fv.noalias() += w.M * vp;
  }
  Fv.noalias() -= w.J.transpose() * lambda;
  auto Fl = F.segment(L.il(), L.nc);
  switch (L.form) {
    case Formulation::kGgl:
      Fl = w.vel_residual;
      for (int k = 0; k < L.nh; ++k) F[L.im() + k] = w.phi[L.hrows[k]];
      break;
    case Formulation::kIndex3:
      for (int i = 0; i < L.nc; ++i)
        Fl[i] = L.holonomic[i] ? w.phi[i] : w.vel_residual[i];
      break;
    default: {
      // Index 1: J vdot + b (+ Baumgarte terms) = 0.
      Fl = w.J * vp + w.bias;
      if (L.form == Formulation::kBaumgarte) {
        const double a = L.alpha, b = L.beta;
        for (int i = 0; i < L.nc; ++i)
          Fl[i] += L.holonomic[i]
                       ? S(2.0 * a) * w.vel_residual[i] + S(b * b) * w.phi[i]
                       : S(a) * w.vel_residual[i];
      }
    }
  }
}

}  // namespace daedalus::internal
