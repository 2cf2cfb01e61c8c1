// The evaluation stages of the dense workspace (position, velocity,
// dynamics; docs/conventions.md): by compiled programs when the model has
// them, else by dual numbers, one direction at a time or by the
// multi-direction sweeps of dynamics_sweeps.cpp.
#include "daedalus/dynamics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "eval/chart.hpp"
#include "eval/compiled_model.hpp"
#include "eval/dynamics_internal.hpp"

namespace daedalus {

namespace {

using internal::AllFinite;
using internal::Call;
using internal::ChartPoint;
using internal::CheckRows;
using internal::CheckStationary;
using internal::ConstraintBySweeps;
using internal::EnergyDerivativesBySweeps;
using internal::EvalL;
using internal::EvalVelocityPart;
using internal::Finite;
using internal::HasSweep1;
using internal::HasSweeps;
using internal::Lift;
using internal::Primal;
using internal::ThrowNonFinite;
using internal::Up;
using internal::Up2;

}  // namespace

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

// Open contacts (BasicWorkspace::open_rows): their rows are no
// constraint of the current mode; the position stage zeroes Phi, J and
// Phi_t, the velocity stage J v + Phi_t and b.
// A slipping friction row (BasicWorkspace::slip) keeps its J row, so
// that J' lambda holds its friction force; a 3D cone's rows take their
// slip direction v_t / |v_t| here, before their J v + Phi_t is zeroed.
template <class S>
void DropOpenRows(BasicWorkspace<S>* ws, bool position, bool velocity) {
  if constexpr (std::is_same_v<S, double>) {
    // A tangent workspace copies the value workspace's sigma.
    for (SlipRow& s : ws->slip) {
      if (!velocity || s.partner < 0) continue;
      const double a = ws->vel_residual[s.row];
      const double b = ws->vel_residual[s.partner];
      const double n = std::hypot(a, b);
      s.sigma =
          n > 0.0 && a * s.d_row + b * s.d_partner > 0.0 ? a / n : s.d_row;
    }
  }
  for (int r : ws->open_rows) {
    if (position) {
      ws->phi[r] = S(0.0);
      ws->phi_t[r] = S(0.0);
      const bool slips =
          std::any_of(ws->slip.begin(), ws->slip.end(),
                      [r](const SlipRow& s) { return s.row == r; });
      if (!slips) ws->J.row(r).setZero();
    }
    if (velocity) {
      ws->vel_residual[r] = S(0.0);
      ws->bias[r] = S(0.0);
    }
  }
}

namespace {

// Whether rows r0 .. r0 + rows - 1 are all open contacts (`open`:
// BasicWorkspace::open_rows; `sorted`: whether it is ascending, as
// DenseMechanics::SetOpenRows keeps it, so that a row is found by binary
// search). Such a constraint is not evaluated: DropOpenRows would zero
// what it computed (a humanoid's 52 joint limits, open but for a few,
// were 57 % of its run by their sweeps over every velocity).
bool AllRowsOpen(const std::vector<int>& open,
                 const std::vector<SlipRow>& slip,
                 bool sorted,
                 int r0,
                 int rows) {
  if (open.empty()) return false;
  for (const SlipRow& s : slip)
    if (s.row >= r0 && s.row < r0 + rows) return false;  // its J is kept
  for (int r = r0; r < r0 + rows; ++r) {
    const bool found =
        sorted ? std::binary_search(open.begin(), open.end(), r)
               : std::find(open.begin(), open.end(), r) != open.end();
    if (!found) return false;
  }
  return true;
}

}  // namespace

template <class S>
void EvaluatePositionStage(BasicWorkspace<S>* ws);

template <class S>
void EvaluatePosition(BasicWorkspace<S>* ws) {
  EvaluatePositionStage(ws);
  if (!ws->open_rows.empty()) DropOpenRows(ws, true, false);
}

template <class S>
void EvaluatePositionStage(BasicWorkspace<S>* ws) {
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
  const bool sorted =
      std::is_sorted(ws->open_rows.begin(), ws->open_rows.end());
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = d.constraints[ci];
    const int r0 = d.constraint_rows[ci];
    if (AllRowsOpen(ws->open_rows, ws->slip, sorted, r0, c.rows)) {
      ws->phi.segment(r0, c.rows).setZero();
      ws->phi_t.segment(r0, c.rows).setZero();
      continue;
    }
    if (!ws->single_direction && HasSweep1<S>(c.fn)) {
      ConstraintBySweeps(ws, c, r0);
      if (c.kind == ConstraintKind::kHolonomic) CheckStationary(*ws, c, r0);
      continue;
    }
    if (c.kind == ConstraintKind::kNonholonomic) {
      // A = d psi / d v, column by column; a = psi - A v.
      ws->xi1.setZero();
      const T1 t1 = Up(ws->t, 0.0);
      for (int k = 0; k < nv; ++k) {
        for (int j = 0; j < nv; ++j) ws->v1[j] = Up(ws->v[j], j == k ? 1 : 0);
        ChartPoint(d, ws->q, ws->xi1, ws->q1, ws->v1);
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
    const T1 t1 = Up(ws->t, 0.0);
    for (int k = 0; k < nv; ++k) {
      for (int j = 0; j < nv; ++j) ws->xi1[j] = Up(S(0.0), j == k ? 1 : 0);
      Lift(ws->v, ws->v1);
      ChartPoint(d, ws->q, ws->xi1, ws->q1, ws->v1);
      Call(c.fn, Point<T1>{ws->q1, ws->v1, t1, ws->p1}, ws->out1);
      CheckRows(*ws, c, ws->out1.size());
      for (int r = 0; r < c.rows; ++r) ws->J(r0 + r, k) = ws->out1[r].d;
    }
    ws->xi1.setZero();
    Lift(ws->v, ws->v1);
    ChartPoint(d, ws->q, ws->xi1, ws->q1, ws->v1);
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
void EvaluateVelocityStage(BasicWorkspace<S>* ws, const EvalRequest& req);

template <class S>
void EvaluateVelocity(BasicWorkspace<S>* ws, const EvalRequest& req) {
  EvaluateVelocityStage(ws, req);
  if (!ws->open_rows.empty()) DropOpenRows(ws, false, true);
}

template <class S>
void EvaluateVelocityStage(BasicWorkspace<S>* ws, const EvalRequest& req) {
  using T1 = Dual<S>;
  using T2 = Dual<Dual<S>>;
  ws->Require(Stage::kPosition, "EvaluateVelocity");
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nv = model.nv();
  if (!req.bias) {
    // J v + Phi_t from stage 1 (for nonholonomic rows A v + a = psi).
    ws->vel_residual.noalias() = ws->J * ws->v;
    ws->vel_residual += ws->phi_t;
    ws->bias.setConstant(S(std::numeric_limits<double>::quiet_NaN()));
    ws->MarkStage(Stage::kVelocity);
    return;
  }
  const bool sorted =
      std::is_sorted(ws->open_rows.begin(), ws->open_rows.end());
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = d.constraints[ci];
    const int r0 = d.constraint_rows[ci];
    if (AllRowsOpen(ws->open_rows, ws->slip, sorted, r0, c.rows)) {
      ws->vel_residual.segment(r0, c.rows).setZero();
      ws->bias.segment(r0, c.rows).setZero();
      continue;
    }
    if (c.kind == ConstraintKind::kNonholonomic) {
      // d/dt psi = A vdot + (psi_q v + psi_t): the bias is the tangent along
      // (qdot = v, vdot = 0, tdot = 1).
      for (int j = 0; j < nv; ++j) ws->xi1[j] = T1(S(0.0), ws->v[j]);
      Lift(ws->v, ws->v1);
      ChartPoint(d, ws->q, ws->xi1, ws->q1, ws->v1);
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
    for (int j = 0; j < nv; ++j) ws->xi2[j] = Up2(S(0.0), ws->v[j], ws->v[j]);
    Lift(ws->v, ws->v2);
    ChartPoint(d, ws->q, ws->xi2, ws->q2, ws->v2);
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
  const Point<S> x0{ws->user_q(), ws->v, ws->t, ws->p};
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
  const T1 t1 = Up(ws->t, 0.0);
  auto& Lq = ws->h;  // reuse h as scratch for L_q
  for (int k = 0; k < nv; ++k) {
    for (int j = 0; j < nv; ++j) ws->xi1[j] = Up(S(0.0), j == k ? 1 : 0);
    Lift(ws->v, ws->v1);
    ChartPoint(d, ws->q, ws->xi1, ws->q1, ws->v1);
    Lq[k] = EvalL(d, Point<T1>{ws->q1, ws->v1, t1, ws->p1}).d;
  }

  // Momenta p_i = L_v_i and w_i = (L_vq v + L_vt)_i: inner tangent e_i on v,
  // outer tangent (qdot = v, tdot = 1).
  for (int j = 0; j < nv; ++j) ws->xi2[j] = Up2(S(0.0), S(0.0), ws->v[j]);
  const T2 t2 = Up2(ws->t, S(0.0), S(1.0));
  for (int i = 0; i < nv; ++i) {
    for (int j = 0; j < nv; ++j)
      ws->v2[j] = Up2(ws->v[j], S(j == i ? 1.0 : 0.0), S(0.0));
    ChartPoint(d, ws->q, ws->xi2, ws->q2, ws->v2);
    const T2 r = EvalVelocityPart(d, Point<T2>{ws->q2, ws->v2, t2, ws->p2});
    ws->momentum[i] = r.v.d;
    ws->inertial[i] = r.d.d - Lq[i];
  }
  // Explicit time derivative of L: one sweep with the tangent on t.
  ws->xi1.setZero();
  Lift(ws->v, ws->v1);
  ChartPoint(d, ws->q, ws->xi1, ws->q1, ws->v1);
  ws->L_t = EvalL(d, Point<T1>{ws->q1, ws->v1, Up(ws->t, 1.0), ws->p1}).d;

  // Mass matrix M_ij = d2 L / dv_i dv_j (symmetric by construction).
  ws->xi2.setZero();
  const T2 t2z = Up2(ws->t, S(0.0), S(0.0));
  for (int i = 0; i < nv; ++i) {
    for (int j = i; j < nv; ++j) {
      for (int k = 0; k < nv; ++k)
        ws->v2[k] = Up2(ws->v[k], S(k == i ? 1.0 : 0.0), S(k == j ? 1.0 : 0.0));
      ChartPoint(d, ws->q, ws->xi2, ws->q2, ws->v2);
      const S mij =
          EvalVelocityPart(d, Point<T2>{ws->q2, ws->v2, t2z, ws->p2}).d.d;
      ws->M(i, j) = mij;
      ws->M(j, i) = mij;
    }
  }
}

// M and the inertial forces from the model's InertialFn (a multibody
// tree's recursive algorithms); energies and momenta from M: T = v'Mv/2,
// p = M v. The energies of such a model do not depend on t (L_t = 0).
template <class S>
void InertialByFunction(BasicWorkspace<S>* ws) {
  const auto& d = ws->model().data();
  const Point<S> x0{ws->user_q(), ws->v, ws->t, ws->p};
  if constexpr (std::is_same_v<S, double>) {
    d.inertial_dynamics.f0(x0, ws->M, ws->inertial);
  } else {
    d.inertial_dynamics.f1(x0, ws->M, ws->inertial);
  }
  ws->momentum.noalias() = ws->M * ws->v;
  ws->kinetic = 0.5 * ws->v.dot(ws->momentum);
  ws->potential = d.potential ? Call(d.potential, x0) : S(0.0);
  ws->lagrangian = ws->kinetic - ws->potential;
  ws->L_t = S(0.0);
  ws->h = ws->inertial;
  if (!Finite(ws->lagrangian) || !AllFinite(ws->M) || !AllFinite(ws->inertial))
    ThrowNonFinite(*ws, d.inertial_dynamics.what);
}

// The forces at the base scalar: B u, D v, Q_r.
template <class S>
void EvaluateForces(BasicWorkspace<S>* ws, const Point<S>& x0) {
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nv = model.nv();
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
}

template <class S>
void EvaluateDynamics(BasicWorkspace<S>* ws, const EvalRequest& req) {
  ws->Require(Stage::kVelocity, "EvaluateDynamics");
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nv = model.nv();
  const Point<S> x0{ws->user_q(), ws->v, ws->t, ws->p};

  using Dyn = EvalRequest::Dynamics;
  if (req.dynamics == Dyn::kResidual && req.vdot == nullptr)
    throw std::logic_error("EvaluateDynamics: kResidual needs vdot");
  if (!std::is_same_v<S, double> && req.dynamics != Dyn::kFull)
    throw std::logic_error(
        "EvaluateDynamics: partial requests are for the value workspace");
  bool swept = false;
  if (d.inertial_dynamics) {
    InertialByFunction(ws);
  } else if (!ws->single_direction && HasSweeps<S>(d)) {
    EnergyDerivativesBySweeps(ws, req);
    swept = true;
  }
  // The single-direction path computes everything; a partial request then
  // gets the full set (and Mvdot_h from M).
  if (!swept && !d.inertial_dynamics) EnergyDerivatives(ws);

  EvaluateForces(ws, x0);

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

bool HasForwardDynamics(const Model& model) {
  return model.nc() == 0 && model.data().inertial_dynamics &&
         static_cast<bool>(model.data().inertial_dynamics.forward);
}

void EvaluateForward(Workspace* ws, bool energies, Eigen::VectorXd* vdot) {
  const Model& model = ws->model();
  const auto& d = model.data();
  if (!HasForwardDynamics(model))
    throw std::logic_error("EvaluateForward: model '" + model.name() +
                           "' has no forward dynamics route");
  EvalRequest req;
  req.bias = false;
  EvaluatePosition(ws);
  EvaluateVelocity(ws, req);
  const Point<double> x0{ws->user_q(), ws->v, ws->t, ws->p};
  EvaluateForces(ws, x0);
  // B u - D v + Q_r: everything but the inertial forces.
  ws->out0 = ws->Bu - ws->Dv + ws->Qr;
  double kinetic = 0.0;
  d.inertial_dynamics.forward(x0, ws->out0, *vdot,
                              energies ? &kinetic : nullptr);
  if (!AllFinite(*vdot)) ThrowNonFinite(*ws, d.inertial_dynamics.what);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ws->L_t = 0.0;  // the energies of an InertialFn model do not depend on t
  if (energies) {
    ws->kinetic = kinetic;
    ws->potential = d.potential ? Call(d.potential, x0) : 0.0;
    ws->lagrangian = ws->kinetic - ws->potential;
    ws->energy = ws->kinetic + ws->potential;
    if (!Finite(ws->energy)) ThrowNonFinite(*ws, "the energies");
  } else {
    ws->kinetic = ws->potential = ws->lagrangian = ws->energy = nan;
  }
  // M (nv^2 entries) is not touched: writing it would cost more than the
  // forward dynamics; the stage mark keeps the KKT solve off it.
  ws->momentum.setConstant(nan);
  ws->inertial.setConstant(nan);
  ws->h.setConstant(nan);
  ws->MarkStage(Stage::kVelocity);
}

template <class S>
S EnergyDerivativeAlongQ(BasicWorkspace<S>* ws, const VecX<S>& dq) {
  // dq is a direction of the chart coordinates (nv; eval/chart.hpp).
  // E = v'L_v - L, so E_q dq = v' L_vq dq - L_q dq. One second-order sweep:
  // inner tangent along v in velocity space (v'L_v is the derivative of L
  // along v), outer tangent along dq in configuration space; the mixed part
  // is v' L_vq dq and the outer part L_q dq.
  using T2 = Dual<Dual<S>>;
  const auto& d = ws->model().data();
  const int nv = ws->model().nv();
  for (int j = 0; j < nv; ++j) ws->xi2[j] = Up2(S(0.0), S(0.0), dq[j]);
  for (int j = 0; j < nv; ++j) ws->v2[j] = Up2(ws->v[j], ws->v[j], S(0.0));
  // v is held (the velocities are not moved by a position correction):
  // the chart's positions only.
  internal::ChartPositions(d, ws->q, ws->xi2, ws->q2);
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
      if (internal::EvaluateCompiled(*cm, internal::StageVariant(req), req,
                                     ws)) {
        if (!ws->open_rows.empty()) DropOpenRows(ws, true, true);
        return;
      }
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
