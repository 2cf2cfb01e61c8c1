// The state and the equations of the IDAS adjoint (adjoint_idas.cpp):
// the forward DAE's Jacobians F_y, F_y' and F_p at the interpolated
// forward states, the functional's gradients, the terminal values of the
// backward unknowns (index 1 and GGL), and the backward residual, its
// Jacobian and quadrature, which adjoint_idas.cpp's callbacks hand to IDAS.
#pragma once

#include <idas/idas.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <Eigen/LU>
#include <memory>
#include <string>
#include <vector>

#include "eval/function_derivatives.hpp"
#include "events/mode_switch.hpp"
#include "formulation/dae_form.hpp"
#include "formulation/sens_programs.hpp"
#include "integrate/common.hpp"

namespace daedalus::internal {

struct IdasAdjointRun : CallbackGuard {
  IdasAdjointRun(Mechanics* m, const SimulationOptions& o)
      : mech(m),
        form(m, o, nullptr),
        fp_program(DaeParameterJacobian::Make(
            m->compiled(), m->model(), form.layout())) {}
  Mechanics* mech;
  DaeForm form;
  // Compiled derivatives (null: the tangent and dual-number paths).
  std::unique_ptr<DaeParameterJacobian> fp_program;
  std::unique_ptr<FunctionalGradient> running_gradient;
  const ModelData::FunctionalDecl* fun = nullptr;
  std::vector<SensParameter> sens;
  int nq = 0, nv = 0, nc = 0, np = 0, n = 0;
  std::vector<double> offsets;  // per event (RootF)
  // The contacts' mode switcher (src/contact/), or null; its witnesses
  // follow the events' root functions (RootF).
  ModeSwitcher* modes = nullptr;

  int nd() const { return nq + nv; }
  int nB() const { return n + nv; }

  // F_y and F_y' at the last (t, y, y'): IDAS evaluates the backward
  // residual, its Jacobian and the backward quadrature at the same
  // interpolated forward states.
  Eigen::MatrixXd Fy, Fyp, A1;
  // F_p (n x np), with F_y when the compiled program formed it.
  Eigen::MatrixXd Fp;
  bool fp_valid = false;
  double jt = 0.0;
  Eigen::VectorXd jy, jyp;
  void Jacobians(double t, const double* y, const double* yp) {
    const auto Y = Eigen::Map<const Eigen::VectorXd>(y, n);
    const auto YP = Eigen::Map<const Eigen::VectorXd>(yp, n);
    if (jy.size() == n && t == jt && Y == jy && YP == jyp) return;
    jy.resize(0);
    Fy.resize(n, n);
    A1.resize(n, n);
    form.DenseJacobian(t, 0.0, y, yp, Fy.data());
    form.DenseJacobian(t, 1.0, y, yp, A1.data());
    // F is linear in y': (F_y + F_y') - F_y is F_y' to round-off of F_y's
    // entries in the same places (no difference quotient).
    Fyp = A1 - Fy;
    fp_valid = fp_program && fp_program->Run(t, y, yp, mech->parameters(), &Fp);
    // Open contacts (docs/contact.md): their rows are lambda_i = 0 (and
    // on GGL mu_k = 0, DaeForm::OpenRows), and these unknowns enter no
    // other row (a compiled Jacobian holds every row's).
    for (int r : mech->open_rows()) {
      for (int i : form.OpenRows(r)) {
        Fy.col(i).setZero();
        Fy(i, i) = 1.0;
        Fyp.col(i).setZero();
        Fyp.row(i).setZero();
        if (fp_valid) Fp.row(i).setZero();
      }
    }
    jt = t;
    jy = Y;
    jyp = YP;
  }

  // Gradient of a scalar user function at (t, q, v): (d/d(q, v), d/dp),
  // by first-order duals.
  void Gradient(const ScalarFn& fn,
                double t,
                const double* y,
                Eigen::VectorXd* gy,
                Eigen::VectorXd* gp) {
    if (running_gradient && &fn == &fun->running &&
        running_gradient->Run(t, y, y + nq, mech->parameters(), gy, gp))
      return;
    gy->setZero(nd());
    gp->setZero(np);
    if (!fn) return;
    // With quaternions y's q is the raw 4-vector and fn sees n(q): the
    // derivative is with respect to the raw q, through the normalization
    // (eval/function_derivatives.hpp), as the residual's tangents take it.
    StatePoint x;
    x.t = t;
    x.q = Eigen::Map<const Eigen::VectorXd>(y, nq);
    x.v = Eigen::Map<const Eigen::VectorXd>(y + nq, nv);
    x.p = mech->parameters();
    StateGradientAt(mech->model().data(), fn, x,
                    "functional '" + fun->name + "'", gy, gp);
  }

  // Index 1: l_q(T) = phi_q, w(T) = phi_v, and (l_v, l_lambda)(T) from
  // the algebraic rows w - (F_y'' l)_v = 0, (F_y' l)_lambda = 0 (the
  // system [M J'; J 0]) at the Jacobians of the last Jacobians() call.
  std::string IndexOneTerminal(const Eigen::VectorXd& phi_y,
                               Eigen::VectorXd* lT,
                               Eigen::VectorXd* wT) const {
    lT->head(nq) = phi_y.head(nq);
    *wT = phi_y.tail(nv);
    const int na = nv + nc;
    Eigen::MatrixXd K(na, na);
    Eigen::VectorXd rhs(na);
    K.topRows(nv) = Fyp.transpose().block(nq, nq, nv, na);
    K.bottomRows(nc) = Fy.transpose().block(nd(), nq, nc, na);
    rhs.head(nv) = *wT - Fyp.transpose().block(nq, 0, nv, nq) * lT->head(nq);
    rhs.tail(nc) = -Fy.transpose().block(nd(), 0, nc, nq) * lT->head(nq);
    const Eigen::PartialPivLU<Eigen::MatrixXd> lu(K);
    lT->tail(na) = lu.solve(rhs);
    if (!lT->allFinite() ||
        (K * lT->tail(na) - rhs).norm() > 1e-8 * (1.0 + rhs.norm()))
      return "the KKT matrix [M J'; J 0] is singular: the constraints are "
             "dependent there";
    return "";
  }

  // GGL (index 2): F_y' has the columns [e_q; 0; 0; 0] and [0; M; 0; 0],
  // so nu = (l_q, w = M l_v), and the algebraic rows G l_q = 0 and
  // J l_v = 0 are the adjoint constraints (Cao et al. 2003, section 3):
  // the terminal nu(T) must satisfy them, and may, because s(T) is not
  // free: G s_q = -Phi_p and C s_q + J s_v = -(J v + Phi_t)_p (C the
  // q-derivative of J v + Phi_t). With
  //   nu(T) = phi_d + [G' alpha + C' beta; J' beta],
  //   beta = -(J M^-1 J')^-1 J M^-1 phi_v,
  //   alpha = -(G G')^-1 G (phi_q + C' beta),
  // the constraints hold, and the boundary term at T leaves
  // (beta, alpha)' (F_lambda, F_mu)_p(T) in the gradient (`ab`). The
  // index-2 multipliers (l_lambda, l_mu)(T) start at 0: IDAS's first
  // backward step solves for them (they are outside the error test).
  // With open contacts (docs/contact.md) the adjoint constraints are the
  // mode's: an open row's lambda_i = 0 and mu_k = 0 have zero J, C and G
  // rows (Jacobians), and its entries of (beta, alpha) are 0.
  std::string GglTerminal(const Eigen::VectorXd& phi_y,
                          Eigen::VectorXd* lT,
                          Eigen::VectorXd* wT,
                          Eigen::VectorXd* ab) const {
    const int nh_all = n - nd() - nc;
    // The mode's rows of lambda (nd() + i) and of mu (nd() + nc + k).
    std::vector<int> lrows, mrows;
    for (int i = 0; i < nc; ++i)
      if (!mech->is_open(i)) lrows.push_back(i);
    for (int k = 0; k < nh_all; ++k)
      if (!mech->is_open(form.layout().hrows[static_cast<std::size_t>(k)]))
        mrows.push_back(k);
    const int ncl = static_cast<int>(lrows.size());
    const int nh = static_cast<int>(mrows.size());
    const Eigen::MatrixXd M = Fyp.block(nq, nq, nv, nv);
    Eigen::MatrixXd J(ncl, nv), C(ncl, nq), G(nh, nq), Gcol(nq, nh);
    for (int a = 0; a < ncl; ++a) {
      J.row(a) = Fy.block(nd() + lrows[a], nq, 1, nv);
      C.row(a) = Fy.block(nd() + lrows[a], 0, 1, nq);
    }
    for (int a = 0; a < nh; ++a) {
      G.row(a) = Fy.block(nd() + nc + mrows[a], 0, 1, nq);
      Gcol.col(a) = Fy.block(0, nd() + nc + mrows[a], nq, 1);
    }
    // The adjoint constraint on l_q is (dF_q/dmu)' l_q = 0. Without
    // quaternions dF_q/dmu = G'. With them F_q = q' - N(q) (v - G_xi' mu)
    // (G_xi the holonomic rows of J, in the chart), so dF_q/dmu = N G_xi'
    // while G = dPhi/dq = G_xi dxi/dq, and dxi/dq = 4 N' / |q|^2 on a
    // quaternion block (eval/chart.hpp, ChartDirection): the two differ in
    // scale between quaternion and scalar columns. Ga (nh x nq) is the
    // adjoint's; alpha = -(Ga G')^-1 Ga (phi_q + C' beta), and
    // Ga G' = G_xi G_xi' since N' N = |q|^2 / 4.
    const Eigen::MatrixXd Ga = nq == nv ? G : Eigen::MatrixXd(Gcol.transpose());
    const Eigen::PartialPivLU<Eigen::MatrixXd> mlu(M);
    // With no closed row (every contact open at T) there is nothing to
    // solve: Eigen's triangular solve with zero right-hand sides binds a
    // reference to a null pointer (UBSan).
    Eigen::VectorXd beta = Eigen::VectorXd::Zero(ncl);
    if (ncl > 0) {
      const Eigen::MatrixXd MiJt = mlu.solve(J.transpose());
      const Eigen::PartialPivLU<Eigen::MatrixXd> slu(J * MiJt);
      beta = -slu.solve(MiJt.transpose() * phi_y.tail(nv));
    }
    const Eigen::VectorXd pq = phi_y.head(nq) + C.transpose() * beta;
    Eigen::VectorXd alpha = Eigen::VectorXd::Zero(nh);
    if (nh > 0) {
      const Eigen::PartialPivLU<Eigen::MatrixXd> glu(Ga * G.transpose());
      alpha = -glu.solve(Ga * pq);
    }
    lT->head(nq) = pq + G.transpose() * alpha;
    *wT = phi_y.tail(nv) + J.transpose() * beta;
    lT->segment(nq, nv) = mlu.solve(*wT);
    ab->setZero(nc + nh_all);
    for (int a = 0; a < ncl; ++a) (*ab)[lrows[a]] = beta[a];
    for (int a = 0; a < nh; ++a) (*ab)[nc + mrows[a]] = alpha[a];
    const double gap =
        (Ga * lT->head(nq)).norm() + (J * lT->segment(nq, nv)).norm();
    if (!lT->allFinite() || !ab->allFinite() ||
        gap > 1e-8 * (1.0 + phi_y.norm()))
      return "J M^-1 J' or G G' is singular: the constraints are dependent "
             "there";
    return "";
  }

  // The backward residual at (t, y, y') for z, z' (layout above).
  void ResidualB(double t,
                 const double* y,
                 const double* yp,
                 const double* z,
                 const double* zp,
                 double* rr) {
    Jacobians(t, y, yp);
    Eigen::VectorXd gy, gp;
    Gradient(fun->running, t, y, &gy, &gp);
    const auto l = Eigen::Map<const Eigen::VectorXd>(z, n);
    const auto w = Eigen::Map<const Eigen::VectorXd>(z + n, nv);
    const Eigen::VectorXd r = Fy.transpose() * l;
    const Eigen::VectorXd nu = Fyp.transpose() * l;
    Eigen::Map<Eigen::VectorXd> R(rr, nB());
    for (int i = 0; i < nq; ++i) R[i] = zp[i] - r[i] + gy[i];
    for (int i = 0; i < nv; ++i) R[nq + i] = zp[n + i] - r[nq + i] + gy[nq + i];
    for (int i = nd(); i < n; ++i) R[i] = -r[i];
    R.tail(nv) = w - nu.segment(nq, nv);
  }

  // dResB/dz + cj dResB/dz' into the dense column-major nB x nB `a`.
  void JacobianB(
      double t, double cj, const double* y, const double* yp, SUNMatrix JB) {
    Jacobians(t, y, yp);
    SUNMatZero(JB);
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) SM_ELEMENT_D(JB, i, j) = -Fy(j, i);
      for (int k = 0; k < nv; ++k) SM_ELEMENT_D(JB, n + k, j) = -Fyp(j, nq + k);
    }
    for (int i = 0; i < nq; ++i) SM_ELEMENT_D(JB, i, i) += cj;
    for (int k = 0; k < nv; ++k) {
      SM_ELEMENT_D(JB, nq + k, n + k) = cj;
      SM_ELEMENT_D(JB, n + k, n + k) = 1.0;
    }
  }

  // xi' = l' F_p - g_p per requested model parameter, so that
  // xi(t0) = int_t0^T (g_p - l' F_p) dt (xi(T) = 0).
  void QuadratureB(double t,
                   const double* y,
                   const double* yp,
                   const double* z,
                   double* out) {
    Eigen::VectorXd gy, gp;
    Gradient(fun->running, t, y, &gy, &gp);
    const auto l = Eigen::Map<const Eigen::VectorXd>(z, n);
    Jacobians(t, y, yp);  // F_p with F_y (cached per state)
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
    Eigen::VectorXd fp(n);
    for (size_t i = 0; i < sens.size(); ++i) {
      const SensParameter& sp = sens[i];
      if (sp.kind != SensParameter::Kind::kModel) {
        out[i] = 0.0;
        continue;
      }
      if (fp_valid) {
        out[i] = l.dot(Fp.col(sp.index)) - gp[sp.index];
        continue;
      }
      // Off the parameter's declared time support F_p's column is zero
      // (ModelBuilder::ParameterTimeSupport), and so is gp's entry.
      const auto& support = mech->model().data().parameter_time_support;
      if (!support.empty() && AdjointShortcutsEnabled()) {
        const auto& s = support[static_cast<size_t>(sp.index)];
        if (t < s.first || t > s.second) {
          out[i] = 0.0;
          continue;
        }
      }
      Eigen::VectorXd dp = Eigen::VectorXd::Zero(np);
      dp[sp.index] = 1.0;
      form.SensResidual(t, y, yp, zero.data(), zero.data(), dp, fp.data());
      out[i] = l.dot(fp) - gp[sp.index];
    }
  }
};

}  // namespace daedalus::internal
