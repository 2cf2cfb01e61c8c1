// SparseKktSolver's public methods, the choice of method, the analysis and
// dispatch, and the sparse-cholesky and sparse-lu paths (the schur path is
// in sparse_schur.cpp, the redundant one in sparse_redundant.cpp; the
// solver's state in sparse_kkt_impl.hpp).
#include "daedalus/sparse_kkt.hpp"

#include <algorithm>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kkt/sparse_kkt_impl.hpp"

namespace daedalus {

namespace internal {

std::vector<std::vector<int>> Components(const SparseMatrixD& M) {
  const int n = static_cast<int>(M.cols());
  std::vector<int> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  for (int c = 0; c < n; ++c)
    for (SparseMatrixD::InnerIterator it(M, c); it; ++it) {
      const int a = find(c), b = find(static_cast<int>(it.row()));
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  std::vector<int> id(static_cast<size_t>(n), -1);
  std::vector<std::vector<int>> blocks;
  for (int c = 0; c < n; ++c) {
    const int r = find(c);
    if (id[r] < 0) {
      id[r] = static_cast<int>(blocks.size());
      blocks.emplace_back();
    }
    blocks[id[r]].push_back(c);
  }
  return blocks;
}

}  // namespace internal

namespace {

using internal::Cholmod;
using internal::Components;
using internal::CopyPattern;
using internal::SamePattern;
using internal::SmallSolve;
using internal::SparseDependentRows;

size_t LargestBlock(const SparseMatrixD& M) {
  size_t k = 0;
  for (const auto& b : Components(M)) k = std::max(k, b.size());
  return k;
}

}  // namespace

// ----------------------------------------------------------- resolution

KktMethod ResolveKktMethod(KktMethod requested,
                           const SparseMatrixD& M,
                           const SparseMatrixD& J) {
  (void)J;
  if (requested != KktMethod::kAuto) return requested;
  if (M.cols() < kDenseBelowNv) return KktMethod::kSchur;
  // Declared structure: several small mass blocks (bodies).
  const std::vector<std::vector<int>> blocks = Components(M);
  size_t largest = 0;
  for (const auto& b : blocks) largest = std::max(largest, b.size());
  if (blocks.size() > 1 && largest <= static_cast<size_t>(kMaxSchurBlock))
    return KktMethod::kSparseSchur;
  // A mass matrix that is mostly full gains nothing from sparse storage.
  const double density = static_cast<double>(M.nonZeros()) /
                         (static_cast<double>(M.rows()) * M.cols());
  return density > 0.25 ? KktMethod::kSchur : KktMethod::kSparseLu;
}

void SparseKktSolver::Impl::ThrowDependent(const SparseMatrixD& J,
                                           const std::vector<int>& dep) const {
  std::ostringstream os;
  os << "constraint Jacobian has rank "
     << J.rows() - static_cast<long>(dep.size()) << " < " << J.rows() << " rows"
     << Where() << "; dependent constraint rows:";
  for (int i : dep) os << " '" << RowName(i) << "'";
  os << " (each depends on the other rows). Remove the redundant constraints, "
        "solve with --kkt qr (minimum-norm multipliers), or move the "
        "mechanism away from a singular configuration";
  throw KktError(os.str());
}

void SparseKktSolver::Impl::ThrowSingularMass(
    const std::vector<int>& coords) const {
  std::ostringstream os;
  os << "mass matrix is singular or not positive definite" << Where();
  if (!coords.empty()) {
    os << " in the block of coordinates";
    for (size_t i = 0; i < coords.size() && i < 12; ++i) os << " " << coords[i];
    if (coords.size() > 12) os << " ...";
  }
  os << ". Check the kinetic energy: every coordinate needs inertia";
  throw KktError(os.str());
}

void SparseKktSolver::Impl::Analyze(const SparseMatrixD& M,
                                    const SparseMatrixD& J) {
  nv = static_cast<int>(M.cols());
  nc = static_cast<int>(J.rows());
  if (M.rows() != nv || J.cols() != nv)
    throw std::invalid_argument(
        "SparseKktSolver: M is " + std::to_string(M.rows()) + " x " +
        std::to_string(M.cols()) + " and J is " + std::to_string(J.rows()) +
        " x " + std::to_string(J.cols()));
  if (method == KktMethod::kAuto || !analysed) {
    method = ResolveKktMethod(opt.method, M, J);
    // A small system on the sparse path still runs sparse (the dense
    // solver works on a Workspace): auto picks by structure here.
    if (method == KktMethod::kSchur || method == KktMethod::kFullLu)
      method = LargestBlock(M) <= static_cast<size_t>(kMaxSchurBlock)
                   ? KktMethod::kSparseSchur
                   : KktMethod::kSparseLu;
  }
  CopyPattern(M, &m_outer, &m_inner);
  CopyPattern(J, &j_outer, &j_inner);
  j_last = J;
  z.resize(nv);
  y.resize(nv);
  w.resize(nv);
  r.resize(nc);
  dependent.clear();
  independent.clear();
  inner.reset();
  cancel_acc.resize(0);
  switch (method) {
    case KktMethod::kSparseSchur:
      AnalyzeSchur(M, J);
      break;
    case KktMethod::kSparseLu:
      AnalyzeLu(M, J);
      break;
    case KktMethod::kSparseCholesky: {
      SparseMatrixD lower = M.triangularView<Eigen::Lower>();
      chol_m.Analyze(lower);
      s_outer.clear();
      break;
    }
    case KktMethod::kQr:
      break;  // analysed on the independent rows in SolveRedundant
    default:
      throw std::logic_error("SparseKktSolver: unresolved method");
  }
  ++analyses;
  analysed = true;
}

void SparseKktSolver::Impl::AnalyzeLu(const SparseMatrixD& M,
                                      const SparseMatrixD& J) {
  // Column c < nv: M's column then J's column (rows shifted by nv); column
  // nv + i: -(row i of J)'. Rows stay sorted within each column.
  const SparseMatrixD Jt = J.transpose();
  // Index of each Jt value in J's value array.
  std::vector<int> jt_src(static_cast<size_t>(Jt.nonZeros()));
  {
    std::vector<int> next(Jt.outerIndexPtr(), Jt.outerIndexPtr() + nc);
    for (int c = 0; c < nv; ++c)
      for (int e = J.outerIndexPtr()[c]; e < J.outerIndexPtr()[c + 1]; ++e)
        jt_src[next[J.innerIndexPtr()[e]]++] = e;
  }
  const int n = nv + nc;
  std::vector<int> outer(static_cast<size_t>(n + 1), 0), inner;
  k_src.clear();
  k_sign.clear();
  for (int c = 0; c < nv; ++c) {
    for (int e = M.outerIndexPtr()[c]; e < M.outerIndexPtr()[c + 1]; ++e) {
      inner.push_back(M.innerIndexPtr()[e]);
      k_src.push_back(e);
      k_sign.push_back(1.0);
    }
    for (int e = J.outerIndexPtr()[c]; e < J.outerIndexPtr()[c + 1]; ++e) {
      inner.push_back(nv + J.innerIndexPtr()[e]);
      k_src.push_back(-(1 + e));
      k_sign.push_back(1.0);
    }
    outer[c + 1] = static_cast<int>(inner.size());
  }
  for (int i = 0; i < nc; ++i) {
    for (int e = Jt.outerIndexPtr()[i]; e < Jt.outerIndexPtr()[i + 1]; ++e) {
      inner.push_back(Jt.innerIndexPtr()[e]);
      k_src.push_back(-(1 + jt_src[e]));
      k_sign.push_back(-1.0);
    }
    outer[nv + i + 1] = static_cast<int>(inner.size());
  }
  K.resize(n, n);
  K.resizeNonZeros(static_cast<Eigen::Index>(inner.size()));
  std::copy(outer.begin(), outer.end(), K.outerIndexPtr());
  std::copy(inner.begin(), inner.end(), K.innerIndexPtr());
  klu.Analyze(K);
  rhs.resize(n);
  sol.resize(n);
}

bool SparseKktSolver::Impl::SolveCholesky(
    const SparseMatrixD& M,
    const SparseMatrixD& J,
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  const SparseMatrixD lower = M.triangularView<Eigen::Lower>();
  if (!chol_m.Factorize(lower) || !(chol_m.Rcond() > opt.singular_tolerance))
    ThrowSingularMass({});
  ++factorizations;
  if (nc > 0) {
    // S = J M^-1 J' through a sparse solve with the sparse right side J'.
    const SparseMatrixD Y = chol_m.SolveSparse(J.transpose());
    SparseMatrixD Sfull = J * Y;
    S = Sfull.triangularView<Eigen::Lower>();
    S.makeCompressed();
    if (!SamePattern(S, s_outer, s_inner)) {
      chol_s.Analyze(S);
      CopyPattern(S, &s_outer, &s_inner);
    }
    if (!chol_s.Factorize(S) || !(chol_s.Rcond() > opt.singular_tolerance))
      return false;
  }
  CholeskySolves(J, f, bias, vdot, lambda);
  return true;
}

void SparseKktSolver::Impl::CholeskySolves(
    const SparseMatrixD& J,
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  // z = M^-1 f;  lambda = -S^-1 (b + J z);  vdot = M^-1 (f + J' lambda).
  chol_m.Solve(f, z);
  if (nc == 0) {
    vdot = z;
    return;
  }
  r.noalias() = J * z;
  r += bias;
  r = -r;
  chol_s.Solve(r, lambda);
  y.noalias() = J.transpose() * lambda;
  y += f;
  chol_m.Solve(y, w);
  vdot = w;
}

bool SparseKktSolver::Impl::SolveLu(
    const SparseMatrixD& M,
    const SparseMatrixD& J,
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  double* kv = K.valuePtr();
  const double* mv = M.valuePtr();
  const double* jv = J.valuePtr();
  for (size_t e = 0; e < k_src.size(); ++e)
    kv[e] = k_src[e] >= 0 ? mv[k_src[e]] : k_sign[e] * jv[-(k_src[e] + 1)];
  ++factorizations;
  // KLU's reciprocal condition estimate; the threshold is scaled down as in
  // the dense full-LU path since the indefinite matrix is less well
  // conditioned than its blocks.
  if (!klu.Factor(K, opt.singular_tolerance * 1e-2)) {
    // Singular: dependent rows of J, or M singular on the motions the
    // constraints allow.
    if (!SparseDependentRows(J, opt.rank_tolerance).empty()) return false;
    std::ostringstream os;
    os << "KKT matrix is singular although the constraint Jacobian has full "
          "row rank"
       << Where()
       << ": the mass matrix is singular on motions the constraints allow. "
          "Check the kinetic energy: every coordinate needs inertia";
    throw KktError(os.str());
  }
  LuSolves(f, bias, vdot, lambda);
  return true;
}

void SparseKktSolver::Impl::LuSolves(
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  rhs.head(nv) = f;
  rhs.tail(nc) = -bias;
  klu.Solve(rhs, &sol);
  vdot = sol.head(nv);
  lambda = sol.tail(nc);
}

void SparseKktSolver::Impl::Dispatch(
    const SparseMatrixD& M,
    const SparseMatrixD& J,
    const Eigen::Ref<const Eigen::VectorXd>& f,
    const Eigen::Ref<const Eigen::VectorXd>& bias,
    Eigen::Ref<Eigen::VectorXd> vdot,
    Eigen::Ref<Eigen::VectorXd> lambda) {
  if (!analysed || !SamePattern(M, m_outer, m_inner) ||
      !SamePattern(J, j_outer, j_inner))
    Analyze(M, J);
  if (f.size() != nv || bias.size() != nc || vdot.size() != nv ||
      lambda.size() != nc)
    throw std::invalid_argument(
        "SparseKktSolver::Solve: f, bias, vdot, lambda must have nv = " +
        std::to_string(nv) + " and nc = " + std::to_string(nc) + " rows");
  const bool redundant_ok = opt.allow_redundant || method == KktMethod::kQr;
  if (method == KktMethod::kQr || inner) {
    SolveRedundant(M, J, f, bias, vdot, lambda);
    return;
  }
  bool ok = false;
  switch (method) {
    case KktMethod::kSparseSchur:
      ok = SolveSchur(M, J, f, bias, vdot, lambda);
      break;
    case KktMethod::kSparseCholesky:
      ok = SolveCholesky(M, J, f, bias, vdot, lambda);
      break;
    case KktMethod::kSparseLu:
      ok = SolveLu(M, J, f, bias, vdot, lambda);
      break;
    default:
      throw std::logic_error("SparseKktSolver: unresolved method");
  }
  if (ok) {
    dependent.clear();
    return;
  }
  // The constraint part is singular: dependent rows.
  const std::vector<int> dep = SparseDependentRows(J, opt.rank_tolerance);
  if (!redundant_ok || dep.empty()) {
    if (dep.empty())
      throw KktError(
          "KKT system is singular or ill-conditioned (reciprocal "
          "condition below " +
          std::to_string(opt.singular_tolerance) + ")" + Where() +
          " although no constraint row is dependent at rank "
          "tolerance " +
          std::to_string(opt.rank_tolerance) +
          "; the mechanism is near a singular configuration");
    ThrowDependent(J, dep);
  }
  SolveRedundant(M, J, f, bias, vdot, lambda);
}

// ------------------------------------------------------ SparseKktSolver

SparseKktSolver::SparseKktSolver(KktOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->opt = options;
}
SparseKktSolver::~SparseKktSolver() = default;
SparseKktSolver::SparseKktSolver(SparseKktSolver&&) noexcept = default;
SparseKktSolver& SparseKktSolver::operator=(SparseKktSolver&&) noexcept =
    default;

void SparseKktSolver::SetRowNames(std::function<std::string(int)> names) {
  impl_->names = std::move(names);
}
void SparseKktSolver::SetContext(std::function<std::string()> context) {
  impl_->context = std::move(context);
}
void SparseKktSolver::SetReportStream(std::ostream* os) {
  impl_->report_stream = os;
}
KktMethod SparseKktSolver::method() const { return impl_->method; }
const std::vector<int>& SparseKktSolver::dependent_rows() const {
  return impl_->dependent;
}
const std::string& SparseKktSolver::redundancy_report() const {
  return impl_->report;
}
long SparseKktSolver::num_factorizations() const {
  return impl_->factorizations;
}
long SparseKktSolver::num_analyses() const { return impl_->analyses; }

void SparseKktSolver::Solve(const SparseMatrixD& M,
                            const SparseMatrixD& J,
                            const Eigen::Ref<const Eigen::VectorXd>& f,
                            const Eigen::Ref<const Eigen::VectorXd>& bias,
                            Eigen::Ref<Eigen::VectorXd> vdot,
                            Eigen::Ref<Eigen::VectorXd> lambda) {
  Impl& im = *impl_;
  // A solve that throws may leave its factors half made: nothing for
  // Resolve to reuse.
  im.solved = false;
  im.Dispatch(M, J, f, bias, vdot, lambda);
  // Dispatch analysed J's pattern into j_last; Resolve needs its values.
  std::copy(J.valuePtr(), J.valuePtr() + J.nonZeros(), im.j_last.valuePtr());
  im.solved = true;
}

void SparseKktSolver::Resolve(const Eigen::Ref<const Eigen::VectorXd>& f,
                              const Eigen::Ref<const Eigen::VectorXd>& bias,
                              Eigen::Ref<Eigen::VectorXd> vdot,
                              Eigen::Ref<Eigen::VectorXd> lambda) {
  Impl& im = *impl_;
  if (!im.solved)
    throw std::logic_error(
        "SparseKktSolver::Resolve: there is no successful Solve whose "
        "factors it could reuse; call Solve with this M and J first");
  if (f.size() != im.nv || bias.size() != im.nc || vdot.size() != im.nv ||
      lambda.size() != im.nc)
    throw std::invalid_argument(
        "SparseKktSolver::Resolve: f, bias, vdot, lambda must have nv = " +
        std::to_string(im.nv) + " and nc = " + std::to_string(im.nc) +
        " rows, the sizes of the last Solve");
  // The same routing as Dispatch: once the redundant path has an inner
  // solver, every solve goes through it.
  if (im.method == KktMethod::kQr || im.inner) {
    im.ResolveRedundant(f, bias, vdot, lambda);
    return;
  }
  switch (im.method) {
    case KktMethod::kSparseSchur:
      im.ResolveSchur(f, bias, vdot, lambda);
      break;
    case KktMethod::kSparseCholesky:
      im.CholeskySolves(im.j_last, f, bias, vdot, lambda);
      break;
    case KktMethod::kSparseLu:
      im.LuSolves(f, bias, vdot, lambda);
      break;
    default:
      throw std::logic_error("SparseKktSolver: unresolved method");
  }
}

void SparseKktSolver::MultiplierChange(
    const Eigen::Ref<const Eigen::VectorXd>& dbias,
    Eigen::Ref<Eigen::VectorXd> dlambda) {
  Impl& im = *impl_;
  if (im.solved && im.method == KktMethod::kSparseSchur && !im.inner &&
      dbias.size() == im.nc && dlambda.size() == im.nc) {
    for (int k = 0; k < im.nc; ++k) im.rp[k] = -dbias[im.s_perm[k]];
    if (im.nc > 0) im.ldl_sp.Solve(im.rp.data());
    for (int k = 0; k < im.nc; ++k) dlambda[im.s_perm[k]] = im.rp[k];
    return;
  }
  // Resolve checks the preconditions and routes the other methods.
  im.zero_f.setZero(im.nv);
  im.scratch_v.resize(im.nv);
  Resolve(im.zero_f, dbias, im.scratch_v, dlambda);
}

void SparseKktSolver::Solve(const SparseWorkspace& ws,
                            const Eigen::Ref<const Eigen::VectorXd>& bias,
                            KktResult* out) {
  ws.Require(Stage::kDynamics, "SparseKktSolver::Solve");
  if (!impl_->names) {
    const Model model = ws.model();
    impl_->names = [model](int i) { return model.RowName(i); };
  }
  if (!impl_->context) {
    const SparseWorkspace* w = &ws;
    impl_->context = [w] {
      return "model '" + w->model().name() + "', " + DescribeState(*w);
    };
  }
  const Eigen::Index nv = ws.M.rows(), nc = ws.J.rows();
  out->vdot.resize(nv);
  out->lambda.resize(nc);
  Impl& im = *impl_;
  im.f_ws = ws.Bu - ws.h;
  im.y_is_reaction = false;
  Solve(ws.M, ws.J, im.f_ws, bias, out->vdot, out->lambda);
  if (im.y_is_reaction)
    out->reaction = im.y;  // the Schur solve formed J' lambda already
  else
    out->reaction.noalias() = ws.J.transpose() * out->lambda;
  im.jv_ws.noalias() = ws.J * ws.v;
  out->power = out->lambda.cwiseProduct(im.jv_ws);
  out->health.dependent_rows = im.dependent;
}

void SparseKktSolver::SolveMass(const SparseMatrixD& M,
                                const Eigen::Ref<const Eigen::VectorXd>& rhs,
                                Eigen::Ref<Eigen::VectorXd> x) {
  Impl& im = *impl_;
  if (im.analysed && im.method == KktMethod::kSparseSchur &&
      SamePattern(M, im.m_outer, im.m_inner)) {
    for (const Impl::Block& B : im.blocks) {
      const int k = static_cast<int>(B.coords.size());
      double xb[kMaxSchurBlock];
      for (int i = 0; i < k; ++i) xb[i] = rhs[B.coords[i]];
      SmallSolve(B.L.data(), k, xb);
      for (int i = 0; i < k; ++i) x[B.coords[i]] = xb[i];
    }
    return;
  }
  Cholmod c;
  const SparseMatrixD lower = M.triangularView<Eigen::Lower>();
  c.Analyze(lower);
  if (!c.Factorize(lower)) im.ThrowSingularMass({});
  c.Solve(rhs, x);
}

}  // namespace daedalus
