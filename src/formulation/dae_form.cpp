#include "formulation/dae_form.hpp"

#include <algorithm>
#include <stdexcept>

#include "eval/chart.hpp"
#include "eval/eval_stop.hpp"
#include "formulation/roots.hpp"
#include "formulation/support.hpp"

namespace daedalus::internal {

DaeForm::DaeForm(Mechanics* mech,
                 const SimulationOptions& options,
                 std::string* evaluator)
    : mech_(mech),
      opt_(options),
      L_(mech->model(), mech->rows(), options),
      Q_(mech->model()),
      params_(&mech->parameters()) {
  if (options.formulation == Formulation::kProjection)
    throw std::logic_error("DaeForm: projection is not a DAE form");
  if (EventDrivenContact(options, TraitsOf(mech->model()))) {
    const Model& m = mech->model();
    for (int ci = 0; ci < m.num_constraints(); ++ci) {
      const auto& c = m.constraints()[ci];
      if (!c.unilateral) continue;
      for (int r = 0; r < c.rows; ++r)
        contact_rows_.push_back(m.constraint_row(ci) + r);
      // Its friction rows open with it, and slip (support.cpp refuses the
      // 3D cones on IDAS: their slip direction v_t / |v_t| is not in the
      // residual).
      if (!c.law || c.law->friction.empty() || c.rows != 1) continue;
      for (int cj = 0; cj < m.num_constraints(); ++cj) {
        const auto& f = m.constraints()[cj];
        if (f.name != c.law->friction) continue;
        for (int r = 0; r < f.rows; ++r) {
          contact_rows_.push_back(m.constraint_row(cj) + r);
          friction_pairs_.emplace_back(m.constraint_row(cj) + r,
                                       m.constraint_row(ci));
        }
      }
    }
    if (L_.form == Formulation::kGgl) {
      mu_row_.assign(static_cast<std::size_t>(L_.nc), -1);
      for (int k = 0; k < L_.nh; ++k)
        mu_row_[static_cast<std::size_t>(
            L_.hrows[static_cast<std::size_t>(k)])] = L_.im() + k;
    }
  }
  const CompiledModel* cm = mech->compiled();
  if (cm == nullptr) return;
  if (!mech->model().quaternions().empty()) {
    // The residual programs and the sensitivity programs are recorded in
    // coordinate directions (q' = v); on a model with quaternions the
    // stages are compiled and the residual's Jacobian takes the tangent
    // path through the chart (eval/chart.hpp).
    if (evaluator)
      *evaluator +=
          " (IDAS residual on dual numbers: the model has quaternions)";
    return;
  }
  if (L_.form == Formulation::kBaumgarte && L_.nc > 0 &&
      options.sensitivity.method == SensMethod::kForward) {
    qs_kkt_ = KktLinearization::Make(cm, mech->model(), mech->rows(), options,
                                     Formulation::kUnstabilized);
    qs_integrands_ = BaumgarteIntegrandJacobian::Make(cm, mech->model());
  }
  if (options.sensitivity.method == SensMethod::kForward) {
    for (const auto& [name, g] : mech->model().data().quadratures) {
      uq_grad_.push_back(FunctionalGradient::Make(cm, mech->model(), g));
      if (!uq_grad_.back()) {
        uq_grad_.clear();  // the tangent path for all of them
        break;
      }
    }
  }
  try {
    prog_ = DaePrograms::Build(*cm, mech->model(), L_, Q_, options);
    if (evaluator && *evaluator == "compiled (native kernels)" &&
        !prog_->res.native())
      *evaluator =
          "compiled (native stages; the IDAS residual interpreted: the "
          "build generated no kernel for these options)";
  } catch (const std::length_error& e) {
    // The residual's graph outgrew ExprGraph::kMaxNodes: the stages stay
    // compiled, the residual and Jacobian take the dual-number path.
    if (evaluator)
      *evaluator +=
          std::string(" (IDAS residual on dual numbers: ") + e.what() + ")";
  }
}

bool DaeForm::QuadratureOutsideErrorTest(int k) const {
  if (Q_.nc > 0 && k >= Q_.constraint() && k < Q_.ideal() + Q_.nc) return true;
  return k == Q_.stabilization();
}

void DaeForm::ConsistentStart(double t0,
                              const Eigen::VectorXd& q,
                              const Eigen::VectorXd& v,
                              Eigen::Ref<Eigen::VectorXd> y0,
                              Eigen::Ref<Eigen::VectorXd> yp0,
                              KktResult* r0) {
  mech_->Evaluate(t0, q, v);
  mech_->SolveKkt(mech_->bias(), r0);
  y0.setZero();
  yp0.setZero();
  y0.segment(L_.iq(), L_.nq) = q;
  y0.segment(L_.iv(), L_.nv) = v;
  y0.segment(L_.il(), L_.nc) = r0->lambda;
  if (L_.chart != nullptr)
    CoordinateRates<double>(*L_.chart, q, v, yp0.segment(L_.iq(), L_.nq));
  else
    yp0.segment(L_.iq(), L_.nq) = v;
  yp0.segment(L_.iv(), L_.nv) = r0->vdot;
  SetAlgebraicWeights();
}

void DaeForm::SetAlgebraicWeights() {
  algebraic_weights_.clear();
  const bool ggl = L_.form == Formulation::kGgl;
  if ((!ggl && L_.form != Formulation::kIndex3) || opt_.multiplier_atol > 0.0)
    return;
  // At the evaluated start: M^-1 J_i' for each row (nc mass solves, once
  // per segment; the scales change with the configuration, but a factor
  // of a few in a Newton tolerance does not matter). An open contact's J
  // row is zero in its mode (each switch starts a segment here), so its
  // lambda and mu get the floor scale and leave the test: their rows are
  // lambda_i = 0 and mu_k = 0 (OpenRows), exact after one iteration.
  const Eigen::MatrixXd J = mech_->DenseJacobian();
  Eigen::VectorXd x;
  for (int i = 0; i < L_.nc; ++i) {
    mech_->SolveMass(J.row(i).transpose(), &x);
    AlgebraicWeight a;
    a.scale = std::max(x.cwiseAbs().maxCoeff(), 1e-300);
    // Index 3: a holonomic row's multiplier is resolved to round-off / h^2
    // and moves q by h^2 M^-1 J' dlambda; the others (GGL, nonholonomic
    // rows) to round-off / h, and move v by h M^-1 J' dlambda.
    a.power = (!ggl && L_.holonomic[static_cast<size_t>(i)]) ? 2 : 1;
    a.on_q = a.power == 2;
    algebraic_weights_.push_back(a);
  }
  if (ggl) {
    for (int k = 0; k < L_.nh; ++k) {
      AlgebraicWeight a;  // q' = v - G' mu: mu moves q by h G' dmu
      a.scale = std::max(
          J.row(L_.hrows[static_cast<size_t>(k)]).cwiseAbs().maxCoeff(),
          1e-300);
      a.power = 1;
      a.on_q = true;
      algebraic_weights_.push_back(a);
    }
  }
}

void DaeForm::InitialSensitivity(const KktResult& r0,
                                 const SensParameter& sp,
                                 const Eigen::MatrixXd& initial_tangent,
                                 Eigen::Ref<Eigen::VectorXd> s,
                                 Eigen::Ref<Eigen::VectorXd> sp_dot) {
  FillSensitivity(
      mech_->LinearizeStart(r0.vdot, r0.lambda, sp, initial_tangent), s,
      sp_dot);
}

void DaeForm::FillSensitivity(const internal::InitialSensitivity& s0,
                              Eigen::Ref<Eigen::VectorXd> s,
                              Eigen::Ref<Eigen::VectorXd> sp_dot) {
  s.setZero();
  sp_dot.setZero();
  s.segment(L_.iq(), L_.nq) = s0.dq;
  s.segment(L_.iv(), L_.nv) = s0.dv;
  s.segment(L_.il(), L_.nc) = s0.dlambda;
  if (L_.chart != nullptr) {
    // q' = N(q) v: s_q' is its tangent, (s_q (x) (0, w) + q (x) (0, s_w))
    // / 2 on a quaternion (eval/chart.hpp; docs/sensitivities.md,
    // "Quaternions"), at the start LinearizeStart evaluated. GGL's G' mu
    // term adds nothing: mu and its sensitivity start at zero.
    CoordinateRatesTangent(*L_.chart, mech_->q(), mech_->v(), s0.dq, s0.dv,
                           sp_dot.segment(L_.iq(), L_.nq));
  } else {
    sp_dot.segment(L_.iq(), L_.nq) = s0.dv;
  }
  sp_dot.segment(L_.iv(), L_.nv) = s0.dvdot;
}

void DaeForm::ResidualByWorkspace(double t,
                                  const double* y,
                                  const double* yp,
                                  double* res) {
  if (dq_params_) mech_->SetParameters(*dq_params_);
  mech_->DaeResidual(L_, t, y, yp, res);
}

TangentWorkspace& DaeForm::SeedAndEvaluate(double t,
                                           const double* y,
                                           const double* dy,
                                           const Eigen::VectorXd& dp) {
  mech_->SetState(t, y + L_.iq(), y + L_.iv());
  EvalRequest req;
  req.bias = L_.needs_bias();
  return mech_->Tangent(Eigen::Map<const Eigen::VectorXd>(dy + L_.iq(), L_.nq),
                        Eigen::Map<const Eigen::VectorXd>(dy + L_.iv(), L_.nv),
                        dp, req);
}

void DaeForm::AssembleTangent(const TangentWorkspace& tws,
                              const double* y,
                              const double* yp,
                              const double* dy,
                              const double* dyp,
                              double* out) {
  const int n = size();
  Y1_.resize(n), YP1_.resize(n), F1_.resize(n);
  for (int j = 0; j < n; ++j) {
    Y1_[j] = D1(y[j], dy[j]);
    YP1_[j] = D1(yp[j], dyp[j]);
  }
  AssembleDae(L_, tws, Y1_, YP1_, F1_);
  for (int j = 0; j < n; ++j) out[j] = F1_[j].d;
}

void DaeForm::TangentJacobian(double t,
                              double cj,
                              const double* y,
                              const double* yp) {
  // Exact dF/dy + cj dF/dyp, column by column. The multiplier columns
  // enter F linearly: one zero-tangent evaluation of the workspace serves
  // all of them.
  const int n = size(), nd = differential();
  jac_.resize(n, n);
  Eigen::VectorXd dy = Eigen::VectorXd::Zero(n), dyp = dy;
  TangentWorkspace* tws = nullptr;
  // The sweeps inside one column read it too (eval/eval_stop.hpp).
  const ScopedEvalStop sweeps_stop(opt_.stop);
  for (int j = 0; j < n; ++j) {
    // SimulationOptions::stop, read per column: on a large model with the
    // energy form one Jacobian takes minutes (chain_reduced --bodies 200
    // --dynamics energy --formulation ggl ignored SIGINT for 120 s). The
    // callback's trampoline makes this a fatal failure, reported as an
    // interrupted run.
    if (opt_.stop != nullptr && opt_.stop->load(std::memory_order_relaxed) != 0)
      throw std::invalid_argument("stop requested");
    // Columns of q and v move the workspace; at j == nd the seed is zero
    // (dy is reset after each column) and serves the multiplier columns.
    if (j < nd) dy[j] = 1.0;
    if (j <= nd) tws = &SeedAndEvaluate(t, y, dy.data(), zero_dp_);
    dy[j] = 1.0;
    dyp[j] = cj;
    AssembleTangent(*tws, y, yp, dy.data(), dyp.data(), jac_.col(j).data());
    dy[j] = 0.0;
    dyp[j] = 0.0;
  }
}

void DaeForm::DenseJacobian(
    double t, double cj, const double* y, const double* yp, double* a) {
  const int n = size();
  if (prog_ && prog_->Jacobian(t, cj, y, yp, CurrentParameters())) {
    std::fill_n(a, static_cast<std::size_t>(n) * n, 0.0);
    for (std::size_t k = 0; k < prog_->jac_entries.size(); ++k) {
      const auto [i, j] = prog_->jac_entries[k];
      a[static_cast<std::size_t>(j) * n + i] = prog_->jac_values[k];
    }
  } else {
    TangentJacobian(t, cj, y, yp);
    for (int j = 0; j < n; ++j)
      std::copy_n(jac_.col(j).data(), n, a + static_cast<std::size_t>(j) * n);
  }
  // Open contacts: the rows lambda_i = 0 (and mu_k = 0, Residual);
  // slipping ones lambda_t + mu sigma lambda_n = 0.
  for (int r : mech_->open_rows())
    for (int i : OpenRows(r))
      for (int j = 0; j < n; ++j)
        a[static_cast<std::size_t>(j) * n + i] = j == i ? 1.0 : 0.0;
  for (const SlipRow& s : mech_->slip_rows())
    a[static_cast<std::size_t>(L_.il() + s.normal) * n + L_.il() + s.row] =
        s.mu * s.sigma;
}

const std::vector<std::vector<int>>& DaeForm::Pattern() {
  if (!pattern_.empty()) return pattern_;
  const int n = size(), nd = differential();
  pattern_.assign(n, {});
  if (prog_) {
    // The compiled Jacobian's structural nonzeros (exact zeros elsewhere at
    // every state).
    for (const auto& [i, j] : prog_->jac_entries) pattern_[j].push_back(i);
  } else {
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) {
        // The multiplier rows and columns couple to the multipliers only
        // through q and v: their mutual block is structurally zero.
        if (i >= nd && j >= nd) continue;
        pattern_[j].push_back(i);
      }
    }
  }
  pattern_nnz_ = 0;
  for (const auto& col : pattern_) pattern_nnz_ += col.size();
  if (!contact_rows_.empty()) AddContactDiagonals();
  return pattern_;
}

void DaeForm::AddContactDiagonals() {
  // An open contact's residual lambda_i = 0 (GGL: and mu_k = 0) has the
  // single entry 1 on the diagonal, in the multipliers' block that is
  // otherwise structurally zero: every such row's diagonal joins the
  // pattern for the run (a mode changes the values, never the pattern KLU
  // analysed).
  // A friction row's residual while it slips also reads its normal's
  // multiplier (Residual): that entry joins the pattern too.
  const int n = size();
  std::vector<bool> replaced(static_cast<std::size_t>(n), false);
  auto add = [&](int i, int j) {
    std::vector<int>& col = pattern_[j];
    if (std::find(col.begin(), col.end(), i) != col.end()) return;
    if (std::is_sorted(col.begin(), col.end()))
      col.insert(std::lower_bound(col.begin(), col.end(), i), i);
    else
      col.push_back(i);
  };
  for (int r : contact_rows_) {
    for (int i : OpenRows(r)) {
      replaced[static_cast<std::size_t>(i)] = true;
      add(i, i);
    }
  }
  for (const auto& [t, nr] : friction_pairs_) add(L_.il() + t, L_.il() + nr);
  std::vector<std::size_t> start(static_cast<std::size_t>(n) + 1, 0);
  for (int j = 0; j < n; ++j) start[j + 1] = start[j] + pattern_[j].size();
  pattern_nnz_ = start[n];
  auto slot = [&](int i, int j) {
    const std::vector<int>& col = pattern_[j];
    return static_cast<int>(
        start[j] + (std::find(col.begin(), col.end(), i) - col.begin()));
  };
  if (prog_) {
    prog_slot_.clear();
    for (const auto& [i, j] : prog_->jac_entries)
      prog_slot_.push_back(slot(i, j));
  }
  open_slots_.assign(static_cast<std::size_t>(n), {});
  for (int j = 0; j < n; ++j)
    for (int i : pattern_[j])
      if (replaced[static_cast<std::size_t>(i)])
        open_slots_[static_cast<std::size_t>(i)].emplace_back(slot(i, j), j);
}

void DaeForm::SparseJacobian(
    double t, double cj, const double* y, const double* yp, double* values) {
  const std::vector<std::vector<int>>& pattern = Pattern();
  if (prog_ && prog_->Jacobian(t, cj, y, yp, CurrentParameters())) {
    if (prog_slot_.empty()) {
      // Structural nonzeros only: the pattern, in the same column-major
      // order.
      std::copy_n(prog_->jac_values.data(), prog_->jac_entries.size(), values);
    } else {
      std::fill_n(values, pattern_nnz_, 0.0);
      for (std::size_t k = 0; k < prog_slot_.size(); ++k)
        values[prog_slot_[k]] = prog_->jac_values[k];
    }
  } else {
    TangentJacobian(t, cj, y, yp);
    std::size_t k = 0;
    for (std::size_t j = 0; j < pattern.size(); ++j)
      for (int i : pattern[j]) values[k++] = jac_(i, static_cast<int>(j));
  }
  // Open contacts: the rows lambda_i = 0 (and mu_k = 0, Residual);
  // slipping ones lambda_t + mu sigma lambda_n = 0.
  for (int r : mech_->open_rows())
    for (int i : OpenRows(r)) {
      if (static_cast<std::size_t>(i) >= open_slots_.size()) continue;
      for (const auto& [s, j] : open_slots_[static_cast<std::size_t>(i)])
        values[s] = j == i ? 1.0 : 0.0;
    }
  for (const SlipRow& sr : mech_->slip_rows()) {
    const int i = L_.il() + sr.row, jn = L_.il() + sr.normal;
    if (static_cast<std::size_t>(i) >= open_slots_.size()) continue;
    for (const auto& [s, j] : open_slots_[static_cast<std::size_t>(i)])
      if (j == jn) values[s] = sr.mu * sr.sigma;
  }
}

void DaeForm::SensResidual(double t,
                           const double* y,
                           const double* yp,
                           const double* dy,
                           const double* dyp,
                           const Eigen::VectorXd& dp,
                           double* out) {
  if (!(prog_ && prog_->has_sens &&
        prog_->SensResidual(t, y, yp, CurrentParameters(), dy, dyp, dp, out))) {
    const TangentWorkspace& tws = SeedAndEvaluate(t, y, dy, dp);
    AssembleTangent(tws, y, yp, dy, dyp, out);
  }
  // Open contacts: the tangent of their rows lambda_i = 0 (and mu_k = 0,
  // Residual); a slipping row's of lambda_t + mu sigma lambda_n, with
  // d mu where mu is a parameter (SlipRow::mu_param).
  for (int r : mech_->open_rows())
    for (int i : OpenRows(r)) out[i] = dy[i];
  for (const SlipRow& s : mech_->slip_rows()) {
    const int i = L_.il() + s.row, jn = L_.il() + s.normal;
    out[i] += s.mu * s.sigma * dy[jn];
    if (s.mu_param >= 0 && s.mu_param < dp.size())
      out[i] += s.sigma * y[jn] * dp[s.mu_param];
  }
}

void DaeForm::QuadraturesByWorkspace(double t, const double* y, double* out) {
  Eigen::Map<Eigen::VectorXd> rq(out, Q_.size());
  const Eigen::Map<const Eigen::VectorXd> Y(y, size());
  const auto lambda = Y.segment(L_.il(), L_.nc);
  // The power terms need forces, J, Phi_t and L_t; Baumgarte's ideal
  // multipliers need the full dynamics.
  const bool baumgarte = L_.form == Formulation::kBaumgarte && L_.nc > 0;
  EvalRequest req;
  if (!baumgarte) {
    req.bias = false;
    req.dynamics = EvalRequest::Dynamics::kForces;
  }
  if (dq_params_) mech_->SetParameters(*dq_params_);
  mech_->Evaluate(t, y + L_.iq(), y + L_.iv(), req);
  double stab = 0.0;
  if (L_.form == Formulation::kGgl && L_.nh > 0) {
    // Power of the position correction qdot = v - G' mu.
    stab = mech_->EnergyAlongQ(-mech_->GtMu(L_, y));
  }
  if (baumgarte) {
    // Baumgarte's share of lambda is stabilization, not constraint work.
    mech_->SolveKkt(mech_->bias(), &reported_);
    NoteReported(t, y);
    stab = (lambda - reported_.lambda).dot(mech_->ConstraintRates());
    mech_->Integrands(Q_, reported_.lambda, stab, rq);
    return;
  }
  mech_->Integrands(Q_, lambda, stab, rq);
}

void DaeForm::QuadSens(double t,
                       const double* y,
                       const double* dy,
                       const Eigen::VectorXd& dp,
                       double* out) {
  if (prog_ && prog_->has_qsens &&
      prog_->QuadSens(t, y, CurrentParameters(), dy, dp, out))
    return;
  if (BaumgarteQuadSens(t, y, dy, dp, out)) return;
  const int n = size();
  VecX<D1> Y(n), q(Q_.size());
  TangentWorkspace& tws = SeedAndEvaluate(t, y, dy, dp);
  for (int j = 0; j < n; ++j) Y[j] = D1(y[j], dy[j]);
  D1 stab(0.0);
  if (L_.form == Formulation::kGgl && L_.nh > 0) {
    const VecX<D1> dq = -GtMu(L_, tws, Y);
    stab = EnergyDerivativeAlongQ(&tws, dq);
  }
  QuadratureIntegrands(Q_, tws, Y.segment(L_.il(), L_.nc), stab, q);
  for (Eigen::Index k = 0; k < q.size(); ++k) out[k] = q[k].d;
}

void DaeForm::NoteReported(double t, const double* y) {
  reported_valid_ = true;
  reported_t_ = t;
  reported_y_ = Eigen::Map<const Eigen::VectorXd>(y, L_.nq + L_.nv);
  reported_p_ = mech_->parameters();
}

void DaeForm::UserQuadSens(double t,
                           const double* y,
                           const double* dy,
                           const Eigen::VectorXd& dp,
                           double* out) {
  const int nuq = Q_.nuq;
  const Eigen::VectorXd& p = CurrentParameters();
  if (nuq == 0) {
    std::fill_n(out, Q_.size(), 0.0);
    return;
  }
  if (static_cast<int>(uq_grad_.size()) != nuq || dp.size() != p.size()) {
    QuadSens(t, y, dy, dp, out);
    return;
  }
  const int nqv = L_.nq + L_.nv;
  const Eigen::Map<const Eigen::VectorXd> Y(y, nqv);
  if (!(uq_valid_ && t == uq_t_ && Y == uq_y_ && p == uq_p_)) {
    uq_valid_ = false;
    uq_gy_.resize(nuq, nqv);
    uq_gp_.resize(nuq, p.size());
    for (int k = 0; k < nuq; ++k) {
      if (!uq_grad_[static_cast<std::size_t>(k)]->Run(
              t, y + L_.iq(), y + L_.iv(), p, &uq_row_y_, &uq_row_p_)) {
        // Not finite: the tangent path names the function at fault.
        QuadSens(t, y, dy, dp, out);
        return;
      }
      uq_gy_.row(k) = uq_row_y_.transpose();
      uq_gp_.row(k) = uq_row_p_.transpose();
    }
    uq_t_ = t;
    uq_y_ = Y;
    uq_p_ = p;
    uq_valid_ = true;
  }
  Eigen::Map<Eigen::VectorXd> o(out, Q_.size());
  o.head(Q_.user()).setZero();
  o.tail(nuq).noalias() =
      uq_gy_ * Eigen::Map<const Eigen::VectorXd>(dy + L_.iq(), nqv);
  o.tail(nuq).noalias() += uq_gp_ * dp;
}

bool DaeForm::BaumgarteQuadSens(double t,
                                const double* y,
                                const double* dy,
                                const Eigen::VectorXd& dp,
                                double* out) {
  const Eigen::VectorXd& p = CurrentParameters();
  if (!qs_kkt_ || !qs_integrands_ || dp.size() != p.size()) return false;
  // The compiled KKT linearization holds every row: with open contacts
  // (docs/contact.md) the tangent path below, which drops them.
  if (!mech_->open_rows().empty()) return false;
  const Eigen::Map<const Eigen::VectorXd> Y(y, size());
  const int nz = L_.nq + L_.nv + p.size();
  if (!(qs_valid_ && t == qs_t_ && Y == qs_y_ && p == qs_p_)) {
    qs_valid_ = false;
    // The ideal KKT solution (vdot, lambda) at (q, v), as the integrands
    // (QuadraturesByWorkspace) take it; IDAS evaluates them at the same
    // state just before.
    if (!(reported_valid_ && t == reported_t_ &&
          Y.head(L_.nq + L_.nv) == reported_y_ && p == reported_p_)) {
      if (dq_params_) mech_->SetParameters(*dq_params_);
      mech_->Evaluate(t, y + L_.iq(), y + L_.iv());
      mech_->SolveKkt(mech_->bias(), &reported_);
      NoteReported(t, y);
    }
    if (!qs_kkt_->Linearize(t, y + L_.iq(), y + L_.iv(), p, reported_.vdot,
                            reported_.lambda))
      return false;
    // d lambda_ideal = -(K^-1 Z)_lambda (dq, dv, dp) = -W' Z with
    // K' W = [0; I] (nc right-hand sides instead of nq + nv + np).
    Eigen::MatrixXd E = Eigen::MatrixXd::Zero(L_.nv + L_.nc, L_.nc);
    E.bottomRows(L_.nc).setIdentity();
    qs_dlambda_ = -(qs_kkt_->SolveTransposed(E).transpose() * qs_kkt_->Z());
    if (!qs_dlambda_.allFinite() ||
        !qs_integrands_->Run(t, y + L_.iq(), y + L_.iv(), p, reported_.lambda,
                             y + L_.il(), &qs_jac_))
      return false;
    qs_t_ = t;
    qs_y_ = Y;
    qs_p_ = p;
    qs_valid_ = true;
  }
  qs_z_.resize(nz);
  qs_z_ << Eigen::Map<const Eigen::VectorXd>(dy + L_.iq(), L_.nq + L_.nv), dp;
  Eigen::Map<Eigen::VectorXd> o(out, Q_.size());
  o.noalias() = qs_jac_.leftCols(nz) * qs_z_;
  o.noalias() += qs_jac_.middleCols(nz, L_.nc) * (qs_dlambda_ * qs_z_);
  o.noalias() += qs_jac_.rightCols(L_.nc) *
                 Eigen::Map<const Eigen::VectorXd>(dy + L_.il(), L_.nc);
  return true;
}

const KktResult& DaeForm::SampleState(double t, const double* y) {
  if (dq_params_) mech_->SetParameters(*dq_params_);
  mech_->Evaluate(t, y + L_.iq(), y + L_.iv());
  mech_->SolveKkt(mech_->bias(), &reported_);
  NoteReported(t, y);
  return reported_;
}

void DaeForm::Roots(double t,
                    const double* y,
                    const RootSet& roots,
                    double* g) {
  if (!roots.NeedsMultipliers()) {
    // As OdeForm::Roots: the events and the open contacts' gaps read (t,
    // q, v, p) alone, so the state is set without evaluating the model or
    // solving the KKT system. The multipliers cached for (reported_t_,
    // reported_y_) stay right, but the mechanics no longer hold their
    // state: the cache is dropped.
    if (dq_params_) mech_->SetParameters(*dq_params_);
    mech_->SetState(t, y + L_.iq(), y + L_.iv());
    reported_valid_ = false;
    roots.Evaluate(*mech_, Eigen::VectorXd(), g);
    return;
  }
  const KktResult& r = SampleState(t, y);
  roots.Evaluate(*mech_, r.lambda, g);
}

// ------------------------------------------------------------- probes

namespace {

struct Probe {
  std::unique_ptr<Mechanics> mech;
  std::unique_ptr<DaeForm> form;
  Probe(const Model& model,
        const SimulationOptions& options,
        const Eigen::VectorXd& params) {
    mech = MakeMechanics(model, options, /*sparse=*/false);
    mech->SetParameters(params);
    form = std::make_unique<DaeForm>(mech.get(), options, nullptr);
  }
};

}  // namespace

void PrepareIdasPrograms(const Model& model,
                         const SimulationOptions& options,
                         const Eigen::VectorXd& params) {
  Probe p(model, options, params);
}

IdasProbe ProbeIdas(const Model& model,
                    const SimulationOptions& options,
                    const Eigen::VectorXd& params,
                    double t,
                    const Eigen::VectorXd& y,
                    const Eigen::VectorXd& yp,
                    double cj) {
  Probe p(model, options, params);
  const int n = p.form->size();
  if (y.size() != n || yp.size() != n)
    throw std::invalid_argument("ProbeIdas: y and yp must have " +
                                std::to_string(n) + " entries");
  IdasProbe r;
  r.compiled = p.form->compiled();
  r.residual.resize(n);
  p.form->Residual(t, y.data(), yp.data(), r.residual.data());
  r.jacobian.resize(n, n);
  p.form->DenseJacobian(t, cj, y.data(), yp.data(), r.jacobian.data());
  r.quadratures.resize(p.form->quad_layout().size());
  p.form->Quadratures(t, y.data(), r.quadratures.data());
  return r;
}

IdasTangentProbe ProbeIdasTangent(const Model& model,
                                  const SimulationOptions& options,
                                  const Eigen::VectorXd& params,
                                  double t,
                                  const Eigen::VectorXd& y,
                                  const Eigen::VectorXd& yp,
                                  const Eigen::VectorXd& dy,
                                  const Eigen::VectorXd& dyp,
                                  const Eigen::VectorXd& dp) {
  Probe p(model, options, params);
  const int n = p.form->size();
  if (y.size() != n || yp.size() != n || dy.size() != n || dyp.size() != n ||
      dp.size() != model.num_parameters())
    throw std::invalid_argument("ProbeIdasTangent: sizes disagree");
  IdasTangentProbe r;
  r.compiled = p.form->compiled_tangent();
  r.residual.resize(n);
  p.form->SensResidual(t, y.data(), yp.data(), dy.data(), dyp.data(), dp,
                       r.residual.data());
  r.quadratures.resize(p.form->quad_layout().size());
  p.form->QuadSens(t, y.data(), dy.data(), dp, r.quadratures.data());
  r.user_quadratures.resize(r.quadratures.size());
  p.form->UserQuadSens(t, y.data(), dy.data(), dp, r.user_quadratures.data());
  return r;
}

}  // namespace daedalus::internal
