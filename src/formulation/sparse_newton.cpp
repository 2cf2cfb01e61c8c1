#include "formulation/sparse_newton.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/chart.hpp"
#include "eval/sparse_chart.hpp"

namespace daedalus::internal {

namespace {

int Slot(const SparseMatrixD& A, int r, int c) {
  const int* begin = A.innerIndexPtr() + A.outerIndexPtr()[c];
  const int* end = A.innerIndexPtr() + A.outerIndexPtr()[c + 1];
  const int* it = std::lower_bound(begin, end, r);
  if (it == end || *it != r)
    throw std::logic_error("Newton preconditioner: pattern entry missing");
  return static_cast<int>(it - A.innerIndexPtr());
}

void SortUnique(std::vector<int>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

}  // namespace

SparseNewtonPreconditioner::SparseNewtonPreconditioner(
    SparseWorkspace* ws,
    std::function<void(const SparseWorkspace&, Eigen::VectorXd*)> bias)
    : ws_(ws), bias_(std::move(bias)) {
  const Model& model = ws->model();
  const auto& d = model.data();
  nq_ = model.nq();
  nv_ = model.nv();
  nc_ = model.nc();
  // ---- which rows of R (nv) and Rc (nc) each column (q_j or v_j) moves:
  // the coordinates of every constraint and energy term containing j.
  std::vector<std::vector<int>> groups;
  for (int ci = 0; ci < model.num_constraints(); ++ci)
    groups.push_back(ws->constraint_coords(ci));
  for (const auto& t : ws->terms_) groups.push_back(t.coords);
  if (model.num_inputs() > 0 || d.damping || d.other_loads) {
    // Forces are not declared sparse: they may couple every coordinate.
    std::vector<int> all(static_cast<size_t>(nv_));
    for (int j = 0; j < nv_; ++j) all[j] = j;
    groups.push_back(all);
  }
  // Mass matrix entries appear in R through M a.
  for (int c = 0; c < nv_; ++c) {
    std::vector<int> g;
    for (SparseMatrixD::InnerIterator it(ws->M, c); it; ++it)
      g.push_back(static_cast<int>(it.row()));
    g.push_back(c);
    SortUnique(&g);
    groups.push_back(g);
  }
  r_rows_.assign(static_cast<size_t>(nv_), {});
  rc_rows_.assign(static_cast<size_t>(nv_), {});
  for (const auto& g : groups)
    for (int j : g) r_rows_[j].insert(r_rows_[j].end(), g.begin(), g.end());
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const int r0 = d.constraint_rows[ci];
    for (int j : ws->constraint_coords(ci))
      for (int r = 0; r < d.constraints[ci].rows; ++r)
        rc_rows_[j].push_back(r0 + r);
  }
  for (int j = 0; j < nv_; ++j) {
    SortUnique(&r_rows_[j]);
    SortUnique(&rc_rows_[j]);
  }

  // ---- greedy coloring: columns of one color move disjoint rows.
  std::vector<std::vector<int>> r_colors(static_cast<size_t>(nv_)),
      rc_colors(static_cast<size_t>(nc_));
  color_.assign(static_cast<size_t>(nv_), -1);
  std::vector<char> used;
  for (int j = 0; j < nv_; ++j) {
    used.assign(static_cast<size_t>(num_colors_ + 1), 0);
    for (int i : r_rows_[j])
      for (int c : r_colors[i]) used[c] = 1;
    for (int i : rc_rows_[j])
      for (int c : rc_colors[i]) used[c] = 1;
    int c = 0;
    while (used[c]) ++c;
    color_[j] = c;
    num_colors_ = std::max(num_colors_, c + 1);
    for (int i : r_rows_[j]) r_colors[i].push_back(c);
    for (int i : rc_rows_[j]) rc_colors[i].push_back(c);
  }

  // ---- patterns: P11 = pattern(M) u pattern(K, D); G, H have J's.
  std::vector<Eigen::Triplet<double, int>> t;
  for (int j = 0; j < nv_; ++j)
    for (int i : r_rows_[j]) t.emplace_back(i, j, 0.0);
  P11_.resize(nv_, nv_);
  P11_.setFromTriplets(t.begin(), t.end());
  P11_.makeCompressed();
  r_slots_.assign(static_cast<size_t>(nv_), {});
  rc_slots_.assign(static_cast<size_t>(nv_), {});
  for (int j = 0; j < nv_; ++j) {
    for (int i : r_rows_[j]) r_slots_[j].push_back(Slot(P11_, i, j));
    for (int r : rc_rows_[j]) rc_slots_[j].push_back(Slot(ws->J, r, j));
  }
  for (int c = 0; c < nv_; ++c)
    for (SparseMatrixD::InnerIterator it(ws->M, c); it; ++it)
      m_to_p11_.push_back(Slot(P11_, static_cast<int>(it.row()), c));
  K_ = P11_;
  D_ = P11_;
  G_ = ws->J;
  H_ = ws->J;

  // ---- augmented matrix [P11 -J'; P21 0], P21 with J's pattern.
  const SparseMatrixD& J = ws->J;
  const SparseMatrixD Jt = J.transpose();
  std::vector<int> jt_src(static_cast<size_t>(Jt.nonZeros()));
  {
    std::vector<int> next(Jt.outerIndexPtr(), Jt.outerIndexPtr() + nc_);
    for (int c = 0; c < nv_; ++c)
      for (int e = J.outerIndexPtr()[c]; e < J.outerIndexPtr()[c + 1]; ++e)
        jt_src[next[J.innerIndexPtr()[e]]++] = e;
  }
  const int n = nv_ + nc_;
  std::vector<int> outer(static_cast<size_t>(n + 1), 0), inner;
  for (int c = 0; c < nv_; ++c) {
    for (int e = P11_.outerIndexPtr()[c]; e < P11_.outerIndexPtr()[c + 1];
         ++e) {
      inner.push_back(P11_.innerIndexPtr()[e]);
      a_src_.push_back(e);
      a_kind_.push_back(0);
    }
    for (int e = J.outerIndexPtr()[c]; e < J.outerIndexPtr()[c + 1]; ++e) {
      inner.push_back(nv_ + J.innerIndexPtr()[e]);
      a_src_.push_back(e);
      a_kind_.push_back(2);
    }
    outer[c + 1] = static_cast<int>(inner.size());
  }
  for (int i = 0; i < nc_; ++i) {
    for (int e = Jt.outerIndexPtr()[i]; e < Jt.outerIndexPtr()[i + 1]; ++e) {
      inner.push_back(Jt.innerIndexPtr()[e]);
      a_src_.push_back(jt_src[e]);
      a_kind_.push_back(1);
    }
    // The (2,2) diagonal: zero, or a small regularization when redundant
    // constraints make the augmented matrix singular.
    inner.push_back(nv_ + i);
    a_src_.push_back(i);
    a_kind_.push_back(3);
    outer[nv_ + i + 1] = static_cast<int>(inner.size());
  }
  A_.resize(n, n);
  A_.resizeNonZeros(static_cast<Eigen::Index>(inner.size()));
  std::copy(outer.begin(), outer.end(), A_.outerIndexPtr());
  std::copy(inner.begin(), inner.end(), A_.innerIndexPtr());
  rhs_.resize(n);
  sol_.resize(n);
  dependent_.assign(static_cast<size_t>(nc_), 0);
}

void SparseNewtonPreconditioner::Residuals(const Eigen::VectorXd& a,
                                           const Eigen::VectorXd& lambda,
                                           Eigen::VectorXd* R,
                                           Eigen::VectorXd* Rc) {
  const SparseWorkspace& ws = *ws_;
  *R = ws.Bu - ws.h;
  R->noalias() -= ws.M * a;
  R->noalias() += ws.J.transpose() * lambda;
  bias_(ws, &b_);
  *Rc = b_;
  Rc->noalias() += ws.J * a;
}

void SparseNewtonPreconditioner::Update(double t,
                                        const Eigen::VectorXd& q,
                                        const Eigen::VectorXd& v,
                                        const Eigen::VectorXd& a,
                                        const Eigen::VectorXd& lambda) {
  SparseWorkspace& ws = *ws_;
  const ModelData& d = ws.model().data();
  const bool chart = !d.quaternions.empty();
  if (chart) q_ = q;
  ws.SetState(t, q, v);
  EvaluateSparseAll(&ws);
  M_ = ws.M;
  J_ = ws.J;
  Residuals(a, lambda, &R0_, &Rc0_);
  // Forward differences with steps sqrt(eps) relative to max(1, |x_j|):
  // about 1e-8 relative accuracy, ample for a preconditioner (GMRES
  // corrects what it misses).
  const double rel = std::sqrt(std::numeric_limits<double>::epsilon());
  std::vector<std::vector<int>> by_color(static_cast<size_t>(num_colors_));
  for (int j = 0; j < nv_; ++j) by_color[color_[j]].push_back(j);
  Eigen::VectorXd qp, vp, step(nv_);
  for (int pass = 0; pass < 2; ++pass) {
    const bool on_q = pass == 0;
    SparseMatrixD& Rm = on_q ? K_ : D_;
    SparseMatrixD& Cm = on_q ? G_ : H_;
    for (const auto& cols : by_color) {
      qp = q;
      vp = v;
      if (on_q && chart) {
        // Along the chart: a rotation of step rel on a quaternion.
        dxi_.setZero(nv_);
        for (int j : cols) {
          step[j] =
              BlockOfVelocity(d, j) != nullptr
                  ? rel
                  : rel *
                        std::max(1.0, std::abs(q[CoordinateOfVelocity(d, j)]));
          dxi_[j] = step[j];
        }
        Retract(d, dxi_, qp);
      } else {
        for (int j : cols) {
          Eigen::VectorXd& x = on_q ? qp : vp;
          step[j] = rel * std::max(1.0, std::abs(x[j]));
          x[j] += step[j];
        }
      }
      ws.SetState(t, qp, vp);
      EvaluateSparseAll(&ws);
      Residuals(a, lambda, &R1_, &Rc1_);
      for (int j : cols) {
        for (size_t m = 0; m < r_rows_[j].size(); ++m) {
          const int i = r_rows_[j][m];
          Rm.valuePtr()[r_slots_[j][m]] = (R1_[i] - R0_[i]) / step[j];
        }
        for (size_t m = 0; m < rc_rows_[j].size(); ++m) {
          const int i = rc_rows_[j][m];
          Cm.valuePtr()[rc_slots_[j][m]] = (Rc1_[i] - Rc0_[i]) / step[j];
        }
      }
    }
  }
}

bool SparseNewtonPreconditioner::Factor(double gamma) {
  gamma_ = gamma;
  const double g2 = gamma * gamma;
  Eigen::VectorXd p11(P11_.nonZeros()), p21(J_.nonZeros());
  for (Eigen::Index e = 0; e < P11_.nonZeros(); ++e)
    p11[e] = -gamma * D_.valuePtr()[e] - g2 * K_.valuePtr()[e];
  for (size_t e = 0; e < m_to_p11_.size(); ++e)
    p11[m_to_p11_[e]] += M_.valuePtr()[e];
  for (Eigen::Index e = 0; e < J_.nonZeros(); ++e)
    p21[e] =
        J_.valuePtr()[e] + gamma * H_.valuePtr()[e] + g2 * G_.valuePtr()[e];
  // Dependent rows (redundant constraints) are replaced by mu_d = 0: the
  // Newton system of the independent rows, which has the same solution.
  const int* jrow = J_.innerIndexPtr();
  auto assemble = [&](double reg) {
    double* av = A_.valuePtr();
    for (size_t e = 0; e < a_src_.size(); ++e) {
      const int s = a_src_[e];
      switch (a_kind_[e]) {
        case 0:
          av[e] = p11[s];
          break;
        case 1:
          av[e] = dependent_[jrow[s]] ? 0.0 : -J_.valuePtr()[s];
          break;
        case 2:
          av[e] = dependent_[jrow[s]] ? 0.0 : p21[s];
          break;
        default:
          av[e] = dependent_[s] ? 1.0 : -reg;
      }
    }
  };
  assemble(0.0);
  if (!analysed_) {
    klu_.Analyze(A_);
    analysed_ = true;
  }
  // Any nonsingular factorization serves as a preconditioner.
  if (klu_.Factor(A_, 0.0)) return true;
  // Still singular (dependent rows not known yet, or a singular
  // configuration): regularize the (2,2) block by 1e-8 of the Schur
  // complement's scale |J|^2 / |P11|; GMRES corrects the rest.
  const double jmax =
      Eigen::Map<const Eigen::VectorXd>(J_.valuePtr(), J_.nonZeros())
          .cwiseAbs()
          .maxCoeff();
  const double pmax = p11.cwiseAbs().maxCoeff();
  assemble(1e-8 * jmax * jmax / std::max(pmax, 1e-300));
  return klu_.Factor(A_, 0.0);
}

void SparseNewtonPreconditioner::SetDependentRows(
    const std::vector<int>& rows) {
  dependent_.assign(static_cast<size_t>(nc_), 0);
  for (int r : rows) dependent_[r] = 1;
}

void SparseNewtonPreconditioner::Solve(
    const Eigen::Ref<const Eigen::VectorXd>& r, Eigen::Ref<Eigen::VectorXd> z) {
  const auto rv = r.tail(nv_);
  const ModelData& d = ws_->model().data();
  const bool chart = !d.quaternions.empty();
  rxi_.resize(nv_);
  if (chart)
    ChartDirection(d, q_, r.head(nq_), rxi_);
  else
    rxi_ = r.head(nv_);
  const Eigen::VectorXd& rq = rxi_;
  rhs_.head(nv_).noalias() = M_ * rv;
  rhs_.head(nv_).noalias() += gamma_ * (K_ * rq);
  rhs_.tail(nc_).noalias() = J_ * rv;
  rhs_.tail(nc_).noalias() -= gamma_ * (G_ * rq);
  for (int i = 0; i < nc_; ++i)
    if (dependent_[i]) rhs_[nv_ + i] = 0.0;
  klu_.Solve(rhs_, &sol_);
  z.tail(nv_) = sol_.head(nv_);
  if (chart) {
    // xq = rq + gamma N(q) xv.
    dxi_.resize(nq_);
    CoordinateRates<double>(d, q_, sol_.head(nv_), dxi_);
    z.head(nq_) = r.head(nq_) + gamma_ * dxi_;
    return;
  }
  z.head(nv_) = rq + gamma_ * sol_.head(nv_);
}

}  // namespace daedalus::internal
