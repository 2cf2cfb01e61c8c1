// The workspace (every buffer a stage needs, sized once from the model,
// including the dual copies of the state that the sweeps seed) and the
// multi-direction sweeps, which fill energies, momenta, M, Phi and J
// kSweepWidth directions per call of a user function. The stage functions
// that use them are in dynamics.cpp.
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "eval/chart.hpp"
#include "eval/dynamics_internal.hpp"
#include "eval/eval_stop.hpp"

namespace daedalus::internal {

namespace {
thread_local const std::atomic<int>* g_eval_stop = nullptr;
}  // namespace

const std::atomic<int>* CurrentEvalStop() { return g_eval_stop; }

ScopedEvalStop::ScopedEvalStop(const std::atomic<int>* stop)
    : previous_(g_eval_stop) {
  g_eval_stop = stop;
}

ScopedEvalStop::~ScopedEvalStop() { g_eval_stop = previous_; }

void ThrowIfEvalStopped() {
  if (g_eval_stop != nullptr &&
      g_eval_stop->load(std::memory_order_relaxed) != 0)
    throw std::invalid_argument("stop requested");
}

}  // namespace daedalus::internal

namespace daedalus {

namespace internal {

namespace {

// ---- multi-direction sweeps (base double)
//
// Directions are numbered per sweep family and taken kSweepWidth at a time:
// a chunk starting at c0 seeds directions c0 .. c0 + kSweepWidth - 1.
constexpr int kW = kSweepWidth;

template <class S>
using Sweep1 = typename BasicWorkspace<S>::W1;
template <class S>
using Sweep2 = typename BasicWorkspace<S>::W2;

// y[i] = x[i] with a unit tangent in lane i - c0 when i is in the chunk.
template <class S>
void SeedChunk(const VecX<S>& x, int c0, VecX<Sweep1<S>>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    y[i] = Sweep1<S>(x[i]);
    const Eigen::Index k = i - c0;
    if (k >= 0 && k < kW) y[i].d.c[k] = S(1.0);
  }
}
template <class S>
void LiftM(const VecX<S>& x, VecX<Sweep1<S>>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = Sweep1<S>(x[i]);
}
// Chart coordinates xi = 0 with unit tangents on the chunk's lanes
// (eval/chart.hpp), and the user's q at them; v (holding the chart
// velocity) is mapped in place.
template <class S>
void SeedChartChunk(BasicWorkspace<S>* ws, int c0) {
  const int nv = ws->model().nv();
  for (int i = 0; i < nv; ++i) {
    ws->xim1[i] = Sweep1<S>(S(0.0));
    const int k = i - c0;
    if (k >= 0 && k < kW) ws->xim1[i].d.c[k] = S(1.0);
  }
  ChartPoint(ws->model().data(), ws->q, ws->xim1, ws->qm1, ws->vm1);
}
// Time with a unit tangent when its direction number `dir` is in the chunk.
template <class S>
Sweep1<S> SeedTime(const S& t, int dir, int c0) {
  Sweep1<S> r(t);
  if (dir >= c0 && dir < c0 + kW) r.d.c[dir - c0] = S(1.0);
  return r;
}

}  // namespace

// Energies, L_q, L_t, momenta, L_vq v + L_vt and M by multi-direction
// sweeps: ceil((nq+1)/W) first-order sweeps of T and V, then ceil(nv/W)
// second-order sweeps of T for the momenta and one per mass-matrix column
// chunk on or below the diagonal.
template <class S>
void EnergyDerivativesBySweeps(BasicWorkspace<S>* ws, const EvalRequest& req) {
  using M1 = Sweep1<S>;
  using M2 = Sweep2<S>;
  const auto& d = ws->model().data();
  const int nv = ws->model().nv();
  auto& Lq = ws->h;  // scratch for L_q
  for (int c0 = 0; c0 <= nv; c0 += kW) {
    ThrowIfEvalStopped();  // eval_stop.hpp
    LiftM(ws->v, ws->vm1);
    SeedChartChunk(ws, c0);
    const M1 tm = SeedTime(ws->t, nv, c0);
    const Point<M1> x{ws->qm1, ws->vm1, tm, ws->pm1};
    M1 l;
    if (d.energy_is_lagrangian) {
      l = Call(d.lagrangian, x);
    } else {
      const M1 kin = Call(d.kinetic, x);
      const M1 pot = d.potential ? Call(d.potential, x) : M1(0.0);
      if (c0 == 0) {
        ws->kinetic = kin.v;
        ws->potential = pot.v;
      }
      l = kin - pot;
    }
    if (c0 == 0) ws->lagrangian = l.v;
    for (int k = 0; k < kW; ++k) {
      const int dir = c0 + k;
      if (dir < nv) Lq[dir] = l.d.c[k];
      if (dir == nv) ws->L_t = l.d.c[k];
    }
  }
  if (d.energy_is_lagrangian) {
    ws->kinetic = S(std::numeric_limits<double>::quiet_NaN());
    ws->potential = S(std::numeric_limits<double>::quiet_NaN());
  }
  if (!Finite(ws->lagrangian)) {
    ThrowNonFinite(*ws, d.energy_is_lagrangian
                            ? "the Lagrangian"
                            : "the kinetic or potential energy");
  }
  using Dyn = EvalRequest::Dynamics;
  if (req.dynamics == Dyn::kForces) return;
  const auto& vel = d.energy_is_lagrangian ? d.lagrangian : d.kinetic;
  // Momenta p_i = L_v_i (inner lanes e_i on v) and their total time
  // derivative along (qdot = v, tdot = 1) (outer tangent): L_vq v + L_vt.
  // For kResidual the outer tangent also moves v along vdot, which adds
  // L_vv vdot = M vdot: the residual's M vdot + h without forming M.
  const bool residual = req.dynamics == Dyn::kResidual;
  for (int j = 0; j < nv; ++j) ws->xim2[j] = M2(M1(S(0.0)), M1(ws->v[j]));
  const M2 t_out(M1(ws->t), M1(S(1.0)));
  for (int i0 = 0; i0 < nv; i0 += kW) {
    ThrowIfEvalStopped();
    for (int j = 0; j < nv; ++j) {
      M1 inner(ws->v[j]);
      if (j >= i0 && j < i0 + kW) inner.d.c[j - i0] = S(1.0);
      ws->vm2[j] = M2(inner, M1(S(residual ? req.vdot[j] : 0.0)));
    }
    ChartPoint(d, ws->q, ws->xim2, ws->qm2, ws->vm2);
    const M2 r = Call(vel, Point<M2>{ws->qm2, ws->vm2, t_out, ws->pm2});
    for (int k = 0; k < kW && i0 + k < nv; ++k) {
      ws->momentum[i0 + k] = r.v.d.c[k];
      (residual ? ws->Mvdot_h : ws->inertial)[i0 + k] = r.d.d.c[k] - Lq[i0 + k];
    }
  }
  if (residual) return;
  // Mass matrix: column j from the outer tangent e_j on v, rows i >= j from
  // the inner lanes; the upper triangle by symmetry.
  for (int j = 0; j < nv; ++j) ws->xim2[j] = M2(M1(S(0.0)));
  ChartPositions(d, ws->q, ws->xim2, ws->qm2);
  const M2 t_zero(M1(ws->t));
  for (int j = 0; j < nv; ++j) {
    ThrowIfEvalStopped();
    for (int i0 = (j / kW) * kW; i0 < nv; i0 += kW) {
      for (int k = 0; k < nv; ++k) {
        M1 inner(ws->v[k]);
        if (k >= i0 && k < i0 + kW) inner.d.c[k - i0] = S(1.0);
        ws->vm2[k] = M2(inner, M1(S(k == j ? 1.0 : 0.0)));
      }
      const M2 r = Call(vel, Point<M2>{ws->qm2, ws->vm2, t_zero, ws->pm2});
      for (int k = 0; k < kW && i0 + k < nv; ++k) {
        const int i = i0 + k;
        if (i < j) continue;
        ws->M(i, j) = r.d.d.c[k];
        ws->M(j, i) = r.d.d.c[k];
      }
    }
  }
}

// Phi, J and Phi_t of one holonomic or moving constraint (directions q_0
// .. q_{nv-1}, then t), or psi and A of a nonholonomic one (directions v),
// by multi-direction sweeps.
namespace {

// The velocity directions a constraint declared with Touches can depend on
// (its coordinates' velocities; a quaternion's three chart directions when
// it lists one of its components) into `dirs`, and per velocity whether it
// is one of them into `declared`; false (nothing filled) when it declares
// none. Scratch vectors of the caller: no allocation once they are sized.
bool TouchedDirections(const ModelData& d,
                       const internal::ConstraintDecl& c,
                       int nv,
                       std::vector<int>* dirs,
                       std::vector<char>* declared) {
  if (c.coords.empty()) return false;
  declared->assign(static_cast<size_t>(nv), 0);
  for (int j : c.coords) {
    const int k = d.velocity_of[static_cast<size_t>(j)];
    if (k >= 0) (*declared)[static_cast<size_t>(k)] = 1;
    for (const QuaternionBlock& b : d.quaternions)
      if (j >= b.q && j < b.q + 4)
        for (int i = 0; i < 3; ++i)
          (*declared)[static_cast<size_t>(b.v + i)] = 1;
  }
  dirs->clear();
  for (int k = 0; k < nv; ++k)
    if ((*declared)[static_cast<size_t>(k)]) dirs->push_back(k);
  return true;
}

// A fixed weight in [0.5, 1.5) for direction k of the check lane: the
// undeclared directions' tangents cannot cancel to exactly zero unless
// each is zero (AD propagates nothing through a value a function does
// not use).
// Tabulated: a row seeds every undeclared direction, and the sines were
// 12 % of a Moreau-Jean step of 100 spheres (5450 rows on 300
// velocities; docs/moreau_jean.md).
double CheckWeight(int k) {
  thread_local std::vector<double> table;
  const size_t n = static_cast<size_t>(k) + 1;
  while (table.size() < n) {
    const double i = static_cast<double>(table.size());
    table.push_back(1.0 + 0.5 * std::sin(1.0 + 0.7 * i));
  }
  return table[static_cast<size_t>(k)];
}

}  // namespace

template <class S>
void ConstraintBySweeps(BasicWorkspace<S>* ws,
                        const internal::ConstraintDecl& c,
                        int r0) {
  using M1 = Sweep1<S>;
  // Hundreds of rows of sweeps over every velocity (the joint limits of 22
  // MJCF humanoids at the contact start: seconds) read the stop flag per
  // constraint (eval_stop.hpp; fuzz_edges.py --surface signals).
  ThrowIfEvalStopped();
  const ModelData& d = ws->model().data();
  const int nv = ws->model().nv();
  const bool nonholonomic = c.kind == ConstraintKind::kNonholonomic;
  const int ndir = nonholonomic ? nv : nv + 1;
  // The directions swept, lanes numbered 0 .. in chunks of kW: every
  // velocity (and time, for Phi_t); or, for a constraint that declares its
  // coordinates (Touches) when that saves sweeps, theirs, plus one lane
  // that carries every other direction at once with fixed weights, whose
  // tangent must vanish: the declaration checked at every evaluation, as
  // the sparse workspace checks it (sparse_check.cpp). The joint limits of
  // 100 MJCF humanoids (2000 one-coordinate rows on 2700 velocities) took
  // 675 sweeps each per evaluation, minutes for the contact start
  // (fuzz_edges.py --surface mjcf, seed 46, run 446); now one.
  thread_local std::vector<int> touched;
  thread_local std::vector<char> declared;
  const int kCheck = -1;  // the lane of every undeclared direction
  bool restricted = TouchedDirections(d, c, nv, &touched, &declared);
  if (restricted) {
    if (!nonholonomic) touched.push_back(nv);
    touched.push_back(kCheck);
    const int chunks = (static_cast<int>(touched.size()) + kW - 1) / kW;
    restricted = chunks < (ndir + kW - 1) / kW;  // else no saving
  }
  if (restricted)
    for (int r = 0; r < c.rows; ++r) ws->J.row(r0 + r).setZero();
  // Lane i's direction: i itself, or the i-th declared one.
  auto direction = [&](int i) {
    return restricted ? touched[static_cast<size_t>(i)] : i;
  };
  if (nonholonomic) {
    for (int j = 0; j < nv; ++j) ws->xim1[j] = M1(S(0.0));
    ChartPositions(d, ws->q, ws->xim1, ws->qm1);
  }
  const int nd = restricted ? static_cast<int>(touched.size()) : ndir;
  for (int c0 = 0; c0 < nd; c0 += kW) {
    // Seeds lane k on direction `dir` (a velocity, time, or the check).
    M1 tm(ws->t);
    LiftM(ws->v, ws->vm1);
    if (!nonholonomic)
      for (int j = 0; j < nv; ++j) ws->xim1[j] = M1(S(0.0));
    for (int k = 0; k < kW && c0 + k < nd; ++k) {
      const int dir = direction(c0 + k);
      auto seed = [&](int j, double w) {
        if (nonholonomic)
          ws->vm1[j].d.c[k] = S(w);
        else
          ws->xim1[j].d.c[k] = S(w);
      };
      if (dir == nv) {
        tm.d.c[k] = S(1.0);
      } else if (dir == kCheck) {
        for (int j = 0; j < nv; ++j)
          if (!declared[static_cast<size_t>(j)]) seed(j, CheckWeight(j));
      } else {
        seed(dir, 1.0);
      }
    }
    if (!nonholonomic) ChartPoint(d, ws->q, ws->xim1, ws->qm1, ws->vm1);
    Call(c.fn, Point<M1>{ws->qm1, ws->vm1, tm, ws->pm1}, ws->outm1);
    CheckRows(*ws, c, ws->outm1.size());
    for (int r = 0; r < c.rows; ++r) {
      const M1& o = ws->outm1[r];
      if (c0 == 0) ws->phi[r0 + r] = o.v;
      for (int k = 0; k < kW && c0 + k < nd; ++k) {
        const int dir = direction(c0 + k);
        if (dir == kCheck) {
          const double g = Primal(o.d.c[k]);
          if (std::isfinite(g) && g != 0.0)
            throw std::invalid_argument(
                "constraint '" + c.name + "' depends on a coordinate (or " +
                "velocity) that its Touches declaration does not list; add "
                "the coordinate to Touches (or remove the declaration)");
        } else if (dir < nv) {
          ws->J(r0 + r, dir) = o.d.c[k];
        } else {
          ws->phi_t[r0 + r] = o.d.c[k];
        }
      }
    }
  }
  if (nonholonomic) {
    for (int r = 0; r < c.rows; ++r) {
      const S psi = ws->phi[r0 + r];
      ws->phi[r0 + r] = S(0.0);
      ws->phi_t[r0 + r] = psi - ws->J.row(r0 + r).dot(ws->v);
    }
  }
}

// For the value and the tangent workspace (the stages in dynamics.cpp).
template void EnergyDerivativesBySweeps<double>(BasicWorkspace<double>*,
                                                const EvalRequest&);
template void EnergyDerivativesBySweeps<D1>(BasicWorkspace<D1>*,
                                            const EvalRequest&);
template void ConstraintBySweeps<double>(BasicWorkspace<double>*,
                                         const internal::ConstraintDecl&,
                                         int);
template void ConstraintBySweeps<D1>(BasicWorkspace<D1>*,
                                     const internal::ConstraintDecl&,
                                     int);

}  // namespace internal

namespace {

using internal::Lift;

}  // namespace

// ------------------------------------------------------------- Workspace

template <class S>
BasicWorkspace<S>::BasicWorkspace(const Model& model) : model_(model) {
  const int nq = model.nq(), nv = model.nv(), nc = model.nc();
  const int nu = model.num_inputs(), np = model.num_parameters();
  q = Vec::Zero(nq);
  v = Vec::Zero(nv);
  p = model.default_parameters().template cast<S>();
  phi = Vec::Zero(nc);
  J = Mat::Zero(nc, nv);
  phi_t = Vec::Zero(nc);
  vel_residual = Vec::Zero(nc);
  bias = Vec::Zero(nc);
  M = Mat::Zero(nv, nv);
  h = Vec::Zero(nv);
  inertial = Vec::Zero(nv);
  Bu = Vec::Zero(nv);
  B = Mat::Zero(nv, nu);
  u = Vec::Zero(nu);
  Dv = Vec::Zero(nv);
  D = Mat::Zero(nv, nv);
  Qr = Vec::Zero(nv);
  momentum = Vec::Zero(nv);
  Mvdot_h = Vec::Zero(nv);
  qm1.resize(nq);
  vm1.resize(nv);
  pm1.resize(np);
  qm2.resize(nq);
  vm2.resize(nv);
  pm2.resize(np);
  q1.resize(nq);
  v1.resize(nv);
  p1.resize(np);
  q2.resize(nq);
  v2.resize(nv);
  p2.resize(np);
  xi1.resize(nv);
  xi2.resize(nv);
  xim1.resize(nv);
  xim2.resize(nv);
  SetParameters(p);
}

template <class S>
void BasicWorkspace<S>::SetState(const S& time,
                                 const Eigen::Ref<const Vec>& q_in,
                                 const Eigen::Ref<const Vec>& v_in) {
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
  UpdateUserQ();
  stage_ = Stage::kNone;
}

template <class S>
void BasicWorkspace<S>::UpdateUserQ() {
  const auto& d = model_.data();
  if (d.quaternions.empty()) return;
  qn = q;
  const Vec zero = Vec::Zero(model_.nv());
  internal::ChartPositions(d, q, zero, qn);
}

template <class S>
void BasicWorkspace<S>::SetParameters(const Eigen::Ref<const Vec>& params) {
  if (params.size() != model_.num_parameters()) {
    throw std::invalid_argument("model '" + model_.name() +
                                "': " + std::to_string(params.size()) +
                                " parameter values given, the model has " +
                                std::to_string(model_.num_parameters()));
  }
  p = params;
  Lift(p, p1);
  Lift(p, p2);
  for (Eigen::Index i = 0; i < p.size(); ++i) {
    pm1[i] = W1(p[i]);
    pm2[i] = W2(W1(p[i]));
  }
  seeded = false;
  stage_ = Stage::kNone;
}

template <class S>
void BasicWorkspace<S>::Require(Stage s, const char* who) const {
  if (static_cast<int>(stage_) < static_cast<int>(s)) {
    throw std::logic_error(std::string(who) +
                           ": an earlier evaluation stage was not completed "
                           "at this state");
  }
}

template class BasicWorkspace<double>;
template class BasicWorkspace<D1>;

void SeedTangent(const Workspace& ws,
                 const Eigen::Ref<const Eigen::VectorXd>& dq,
                 const Eigen::Ref<const Eigen::VectorXd>& dv,
                 const Eigen::Ref<const Eigen::VectorXd>& dp,
                 TangentWorkspace* tws,
                 double dt) {
  // Written in place (no temporaries): this runs once per Jacobian column
  // and per sensitivity parameter in every residual evaluation.
  const Eigen::Index nq = ws.q.size(), nv = ws.v.size(), np = ws.p.size();
  if (tws->q.size() != nq || tws->v.size() != nv || tws->p.size() != np ||
      dq.size() != nq || dv.size() != nv || (dp.size() != 0 && dp.size() != np))
    throw std::invalid_argument(
        "SeedTangent: the tangent workspace, the value workspace and the "
        "directions disagree in size");
  tws->t = D1(ws.t, dt);
  for (Eigen::Index i = 0; i < nq; ++i) tws->q[i] = D1(ws.q[i], dq[i]);
  for (Eigen::Index i = 0; i < nv; ++i) tws->v[i] = D1(ws.v[i], dv[i]);
  tws->UpdateUserQ();
  // The parameters' entries at every order (p, p1, p2, pm1, pm2). At the
  // values of the last seeding only the entries whose tangent was or is
  // nonzero change; otherwise every entry is written.
  auto seed = [&](Eigen::Index i, double d) {
    tws->p[i] = D1(ws.p[i], d);
    tws->p1[i] = Up(tws->p[i], 0.0);
    tws->p2[i] = Up2(tws->p[i], D1(0.0), D1(0.0));
    tws->pm1[i] = TangentWorkspace::W1(tws->p[i]);
    tws->pm2[i] = TangentWorkspace::W2(tws->pm1[i]);
  };
  const bool same_values = tws->seeded && tws->seeded_p.size() == np &&
                           (tws->seeded_p.array() == ws.p.array()).all();
  if (same_values) {
    for (Eigen::Index i : tws->seeded_nonzero) seed(i, 0.0);
  } else {
    for (Eigen::Index i = 0; i < np; ++i) seed(i, 0.0);
    tws->seeded_p = ws.p;
    tws->seeded = true;
  }
  tws->seeded_nonzero.clear();
  for (Eigen::Index i = 0; i < dp.size(); ++i) {
    if (dp[i] == 0.0) continue;
    seed(i, dp[i]);
    tws->seeded_nonzero.push_back(i);
  }
  tws->MarkStage(Stage::kNone);
}

}  // namespace daedalus
