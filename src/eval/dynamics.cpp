#include "daedalus/dynamics.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "eval/compiled_model.hpp"

namespace daedalus {

namespace {

// Value of a scalar at any order (the primal part).
inline double Primal(double x) { return x; }
template <class T, class G>
double Primal(const Dual<T, G>& x) {
  return Value(x);
}

// Finite check of every component (value and all tangents).
inline bool Finite(double x) { return std::isfinite(x); }
template <int N>
bool Finite(const Tangent<N>& x) {
  return isfinite(x);
}
template <class T, class G>
bool Finite(const Dual<T, G>& x) {
  return Finite(x.v) && Finite(x.d);
}
template <class Derived>
bool AllFinite(const Eigen::MatrixBase<Derived>& m) {
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      if (!Finite(m(i, j))) return false;
  return true;
}

// The user function at scalar type X (double, D1, D2, D3, M1, M2).
template <class X>
X Call(const internal::ScalarFn& fn, const Point<X>& x) {
  return internal::Invoke(fn, x);
}
template <class X>
void Call(const internal::VectorFn& fn, const Point<X>& x, VecX<X>& out) {
  internal::Invoke(fn, x, out);
}
template <class X>
void Call(const internal::MatrixFn& fn, const Point<X>& x, MatX<X>& out) {
  if constexpr (std::is_same_v<X, double>) {
    fn.f0(x, out);
  } else {
    static_assert(std::is_same_v<X, D1>);
    fn.f1(x, out);
  }
}

// A dual one order above S with value x and structural tangent dx.
template <class S>
Dual<S> Up(const S& x, double dx) {
  return Dual<S>(x, S(dx));
}
// Two orders above S: value x, inner tangent a, outer tangent b, and the
// mixed second tangent zero.
template <class S>
Dual<Dual<S>> Up2(const S& x, const S& a, const S& b) {
  return Dual<Dual<S>>(Dual<S>(x, a), Dual<S>(b, S(0.0)));
}

// Lift a vector to duals one or two orders up with zero structural tangents.
template <class S>
void Lift(const VecX<S>& x, VecX<Dual<S>>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = Up(x[i], 0.0);
}
template <class S>
void Lift(const VecX<S>& x, VecX<Dual<Dual<S>>>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = Up2(x[i], S(0.0), S(0.0));
}

template <class S>
[[noreturn]] void ThrowNonFinite(const BasicWorkspace<S>& ws,
                                 const std::string& what) {
  throw std::runtime_error("model '" + ws.model().name() + "': " + what +
                           " returned a non-finite value at " +
                           DescribeState(ws) +
                           "; check the function for division by zero or a "
                           "domain error at this state");
}

template <class S>
void CheckRows(const BasicWorkspace<S>& ws,
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

// A Holonomic (stationary) constraint must not depend on time.
template <class S>
void CheckStationary(const BasicWorkspace<S>& ws,
                     const internal::ConstraintDecl& c,
                     int r0) {
  for (int r = 0; r < c.rows; ++r) {
    // A non-finite Phi_t is a domain error, which the stage's finite check
    // reports as such (not as a time dependence).
    const double pt = Primal(ws.phi_t[r0 + r]);
    if (pt == 0.0 || !std::isfinite(pt)) continue;
    std::ostringstream os;
    os << "model '" << ws.model().name() << "': constraint '" << c.name
       << "' is declared stationary (Holonomic) but depends on time (Phi_t = "
       << Primal(ws.phi_t[r0 + r]) << " at " << DescribeState(ws)
       << "); declare it with Moving()";
    throw std::invalid_argument(os.str());
  }
}

// Lagrangian L = T - V (or the user's L) at any scalar type.
template <class X>
X EvalL(const internal::ModelData& d, const Point<X>& x) {
  if (d.energy_is_lagrangian) return Call(d.lagrangian, x);
  X l = Call(d.kinetic, x);
  if (d.potential) l -= Call(d.potential, x);
  return l;
}

// The velocity-dependent part of L: T when the model gives T and V (V does
// not depend on v, so it adds nothing to momenta, M or L_vq v + L_vt).
template <class X>
X EvalVelocityPart(const internal::ModelData& d, const Point<X>& x) {
  return d.energy_is_lagrangian ? Call(d.lagrangian, x) : Call(d.kinetic, x);
}

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
// Time with a unit tangent when its direction number `dir` is in the chunk.
template <class S>
Sweep1<S> SeedTime(const S& t, int dir, int c0) {
  Sweep1<S> r(t);
  if (dir >= c0 && dir < c0 + kW) r.d.c[dir - c0] = S(1.0);
  return r;
}

// Whether a function carries the sweep instantiation at base S (functions
// built by MakeScalarFn3 / MakeVectorFn do).
template <class S>
bool HasSweep1(const internal::ScalarFn& fn) {
  if constexpr (std::is_same_v<S, double>) {
    return static_cast<bool>(fn.m1);
  } else {
    return static_cast<bool>(fn.tm1);
  }
}
template <class S>
bool HasSweep2(const internal::ScalarFn& fn) {
  if constexpr (std::is_same_v<S, double>) {
    return static_cast<bool>(fn.m2);
  } else {
    return static_cast<bool>(fn.tm2);
  }
}
template <class S>
bool HasSweep1(const internal::VectorFn& fn) {
  if constexpr (std::is_same_v<S, double>) {
    return static_cast<bool>(fn.m1);
  } else {
    return static_cast<bool>(fn.tm1);
  }
}
template <class S>
bool HasSweeps(const internal::ModelData& d) {
  if (d.energy_is_lagrangian)
    return HasSweep1<S>(d.lagrangian) && HasSweep2<S>(d.lagrangian);
  return HasSweep1<S>(d.kinetic) && HasSweep2<S>(d.kinetic) &&
         (!d.potential || HasSweep1<S>(d.potential));
}

// Energies, L_q, L_t, momenta, L_vq v + L_vt and M by multi-direction
// sweeps: ceil((nq+1)/W) first-order sweeps of T and V, then ceil(nv/W)
// second-order sweeps of T for the momenta and one per mass-matrix column
// chunk on or below the diagonal.
template <class S>
void EnergyDerivativesBySweeps(BasicWorkspace<S>* ws, const EvalRequest& req) {
  using M1 = Sweep1<S>;
  using M2 = Sweep2<S>;
  const auto& d = ws->model().data();
  const int nq = ws->model().nq(), nv = ws->model().nv();
  auto& Lq = ws->h;  // scratch for L_q
  LiftM(ws->v, ws->vm1);
  for (int c0 = 0; c0 <= nq; c0 += kW) {
    SeedChunk(ws->q, c0, ws->qm1);
    const M1 tm = SeedTime(ws->t, nq, c0);
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
      if (dir < nq) Lq[dir] = l.d.c[k];
      if (dir == nq) ws->L_t = l.d.c[k];
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
  for (int j = 0; j < nq; ++j) ws->qm2[j] = M2(M1(ws->q[j]), M1(ws->v[j]));
  const M2 t_out(M1(ws->t), M1(S(1.0)));
  for (int i0 = 0; i0 < nv; i0 += kW) {
    for (int j = 0; j < nv; ++j) {
      M1 inner(ws->v[j]);
      if (j >= i0 && j < i0 + kW) inner.d.c[j - i0] = S(1.0);
      ws->vm2[j] = M2(inner, M1(S(residual ? req.vdot[j] : 0.0)));
    }
    const M2 r = Call(vel, Point<M2>{ws->qm2, ws->vm2, t_out, ws->pm2});
    for (int k = 0; k < kW && i0 + k < nv; ++k) {
      ws->momentum[i0 + k] = r.v.d.c[k];
      (residual ? ws->Mvdot_h : ws->inertial)[i0 + k] = r.d.d.c[k] - Lq[i0 + k];
    }
  }
  if (residual) return;
  // Mass matrix: column j from the outer tangent e_j on v, rows i >= j from
  // the inner lanes; the upper triangle by symmetry.
  for (int j = 0; j < nq; ++j) ws->qm2[j] = M2(M1(ws->q[j]));
  const M2 t_zero(M1(ws->t));
  for (int j = 0; j < nv; ++j) {
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
template <class S>
void ConstraintBySweeps(BasicWorkspace<S>* ws,
                        const internal::ConstraintDecl& c,
                        int r0) {
  using M1 = Sweep1<S>;
  const int nv = ws->model().nv();
  const bool nonholonomic = c.kind == ConstraintKind::kNonholonomic;
  const int ndir = nonholonomic ? nv : nv + 1;
  if (nonholonomic) {
    LiftM(ws->q, ws->qm1);
  } else {
    LiftM(ws->v, ws->vm1);
  }
  for (int c0 = 0; c0 < ndir; c0 += kW) {
    if (nonholonomic) {
      SeedChunk(ws->v, c0, ws->vm1);
    } else {
      SeedChunk(ws->q, c0, ws->qm1);
    }
    const M1 tm = nonholonomic ? M1(ws->t) : SeedTime(ws->t, nv, c0);
    Call(c.fn, Point<M1>{ws->qm1, ws->vm1, tm, ws->pm1}, ws->outm1);
    CheckRows(*ws, c, ws->outm1.size());
    for (int r = 0; r < c.rows; ++r) {
      const M1& o = ws->outm1[r];
      if (c0 == 0) ws->phi[r0 + r] = o.v;
      for (int k = 0; k < kW; ++k) {
        const int dir = c0 + k;
        if (dir < nv) ws->J(r0 + r, dir) = o.d.c[k];
        if (dir == nv) ws->phi_t[r0 + r] = o.d.c[k];
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
  stage_ = Stage::kNone;
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

template <class S>
std::string DescribeState(const BasicWorkspace<S>& ws) {
  std::ostringstream os;
  os.precision(6);
  os << "t=" << Primal(ws.t) << ", q=(";
  for (Eigen::Index i = 0; i < ws.q.size(); ++i)
    os << (i ? ", " : "") << ws.model().coordinate_names()[i] << "="
       << Primal(ws.q[i]);
  os << "), v=(";
  for (Eigen::Index i = 0; i < ws.v.size(); ++i)
    os << (i ? ", " : "") << Primal(ws.v[i]);
  os << ")";
  return os.str();
}

void SeedTangent(const Workspace& ws,
                 const Eigen::Ref<const Eigen::VectorXd>& dq,
                 const Eigen::Ref<const Eigen::VectorXd>& dv,
                 const Eigen::Ref<const Eigen::VectorXd>& dp,
                 TangentWorkspace* tws) {
  // Written in place (no temporaries): this runs once per Jacobian column
  // and per sensitivity parameter in every residual evaluation.
  const Eigen::Index nq = ws.q.size(), nv = ws.v.size(), np = ws.p.size();
  if (tws->q.size() != nq || tws->v.size() != nv || tws->p.size() != np ||
      dq.size() != nq || dv.size() != nv || (dp.size() != 0 && dp.size() != np))
    throw std::invalid_argument(
        "SeedTangent: the tangent workspace, the value workspace and the "
        "directions disagree in size");
  tws->t = D1(ws.t, 0.0);
  for (Eigen::Index i = 0; i < nq; ++i) tws->q[i] = D1(ws.q[i], dq[i]);
  for (Eigen::Index i = 0; i < nv; ++i) tws->v[i] = D1(ws.v[i], dv[i]);
  for (Eigen::Index i = 0; i < np; ++i)
    tws->p[i] = D1(ws.p[i], dp.size() ? dp[i] : 0.0);
  Lift(tws->p, tws->p1);
  Lift(tws->p, tws->p2);
  for (Eigen::Index i = 0; i < np; ++i) {
    tws->pm1[i] = TangentWorkspace::W1(tws->p[i]);
    tws->pm2[i] = TangentWorkspace::W2(tws->pm1[i]);
  }
  tws->MarkStage(Stage::kNone);
}

// --------------------------------------------------------------- stages
//
// Structural derivatives (J, M, momenta, bias) are taken by duals one and
// two orders above the base scalar S; with S = D1 the base tangent rides
// along and every result is linearized exactly.

// The compiled programs of the model, when the workspace may use them
// (value workspaces only), else nullptr.
template <class S>
const internal::CompiledModel* Compiled(const BasicWorkspace<S>& ws) {
  if constexpr (std::is_same_v<S, double>) {
    if (ws.use_compiled && !ws.single_direction)
      return internal::GetCompiled(ws.model());
  }
  return nullptr;
}

template <class S>
void EvaluatePosition(BasicWorkspace<S>* ws) {
  if constexpr (std::is_same_v<S, double>) {
    if (const internal::CompiledModel* cm = Compiled(*ws)) {
      if (internal::EvaluateCompiled(*cm, internal::kPositionVariant, {}, ws))
        return;
    }
  }
  using T1 = Dual<S>;
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nv = model.nv();
  ws->J.setZero();
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = d.constraints[ci];
    const int r0 = d.constraint_rows[ci];
    if (!ws->single_direction && HasSweep1<S>(c.fn)) {
      ConstraintBySweeps(ws, c, r0);
      if (c.kind == ConstraintKind::kHolonomic) CheckStationary(*ws, c, r0);
      continue;
    }
    if (c.kind == ConstraintKind::kNonholonomic) {
      // A = d psi / d v, column by column; a = psi - A v.
      Lift(ws->q, ws->q1);
      const T1 t1 = Up(ws->t, 0.0);
      for (int k = 0; k < nv; ++k) {
        for (int j = 0; j < nv; ++j) ws->v1[j] = Up(ws->v[j], j == k ? 1 : 0);
        Call(c.fn, Point<T1>{ws->q1, ws->v1, t1, ws->p1}, ws->out1);
        CheckRows(*ws, c, ws->out1.size());
        for (int r = 0; r < c.rows; ++r) ws->J(r0 + r, k) = ws->out1[r].d;
      }
      for (int r = 0; r < c.rows; ++r) {
        const S psi = ws->out1[r].v;
        ws->phi[r0 + r] = S(0.0);
        ws->phi_t[r0 + r] = psi - ws->J.row(r0 + r).dot(ws->v);
      }
      continue;
    }
    // Holonomic: J column k from the tangent along e_k; Phi_t from the
    // tangent along t.
    Lift(ws->v, ws->v1);
    const T1 t1 = Up(ws->t, 0.0);
    for (int k = 0; k < nv; ++k) {
      for (int j = 0; j < nv; ++j) ws->q1[j] = Up(ws->q[j], j == k ? 1 : 0);
      Call(c.fn, Point<T1>{ws->q1, ws->v1, t1, ws->p1}, ws->out1);
      CheckRows(*ws, c, ws->out1.size());
      for (int r = 0; r < c.rows; ++r) ws->J(r0 + r, k) = ws->out1[r].d;
    }
    Lift(ws->q, ws->q1);
    const T1 tt = Up(ws->t, 1.0);
    Call(c.fn, Point<T1>{ws->q1, ws->v1, tt, ws->p1}, ws->out1);
    CheckRows(*ws, c, ws->out1.size());
    for (int r = 0; r < c.rows; ++r) {
      ws->phi[r0 + r] = ws->out1[r].v;
      ws->phi_t[r0 + r] = ws->out1[r].d;
    }
    if (c.kind == ConstraintKind::kHolonomic) CheckStationary(*ws, c, r0);
  }
  if (!AllFinite(ws->phi) || !AllFinite(ws->J) || !AllFinite(ws->phi_t)) {
    for (int ci = 0; ci < model.num_constraints(); ++ci) {
      const int r0 = d.constraint_rows[ci], rows = d.constraints[ci].rows;
      if (!AllFinite(ws->phi.segment(r0, rows)) ||
          !AllFinite(ws->J.middleRows(r0, rows)) ||
          !AllFinite(ws->phi_t.segment(r0, rows)))
        ThrowNonFinite(*ws, "constraint '" + d.constraints[ci].name + "'");
    }
  }
  ws->MarkStage(Stage::kPosition);
}

template <class S>
void EvaluateVelocity(BasicWorkspace<S>* ws, const EvalRequest& req) {
  using T1 = Dual<S>;
  using T2 = Dual<Dual<S>>;
  ws->Require(Stage::kPosition, "EvaluateVelocity");
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nq = model.nq();
  if (!req.bias) {
    // J v + Phi_t from stage 1 (for nonholonomic rows A v + a = psi).
    ws->vel_residual.noalias() = ws->J * ws->v;
    ws->vel_residual += ws->phi_t;
    ws->bias.setConstant(S(std::numeric_limits<double>::quiet_NaN()));
    ws->MarkStage(Stage::kVelocity);
    return;
  }
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = d.constraints[ci];
    const int r0 = d.constraint_rows[ci];
    if (c.kind == ConstraintKind::kNonholonomic) {
      // d/dt psi = A vdot + (psi_q v + psi_t): the bias is the tangent along
      // (qdot = v, vdot = 0, tdot = 1).
      for (int j = 0; j < nq; ++j) ws->q1[j] = T1(ws->q[j], ws->v[j]);
      Lift(ws->v, ws->v1);
      const T1 t1 = Up(ws->t, 1.0);
      Call(c.fn, Point<T1>{ws->q1, ws->v1, t1, ws->p1}, ws->out1);
      for (int r = 0; r < c.rows; ++r) {
        ws->vel_residual[r0 + r] = ws->out1[r].v;
        ws->bias[r0 + r] = ws->out1[r].d;
      }
      continue;
    }
    // Holonomic: along the curve s -> (q + s v, t + s), the first
    // derivative of Phi is J v + Phi_t and the second is
    // b = v' Phi_qq v + 2 Phi_qt v + Phi_tt (seed 000).
    for (int j = 0; j < nq; ++j) ws->q2[j] = Up2(ws->q[j], ws->v[j], ws->v[j]);
    Lift(ws->v, ws->v2);
    const T2 t2 = Up2(ws->t, S(1.0), S(1.0));
    Call(c.fn, Point<T2>{ws->q2, ws->v2, t2, ws->p2}, ws->out2);
    CheckRows(*ws, c, ws->out2.size());
    for (int r = 0; r < c.rows; ++r) {
      ws->vel_residual[r0 + r] = ws->out2[r].v.d;
      ws->bias[r0 + r] = ws->out2[r].d.d;
    }
  }
  if (!AllFinite(ws->vel_residual) || !AllFinite(ws->bias)) {
    for (int ci = 0; ci < model.num_constraints(); ++ci) {
      const int r0 = d.constraint_rows[ci], rows = d.constraints[ci].rows;
      if (!AllFinite(ws->vel_residual.segment(r0, rows)) ||
          !AllFinite(ws->bias.segment(r0, rows)))
        ThrowNonFinite(*ws, "constraint '" + d.constraints[ci].name +
                                "' (velocity or acceleration level)");
    }
  }
  ws->MarkStage(Stage::kVelocity);
}

// Energies, L_q, L_t, momenta, L_vq v + L_vt and M by single-direction
// sweeps (any base scalar): the general path, and the one the tangent
// workspace takes.
template <class S>
void EnergyDerivatives(BasicWorkspace<S>* ws) {
  using T1 = Dual<S>;
  using T2 = Dual<Dual<S>>;
  const auto& d = ws->model().data();
  const int nv = ws->model().nv();
  const Point<S> x0{ws->q, ws->v, ws->t, ws->p};
  // Energies at the base scalar.
  if (d.energy_is_lagrangian) {
    ws->lagrangian = Call(d.lagrangian, x0);
    ws->kinetic = S(std::numeric_limits<double>::quiet_NaN());
    ws->potential = S(std::numeric_limits<double>::quiet_NaN());
  } else {
    ws->kinetic = Call(d.kinetic, x0);
    ws->potential = d.potential ? Call(d.potential, x0) : S(0.0);
    ws->lagrangian = ws->kinetic - ws->potential;
  }
  if (!Finite(ws->lagrangian)) {
    ThrowNonFinite(*ws, d.energy_is_lagrangian
                            ? "the Lagrangian"
                            : "the kinetic or potential energy");
  }

  // Gradient L_q: one first-order sweep per coordinate.
  Lift(ws->v, ws->v1);
  const T1 t1 = Up(ws->t, 0.0);
  auto& Lq = ws->h;  // reuse h as scratch for L_q
  for (int k = 0; k < nv; ++k) {
    for (int j = 0; j < nv; ++j) ws->q1[j] = Up(ws->q[j], j == k ? 1 : 0);
    Lq[k] = EvalL(d, Point<T1>{ws->q1, ws->v1, t1, ws->p1}).d;
  }

  // Momenta p_i = L_v_i and w_i = (L_vq v + L_vt)_i: inner tangent e_i on v,
  // outer tangent (qdot = v, tdot = 1).
  for (int j = 0; j < nv; ++j) ws->q2[j] = Up2(ws->q[j], S(0.0), ws->v[j]);
  const T2 t2 = Up2(ws->t, S(0.0), S(1.0));
  for (int i = 0; i < nv; ++i) {
    for (int j = 0; j < nv; ++j)
      ws->v2[j] = Up2(ws->v[j], S(j == i ? 1.0 : 0.0), S(0.0));
    const T2 r = EvalVelocityPart(d, Point<T2>{ws->q2, ws->v2, t2, ws->p2});
    ws->momentum[i] = r.v.d;
    ws->inertial[i] = r.d.d - Lq[i];
  }
  // Explicit time derivative of L: one sweep with the tangent on t.
  Lift(ws->q, ws->q1);
  Lift(ws->v, ws->v1);
  ws->L_t = EvalL(d, Point<T1>{ws->q1, ws->v1, Up(ws->t, 1.0), ws->p1}).d;

  // Mass matrix M_ij = d2 L / dv_i dv_j (symmetric by construction).
  Lift(ws->q, ws->q2);
  const T2 t2z = Up2(ws->t, S(0.0), S(0.0));
  for (int i = 0; i < nv; ++i) {
    for (int j = i; j < nv; ++j) {
      for (int k = 0; k < nv; ++k)
        ws->v2[k] = Up2(ws->v[k], S(k == i ? 1.0 : 0.0), S(k == j ? 1.0 : 0.0));
      const S mij =
          EvalVelocityPart(d, Point<T2>{ws->q2, ws->v2, t2z, ws->p2}).d.d;
      ws->M(i, j) = mij;
      ws->M(j, i) = mij;
    }
  }
}

template <class S>
void EvaluateDynamics(BasicWorkspace<S>* ws, const EvalRequest& req) {
  ws->Require(Stage::kVelocity, "EvaluateDynamics");
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nv = model.nv();
  const Point<S> x0{ws->q, ws->v, ws->t, ws->p};

  using Dyn = EvalRequest::Dynamics;
  if (req.dynamics == Dyn::kResidual && req.vdot == nullptr)
    throw std::logic_error("EvaluateDynamics: kResidual needs vdot");
  if (!std::is_same_v<S, double> && req.dynamics != Dyn::kFull)
    throw std::logic_error(
        "EvaluateDynamics: partial requests are for the value workspace");
  bool swept = false;
  if (!ws->single_direction && HasSweeps<S>(d)) {
    EnergyDerivativesBySweeps(ws, req);
    swept = true;
  }
  // The single-direction path computes everything; a partial request then
  // gets the full set (and Mvdot_h from M).
  if (!swept) EnergyDerivatives(ws);

  // Forces at the base scalar.
  ws->Bu.setZero();
  for (int k = 0; k < model.num_inputs(); ++k) {
    const auto& in = d.inputs[k];
    Call(in.column, x0, ws->out0);
    if (ws->out0.size() != nv) {
      throw std::runtime_error(
          "model '" + model.name() + "': input '" + in.name + "' column has " +
          std::to_string(ws->out0.size()) + " rows, the model has " +
          std::to_string(nv) + " velocities");
    }
    ws->B.col(k) = ws->out0;
    ws->u[k] = Call(in.value, x0);
    if (!AllFinite(ws->B.col(k)) || !Finite(ws->u[k]))
      ThrowNonFinite(*ws, "input '" + in.name + "'");
  }
  if (model.num_inputs() > 0) ws->Bu.noalias() = ws->B * ws->u;
  if (d.damping) {
    Call(d.damping, x0, ws->mat0);
    if (ws->mat0.rows() != nv || ws->mat0.cols() != nv) {
      throw std::runtime_error("model '" + model.name() +
                               "': damping matrix is " +
                               std::to_string(ws->mat0.rows()) + " x " +
                               std::to_string(ws->mat0.cols()) + ", expected " +
                               std::to_string(nv) + " x " + std::to_string(nv));
    }
    ws->D = ws->mat0;
    if (!AllFinite(ws->D)) ThrowNonFinite(*ws, "the damping matrix");
    ws->Dv.noalias() = ws->D * ws->v;
  } else {
    ws->Dv.setZero();
  }
  if (d.other_loads) {
    Call(d.other_loads, x0, ws->out0);
    if (ws->out0.size() != nv) {
      throw std::runtime_error("model '" + model.name() +
                               "': other loads have " +
                               std::to_string(ws->out0.size()) +
                               " rows, expected " + std::to_string(nv));
    }
    ws->Qr = ws->out0;
    if (!AllFinite(ws->Qr)) ThrowNonFinite(*ws, "the other loads");
  } else {
    ws->Qr.setZero();
  }

  const char* what = d.energy_is_lagrangian
                         ? "the Lagrangian (its derivatives)"
                         : "the kinetic or potential energy (its derivatives)";
  if (!Finite(ws->L_t) || !AllFinite(ws->h)) ThrowNonFinite(*ws, what);
  if (swept && req.dynamics != Dyn::kFull) {
    // ws->h holds L_q here. Skipped outputs are NaN.
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (req.dynamics == Dyn::kResidual) {
      if (!AllFinite(ws->Mvdot_h) || !AllFinite(ws->momentum))
        ThrowNonFinite(*ws, what);
      ws->Mvdot_h += ws->Dv - ws->Qr;
      ws->energy = ws->v.dot(ws->momentum) - ws->lagrangian;
    } else {
      ws->momentum.setConstant(S(nan));
      ws->energy = S(nan);
    }
    ws->M.setConstant(S(nan));
    ws->inertial.setConstant(S(nan));
    ws->h.setConstant(S(nan));
    ws->MarkStage(Stage::kVelocity);
    return;
  }
  if (!AllFinite(ws->M) || !AllFinite(ws->inertial) || !AllFinite(ws->momentum))
    ThrowNonFinite(*ws, what);
  ws->h = ws->inertial + ws->Dv - ws->Qr;
  ws->energy = ws->v.dot(ws->momentum) - ws->lagrangian;
  if constexpr (std::is_same_v<S, double>) {
    if (req.dynamics == Dyn::kResidual) {
      ws->Mvdot_h = ws->h;
      ws->Mvdot_h.noalias() +=
          ws->M * Eigen::Map<const Eigen::VectorXd>(req.vdot, nv);
    }
  }
  ws->MarkStage(Stage::kDynamics);
}

template <class S>
S EnergyDerivativeAlongQ(BasicWorkspace<S>* ws, const VecX<S>& dq) {
  // E = v'L_v - L, so E_q dq = v' L_vq dq - L_q dq. One second-order sweep:
  // inner tangent along v in velocity space (v'L_v is the derivative of L
  // along v), outer tangent along dq in configuration space; the mixed part
  // is v' L_vq dq and the outer part L_q dq.
  using T2 = Dual<Dual<S>>;
  const auto& d = ws->model().data();
  const int nq = ws->model().nq(), nv = ws->model().nv();
  for (int j = 0; j < nq; ++j) ws->q2[j] = Up2(ws->q[j], S(0.0), dq[j]);
  for (int j = 0; j < nv; ++j) ws->v2[j] = Up2(ws->v[j], ws->v[j], S(0.0));
  const T2 t2 = Up2(ws->t, S(0.0), S(0.0));
  const T2 r = EvalL(d, Point<T2>{ws->q2, ws->v2, t2, ws->p2});
  return r.d.d - r.d.v;
}

bool IsCompiled(const Model& model, std::string* why_not) {
  return internal::GetCompiled(model, why_not) != nullptr;
}

template <class S>
void EvaluateAll(BasicWorkspace<S>* ws, const EvalRequest& req) {
  if constexpr (std::is_same_v<S, double>) {
    if (const internal::CompiledModel* cm = Compiled(*ws)) {
      // A non-finite output falls through to the dual-number path, whose
      // checks name the function at fault.
      if (internal::EvaluateCompiled(*cm, internal::StageVariant(req), req, ws))
        return;
    }
  }
  EvaluatePosition(ws);
  EvaluateVelocity(ws, req);
  EvaluateDynamics(ws, req);
}

#define DAEDALUS_INSTANTIATE_STAGES(S)                                       \
  template void EvaluatePosition<S>(BasicWorkspace<S>*);                     \
  template void EvaluateVelocity<S>(BasicWorkspace<S>*, const EvalRequest&); \
  template void EvaluateDynamics<S>(BasicWorkspace<S>*, const EvalRequest&); \
  template void EvaluateAll<S>(BasicWorkspace<S>*, const EvalRequest&);      \
  template std::string DescribeState<S>(const BasicWorkspace<S>&);           \
  template S EnergyDerivativeAlongQ<S>(BasicWorkspace<S>*, const VecX<S>&);
DAEDALUS_INSTANTIATE_STAGES(double)
DAEDALUS_INSTANTIATE_STAGES(D1)
#undef DAEDALUS_INSTANTIATE_STAGES

}  // namespace daedalus
