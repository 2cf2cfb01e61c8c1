#include "daedalus/sparse_dynamics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "eval/chart.hpp"
#include "eval/dynamics_internal.hpp"
#include "eval/sparse_chart.hpp"
#include "eval/sparse_limits.hpp"

namespace daedalus {

namespace {

std::vector<int> AllCoords(int n) {
  std::vector<int> c(static_cast<size_t>(n));
  std::iota(c.begin(), c.end(), 0);
  return c;
}

// Index of entry (r, c) in the values of a compressed column-major matrix.
int Slot(const SparseMatrixD& A, int r, int c) {
  const int* begin = A.innerIndexPtr() + A.outerIndexPtr()[c];
  const int* end = A.innerIndexPtr() + A.outerIndexPtr()[c + 1];
  const int* it = std::lower_bound(begin, end, r);
  if (it == end || *it != r)
    throw std::logic_error("sparse pattern is missing an entry");
  return static_cast<int>(it - A.innerIndexPtr());
}

constexpr int kW = kSweepWidth;

// Values of x into duals whose tangents are zero (the workspace keeps every
// tangent zero between evaluations: each sweep seeds its own coordinates
// and clears them), so that a state change writes the values only.
void SetValues(const Eigen::VectorXd& x, VecX<D1>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i].v = x[i];
}
void SetValues(const Eigen::VectorXd& x, VecX<D2>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i].v.v = x[i];
}
void SetValues(const Eigen::VectorXd& x, VecX<M1>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i].v = x[i];
}

void Lift(const Eigen::VectorXd& x, VecX<M1>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = M1(x[i]);
}
void Lift(const Eigen::VectorXd& x, VecX<D1>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = D1(x[i], 0.0);
}
void Lift(const Eigen::VectorXd& x, VecX<D2>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i)
    y[i] = D2(D1(x[i], 0.0), D1(0.0, 0.0));
}

[[noreturn]] void ThrowNonFinite(const SparseWorkspace& ws,
                                 const std::string& what) {
  const bool finite =
      std::isfinite(ws.t) && ws.q.allFinite() && ws.v.allFinite();
  throw std::runtime_error(internal::NonFiniteMessage(
      ws.model().name(), what, DescribeState(ws), finite, ws.t));
}

void CheckRows(const SparseWorkspace& ws,
               const internal::ConstraintDecl& c,
               Eigen::Index got) {
  if (got != c.rows) {
    throw std::runtime_error("model '" + ws.model().name() + "': constraint '" +
                             c.name + "' returned " + std::to_string(got) +
                             " rows but was declared with " +
                             std::to_string(c.rows) +
                             "; pass the row count to Holonomic/Moving/"
                             "Nonholonomic");
  }
}

D1 EvalTerm1(const SparseWorkspace::Term& t, const Point<D1>& x) {
  return t.fn->f1(x);
}
D2 EvalTerm2(const SparseWorkspace::Term& t, const Point<D2>& x) {
  return t.fn->f2(x);
}

}  // namespace

// ------------------------------------------------------- SparseWorkspace

SparseWorkspace::SparseWorkspace(const Model& model) : model_(model) {
  internal::CheckSparseWorkspaceMemory(model);  // before any allocation
  const auto& d = model.data();
  const int nq = model.nq(), nv = model.nv(), nc = model.nc();
  const int nu = model.num_inputs(), np = model.num_parameters();
  q = Eigen::VectorXd::Zero(nq);
  v = Eigen::VectorXd::Zero(nv);
  p = model.default_parameters();
  phi = Eigen::VectorXd::Zero(nc);
  phi_t = Eigen::VectorXd::Zero(nc);
  vel_residual = Eigen::VectorXd::Zero(nc);
  bias = Eigen::VectorXd::Zero(nc);
  h = Eigen::VectorXd::Zero(nv);
  inertial = Eigen::VectorXd::Zero(nv);
  Bu = Eigen::VectorXd::Zero(nv);
  B = Eigen::MatrixXd::Zero(nv, nu);
  u = Eigen::VectorXd::Zero(nu);
  Dv = Eigen::VectorXd::Zero(nv);
  Qr = Eigen::VectorXd::Zero(nv);
  momentum = Eigen::VectorXd::Zero(nv);
  lq_ = Eigen::VectorXd::Zero(nv);
  q1.resize(nq);
  v1.resize(nv);
  p1.resize(np);
  q2.resize(nq);
  v2.resize(nv);
  p2.resize(np);
  qm1.resize(nq);
  vm1.resize(nv);
  pm1.resize(np);
  Lift(q, q1);
  Lift(v, v1);
  Lift(q, q2);
  Lift(v, v2);
  Lift(q, qm1);
  Lift(v, vm1);

  // ---- Jacobian pattern: each constraint row in its declared columns.
  std::vector<Eigen::Triplet<double, int>> trip;
  ccoords_.resize(d.constraints.size());
  for (size_t ci = 0; ci < d.constraints.size(); ++ci) {
    const auto& c = d.constraints[ci];
    // Columns of J, and the directions seeded, are velocities.
    ccoords_[ci] = c.coords.empty() ? AllCoords(nv)
                                    : internal::VelocityCoords(d, c.coords);
    const int r0 = d.constraint_rows[ci];
    for (int r = 0; r < c.rows; ++r)
      for (int col : ccoords_[ci]) trip.emplace_back(r0 + r, col, 0.0);
  }
  J.resize(nc, nv);
  J.setFromTriplets(trip.begin(), trip.end());
  J.makeCompressed();
  j_slot_.resize(d.constraints.size());
  for (size_t ci = 0; ci < d.constraints.size(); ++ci) {
    const int r0 = d.constraint_rows[ci], rows = d.constraints[ci].rows;
    for (int r = 0; r < rows; ++r)
      for (int col : ccoords_[ci]) j_slot_[ci].push_back(Slot(J, r0 + r, col));
  }

  // ---- Energy terms: the kinetic (or Lagrangian) terms carry the velocity
  // part; potential terms only enter L_q and L_t. Undeclared energies are
  // one term over all coordinates.
  if (!d.kinetic_terms.empty()) {
    for (const auto& kt : d.kinetic_terms) {
      if (kt.constant_mass && !d.quaternions.empty())
        for (int j : kt.coords)
          if (d.velocity_of[static_cast<size_t>(j)] < 0)
            throw std::invalid_argument(
                "model '" + model.name() +
                "': a ConstantBodyMass term touches the quaternion "
                "coordinate '" +
                model.coordinate_names()[j] +
                "', whose four coordinates have three velocities; declare "
                "that body with KineticEnergyTerm instead");
      terms_.push_back({internal::VelocityCoords(d, kt.coords),
                        &kt.fn,
                        1.0,
                        true,
                        {},
                        &kt,
                        {}});
    }
  } else {
    terms_.push_back({AllCoords(nv),
                      d.energy_is_lagrangian ? &d.lagrangian : &d.kinetic,
                      1.0,
                      true,
                      {},
                      nullptr,
                      {}});
  }
  if (!d.potential_terms.empty()) {
    for (const auto& pt : d.potential_terms)
      terms_.push_back({internal::VelocityCoords(d, pt.coords),
                        &pt.fn,
                        -1.0,
                        false,
                        {},
                        nullptr,
                        {}});
  } else if (d.potential && !d.energy_is_lagrangian) {
    terms_.push_back(
        {AllCoords(nv), &d.potential, -1.0, false, {}, nullptr, {}});
  }
  trip.clear();
  for (const Term& tm : terms_) {
    if (!tm.velocity_part) continue;
    for (int a : tm.coords)
      for (int b : tm.coords) trip.emplace_back(a, b, 0.0);
  }
  M.resize(nv, nv);
  M.setFromTriplets(trip.begin(), trip.end());
  M.makeCompressed();
  for (Term& tm : terms_) {
    if (!tm.velocity_part) continue;
    for (int a : tm.coords)
      for (int b : tm.coords) tm.m_slot.push_back(Slot(M, a, b));
  }
  SetParameters(p);
}

void SparseWorkspace::SetState(double time,
                               const Eigen::Ref<const Eigen::VectorXd>& q_in,
                               const Eigen::Ref<const Eigen::VectorXd>& v_in) {
  if (q_in.size() != q.size() || v_in.size() != v.size()) {
    throw std::invalid_argument(
        "model '" + model_.name() + "': state has " +
        std::to_string(q_in.size()) + " coordinates and " +
        std::to_string(v_in.size()) + " velocities, the model has " +
        std::to_string(q.size()) + " and " + std::to_string(v.size()));
  }
  t = time;
  q = q_in;
  v = v_in;
  // Duals with zero tangents (kept zero: each evaluation seeds its own
  // coordinates and restores them), so only the values change.
  if (tangents_clean_) {
    SetValues(q, q1);
    SetValues(v, v1);
    SetValues(q, q2);
    SetValues(v, v2);
    SetValues(q, qm1);
    SetValues(v, vm1);
  } else {
    Lift(q, q1);
    Lift(v, v1);
    Lift(q, q2);
    Lift(v, v2);
    Lift(q, qm1);
    Lift(v, vm1);
    tangents_clean_ = true;
  }
  // The functions see each quaternion normalized (the chart's value at
  // xi = 0, eval/chart.hpp); q keeps the integrator's raw values.
  for (const internal::QuaternionBlock& b : model_.data().quaternions) {
    const double n = q.segment<4>(b.q).norm();
    for (int i = b.q; i < b.q + 4; ++i) {
      q1[i].v = q[i] / n;
      q2[i].v.v = q[i] / n;
      qm1[i].v = q[i] / n;
    }
  }
  stage_ = Stage::kNone;
}

void SparseWorkspace::SetParameters(
    const Eigen::Ref<const Eigen::VectorXd>& params) {
  if (params.size() != model_.num_parameters()) {
    throw std::invalid_argument("model '" + model_.name() +
                                "': " + std::to_string(params.size()) +
                                " parameter values given, the model has " +
                                std::to_string(model_.num_parameters()));
  }
  p = params;
  Lift(p, p1);
  Lift(p, p2);
  Lift(p, pm1);
  // Constant body masses depend on the parameters only: evaluate them here.
  for (Term& tm : terms_) {
    if (tm.decl == nullptr || !tm.decl->constant_mass) continue;
    const MatX<double> m = tm.decl->constant_mass(p);
    const Eigen::Index k = static_cast<Eigen::Index>(tm.coords.size());
    internal::CheckConstantMassBlock(model_, m, k, p);
    // Reorder from the order given to Touches to the sorted coordinates.
    const std::vector<int>& given = tm.decl->given_order;
    std::vector<Eigen::Index> pos(static_cast<size_t>(k));
    // (tm.coords are velocities; the given coordinates are scalar ones.)
    const auto& vel_of = model_.data().velocity_of;
    for (Eigen::Index a = 0; a < k; ++a)
      pos[a] = std::lower_bound(tm.coords.begin(), tm.coords.end(),
                                vel_of[static_cast<size_t>(given[a])]) -
               tm.coords.begin();
    tm.mconst.assign(static_cast<size_t>(k * k), 0.0);
    for (Eigen::Index a = 0; a < k; ++a)
      for (Eigen::Index b = 0; b < k; ++b)
        tm.mconst[pos[a] * k + pos[b]] = 0.5 * (m(a, b) + m(b, a));
  }
  stage_ = Stage::kNone;
}

void SparseWorkspace::Require(Stage s, const char* who) const {
  if (static_cast<int>(stage_) < static_cast<int>(s)) {
    throw std::logic_error(std::string(who) +
                           ": an earlier evaluation stage was not completed "
                           "at this state");
  }
}

std::string DescribeState(const SparseWorkspace& ws) {
  // Big models: the first coordinates only, so messages stay readable.
  constexpr Eigen::Index kShown = 12;
  std::ostringstream os;
  os.precision(6);
  os << "t=" << ws.t << ", q=(";
  const Eigen::Index n = std::min<Eigen::Index>(ws.q.size(), kShown);
  for (Eigen::Index i = 0; i < n; ++i)
    os << (i ? ", " : "") << ws.model().coordinate_names()[i] << "=" << ws.q[i];
  if (ws.q.size() > n) os << ", ... (" << ws.q.size() << " in all)";
  os << "), v=(";
  for (Eigen::Index i = 0; i < n; ++i) os << (i ? ", " : "") << ws.v[i];
  if (ws.v.size() > n) os << ", ...";
  os << ")";
  return os.str();
}

// --------------------------------------------------------------- stages

namespace {

// (A non-finite Phi_t is a domain error, which the stage's finite check
// reports as such, not as a time dependence.)
[[noreturn]] void ThrowTimeDependent(const SparseWorkspace& ws,
                                     const internal::ConstraintDecl& c,
                                     double phi_t) {
  std::ostringstream os;
  os << "model '" << ws.model().name() << "': constraint '" << c.name
     << "' is declared stationary (Holonomic) but depends on time "
        "(Phi_t = "
     << phi_t << " at " << DescribeState(ws) << "); declare it with Moving()";
  throw std::invalid_argument(os.str());
}

// Stage 1 for constraint ci by multi-direction sweeps: the directions are
// its declared coordinates (on q; on v for a nonholonomic constraint: A =
// d psi / d v) and, for a holonomic or moving one, time last; kW of them
// per call. Two calls for a revolute joint between two planar bodies (six
// coordinates and time), one for a joint to the ground.
void SweepConstraint(SparseWorkspace* ws, int ci) {
  const auto& d = ws->model().data();
  const auto& c = d.constraints[ci];
  const std::vector<int>& cc = ws->ccoords_[ci];
  const std::vector<int>& slot = ws->j_slot_[ci];
  const int r0 = d.constraint_rows[ci], k = static_cast<int>(cc.size());
  const bool nonholonomic = c.kind == ConstraintKind::kNonholonomic;
  VecX<M1>& seeded = nonholonomic ? ws->vm1 : ws->qm1;
  const int ndir = nonholonomic ? k : k + 1;
  double* jv = ws->J.valuePtr();
  auto nval = [ws](int j) { return ws->qm1[j].v; };
  auto none = [](int, double = 0.0) {};
  for (int c0 = 0; c0 == 0 || c0 < ndir; c0 += kW) {
    const int end = std::min(c0 + kW, k);
    for (int m = c0; m < end; ++m) {
      if (nonholonomic) {
        seeded[cc[m]].d.c[m - c0] = 1.0;
      } else {
        internal::ChartSeed(
            d, ws->v, cc[m], 1.0, nval,
            [&](int j, double x) { ws->qm1[j].d.c[m - c0] += x; }, none);
      }
    }
    M1 tm(ws->t);
    if (!nonholonomic && k >= c0 && k < c0 + kW) tm.d.c[k - c0] = 1.0;
    c.fn.m1(Point<M1>{ws->qm1, ws->vm1, tm, ws->pm1}, ws->outm1);
    for (int m = c0; m < end; ++m) {
      if (nonholonomic) {
        seeded[cc[m]].d.c[m - c0] = 0.0;
      } else {
        internal::ChartClear(
            d, cc[m], [&](int j) { ws->qm1[j].d.c[m - c0] = 0.0; }, none);
      }
    }
    CheckRows(*ws, c, ws->outm1.size());
    for (int r = 0; r < c.rows; ++r) {
      const M1& o = ws->outm1[r];
      if (c0 == 0) ws->phi[r0 + r] = o.v;
      for (int m = c0; m < end; ++m) jv[slot[r * k + m]] = o.d.c[m - c0];
      if (!nonholonomic && k >= c0 && k < c0 + kW)
        ws->phi_t[r0 + r] = o.d.c[k - c0];
    }
  }
  if (nonholonomic) {
    // a = psi - A v.
    for (int r = 0; r < c.rows; ++r) {
      double av = 0.0;
      for (int m = 0; m < k; ++m) av += jv[slot[r * k + m]] * ws->v[cc[m]];
      ws->phi_t[r0 + r] = ws->phi[r0 + r] - av;
      ws->phi[r0 + r] = 0.0;
    }
    return;
  }
  if (c.kind == ConstraintKind::kHolonomic)
    for (int r = 0; r < c.rows; ++r)
      if (ws->phi_t[r0 + r] != 0.0 && std::isfinite(ws->phi_t[r0 + r]))
        ThrowTimeDependent(*ws, c, ws->phi_t[r0 + r]);
}

}  // namespace

void EvaluateSparsePosition(SparseWorkspace* ws) {
  if (!ws->sparsity_checked()) CheckDeclaredSparsity(ws);
  ws->tangents_clean_ = false;  // until the stage completes
  const Model& model = ws->model();
  const auto& d = model.data();
  double* jv = ws->J.valuePtr();
  const D1 t0(ws->t, 0.0), tt(ws->t, 1.0);
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = d.constraints[ci];
    const std::vector<int>& cc = ws->ccoords_[ci];
    const std::vector<int>& slot = ws->j_slot_[ci];
    const int r0 = d.constraint_rows[ci], k = static_cast<int>(cc.size());
    const bool nonholonomic = c.kind == ConstraintKind::kNonholonomic;
    if (c.fn.m1) {
      SweepConstraint(ws, ci);
      continue;
    }
    // J column m from the tangent along e_cc[m] (on v for nonholonomic
    // rows: A = d psi / d v).
    // On q along the chart (sparse_chart.hpp).
    for (int m = 0; m < k; ++m) {
      if (nonholonomic) {
        ws->v1[cc[m]].d = 1.0;
      } else {
        internal::ChartSeed(
            d, ws->v, cc[m], 1.0, [ws](int j) { return ws->q1[j].v; },
            [ws](int j, double x) { ws->q1[j].d += x; }, [](int, double) {});
      }
      c.fn.f1(Point<D1>{ws->q1, ws->v1, t0, ws->p1}, ws->out1);
      if (nonholonomic) {
        ws->v1[cc[m]].d = 0.0;
      } else {
        internal::ChartClear(
            d, cc[m], [ws](int j) { ws->q1[j].d = 0.0; }, [](int) {});
      }
      CheckRows(*ws, c, ws->out1.size());
      for (int r = 0; r < c.rows; ++r) jv[slot[r * k + m]] = ws->out1[r].d;
    }
    if (nonholonomic) {
      // a = psi - A v (psi from the last sweep's values).
      if (k == 0) {
        c.fn.f1(Point<D1>{ws->q1, ws->v1, t0, ws->p1}, ws->out1);
        CheckRows(*ws, c, ws->out1.size());
      }
      for (int r = 0; r < c.rows; ++r) {
        double av = 0.0;
        for (int m = 0; m < k; ++m) av += jv[slot[r * k + m]] * ws->v[cc[m]];
        ws->phi[r0 + r] = 0.0;
        ws->phi_t[r0 + r] = ws->out1[r].v - av;
      }
      continue;
    }
    c.fn.f1(Point<D1>{ws->q1, ws->v1, tt, ws->p1}, ws->out1);
    CheckRows(*ws, c, ws->out1.size());
    for (int r = 0; r < c.rows; ++r) {
      ws->phi[r0 + r] = ws->out1[r].v;
      ws->phi_t[r0 + r] = ws->out1[r].d;
      if (c.kind == ConstraintKind::kHolonomic && ws->out1[r].d != 0.0 &&
          std::isfinite(ws->out1[r].d))
        ThrowTimeDependent(*ws, c, ws->out1[r].d);
    }
  }
  const Eigen::Map<const Eigen::VectorXd> jvals(ws->J.valuePtr(),
                                                ws->J.nonZeros());
  if (!ws->phi.allFinite() || !jvals.allFinite() || !ws->phi_t.allFinite()) {
    for (int ci = 0; ci < model.num_constraints(); ++ci) {
      const int r0 = d.constraint_rows[ci], rows = d.constraints[ci].rows;
      bool ok = ws->phi.segment(r0, rows).allFinite() &&
                ws->phi_t.segment(r0, rows).allFinite();
      for (int s : ws->j_slot_[ci]) ok = ok && std::isfinite(jv[s]);
      if (!ok)
        ThrowNonFinite(*ws, "constraint '" + d.constraints[ci].name + "'");
    }
  }
  ws->tangents_clean_ = true;
  ws->MarkStage(Stage::kPosition);
}

void EvaluateSparseVelocity(SparseWorkspace* ws) {
  ws->Require(Stage::kPosition, "EvaluateSparseVelocity");
  ws->tangents_clean_ = false;  // until the stage completes
  const Model& model = ws->model();
  const auto& d = model.data();
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = d.constraints[ci];
    const std::vector<int>& cc = ws->ccoords_[ci];
    const int r0 = d.constraint_rows[ci];
    if (c.kind == ConstraintKind::kNonholonomic) {
      // d/dt psi = A vdot + (psi_q v + psi_t): tangent (qdot = N v, tdot =
      // 1); the chart velocity's correction vanishes along w itself.
      for (int j : cc)
        internal::ChartSeed(
            d, ws->v, j, ws->v[j], [ws](int i) { return ws->q1[i].v; },
            [ws](int i, double x) { ws->q1[i].d += x; }, [](int, double) {});
      c.fn.f1(Point<D1>{ws->q1, ws->v1, D1(ws->t, 1.0), ws->p1}, ws->out1);
      for (int j : cc)
        internal::ChartClear(
            d, j, [ws](int i) { ws->q1[i].d = 0.0; }, [](int) {});
      for (int r = 0; r < c.rows; ++r) {
        ws->vel_residual[r0 + r] = ws->out1[r].v;
        ws->bias[r0 + r] = ws->out1[r].d;
      }
      continue;
    }
    // Along s -> (q + s v, t + s): first derivative J v + Phi_t, second
    // b = v' Phi_qq v + 2 Phi_qt v + Phi_tt (seed 000); only the declared
    // coordinates move. On a quaternion the curve is n (x) exp(s w / 2),
    // whose second derivative is -|w|^2 n / 4 (eval/chart.hpp).
    for (int j : cc) {
      internal::ChartSeed(
          d, ws->v, j, ws->v[j], [ws](int i) { return ws->q2[i].v.v; },
          [ws](int i, double x) {
            ws->q2[i].v.d += x;
            ws->q2[i].d.v += x;
          },
          [](int, double) {});
      if (const internal::QuaternionBlock* b =
              d.quaternions.empty() ? nullptr : internal::BlockOfVelocity(d, j);
          b != nullptr && j == b->v) {
        const double w2 = ws->v.segment<3>(b->v).squaredNorm();
        for (int i = b->q; i < b->q + 4; ++i)
          ws->q2[i].d.d = -0.25 * w2 * ws->q2[i].v.v;
      }
    }
    const D2 t2(D1(ws->t, 1.0), D1(1.0, 0.0));
    c.fn.f2(Point<D2>{ws->q2, ws->v2, t2, ws->p2}, ws->out2);
    for (int j : cc)
      internal::ChartClear(
          d, j,
          [ws](int i) {
            ws->q2[i].v.d = 0.0;
            ws->q2[i].d = D1(0.0, 0.0);
          },
          [](int) {});
    CheckRows(*ws, c, ws->out2.size());
    for (int r = 0; r < c.rows; ++r) {
      ws->vel_residual[r0 + r] = ws->out2[r].v.d;
      ws->bias[r0 + r] = ws->out2[r].d.d;
    }
  }
  if (!ws->vel_residual.allFinite() || !ws->bias.allFinite()) {
    for (int ci = 0; ci < model.num_constraints(); ++ci) {
      const int r0 = d.constraint_rows[ci], rows = d.constraints[ci].rows;
      if (!ws->vel_residual.segment(r0, rows).allFinite() ||
          !ws->bias.segment(r0, rows).allFinite())
        ThrowNonFinite(*ws, "constraint '" + d.constraints[ci].name +
                                "' (velocity or acceleration level)");
    }
  }
  ws->tangents_clean_ = true;
  ws->MarkStage(Stage::kVelocity);
}

void EvaluateSparseDynamics(SparseWorkspace* ws) {
  ws->Require(Stage::kVelocity, "EvaluateSparseDynamics");
  ws->tangents_clean_ = false;  // until the stage completes
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nv = model.nv();
  // The functions see quaternions normalized (SetState).
  Eigen::VectorXd qn;
  if (!d.quaternions.empty()) {
    qn = ws->q;
    internal::NormalizeQuaternions(d, qn);
  }
  const Point<double> x0{d.quaternions.empty() ? ws->q : qn, ws->v, ws->t,
                         ws->p};

  // Energies at double (the sums the model built from its terms; constant
  // body masses in closed form).
  if (d.energy_is_lagrangian) {
    ws->lagrangian = d.lagrangian.f0(x0);
    ws->kinetic = std::numeric_limits<double>::quiet_NaN();
    ws->potential = std::numeric_limits<double>::quiet_NaN();
  } else if (!d.kinetic_terms.empty()) {
    // Constant body masses add v'M_k v / 2 in the term loop below.
    double t = 0.0;
    for (const SparseWorkspace::Term& tm : ws->terms_)
      if (tm.velocity_part && tm.mconst.empty()) t += tm.fn->f0(x0);
    ws->kinetic = t;
  } else {
    ws->kinetic = d.kinetic.f0(x0);
  }
  // A potential declared as terms is the sum of their values, which the
  // multi-direction sweeps below return with the derivatives.
  bool potential_by_terms =
      !d.energy_is_lagrangian && !d.potential_terms.empty();
  for (const auto& pt : d.potential_terms)
    potential_by_terms = potential_by_terms && static_cast<bool>(pt.fn.m1);
  if (!d.energy_is_lagrangian && !potential_by_terms)
    ws->potential = d.potential ? d.potential.f0(x0) : 0.0;
  double potential_sum = 0.0, kinetic_const = 0.0;

  // Per term, along its own coordinates only: L_q (first order), momenta
  // and L_vq v + L_vt (inner tangent e_i on v, outer (qdot = v, tdot = 1)),
  // L_t, and the block d2T/dv_a dv_b of M.
  ws->lq_.setZero();
  ws->momentum.setZero();
  ws->inertial.setZero();
  ws->L_t = 0.0;
  std::fill(ws->M.valuePtr(), ws->M.valuePtr() + ws->M.nonZeros(), 0.0);
  double* mv = ws->M.valuePtr();
  const D1 t1(ws->t, 0.0);
  for (const SparseWorkspace::Term& tm : ws->terms_) {
    const std::vector<int>& cc = tm.coords;
    const int k = static_cast<int>(cc.size());
    if (!tm.mconst.empty()) {
      // T_k = v'M_k v / 2 with M_k constant: no q or t dependence, so
      // L_q, L_t and L_vq v + L_vt vanish; p = M_k v.
      double tk = 0.0;
      for (int a = 0; a < k; ++a) {
        double pa = 0.0;
        for (int b = 0; b < k; ++b) {
          const double m = tm.mconst[a * k + b];
          mv[tm.m_slot[a * k + b]] += m;
          pa += m * ws->v[cc[b]];
        }
        ws->momentum[cc[a]] += pa;
        tk += ws->v[cc[a]] * pa;
      }
      kinetic_const += 0.5 * tk;
      continue;
    }
    if (tm.fn->m1) {
      // L_q and L_t by multi-direction sweeps: the term's coordinates, then
      // time, kW directions per call (one call for a term of up to three
      // coordinates).
      for (int c0 = 0; c0 <= k; c0 += kW) {
        const int end = std::min(c0 + kW, k);
        for (int m = c0; m < end; ++m)
          internal::ChartSeed(
              d, ws->v, cc[m], 1.0, [ws](int j) { return ws->qm1[j].v; },
              [&](int j, double x) { ws->qm1[j].d.c[m - c0] += x; },
              [&](int i, double x) { ws->vm1[i].d.c[m - c0] += x; });
        M1 tt(ws->t);
        if (k < c0 + kW) tt.d.c[k - c0] = 1.0;
        const M1 r = tm.fn->m1(Point<M1>{ws->qm1, ws->vm1, tt, ws->pm1});
        for (int m = c0; m < end; ++m)
          internal::ChartClear(
              d, cc[m], [&](int j) { ws->qm1[j].d.c[m - c0] = 0.0; },
              [&](int i) { ws->vm1[i].d.c[m - c0] = 0.0; });
        if (c0 == 0 && !tm.velocity_part) potential_sum += r.v;
        for (int m = c0; m < end; ++m)
          ws->lq_[cc[m]] += tm.sign * r.d.c[m - c0];
        if (k < c0 + kW) ws->L_t += tm.sign * r.d.c[k - c0];
      }
    } else {
      for (int j : cc) {
        internal::ChartSeed(
            d, ws->v, j, 1.0, [ws](int i) { return ws->q1[i].v; },
            [ws](int i, double x) { ws->q1[i].d += x; },
            [ws](int i, double x) { ws->v1[i].d += x; });
        ws->lq_[j] +=
            tm.sign * EvalTerm1(tm, Point<D1>{ws->q1, ws->v1, t1, ws->p1}).d;
        internal::ChartClear(
            d, j, [ws](int i) { ws->q1[i].d = 0.0; },
            [ws](int i) { ws->v1[i].d = 0.0; });
      }
      ws->L_t +=
          tm.sign *
          EvalTerm1(tm, Point<D1>{ws->q1, ws->v1, D1(ws->t, 1.0), ws->p1}).d;
    }
    if (!tm.velocity_part) continue;
    // Outer tangent qdot = N v; on a quaternion block the inner seed e_i
    // of the chart velocity adds -(w x e_i) / 2 to the mixed tangent of
    // the user's w (the Hamel terms; eval/chart.hpp).
    for (int j : cc)
      internal::ChartSeed(
          d, ws->v, j, ws->v[j], [ws](int i) { return ws->q2[i].v.v; },
          [ws](int i, double x) { ws->q2[i].d.v += x; }, [](int, double) {});
    const D2 t2(D1(ws->t, 0.0), D1(1.0, 0.0));
    for (int i : cc) {
      ws->v2[i].v.d = 1.0;
      const internal::QuaternionBlock* b =
          d.quaternions.empty() ? nullptr : internal::BlockOfVelocity(d, i);
      if (b != nullptr) {
        double e[3] = {0.0, 0.0, 0.0};
        e[i - b->v] = 1.0;
        const double* w = ws->v.data() + b->v;
        ws->v2[b->v].d.d = -0.5 * (w[1] * e[2] - w[2] * e[1]);
        ws->v2[b->v + 1].d.d = -0.5 * (w[2] * e[0] - w[0] * e[2]);
        ws->v2[b->v + 2].d.d = -0.5 * (w[0] * e[1] - w[1] * e[0]);
      }
      const D2 r = EvalTerm2(tm, Point<D2>{ws->q2, ws->v2, t2, ws->p2});
      ws->v2[i].v.d = 0.0;
      if (b != nullptr)
        for (int c = 0; c < 3; ++c) ws->v2[b->v + c].d.d = 0.0;
      ws->momentum[i] += r.v.d;
      ws->inertial[i] += r.d.d;
    }
    for (int j : cc)
      internal::ChartClear(
          d, j, [ws](int i) { ws->q2[i].d.v = 0.0; }, [](int) {});
    const D2 t2z(D1(ws->t, 0.0), D1(0.0, 0.0));
    for (int a = 0; a < k; ++a) {
      for (int b = a; b < k; ++b) {
        ws->v2[cc[a]].v.d = 1.0;
        ws->v2[cc[b]].d.v += 1.0;
        const double mab =
            EvalTerm2(tm, Point<D2>{ws->q2, ws->v2, t2z, ws->p2}).d.d;
        ws->v2[cc[a]].v.d = 0.0;
        ws->v2[cc[b]].d.v = 0.0;
        mv[tm.m_slot[a * k + b]] += mab;
        if (b != a) mv[tm.m_slot[b * k + a]] += mab;
      }
    }
  }
  ws->inertial -= ws->lq_;
  if (!d.energy_is_lagrangian) ws->kinetic += kinetic_const;
  if (potential_by_terms) ws->potential = potential_sum;
  if (!d.energy_is_lagrangian) ws->lagrangian = ws->kinetic - ws->potential;
  if (!std::isfinite(ws->lagrangian)) {
    ThrowNonFinite(*ws, d.energy_is_lagrangian
                            ? "the Lagrangian"
                            : "the kinetic or potential energy");
  }

  // Forces at double.
  ws->Bu.setZero();
  for (int k = 0; k < model.num_inputs(); ++k) {
    const auto& in = d.inputs[k];
    in.column.f0(x0, ws->out0);
    if (ws->out0.size() != nv) {
      throw std::runtime_error(
          "model '" + model.name() + "': input '" + in.name + "' column has " +
          std::to_string(ws->out0.size()) + " rows, the model has " +
          std::to_string(nv) + " velocities");
    }
    ws->B.col(k) = ws->out0;
    ws->u[k] = in.value.f0(x0);
    if (!ws->B.col(k).allFinite() || !std::isfinite(ws->u[k]))
      ThrowNonFinite(*ws, "input '" + in.name + "'");
  }
  if (model.num_inputs() > 0) ws->Bu.noalias() = ws->B * ws->u;
  if (d.damping) {
    // Damping is not declared sparse: a dense nv x nv evaluation.
    d.damping.f0(x0, ws->mat0);
    if (ws->mat0.rows() != nv || ws->mat0.cols() != nv) {
      throw std::runtime_error("model '" + model.name() +
                               "': damping matrix is " +
                               std::to_string(ws->mat0.rows()) + " x " +
                               std::to_string(ws->mat0.cols()) + ", expected " +
                               std::to_string(nv) + " x " + std::to_string(nv));
    }
    if (!ws->mat0.allFinite()) ThrowNonFinite(*ws, "the damping matrix");
    ws->Dv.noalias() = ws->mat0 * ws->v;
  } else {
    ws->Dv.setZero();
  }
  if (d.other_loads) {
    d.other_loads.f0(x0, ws->out0);
    if (ws->out0.size() != nv) {
      throw std::runtime_error("model '" + model.name() +
                               "': other loads have " +
                               std::to_string(ws->out0.size()) +
                               " rows, expected " + std::to_string(nv));
    }
    ws->Qr = ws->out0;
    if (!ws->Qr.allFinite()) ThrowNonFinite(*ws, "the other loads");
  } else {
    ws->Qr.setZero();
  }

  const Eigen::Map<const Eigen::VectorXd> mvals(ws->M.valuePtr(),
                                                ws->M.nonZeros());
  if (!mvals.allFinite() || !ws->inertial.allFinite() ||
      !ws->momentum.allFinite() || !std::isfinite(ws->L_t)) {
    ThrowNonFinite(*ws, d.energy_is_lagrangian
                            ? "the Lagrangian (its derivatives)"
                            : "the kinetic or potential energy (its "
                              "derivatives)");
  }
  ws->h = ws->inertial + ws->Dv - ws->Qr;
  ws->energy = ws->v.dot(ws->momentum) - ws->lagrangian;
  ws->tangents_clean_ = true;
  ws->MarkStage(Stage::kDynamics);
}

void EvaluateSparseAll(SparseWorkspace* ws) {
  EvaluateSparsePosition(ws);
  EvaluateSparseVelocity(ws);
  EvaluateSparseDynamics(ws);
}

}  // namespace daedalus
