#include "eval/compiled_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "eval/chart.hpp"
#include "model/invoke.hpp"

namespace daedalus::internal {

namespace {

std::vector<int> Nodes(const std::vector<Sym>& s) {
  std::vector<int> r;
  r.reserve(s.size());
  for (const Sym& x : s) r.push_back(x.node());
  return r;
}
template <class Derived>
std::vector<Sym> Flat(const Eigen::DenseBase<Derived>& m) {
  std::vector<Sym> r;
  r.reserve(static_cast<std::size_t>(m.size()));
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i) r.push_back(m(i, j));
  return r;
}

// Sets the recording's failure reason unless one is set.
struct Reason {
  std::string* why;
  bool operator()(const std::string& s) const {
    if (why) *why = s;
    return false;
  }
};

}  // namespace

SymbolicModel::SymbolicModel(const Model& m) : model_(m.Unowned()) {
  const int nq = m.nq(), nv = m.nv(), np = m.num_parameters();
  TraceScope scope(&graph);
  t = Sym::FromNode(graph.Input(0));
  q.resize(nq);
  v.resize(nv);
  p.resize(np);
  for (int i = 0; i < nq; ++i) q[i] = Sym::FromNode(graph.Input(q_input(i)));
  for (int i = 0; i < nv; ++i) v[i] = Sym::FromNode(graph.Input(v_input(i)));
  for (int i = 0; i < np; ++i) p[i] = Sym::FromNode(graph.Input(p_input(i)));
}

std::vector<int> SymbolicModel::NamedInputs(const std::string& name, int n) {
  for (const auto& [key, numbers] : named_) {
    if (key != name) continue;
    if (static_cast<int>(numbers.size()) != n)
      throw std::logic_error("SymbolicModel: inputs '" + name +
                             "' requested with two sizes");
    return numbers;
  }
  std::vector<int> numbers;
  for (int i = 0; i < n; ++i) {
    const int k = graph.num_inputs();
    graph.Input(k);
    numbers.push_back(k);
  }
  named_.emplace_back(name, numbers);
  return numbers;
}

VecX<Sym> SymbolicModel::NamedInputSyms(const std::string& name, int n) {
  const std::vector<int> numbers = NamedInputs(name, n);
  VecX<Sym> r(n);
  for (int i = 0; i < n; ++i) r[i] = Sym::FromNode(graph.InputNode(numbers[i]));
  return r;
}

std::vector<int> SymbolicModel::StateInputs() const {
  std::vector<int> r;
  const int n = 1 + model_.nq() + model_.nv() + model_.num_parameters();
  for (int k = 0; k < n; ++k) r.push_back(k);
  return r;
}

std::vector<Sym> SymbolicModel::Along(
    const std::vector<Sym>& f, const std::vector<std::pair<int, Sym>>& seeds) {
  std::vector<int> seed;
  for (const auto& [k, s] : seeds) {
    if (static_cast<int>(seed.size()) <= k)
      seed.resize(static_cast<std::size_t>(k) + 1, 0);
    seed[k] = s.node();
  }
  const std::vector<int> d = graph.Derivative(Nodes(f), seed);
  std::vector<Sym> r;
  r.reserve(d.size());
  for (int id : d) r.push_back(Sym::FromNode(id));
  return r;
}

Sym SymbolicModel::EnergyAlongQ(const VecX<Sym>& dq) {
  // dq is a coordinate direction (nq): the IDAS programs that ask for it
  // are not built for models with quaternions (DaeForm), whose directions
  // are the chart's.
  if (!model_.quaternions().empty())
    throw std::logic_error(
        "SymbolicModel::EnergyAlongQ: not for a model with quaternions");
  std::vector<std::pair<int, Sym>> seeds;
  for (int i = 0; i < model_.nq(); ++i) seeds.emplace_back(q_input(i), dq[i]);
  return Along({energy}, seeds)[0];
}

namespace {

// Records every function of the model and derives the stage outputs. Sets
// `why` and returns false when the model cannot be compiled.
bool Record(SymbolicModel* s, std::string* why) {
  const Model& m = s->model();
  const auto& d = m.data();
  const int nq = m.nq(), nv = m.nv(), nc = m.nc(), nu = m.num_inputs();
  const Reason fail{why};
  // Quaternions (eval/chart.hpp; docs/conventions.md, "Velocities"): the
  // functions see the user's q with each quaternion normalized, and the
  // derivatives "along coordinate k" are along the raw q's direction
  // N(q) e_k, q (x) (0, e_k) / 2 on a quaternion block (a rotation about
  // body axis k: n(q + eps q (x) (0, e) / 2) = n(q) (x) (1, eps e / 2) +
  // O(eps^2), whatever |q|). Derivatives along the motion follow q' = N(q) v
  // with v held, whose path q (x) exp(t v / 2) is the chart's xi = t v, so
  // the bias terms equal the chart's (second order included: the symbolic
  // derivatives are exact). The Euler-Lagrange equations in these
  // velocities gain the Hamel term w x p per block (below). Models without
  // quaternions record the graph they always did.
  const bool chart = !d.quaternions.empty();
  VecX<Sym> qn = s->q;  // the user's q
  for (const QuaternionBlock& b : d.quaternions) {
    const Sym n =
        sqrt(s->q[b.q] * s->q[b.q] + s->q[b.q + 1] * s->q[b.q + 1] +
             s->q[b.q + 2] * s->q[b.q + 2] + s->q[b.q + 3] * s->q[b.q + 3]);
    for (int c = 0; c < 4; ++c) qn[b.q + c] = s->q[b.q + c] / n;
  }
  const Point<Sym> x{qn, s->v, s->t, s->p};
  // The seeds of the q inputs for a coordinate rate qdot (nq).
  auto seeds_of = [&](const VecX<Sym>& qdot) {
    std::vector<std::pair<int, Sym>> r;
    for (int j = 0; j < nq; ++j)
      if (!s->graph.IsZero(qdot[j].node()))
        r.emplace_back(s->q_input(j), qdot[j]);
    return r;
  };
  std::vector<std::pair<int, Sym>> along_motion;  // qdot = N v, tdot = 1
  // Column k of N(q) as seeds: the derivative along coordinate k.
  std::vector<std::vector<std::pair<int, Sym>>> along_coordinate(nv);
  if (chart) {
    VecX<Sym> qdot = VecX<Sym>::Zero(nq);
    CoordinateRates<Sym>(d, s->q, s->v, qdot);
    along_motion = seeds_of(qdot);
    for (int k = 0; k < nv; ++k) {
      VecX<Sym> e = VecX<Sym>::Zero(nv);
      e[k] = Sym(1.0);
      qdot = VecX<Sym>::Zero(nq);
      CoordinateRates<Sym>(d, s->q, e, qdot);
      along_coordinate[static_cast<std::size_t>(k)] = seeds_of(qdot);
    }
  } else {
    for (int i = 0; i < nq; ++i)
      along_motion.emplace_back(s->q_input(i), s->v[i]);
    for (int k = 0; k < nv; ++k)
      along_coordinate[static_cast<std::size_t>(k)] = {
          {s->q_input(k), Sym(1.0)}};
  }
  along_motion.emplace_back(0, Sym(1.0));

  // ---- constraints
  s->phi = VecX<Sym>::Zero(nc);
  s->phi_t = VecX<Sym>::Zero(nc);
  s->vel_residual = VecX<Sym>::Zero(nc);
  s->bias = VecX<Sym>::Zero(nc);
  s->J = MatX<Sym>::Zero(nc, nv);
  for (int ci = 0; ci < m.num_constraints(); ++ci) {
    const auto& c = d.constraints[ci];
    const int r0 = m.constraint_row(ci);
    VecX<Sym> out;
    Invoke(c.fn, x, out);
    if (out.size() != c.rows)
      return fail("constraint '" + c.name + "' returns " +
                  std::to_string(out.size()) + " rows, declared " +
                  std::to_string(c.rows));
    const std::vector<Sym> rows(out.data(), out.data() + out.size());
    const bool nonholonomic = c.kind == ConstraintKind::kNonholonomic;
    for (int k = 0; k < nv; ++k) {
      const std::vector<Sym> col =
          nonholonomic
              ? s->Along(rows, {{s->v_input(k), Sym(1.0)}})
              : s->Along(rows, along_coordinate[static_cast<std::size_t>(k)]);
      for (int r = 0; r < c.rows; ++r) s->J(r0 + r, k) = col[r];
    }
    if (nonholonomic) {
      // psi = A v + a: A = psi_v, a = psi - A v, J v + Phi_t = psi, and
      // the bias is the derivative of psi along (qdot = v, tdot = 1).
      const std::vector<Sym> b = s->Along(rows, along_motion);
      for (int r = 0; r < c.rows; ++r) {
        Sym av = 0.0;
        for (int k = 0; k < nv; ++k) av += s->J(r0 + r, k) * s->v[k];
        s->phi_t[r0 + r] = rows[r] - av;
        s->vel_residual[r0 + r] = rows[r];
        s->bias[r0 + r] = b[r];
      }
      continue;
    }
    const std::vector<Sym> pt = s->Along(rows, {{0, Sym(1.0)}});
    std::vector<Sym> w(rows.size());
    for (int r = 0; r < c.rows; ++r) {
      s->phi[r0 + r] = rows[r];
      s->phi_t[r0 + r] = pt[r];
      if (c.kind == ConstraintKind::kHolonomic &&
          !s->graph.IsZero(pt[r].node()))
        return fail("constraint '" + c.name +
                    "' is declared Holonomic but depends on time");
      Sym jv = pt[r];
      for (int k = 0; k < nv; ++k) jv += s->J(r0 + r, k) * s->v[k];
      w[r] = jv;
      s->vel_residual[r0 + r] = jv;
    }
    // b: the derivative of J v + Phi_t along (qdot = v, tdot = 1).
    const std::vector<Sym> b = s->Along(w, along_motion);
    for (int r = 0; r < c.rows; ++r) s->bias[r0 + r] = b[r];
  }

  // ---- energies
  if (d.energy_is_lagrangian) {
    s->lagrangian = Invoke(d.lagrangian, x);
  } else {
    s->kinetic = Invoke(d.kinetic, x);
    s->potential = d.potential ? Invoke(d.potential, x) : Sym(0.0);
    s->lagrangian = s->kinetic - s->potential;
  }
  const Sym vel_part = d.energy_is_lagrangian ? s->lagrangian : s->kinetic;
  s->Lq.resize(nv);  // along each coordinate (N(q) e_k)
  for (int k = 0; k < nv; ++k)
    s->Lq[k] = s->Along({s->lagrangian},
                        along_coordinate[static_cast<std::size_t>(k)])[0];
  s->L_t = s->Along({s->lagrangian}, {{0, Sym(1.0)}})[0];
  s->momentum.resize(nv);
  for (int i = 0; i < nv; ++i)
    s->momentum[i] = s->Along({vel_part}, {{s->v_input(i), Sym(1.0)}})[0];
  const std::vector<Sym> mom(s->momentum.data(), s->momentum.data() + nv);
  const std::vector<Sym> dmom = s->Along(mom, along_motion);
  // The Hamel term of a quaternion block, w x p (w its velocities, p their
  // momenta): the Euler-Lagrange equations in the chart xi, d/dt L_xi' -
  // L_xi = Q, at xi = 0 with v = xi' - xi x xi' / 2 give p' + w x p - L_q
  // N = Q (half from d/dt of v_xi', half from L's dependence on xi through
  // v); for a rigid body I w' + w x I w, Euler's equations.
  VecX<Sym> hamel = VecX<Sym>::Zero(nv);
  for (const QuaternionBlock& b : d.quaternions) {
    const Sym* w = s->v.data() + b.v;
    const Sym* pm = s->momentum.data() + b.v;
    hamel[b.v] = w[1] * pm[2] - w[2] * pm[1];
    hamel[b.v + 1] = w[2] * pm[0] - w[0] * pm[2];
    hamel[b.v + 2] = w[0] * pm[1] - w[1] * pm[0];
  }
  s->inertial.resize(nv);
  for (int i = 0; i < nv; ++i) s->inertial[i] = dmom[i] - s->Lq[i];
  if (chart)
    for (int i = 0; i < nv; ++i) s->inertial[i] += hamel[i];
  s->M.resize(nv, nv);
  for (int j = 0; j < nv; ++j) {
    const std::vector<Sym> col = s->Along(mom, {{s->v_input(j), Sym(1.0)}});
    for (int i = j; i < nv; ++i) {
      s->M(i, j) = col[i];
      s->M(j, i) = col[i];
    }
  }
  Sym pv = 0.0;
  for (int i = 0; i < nv; ++i) pv += s->v[i] * s->momentum[i];
  s->energy = pv - s->lagrangian;

  // ---- forces
  s->B = MatX<Sym>::Zero(nv, nu);
  s->u = VecX<Sym>::Zero(nu);
  s->Bu = VecX<Sym>::Zero(nv);
  for (int k = 0; k < nu; ++k) {
    const auto& in = d.inputs[k];
    VecX<Sym> col;
    Invoke(in.column, x, col);
    if (col.size() != nv)
      return fail("input '" + in.name + "' column has " +
                  std::to_string(col.size()) + " rows");
    s->B.col(k) = col;
    s->u[k] = Invoke(in.value, x);
    for (int i = 0; i < nv; ++i) s->Bu[i] += col[i] * s->u[k];
  }
  s->D = MatX<Sym>::Zero(nv, nv);
  s->Dv = VecX<Sym>::Zero(nv);
  if (d.damping) {
    MatX<Sym> dm;
    if (!d.damping.fs)
      throw NotTraceable("a function without a recording form");
    d.damping.fs(x, dm);
    if (dm.rows() != nv || dm.cols() != nv)
      return fail("the damping matrix has the wrong size");
    s->D = dm;
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < nv; ++j) s->Dv[i] += dm(i, j) * s->v[j];
  }
  s->Qr = VecX<Sym>::Zero(nv);
  if (d.other_loads) {
    VecX<Sym> ql;
    Invoke(d.other_loads, x, ql);
    if (ql.size() != nv) return fail("the other loads have the wrong size");
    s->Qr = ql;
  }
  s->h.resize(nv);
  for (int i = 0; i < nv; ++i) s->h[i] = s->inertial[i] + s->Dv[i] - s->Qr[i];

  // M vdot + h without forming M: the derivative of the momenta along
  // (qdot = v, vdot, tdot = 1), as dynamics.cpp's kResidual request.
  s->vdot = s->NamedInputSyms("vdot", nv);
  std::vector<std::pair<int, Sym>> along_vdot = along_motion;
  for (int i = 0; i < nv; ++i)
    along_vdot.emplace_back(s->v_input(i), s->vdot[i]);
  const std::vector<Sym> dmv = s->Along(mom, along_vdot);
  s->Mvdot_h.resize(nv);
  for (int i = 0; i < nv; ++i)
    s->Mvdot_h[i] = dmv[i] - s->Lq[i] + s->Dv[i] - s->Qr[i];
  if (chart)
    for (int i = 0; i < nv; ++i) s->Mvdot_h[i] += hamel[i];
  return true;
}

// The fields a stage variant writes, in output order.
std::vector<StageField> FieldsOf(const Model& m, int variant) {
  using F = StageField;
  std::vector<F> f = {F::kPhi, F::kJ, F::kPhiT};
  if (variant == kPositionVariant) return f;
  const auto dyn = static_cast<EvalRequest::Dynamics>(variant / 2);
  f.push_back(F::kVelResidual);
  if (variant % 2 == 1) f.push_back(F::kBias);
  f.insert(f.end(), {F::kLagrangian, F::kLt});
  if (!m.data().energy_is_lagrangian)
    f.insert(f.end(), {F::kKinetic, F::kPotential});
  f.insert(f.end(), {F::kB, F::kU, F::kBu, F::kD, F::kDv, F::kQr});
  switch (dyn) {
    case EvalRequest::Dynamics::kFull:
      f.insert(f.end(), {F::kM, F::kInertial, F::kH, F::kMomentum, F::kEnergy});
      break;
    case EvalRequest::Dynamics::kResidual:
      f.insert(f.end(), {F::kMvdotH, F::kMomentum, F::kEnergy});
      break;
    case EvalRequest::Dynamics::kForces:
      break;
  }
  return f;
}

// The symbolic or numeric storage of one field (contiguous, column-major).
template <class W, class T>
std::pair<T*, Eigen::Index> Storage(W& w, StageField f) {
  auto vec = [](auto& x) {
    return std::pair<T*, Eigen::Index>(x.data(), x.size());
  };
  auto one = [](auto& x) { return std::pair<T*, Eigen::Index>(&x, 1); };
  switch (f) {
    case StageField::kPhi:
      return vec(w.phi);
    case StageField::kJ:
      return vec(w.J);
    case StageField::kPhiT:
      return vec(w.phi_t);
    case StageField::kVelResidual:
      return vec(w.vel_residual);
    case StageField::kBias:
      return vec(w.bias);
    case StageField::kLagrangian:
      return one(w.lagrangian);
    case StageField::kLt:
      return one(w.L_t);
    case StageField::kKinetic:
      return one(w.kinetic);
    case StageField::kPotential:
      return one(w.potential);
    case StageField::kB:
      return vec(w.B);
    case StageField::kU:
      return vec(w.u);
    case StageField::kBu:
      return vec(w.Bu);
    case StageField::kD:
      return vec(w.D);
    case StageField::kDv:
      return vec(w.Dv);
    case StageField::kQr:
      return vec(w.Qr);
    case StageField::kM:
      return vec(w.M);
    case StageField::kInertial:
      return vec(w.inertial);
    case StageField::kH:
      return vec(w.h);
    case StageField::kMomentum:
      return vec(w.momentum);
    case StageField::kEnergy:
      return one(w.energy);
    case StageField::kMvdotH:
      return vec(w.Mvdot_h);
  }
  throw std::logic_error("Storage: unknown field");
}

}  // namespace

std::shared_ptr<CompiledModel> CompiledModel::Make(const Model& model,
                                                   std::string* why_not) {
  auto cm = std::make_shared<CompiledModel>();
  try {
    cm->sym_ = std::make_unique<SymbolicModel>(model);
    TraceScope scope(&cm->sym_->graph);
    if (!Record(cm->sym_.get(), why_not)) return nullptr;
  } catch (const NotTraceable& e) {
    if (why_not) *why_not = std::string("not recordable: ") + e.what();
    return nullptr;
  } catch (const std::length_error& e) {
    if (why_not) *why_not = e.what();
    return nullptr;
  } catch (const std::exception& e) {
    if (why_not) *why_not = std::string("recording failed: ") + e.what();
    return nullptr;
  }
  return cm;
}

int CompiledModel::graph_size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sym_->graph.size();
}

const StageProgram& CompiledModel::Stage(int variant) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = stages_[static_cast<std::size_t>(variant)];
  if (slot) return *slot;
  auto sp = std::make_unique<StageProgram>();
  SymbolicModel& s = *sym_;
  sp->fields = FieldsOf(s.model(), variant);
  sp->position_only = variant == kPositionVariant;
  if (!sp->position_only) {
    sp->dynamics = static_cast<EvalRequest::Dynamics>(variant / 2);
    sp->bias = variant % 2 == 1;
  }
  sp->needs_vdot =
      sp->dynamics == EvalRequest::Dynamics::kResidual && !sp->position_only;
  std::vector<int> outputs;
  for (StageField f : sp->fields) {
    const auto [ptr, n] = Storage<SymbolicModel, Sym>(s, f);
    for (Eigen::Index i = 0; i < n; ++i) outputs.push_back(ptr[i].node());
  }
  std::vector<int> inputs = s.StateInputs();
  if (sp->needs_vdot) {
    const std::vector<int> vd = s.NamedInputs("vdot", s.model().nv());
    inputs.insert(inputs.end(), vd.begin(), vd.end());
  }
  sp->program = ExprProgram(s.graph, inputs, outputs);
  slot = std::move(sp);
  return *slot;
}

const CompiledModel* GetCompiled(const Model& model, std::string* why_not) {
  const CompiledCache& cache = model.data().compiled;
  std::call_once(cache.once, [&] {
    if (model.data().inertial_dynamics) {
      cache.why_not = "M and h are evaluated by " +
                      model.data().inertial_dynamics.what +
                      ", not recorded from the energies";
      return;
    }
    if (model.nq() > kMaxCompiledCoordinates) {
      cache.why_not = "more than " + std::to_string(kMaxCompiledCoordinates) +
                      " coordinates (the dense stage programs grow like nq^2)";
      return;
    }
    cache.compiled = CompiledModel::Make(model, &cache.why_not);
  });
  if (why_not) *why_not = cache.why_not;
  return cache.compiled.get();
}

bool EvaluateCompiled(const CompiledModel& cm,
                      int variant,
                      const EvalRequest& req,
                      Workspace* ws) {
  const auto v = static_cast<std::size_t>(variant);
  if (ws->compiled_stage[v] == nullptr) {
    ws->compiled_stage[v] = &cm.Stage(variant);
    ws->compiled_stage[v]->program.InitScratch(&ws->compiled_scratch[v]);
  }
  const StageProgram& sp = *ws->compiled_stage[v];
  const Model& m = ws->model();
  const int nq = m.nq(), nv = m.nv(), np = m.num_parameters();
  // Inputs t, q, v, p (and vdot).
  std::vector<double>& in = ws->compiled_in;
  in.resize(static_cast<std::size_t>(sp.program.num_inputs()));
  in[0] = ws->t;
  // std::copy_n, not memcpy: empty Eigen vectors have a null data().
  double* slot = in.data() + 1;
  slot = std::copy_n(ws->q.data(), nq, slot);
  slot = std::copy_n(ws->v.data(), nv, slot);
  slot = std::copy_n(ws->p.data(), np, slot);
  if (sp.needs_vdot) {
    if (req.vdot == nullptr)
      throw std::logic_error("EvaluateDynamics: kResidual needs vdot");
    std::copy_n(req.vdot, nv, slot);
  }
  std::vector<double>& out = ws->compiled_out;
  out.resize(static_cast<std::size_t>(sp.program.num_outputs()));
  sp.program.Run(in.data(), out.data(), ws->compiled_scratch[v].data());
  double sum = 0.0;
  for (double o : out) sum += o * 0.0;  // NaN iff some output is not finite
  if (sum != 0.0) {
    ws->MarkStage(Stage::kNone);
    return false;
  }
  const double* o = out.data();
  for (StageField f : sp.fields) {
    const auto [ptr, n] = Storage<Workspace, double>(*ws, f);
    std::copy_n(o, n, ptr);
    o += n;
  }
  if (sp.position_only) {
    ws->MarkStage(Stage::kPosition);
    return true;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (m.data().energy_is_lagrangian) {
    ws->kinetic = nan;
    ws->potential = nan;
  }
  if (!sp.bias) ws->bias.setConstant(nan);
  if (sp.dynamics == EvalRequest::Dynamics::kFull) {
    ws->MarkStage(Stage::kDynamics);
    return true;
  }
  // Partial requests: what they skip is NaN, and the stage stays at
  // kVelocity (dynamics.hpp).
  if (sp.dynamics == EvalRequest::Dynamics::kForces) {
    ws->momentum.setConstant(nan);
    ws->energy = nan;
  }
  ws->M.setConstant(nan);
  ws->inertial.setConstant(nan);
  ws->h.setConstant(nan);
  ws->MarkStage(Stage::kVelocity);
  return true;
}

}  // namespace daedalus::internal
