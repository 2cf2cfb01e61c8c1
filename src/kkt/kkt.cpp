#include "daedalus/kkt.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>

#include "kkt/singularity.hpp"

namespace daedalus {

const char* ToString(KktMethod m) {
  switch (m) {
    case KktMethod::kSchur:
      return "dense";
    case KktMethod::kFullLu:
      return "full-lu";
    case KktMethod::kAuto:
      return "auto";
    case KktMethod::kSparseSchur:
      return "schur";
    case KktMethod::kSparseLu:
      return "sparse-lu";
    case KktMethod::kSparseCholesky:
      return "sparse-cholesky";
    case KktMethod::kQr:
      return "qr";
  }
  return "?";
}

KktMethod KktMethodFromString(const std::string& s) {
  for (KktMethod m : {KktMethod::kAuto, KktMethod::kSchur, KktMethod::kFullLu,
                      KktMethod::kSparseSchur, KktMethod::kSparseLu,
                      KktMethod::kSparseCholesky, KktMethod::kQr})
    if (s == ToString(m)) return m;
  throw std::invalid_argument(
      "unknown KKT method '" + s +
      "'; valid: auto, dense, full-lu, schur, sparse-lu, sparse-cholesky, qr");
}

bool IsSparseMethod(KktMethod m) {
  return m == KktMethod::kSparseSchur || m == KktMethod::kSparseLu ||
         m == KktMethod::kSparseCholesky || m == KktMethod::kQr;
}

struct KktSolver::Impl {
  Impl(Eigen::Index nv, Eigen::Index nc)
      : llt_m(nv),
        llt_s(nc),
        lu(nv + nc),
        Y(nv, nc),
        S(nc, nc),
        K(nv + nc, nv + nc),
        f(nv),
        z(nv),
        rhs(nv + nc),
        sol(nv + nc) {}
  Eigen::LLT<Eigen::MatrixXd> llt_m;
  Eigen::LLT<Eigen::MatrixXd> llt_s;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu;
  Eigen::MatrixXd Y;  // nv x nc: M^-1 J'
  Eigen::MatrixXd S;  // nc x nc: J M^-1 J'
  Eigen::MatrixXd K;  // (nv+nc)^2 full system
  Eigen::VectorXd f, z, rhs, sol, r;
  std::vector<int> dependent;  // rows found dependent (redundant)
  bool reported = false;       // the redundancy report was printed
  // The M of the factors in llt_m and its verdict: a model whose mass
  // matrix does not change (Cartesian coordinates, the slider-crank)
  // reuses them, exactly, instead of refactoring and re-estimating its
  // condition at every solve.
  Eigen::MatrixXd factored_M;
  bool m_ok = false;
};

namespace {

[[noreturn]] void ThrowSingularMass(const Workspace& ws, double tol) {
  throw KktError("model '" + ws.model().name() +
                 "': mass matrix is singular or not positive definite at " +
                 DescribeState(ws) +
                 internal::SingularMassDetail(ws.model(), ws.M, tol));
}

[[noreturn]] void ThrowRankDeficient(const Workspace& ws, double tol) {
  // The rows of the current contact mode: an open contact's row (and a
  // slipping friction row, whose equation is replaced by the friction
  // law) is not a constraint here, and its masked zero row would read as
  // a vanishing gradient.
  std::vector<int> rows;
  for (int r = 0; r < static_cast<int>(ws.J.rows()); ++r)
    if (std::find(ws.open_rows.begin(), ws.open_rows.end(), r) ==
        ws.open_rows.end())
      rows.push_back(r);
  const Eigen::MatrixXd J = ws.J(rows, Eigen::all);
  std::ostringstream os;
  const auto rank =
      J.rows() - static_cast<Eigen::Index>(DependentRows(J, tol).size());
  os << "model '" << ws.model().name() << "': ";
  if (rank < J.rows())
    os << "constraint Jacobian has rank " << rank << " < " << J.rows()
       << " rows";
  else  // J is regular but J M^-1 J' is singular to working precision
    os << "J M^-1 J' is singular to working precision although the "
          "constraint Jacobian has full rank "
       << rank;
  if (!ws.open_rows.empty())
    os << " (the closed rows of this contact mode; " << ws.open_rows.size()
       << " open or slipping contact row"
       << (ws.open_rows.size() > 1 ? "s are" : " is") << " left out)";
  os << " at " << DescribeState(ws)
     << internal::RankDeficiencyDetail(ws.model(), J, rows, tol);
  throw KktError(os.str());
}

// The rows of J the mode holds (Workspace::open_rows left out: contacts
// apart, slipping friction rows), and their indices in *closed.
Eigen::MatrixXd ClosedRows(const Workspace& ws, std::vector<int>* closed) {
  closed->clear();
  for (Eigen::Index i = 0; i < ws.J.rows(); ++i)
    if (std::find(ws.open_rows.begin(), ws.open_rows.end(), i) ==
        ws.open_rows.end())
      closed->push_back(static_cast<int>(i));
  Eigen::MatrixXd Jc(static_cast<Eigen::Index>(closed->size()), ws.J.cols());
  for (size_t i = 0; i < closed->size(); ++i)
    Jc.row(static_cast<Eigen::Index>(i)) = ws.J.row((*closed)[i]);
  return Jc;
}

// Minimum-norm multipliers for a rank-deficient Schur complement S = J M^-1 J'
// (nc x nc, positive semidefinite): lambda = S^+ r by complete orthogonal
// decomposition, after checking that r lies in the range of S (otherwise
// the dependent constraints contradict each other).
void SolveRedundantDense(const Workspace& ws,
                         const KktOptions& opt,
                         const Eigen::MatrixXd& S,
                         const Eigen::VectorXd& r,
                         Eigen::VectorXd* lambda,
                         std::vector<int>* dependent,
                         bool* reported) {
  const Model& model = ws.model();
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod;
  // S = J M^-1 J' squares the singular values of J.
  cod.setThreshold(opt.rank_tolerance * opt.rank_tolerance);
  cod.compute(S);
  *lambda = cod.solve(r);
  // The closed rows' dependent ones (S and J have the same null space on
  // the left). Open rows (Workspace::open_rows: contacts apart, joint
  // limits away from their stops) are zero rows of the mode, not
  // dependent constraints: the report named a humanoid's open limits and
  // upper box corners among "92 dependent rows" of 100.
  std::vector<int> closed;
  const Eigen::MatrixXd Jc = ClosedRows(ws, &closed);
  dependent->clear();
  for (int i : DependentRows(Jc, opt.rank_tolerance))
    dependent->push_back(closed[static_cast<size_t>(i)]);
  const double res = (S * *lambda - r).cwiseAbs().maxCoeff();
  // Scale: the size of the terms that cancel (cf. sparse_kkt.cpp), with a
  // floor of 64 eps where everything vanishes.
  const double terms =
      (S.cwiseAbs() * lambda->cwiseAbs() + r.cwiseAbs()).maxCoeff();
  const double scale = terms;
  const double allowed =
      opt.consistency_tolerance * terms +
      64 * std::numeric_limits<double>::epsilon() * std::max(terms, 1.0);
  if (res > allowed) {
    std::ostringstream os;
    os.precision(3);
    os << "model '" << model.name() << "': contradictory constraints at "
       << DescribeState(ws) << ": rows";
    for (int i : *dependent) os << " '" << model.RowName(i) << "'";
    os << " depend linearly on the others but their equations disagree "
          "(acceleration-level residual "
       << std::scientific << res << " against terms of size " << scale
       << "); no motion satisfies all constraints. Remove or correct one of "
          "them";
    throw KktError(os.str());
  }
  if (!*reported) {
    *reported = true;
    std::ostringstream os;
    os << "daedalus: model '" << model.name() << "': ";
    if (dependent->empty()) {
      // The Schur complement failed to factor although J has full rank:
      // M^-1 is nearly singular on the constrained motions (a badly
      // scaled or nearly singular mass matrix), not a redundancy.
      os << "J M^-1 J' is singular to working precision (numerical rank "
         << cod.rank() << " of " << S.rows()
         << ") although J has full rank; the mass matrix is badly scaled "
            "on the constrained motions";
    } else {
      os << "redundant constraints: rank of J's closed rows is "
         << closed.size() - dependent->size() << " < " << closed.size()
         << (ws.open_rows.empty()
                 ? std::string(" rows")
                 : " closed rows (" + std::to_string(ws.open_rows.size()) +
                       " open)")
         << "; dependent rows:";
      for (int i : *dependent) os << " '" << model.RowName(i) << "'";
    }
    os << "; solving with minimum-norm multipliers";
    std::clog << os.str() << "\n";
  }
}

// The square of the smallest over the largest pivot of an LL' factorization
// (0 if one is not finite): the reciprocal condition estimate CHOLMOD's
// cholmod_rcond returns, and the pivot test KktOptions::singular_tolerance
// is stated against. O(n), where Eigen's L1 estimate (LLT::rcond) costs
// several triangular solves; it was 16 % of a four_bar run's CPU, called
// on every right-hand side. It is a lower bound on the condition number
// (sigma_max(L) >= max |L_ii|, sigma_min(L) <= min |L_ii|), so it can miss
// an ill-conditioned matrix whose pivots all look healthy; KktHealth, at
// every sample, reports the L1 estimate.
double PivotRcond(const Eigen::LLT<Eigen::MatrixXd>& llt) {
  const auto d = llt.matrixLLT().diagonal();
  if (d.size() == 0) return 1.0;
  double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
  for (Eigen::Index i = 0; i < d.size(); ++i) {
    const double a = std::abs(d[i]);
    if (!std::isfinite(a)) return 0.0;
    lo = std::min(lo, a);
    hi = std::max(hi, a);
  }
  return hi > 0.0 ? (lo / hi) * (lo / hi) : 0.0;
}

// The rows of slipping friction (Workspace::slip) in the Schur
// complement S (its open-row diagonal d set): d lambda_t + d mu sigma
// lambda_n = 0, so that J_t' lambda_t = -mu sigma lambda_n J_t' is the
// kinetic friction force.
void SlipRowsSchur(const Workspace& ws, Eigen::MatrixXd* S) {
  for (const SlipRow& sr : ws.slip) {
    const double d = (*S)(sr.row, sr.row);
    S->row(sr.row).setZero();
    (*S)(sr.row, sr.row) = d;
    (*S)(sr.row, sr.normal) = d * sr.mu * sr.sigma;
  }
}

// Whether the mode's closed rows of J (the open and slipping ones left
// out) are linearly dependent.
bool HasDependentClosedRows(const Workspace& ws, const KktOptions& opt) {
  std::vector<int> closed;
  return !DependentRows(ClosedRows(ws, &closed), opt.rank_tolerance).empty();
}

[[noreturn]] void ThrowSlipSingular(const Workspace& ws, double rcond) {
  std::ostringstream os;
  os << "model '" << ws.model().name()
     << "': the KKT system with slipping friction rows is singular (rcond "
     << rcond << ") at " << DescribeState(ws)
     << ": the normal force of a slipping contact is not determined by "
        "its mu (a Painleve configuration; docs/friction.md)";
  throw std::runtime_error(os.str());
}

}  // namespace

KktSolver::KktSolver(const Model& model, KktOptions options)
    : options_(options),
      impl_(std::make_shared<Impl>(model.nv(), model.nc())) {}

void KktSolver::Solve(const Workspace& ws,
                      const Eigen::Ref<const Eigen::VectorXd>& bias,
                      KktResult* out) {
  ws.Require(Stage::kDynamics, "KktSolver::Solve");
  Impl& im = *impl_;
  const Eigen::Index nv = ws.M.rows(), nc = ws.J.rows();
  if (bias.size() != nc) {
    throw std::invalid_argument("KktSolver::Solve: bias has " +
                                std::to_string(bias.size()) +
                                " rows, expected " + std::to_string(nc));
  }
  const double tol = options_.singular_tolerance;
  im.f = ws.Bu - ws.h;
  out->vdot.resize(nv);
  out->lambda.resize(nc);

  // Cholesky of M: needed by both paths (health, the Schur path, and
  // SolveMass for projections). Reused when M is bitwise the one factored.
  if (im.factored_M.size() != ws.M.size() || im.factored_M != ws.M) {
    im.llt_m.compute(ws.M);
    im.m_ok = im.llt_m.info() == Eigen::Success && PivotRcond(im.llt_m) > tol;
    im.factored_M = ws.M;
  }
  const bool m_ok = im.m_ok;
  // The dense solver runs every method but full-lu through the Schur
  // complement (kkt.hpp).
  const bool schur = options_.method != KktMethod::kFullLu &&
                     options_.method != KktMethod::kSparseLu;
  if (!m_ok && schur) ThrowSingularMass(ws, tol);

  if (schur) {
    if (nc == 0) {
      out->vdot = im.llt_m.solve(im.f);
    } else {
      // lambda = -(J M^-1 J')^-1 (b + J M^-1 f),  vdot = M^-1 (f + J' lambda)
      im.Y = im.llt_m.solve(ws.J.transpose());
      im.S.noalias() = ws.J * im.Y;
      // Open contacts (Workspace::open_rows): zero rows of J; a diagonal
      // entry at the scale of the others (so that the pivot test sees no
      // spread) gives them lambda = 0 (their bias is zero too).
      if (!ws.open_rows.empty()) {
        const double d = im.S.diagonal().cwiseAbs().maxCoeff();
        for (int r : ws.open_rows) im.S(r, r) = d > 0.0 ? d : 1.0;
      }
      im.z = im.llt_m.solve(im.f);
      im.dependent.clear();
      const bool redundant_ok =
          options_.allow_redundant || options_.method == KktMethod::kQr;
      bool full_rank = options_.method != KktMethod::kQr;
      if (!ws.slip.empty()) {
        // Slipping friction rows (docs/friction.md): lambda_t + mu sigma
        // lambda_n = 0 in place of the row's equation. S is then not
        // symmetric: LU with partial pivoting.
        SlipRowsSchur(ws, &im.S);
        im.r = bias;
        im.r.noalias() += ws.J * im.z;
        for (int r : ws.open_rows) im.r[r] = 0.0;
        const Eigen::PartialPivLU<Eigen::MatrixXd> lu(im.S);
        if (lu.rcond() > tol) {
          out->lambda = -lu.solve(im.r);
        } else if (redundant_ok && HasDependentClosedRows(ws, options_)) {
          // Dependent closed rows (a slipping sole corner beside others on
          // one body): its normal force, and the friction it carries, are
          // statically indeterminate; the minimum-norm multipliers, as for
          // sticking rows (docs/friction.md, "Redundant slipping contacts").
          SolveRedundantDense(ws, options_, im.S, -im.r, &out->lambda,
                              &im.dependent, &im.reported);
        } else {
          ThrowSlipSingular(ws, lu.rcond());
        }
        full_rank = false;
      } else if (full_rank) {
        im.llt_s.compute(im.S);
        full_rank =
            im.llt_s.info() == Eigen::Success && PivotRcond(im.llt_s) >= tol;
      }
      if (full_rank) {
        im.r = bias;
        im.r.noalias() += ws.J * im.z;
        for (int r : ws.open_rows) im.r[r] = 0.0;
        out->lambda = im.llt_s.solve(im.r);
        out->lambda = -out->lambda;
      } else if (!ws.slip.empty()) {
        // solved above
      } else if (redundant_ok) {
        const Eigen::VectorXd r = -(bias + ws.J * im.z);
        SolveRedundantDense(ws, options_, im.S, r, &out->lambda, &im.dependent,
                            &im.reported);
      } else {
        ThrowRankDeficient(ws, options_.rank_tolerance);
      }
      out->vdot = im.z;
      out->vdot.noalias() += im.Y * out->lambda;
    }
  } else {
    if (!m_ok) ThrowSingularMass(ws, tol);
    im.K.topLeftCorner(nv, nv) = ws.M;
    im.K.topRightCorner(nv, nc) = -ws.J.transpose();
    im.K.bottomLeftCorner(nc, nv) = ws.J;
    im.K.bottomRightCorner(nc, nc).setZero();
    if (!ws.open_rows.empty()) {
      const double d = ws.M.diagonal().cwiseAbs().maxCoeff();
      for (int r : ws.open_rows) im.K(nv + r, nv + r) = d > 0.0 ? d : 1.0;
      for (const SlipRow& sr : ws.slip) {
        im.K.row(nv + sr.row).setZero();
        im.K(nv + sr.row, nv + sr.row) = d > 0.0 ? d : 1.0;
        im.K(nv + sr.row, nv + sr.normal) =
            (d > 0.0 ? d : 1.0) * sr.mu * sr.sigma;
      }
    }
    im.lu.compute(im.K);
    if (!(im.lu.rcond() > tol * 1e-2)) {
      if (!options_.allow_redundant)
        ThrowRankDeficient(ws, options_.rank_tolerance);
      // Redundant rows: the minimum-norm solution through the Schur
      // complement (LU cannot give it).
      im.Y = im.llt_m.solve(ws.J.transpose());
      im.S.noalias() = ws.J * im.Y;
      im.z = im.llt_m.solve(im.f);
      const Eigen::VectorXd r = -(bias + ws.J * im.z);
      SolveRedundantDense(ws, options_, im.S, r, &out->lambda, &im.dependent,
                          &im.reported);
      out->vdot = im.z;
      out->vdot.noalias() += im.Y * out->lambda;
      out->reaction.noalias() = ws.J.transpose() * out->lambda;
      out->power = out->lambda.cwiseProduct(ws.J * ws.v);
      out->health.dependent_rows = im.dependent;
      return;
    }
    im.rhs.head(nv) = im.f;
    im.rhs.tail(nc) = -bias;
    for (int r : ws.open_rows) im.rhs[nv + r] = 0.0;
    im.sol = im.lu.solve(im.rhs);
    // LU's condition estimate can miss rows dependent to working precision
    // (the M block keeps it up): from finite data, a solution that is not
    // finite is that case, named as such rather than returned.
    if (!im.sol.allFinite() && im.K.allFinite() && im.rhs.allFinite())
      ThrowRankDeficient(ws, options_.rank_tolerance);
    out->vdot = im.sol.head(nv);
    out->lambda = im.sol.tail(nc);
  }
  out->reaction.noalias() = ws.J.transpose() * out->lambda;
  out->power = out->lambda.cwiseProduct(ws.J * ws.v);
  out->health.dependent_rows = im.dependent;

  if (options_.compute_health) {
    KktHealth& hl = out->health;
    hl.rcond_M = im.llt_m.rcond();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(ws.M,
                                                      Eigen::EigenvaluesOnly);
    hl.min_eig_M = es.eigenvalues()[0];
    if (nc > 0) {
      Eigen::JacobiSVD<Eigen::MatrixXd> svd(ws.J);
      svd.setThreshold(1e-10);
      hl.rank_J = static_cast<int>(svd.rank());
      hl.sigma_min_J = svd.singularValues()[nc - 1 < nv ? nc - 1 : nv - 1];
      if (!schur || !ws.slip.empty()) {  // (the slip path did not factor S)
        im.Y = im.llt_m.solve(ws.J.transpose());
        im.S.noalias() = ws.J * im.Y;
        im.llt_s.compute(im.S);
      }
      hl.rcond_schur = im.llt_s.rcond();
    } else {
      hl.rank_J = 0;
    }
  }
}

const std::vector<int>& KktSolver::dependent_rows() const {
  return impl_->dependent;
}

void KktSolver::SolveMass(const Eigen::Ref<const Eigen::VectorXd>& rhs,
                          Eigen::Ref<Eigen::VectorXd> x) const {
  x = impl_->llt_m.solve(rhs);
}

std::vector<int> DependentRows(const Eigen::MatrixXd& J, double tol) {
  std::vector<int> dep;
  if (J.rows() == 0) return dep;
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(J.transpose());
  qr.setThreshold(tol);
  const auto& perm = qr.colsPermutation().indices();
  for (Eigen::Index k = qr.rank(); k < perm.size(); ++k) dep.push_back(perm[k]);
  std::sort(dep.begin(), dep.end());
  return dep;
}

KktResult SolveKktAt(Workspace* ws,
                     double t,
                     const Eigen::VectorXd& q,
                     const Eigen::VectorXd& v,
                     const KktOptions& options) {
  ws->SetState(t, q, v);
  EvaluateAll(ws);
  KktSolver solver(ws->model(), options);
  KktResult r;
  solver.Solve(*ws, ws->bias, &r);
  return r;
}

}  // namespace daedalus
