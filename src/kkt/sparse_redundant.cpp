// The qr method of SparseKktSolver, and the fallback of the others when
// redundancy is allowed: dependent rows of J found by SPQR, the system
// solved on the independent rows, the dependent rows checked for
// consistency and the multipliers made minimum-norm.
#include <Eigen/Cholesky>
#include <algorithm>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kkt/sparse_kkt_impl.hpp"

namespace daedalus {

namespace internal {

std::vector<int> SparseDependentRows(const SparseMatrixD& J, double rel_tol) {
  std::vector<int> dep;
  if (J.rows() == 0) return dep;
  const SparseMatrixD Jt = J.transpose();
  double max_norm = 0.0;
  for (int c = 0; c < Jt.cols(); ++c)
    max_norm = std::max(max_norm, Jt.col(c).norm());
  int rank = 0;
  std::vector<int> perm;
  if (!SparseModule().QrRank(Jt, rel_tol * (max_norm > 0.0 ? max_norm : 1.0),
                             &rank, &perm))
    throw KktError(
        "rank-revealing QR (SPQR) of the constraint Jacobian failed");
  for (Eigen::Index k = rank; k < J.rows(); ++k)
    dep.push_back(perm[static_cast<size_t>(k)]);
  std::sort(dep.begin(), dep.end());
  return dep;
}

}  // namespace internal

namespace {

using internal::CopyPattern;
using internal::SamePattern;
using internal::SparseDependentRows;

SparseMatrixD SelectRows(const SparseMatrixD& J, const std::vector<int>& rows) {
  std::vector<int> map(static_cast<size_t>(J.rows()), -1);
  for (size_t i = 0; i < rows.size(); ++i) map[rows[i]] = static_cast<int>(i);
  std::vector<Eigen::Triplet<double, int>> t;
  for (int c = 0; c < J.cols(); ++c)
    for (SparseMatrixD::InnerIterator it(J, c); it; ++it)
      if (map[it.row()] >= 0) t.emplace_back(map[it.row()], c, it.value());
  SparseMatrixD S(static_cast<Eigen::Index>(rows.size()), J.cols());
  S.setFromTriplets(t.begin(), t.end());
  return S;
}

// x[rows[0]], x[rows[1]], ...
Eigen::VectorXd Gather(const Eigen::Ref<const Eigen::VectorXd>& x,
                       const std::vector<int>& rows) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) v[i] = x[rows[i]];
  return v;
}

}  // namespace

void SparseKktSolver::Impl::SolveRedundant(
    const SparseMatrixD& M,
    const SparseMatrixD& J,
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  // The dependent set is found once and kept while the independent rows
  // stay independent (the inner solve says when they do not).
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!inner) {
      dependent = SparseDependentRows(J, opt.rank_tolerance);
      independent.clear();
      for (int i = 0, d = 0; i < nc; ++i) {
        if (d < static_cast<int>(dependent.size()) && dependent[d] == i)
          ++d;
        else
          independent.push_back(i);
      }
      KktOptions io = opt;
      io.method = KktMethod::kAuto;
      io.allow_redundant = false;
      inner = std::make_unique<SparseKktSolver>(io);
      auto outer_names = names;
      const std::vector<int> ind = independent;
      inner->SetRowNames([outer_names, ind](int i) {
        return outer_names ? outer_names(ind[i])
                           : "row " + std::to_string(ind[i]);
      });
      inner->SetContext(context);
      g_outer.clear();
      if (!dependent.empty() && report.empty()) {
        std::ostringstream os;
        os << "redundant constraints: rank of J is "
           << nc - static_cast<int>(dependent.size()) << " < " << nc
           << " rows; dependent rows:";
        for (int i : dependent) os << " '" << RowName(i) << "'";
        os << "; solving for the unique accelerations with minimum-norm "
              "multipliers (individual multipliers of redundant constraints "
              "are not unique; J' lambda is)";
        report = os.str();
        if (report_stream) *report_stream << "daedalus: " << report << "\n";
      }
    }
    const SparseMatrixD Ji = SelectRows(J, independent);
    const Eigen::VectorXd bi = Gather(bias, independent);
    Eigen::VectorXd li(bi.size());
    try {
      inner->Solve(M, Ji, f, bi, vdot, li);
    } catch (const KktError&) {
      if (attempt == 0 && !dependent.empty()) {
        inner.reset();  // the dependent set changed: find it again
        continue;
      }
      throw;
    }
    cancel_acc.resize(0);  // this state's, if the check needs it
    FinishRedundant(J, Ji, bias, li, vdot, lambda, /*factor_g=*/true, &M, &f);
    return;
  }
}

void SparseKktSolver::Impl::FinishRedundant(
    const SparseMatrixD& J,
    const SparseMatrixD& Ji,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    const Eigen::VectorXd& li,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda,
    bool factor_g,
    const SparseMatrixD* M,
    const Eigen::Ref<const Eigen::VectorXd>* f) {
  lambda.setZero();
  for (size_t i = 0; i < independent.size(); ++i)
    lambda[independent[i]] = li[i];
  if (dependent.empty()) return;

  // Consistency: the dependent rows must hold at the solution.
  const SparseMatrixD Jd = SelectRows(J, dependent);
  const Eigen::VectorXd bd = Gather(bias, dependent);
  const Eigen::VectorXd res = Jd * vdot + bd;
  // Scale: the size of the terms that cancel in J_d vdot + b_d (a
  // mechanism at rest has b ~ 0 but J_d vdot is a sum of large terms),
  // with a floor of 64 eps for systems where everything vanishes (a
  // projection on the manifold).
  const SparseMatrixD Jd_abs = Jd.cwiseAbs();
  Eigen::VectorXd terms = Jd_abs * vdot.cwiseAbs() + bd.cwiseAbs();
  auto allowed = [&] {
    const double scale = std::max(terms.maxCoeff(), 1.0);
    return opt.consistency_tolerance * terms.maxCoeff() +
           64 * std::numeric_limits<double>::epsilon() * scale;
  };
  if (res.cwiseAbs().maxCoeff() > allowed()) {
    // And the terms that cancel in vdot itself: the accelerations of the
    // applied and of the constraint forces, |M^-1 f| + |M^-1 J_i' l_i|
    // (a humanoid standing still has vdot ~ 0 from forces of hundreds of
    // newtons; its sole corners' dependent rows missed the check above by
    // round-off). Two mass solves, only when the check above fails;
    // Resolve takes its Solve's (same state, same M).
    if (M != nullptr && f != nullptr) {
      const Eigen::VectorXd reaction = Ji.transpose() * li;
      Eigen::VectorXd a_reaction(nv);
      cancel_acc.resize(nv);
      inner->SolveMass(*M, *f, cancel_acc);
      inner->SolveMass(*M, reaction, a_reaction);
      cancel_acc = cancel_acc.cwiseAbs() + a_reaction.cwiseAbs();
    }
    if (cancel_acc.size() == vdot.size()) terms += Jd_abs * cancel_acc;
  }
  if (res.cwiseAbs().maxCoeff() > allowed()) {
    std::ostringstream os;
    os.precision(3);
    os << "contradictory constraints" << Where() << ": rows";
    for (int i : dependent) os << " '" << RowName(i) << "'";
    os << " depend linearly on the others but their equations disagree "
          "(acceleration-level residual "
       << std::scientific << res.cwiseAbs().maxCoeff()
       << " against terms of size " << terms.maxCoeff()
       << "); no motion satisfies all constraints. Remove or correct one "
          "of them";
    throw KktError(os.str());
  }
  // Minimum-norm multipliers: J_d = C J_i; the null space of J' is
  // spanned by N = [-C'; I], and projecting lambda0 = [li; 0] off it gives
  // mu = (C C' + I)^-1 C li, lambda_i = li - C' mu, lambda_d = mu.
  // G = J_i J_i' depends on J only: Resolve reuses its factor.
  if (factor_g) {
    SparseMatrixD G = Ji * SparseMatrixD(Ji.transpose());
    SparseMatrixD Gl = G.triangularView<Eigen::Lower>();
    Gl.makeCompressed();
    if (!SamePattern(Gl, g_outer, g_inner)) {
      chol_g.Analyze(Gl);
      CopyPattern(Gl, &g_outer, &g_inner);
    }
    if (!chol_g.Factorize(Gl))
      throw KktError(
          "redundant constraints: J_i J_i' is not positive "
          "definite" +
          Where());
  }
  const Eigen::MatrixXd JiJd = Ji * Eigen::MatrixXd(Jd.transpose());
  Eigen::MatrixXd Ct(JiJd.rows(), JiJd.cols());
  for (Eigen::Index c = 0; c < JiJd.cols(); ++c) {
    chol_g.Solve(JiJd.col(c), Ct.col(c));
  }
  const Eigen::Index nd = Ct.cols();
  const Eigen::MatrixXd A =
      Ct.transpose() * Ct + Eigen::MatrixXd::Identity(nd, nd);
  const Eigen::VectorXd mu = A.llt().solve(Ct.transpose() * li);
  const Eigen::VectorXd li_min = li - Ct * mu;
  for (size_t i = 0; i < independent.size(); ++i)
    lambda[independent[i]] = li_min[i];
  for (size_t i = 0; i < dependent.size(); ++i) lambda[dependent[i]] = mu[i];
}

void SparseKktSolver::Impl::ResolveRedundant(
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  // The inner solver reuses its factors on the independent rows (its last
  // Solve was this one's, on the same dependent set).
  Eigen::VectorXd li(static_cast<Eigen::Index>(independent.size()));
  inner->Resolve(f, Gather(bias, independent), vdot, li);
  // (J_i is needed only when there are dependent rows.)
  FinishRedundant(
      j_last,
      dependent.empty() ? SparseMatrixD() : SelectRows(j_last, independent),
      bias, li, vdot, lambda, /*factor_g=*/false);
}

}  // namespace daedalus
