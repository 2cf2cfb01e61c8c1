#include "daedalus/dynamics.hpp"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace daedalus {

namespace {

// Lift a double vector to dual vectors with zero tangents.
void Lift(const Eigen::VectorXd& x, VecX<D1>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i) y[i] = D1(x[i], 0.0);
}
void Lift(const Eigen::VectorXd& x, VecX<D2>& y) {
  for (Eigen::Index i = 0; i < x.size(); ++i)
    y[i] = D2(D1(x[i], 0.0), D1(0.0, 0.0));
}

[[noreturn]] void ThrowNonFinite(const Workspace& ws, const std::string& what) {
  throw std::runtime_error("model '" + ws.model().name() + "': " + what +
                           " returned a non-finite value at " +
                           DescribeState(ws) +
                           "; check the function for division by zero or a "
                           "domain error at this state");
}

void CheckRows(const Workspace& ws,
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

// Lagrangian L = T - V (or the user's L) at each scalar type.
double EvalL(const internal::ModelData& d, const Point<double>& x) {
  if (d.energy_is_lagrangian) return d.lagrangian.f0(x);
  double l = d.kinetic.f0(x);
  if (d.potential) l -= d.potential.f0(x);
  return l;
}
D1 EvalL(const internal::ModelData& d, const Point<D1>& x) {
  if (d.energy_is_lagrangian) return d.lagrangian.f1(x);
  D1 l = d.kinetic.f1(x);
  if (d.potential) l -= d.potential.f1(x);
  return l;
}
D2 EvalL(const internal::ModelData& d, const Point<D2>& x) {
  if (d.energy_is_lagrangian) return d.lagrangian.f2(x);
  D2 l = d.kinetic.f2(x);
  if (d.potential) l -= d.potential.f2(x);
  return l;
}

// The velocity-dependent part of L: T when the model gives T and V (V does
// not depend on v, so it adds nothing to momenta, M or L_vq v + L_vt).
D2 EvalVelocityPart(const internal::ModelData& d, const Point<D2>& x) {
  return d.energy_is_lagrangian ? d.lagrangian.f2(x) : d.kinetic.f2(x);
}

}  // namespace

// ------------------------------------------------------------- Workspace

Workspace::Workspace(const Model& model) : model_(model) {
  const int nq = model.nq(), nv = model.nv(), nc = model.nc();
  const int nu = model.num_inputs(), np = model.num_parameters();
  q = Eigen::VectorXd::Zero(nq);
  v = Eigen::VectorXd::Zero(nv);
  p = model.default_parameters();
  phi = Eigen::VectorXd::Zero(nc);
  J = Eigen::MatrixXd::Zero(nc, nv);
  phi_t = Eigen::VectorXd::Zero(nc);
  vel_residual = Eigen::VectorXd::Zero(nc);
  bias = Eigen::VectorXd::Zero(nc);
  M = Eigen::MatrixXd::Zero(nv, nv);
  h = Eigen::VectorXd::Zero(nv);
  inertial = Eigen::VectorXd::Zero(nv);
  Bu = Eigen::VectorXd::Zero(nv);
  B = Eigen::MatrixXd::Zero(nv, nu);
  u = Eigen::VectorXd::Zero(nu);
  Dv = Eigen::VectorXd::Zero(nv);
  D = Eigen::MatrixXd::Zero(nv, nv);
  Qr = Eigen::VectorXd::Zero(nv);
  momentum = Eigen::VectorXd::Zero(nv);
  q1.resize(nq);
  v1.resize(nv);
  p1.resize(np);
  q2.resize(nq);
  v2.resize(nv);
  p2.resize(np);
  SetParameters(p);
}

void Workspace::SetState(double time,
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
  stage_ = Stage::kNone;
}

void Workspace::SetParameters(const Eigen::Ref<const Eigen::VectorXd>& params) {
  if (params.size() != model_.num_parameters()) {
    throw std::invalid_argument("model '" + model_.name() +
                                "': " + std::to_string(params.size()) +
                                " parameter values given, the model has " +
                                std::to_string(model_.num_parameters()));
  }
  p = params;
  Lift(p, p1);
  Lift(p, p2);
  stage_ = Stage::kNone;
}

void Workspace::Require(Stage s, const char* who) const {
  if (static_cast<int>(stage_) < static_cast<int>(s)) {
    throw std::logic_error(std::string(who) +
                           ": an earlier evaluation stage was not completed "
                           "at this state");
  }
}

std::string DescribeState(const Workspace& ws) {
  std::ostringstream os;
  os.precision(6);
  os << "t=" << ws.t << ", q=(";
  for (Eigen::Index i = 0; i < ws.q.size(); ++i)
    os << (i ? ", " : "") << ws.model().coordinate_names()[i] << "=" << ws.q[i];
  os << "), v=(";
  for (Eigen::Index i = 0; i < ws.v.size(); ++i)
    os << (i ? ", " : "") << ws.v[i];
  os << ")";
  return os.str();
}

// --------------------------------------------------------------- stages

void EvaluatePosition(Workspace* ws) {
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nv = model.nv();
  ws->J.setZero();
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = d.constraints[ci];
    const int r0 = d.constraint_rows[ci];
    if (c.kind == ConstraintKind::kNonholonomic) {
      // A = d psi / d v, column by column; a = psi - A v.
      Lift(ws->q, ws->q1);
      const D1 t1(ws->t, 0.0);
      for (int k = 0; k < nv; ++k) {
        for (int j = 0; j < nv; ++j) ws->v1[j] = D1(ws->v[j], j == k ? 1 : 0);
        c.fn.f1(Point<D1>{ws->q1, ws->v1, t1, ws->p1}, ws->out1);
        CheckRows(*ws, c, ws->out1.size());
        for (int r = 0; r < c.rows; ++r) ws->J(r0 + r, k) = ws->out1[r].d;
      }
      for (int r = 0; r < c.rows; ++r) {
        const double psi = ws->out1[r].v;
        ws->phi[r0 + r] = 0.0;
        ws->phi_t[r0 + r] = psi - ws->J.row(r0 + r).dot(ws->v);
      }
      continue;
    }
    // Holonomic: J column k from the tangent along e_k; Phi_t from the
    // tangent along t.
    Lift(ws->v, ws->v1);
    for (int k = 0; k < nv; ++k) {
      for (int j = 0; j < nv; ++j) ws->q1[j] = D1(ws->q[j], j == k ? 1 : 0);
      const D1 t1(ws->t, 0.0);
      c.fn.f1(Point<D1>{ws->q1, ws->v1, t1, ws->p1}, ws->out1);
      CheckRows(*ws, c, ws->out1.size());
      for (int r = 0; r < c.rows; ++r) ws->J(r0 + r, k) = ws->out1[r].d;
    }
    Lift(ws->q, ws->q1);
    const D1 tt(ws->t, 1.0);
    c.fn.f1(Point<D1>{ws->q1, ws->v1, tt, ws->p1}, ws->out1);
    CheckRows(*ws, c, ws->out1.size());
    for (int r = 0; r < c.rows; ++r) {
      ws->phi[r0 + r] = ws->out1[r].v;
      ws->phi_t[r0 + r] = ws->out1[r].d;
      if (c.kind == ConstraintKind::kHolonomic && ws->out1[r].d != 0.0) {
        std::ostringstream os;
        os << "model '" << model.name() << "': constraint '" << c.name
           << "' is declared stationary (Holonomic) but depends on time "
              "(Phi_t = "
           << ws->out1[r].d << " at " << DescribeState(*ws)
           << "); declare it with Moving()";
        throw std::invalid_argument(os.str());
      }
    }
  }
  if (!ws->phi.allFinite() || !ws->J.allFinite() || !ws->phi_t.allFinite()) {
    for (int ci = 0; ci < model.num_constraints(); ++ci) {
      const int r0 = d.constraint_rows[ci], rows = d.constraints[ci].rows;
      if (!ws->phi.segment(r0, rows).allFinite() ||
          !ws->J.middleRows(r0, rows).allFinite() ||
          !ws->phi_t.segment(r0, rows).allFinite())
        ThrowNonFinite(*ws, "constraint '" + d.constraints[ci].name + "'");
    }
  }
  ws->MarkStage(Stage::kPosition);
}

void EvaluateVelocity(Workspace* ws) {
  ws->Require(Stage::kPosition, "EvaluateVelocity");
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nq = model.nq();
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = d.constraints[ci];
    const int r0 = d.constraint_rows[ci];
    if (c.kind == ConstraintKind::kNonholonomic) {
      // d/dt psi = A vdot + (psi_q v + psi_t): the bias is the tangent along
      // (qdot = v, vdot = 0, tdot = 1).
      for (int j = 0; j < nq; ++j) ws->q1[j] = D1(ws->q[j], ws->v[j]);
      Lift(ws->v, ws->v1);
      const D1 t1(ws->t, 1.0);
      c.fn.f1(Point<D1>{ws->q1, ws->v1, t1, ws->p1}, ws->out1);
      for (int r = 0; r < c.rows; ++r) {
        ws->vel_residual[r0 + r] = ws->out1[r].v;
        ws->bias[r0 + r] = ws->out1[r].d;
      }
      continue;
    }
    // Holonomic: along the curve s -> (q + s v, t + s), the first
    // derivative of Phi is J v + Phi_t and the second is
    // b = v' Phi_qq v + 2 Phi_qt v + Phi_tt (seed 000).
    for (int j = 0; j < nq; ++j)
      ws->q2[j] = D2(D1(ws->q[j], ws->v[j]), D1(ws->v[j], 0.0));
    Lift(ws->v, ws->v2);
    const D2 t2(D1(ws->t, 1.0), D1(1.0, 0.0));
    c.fn.f2(Point<D2>{ws->q2, ws->v2, t2, ws->p2}, ws->out2);
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
  ws->MarkStage(Stage::kVelocity);
}

void EvaluateDynamics(Workspace* ws) {
  ws->Require(Stage::kVelocity, "EvaluateDynamics");
  const Model& model = ws->model();
  const auto& d = model.data();
  const int nv = model.nv();
  const Point<double> x0{ws->q, ws->v, ws->t, ws->p};

  // Energies at double.
  ws->lagrangian = EvalL(d, x0);
  if (d.energy_is_lagrangian) {
    ws->kinetic = std::numeric_limits<double>::quiet_NaN();
    ws->potential = std::numeric_limits<double>::quiet_NaN();
  } else {
    ws->kinetic = d.kinetic.f0(x0);
    ws->potential = d.potential ? d.potential.f0(x0) : 0.0;
  }
  if (!std::isfinite(ws->lagrangian)) {
    ThrowNonFinite(*ws, d.energy_is_lagrangian
                            ? "the Lagrangian"
                            : "the kinetic or potential energy");
  }

  // Gradient L_q: one first-order sweep per coordinate.
  Lift(ws->v, ws->v1);
  const D1 t1(ws->t, 0.0);
  Eigen::VectorXd& Lq = ws->h;  // reuse h as scratch for L_q
  for (int k = 0; k < nv; ++k) {
    for (int j = 0; j < nv; ++j) ws->q1[j] = D1(ws->q[j], j == k ? 1 : 0);
    Lq[k] = EvalL(d, Point<D1>{ws->q1, ws->v1, t1, ws->p1}).d;
  }

  // Momenta p_i = L_v_i and w_i = (L_vq v + L_vt)_i: inner tangent e_i on v,
  // outer tangent (qdot = v, tdot = 1).
  for (int j = 0; j < nv; ++j)
    ws->q2[j] = D2(D1(ws->q[j], 0.0), D1(ws->v[j], 0.0));
  const D2 t2(D1(ws->t, 0.0), D1(1.0, 0.0));
  for (int i = 0; i < nv; ++i) {
    for (int j = 0; j < nv; ++j)
      ws->v2[j] = D2(D1(ws->v[j], j == i ? 1 : 0), D1(0.0, 0.0));
    const D2 r = EvalVelocityPart(d, Point<D2>{ws->q2, ws->v2, t2, ws->p2});
    ws->momentum[i] = r.v.d;
    ws->inertial[i] = r.d.d - Lq[i];
  }
  // Explicit time derivative of L: one sweep with the tangent on t.
  Lift(ws->q, ws->q1);
  Lift(ws->v, ws->v1);
  ws->L_t = EvalL(d, Point<D1>{ws->q1, ws->v1, D1(ws->t, 1.0), ws->p1}).d;

  // Mass matrix M_ij = d2 L / dv_i dv_j (symmetric by construction).
  Lift(ws->q, ws->q2);
  const D2 t2z(D1(ws->t, 0.0), D1(0.0, 0.0));
  for (int i = 0; i < nv; ++i) {
    for (int j = i; j < nv; ++j) {
      for (int k = 0; k < nv; ++k)
        ws->v2[k] = D2(D1(ws->v[k], k == i ? 1 : 0), D1(k == j ? 1 : 0, 0.0));
      const double mij =
          EvalVelocityPart(d, Point<D2>{ws->q2, ws->v2, t2z, ws->p2}).d.d;
      ws->M(i, j) = mij;
      ws->M(j, i) = mij;
    }
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
    d.damping.f0(x0, ws->mat0);
    if (ws->mat0.rows() != nv || ws->mat0.cols() != nv) {
      throw std::runtime_error("model '" + model.name() +
                               "': damping matrix is " +
                               std::to_string(ws->mat0.rows()) + " x " +
                               std::to_string(ws->mat0.cols()) + ", expected " +
                               std::to_string(nv) + " x " + std::to_string(nv));
    }
    ws->D = ws->mat0;
    if (!ws->D.allFinite()) ThrowNonFinite(*ws, "the damping matrix");
    ws->Dv.noalias() = ws->D * ws->v;
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

  if (!ws->M.allFinite() || !ws->inertial.allFinite() ||
      !ws->momentum.allFinite() || !std::isfinite(ws->L_t)) {
    ThrowNonFinite(*ws, d.energy_is_lagrangian
                            ? "the Lagrangian (its derivatives)"
                            : "the kinetic or potential energy (its "
                              "derivatives)");
  }
  ws->h = ws->inertial + ws->Dv - ws->Qr;
  ws->energy = ws->v.dot(ws->momentum) - ws->lagrangian;
  ws->MarkStage(Stage::kDynamics);
}

double EnergyDerivativeAlongQ(Workspace* ws, const Eigen::VectorXd& dq) {
  const auto& d = ws->model().data();
  const int n = ws->model().nv();
  for (int j = 0; j < n; ++j) ws->q2[j] = D2(D1(ws->q[j], 0.0), D1(dq[j], 0.0));
  const D2 t2(D1(ws->t, 0.0), D1(0.0, 0.0));
  double result = 0.0, dl = 0.0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j)
      ws->v2[j] = D2(D1(ws->v[j], j == i ? 1 : 0), D1(0.0, 0.0));
    const D2 r = EvalL(d, Point<D2>{ws->q2, ws->v2, t2, ws->p2});
    result += ws->v[i] * r.d.d;
    dl = r.d.v;
  }
  return result - dl;
}

void EvaluateAll(Workspace* ws) {
  EvaluatePosition(ws);
  EvaluateVelocity(ws);
  EvaluateDynamics(ws);
}

}  // namespace daedalus
