// Control-affine split, counterfactuals, momentum balance and cyclic
// coordinates (include/daedalus/analysis.hpp, docs/analysis.md).
#include "daedalus/analysis.hpp"

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>

#include "monitor/sample_collector.hpp"

namespace daedalus {

namespace {

// Lagrangian at any of the stored scalar types.
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

VecX<D1> Lift1(const Eigen::VectorXd& x,
               const Eigen::VectorXd* tangent = nullptr) {
  VecX<D1> y(x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i)
    y[i] = D1(x[i], tangent ? (*tangent)[i] : 0.0);
  return y;
}

// The channels of the split, by index (all when `names` is empty).
std::vector<int> ChannelIndices(const Model& model,
                                const std::vector<std::string>& names) {
  std::vector<int> idx;
  if (names.empty()) {
    for (int k = 0; k < model.num_inputs(); ++k) idx.push_back(k);
  } else {
    for (const auto& n : names) idx.push_back(InputChannelIndex(model, n));
  }
  return idx;
}

// Generalized force of the channels in `idx` at the evaluated workspace.
Eigen::VectorXd ChannelForce(const Workspace& ws, const std::vector<int>& idx) {
  Eigen::VectorXd f = Eigen::VectorXd::Zero(ws.model().nv());
  for (int k : idx) f += ws.B.col(k) * ws.u[k];
  return f;
}

bool SameTime(double a, double b) {
  return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b));
}

}  // namespace

// ===================================================== control-affine split

ControlAffineSplit ComputeControlAffineSplit(
    const Model& model,
    const Eigen::VectorXd& params,
    double t,
    const Eigen::VectorXd& q,
    const Eigen::VectorXd& v,
    const ControlAffineOptions& options) {
  const std::vector<int> idx = ChannelIndices(model, options.inputs);
  const int nv = model.nv(), nc = model.nc();
  const int ns = static_cast<int>(idx.size());
  Workspace ws(model);
  ws.SetParameters(params);
  ws.SetState(t, q, v);
  EvaluateAll(&ws);

  ControlAffineSplit s;
  for (int k : idx) {
    s.inputs.push_back(model.inputs()[k].name);
    s.input_index.push_back(k);
  }
  s.B.resize(nv, ns);
  s.u.resize(ns);
  s.u0 = Eigen::VectorXd::Zero(ns);
  for (int j = 0; j < ns; ++j) {
    s.B.col(j) = ws.B.col(idx[j]);
    s.u[j] = ws.u[idx[j]];
  }
  if (options.input_zero) {
    const Eigen::VectorXd u0 = options.input_zero(t, q, v);
    if (u0.size() != model.num_inputs()) {
      throw std::invalid_argument(
          "control-affine split of model '" + model.name() +
          "': the input zero returned " + std::to_string(u0.size()) +
          " values; it must return one per input channel (" +
          std::to_string(model.num_inputs()) + ")");
    }
    for (int j = 0; j < ns; ++j) s.u0[j] = u0[idx[j]];
  }

  // Drift: the KKT solution with the split's inputs at their zero u0 and
  // every other channel at its model value.
  ws.Bu += s.B * (s.u0 - s.u);
  KktSolver kkt(model, options.kkt);
  KktResult r;
  kkt.Solve(ws, ws.bias, &r);
  s.drift_acceleration = r.vdot;
  s.drift_multipliers = r.lambda;

  // Input maps by solves with the Cholesky factors of M and of
  // S = J M^-1 J' (KktSolver has already rejected a singular M or a
  // rank-deficient J at this state).
  Eigen::LLT<Eigen::MatrixXd> llt_m(ws.M);
  s.unconstrained_input_acceleration = llt_m.solve(s.B);
  if (nc == 0) {
    s.input_acceleration = s.unconstrained_input_acceleration;
    s.input_multipliers.resize(0, ns);
  } else {
    const Eigen::MatrixXd W = llt_m.solve(ws.J.transpose());  // M^-1 J'
    const Eigen::MatrixXd S = ws.J * W;
    Eigen::LLT<Eigen::MatrixXd> llt_s(S);
    const Eigen::MatrixXd X =
        llt_s.solve(ws.J * s.unconstrained_input_acceleration);
    s.input_acceleration = s.unconstrained_input_acceleration - W * X;
    s.input_multipliers = -X;
  }
  s.f.resize(2 * nv);
  s.f.head(nv) = v;
  s.f.tail(nv) = s.drift_acceleration;
  s.G = Eigen::MatrixXd::Zero(2 * nv, ns);
  s.G.bottomRows(nv) = s.input_acceleration;
  return s;
}

InputZero GravityCompensation(const Model& model,
                              const Eigen::VectorXd& params,
                              const std::vector<std::string>& inputs) {
  const std::vector<int> idx = ChannelIndices(model, inputs);
  return [model, params, idx](double t, const Eigen::VectorXd& q,
                              const Eigen::VectorXd& v) {
    Workspace ws(model);
    ws.SetParameters(params);
    ws.SetState(t, q, Eigen::VectorXd::Zero(v.size()));
    EvaluateAll(&ws);
    Eigen::MatrixXd B(model.nv(), static_cast<Eigen::Index>(idx.size()));
    for (size_t j = 0; j < idx.size(); ++j) B.col(j) = ws.B.col(idx[j]);
    // Least squares B u0 = h(t, q, 0) by column-pivoting QR.
    const Eigen::VectorXd us = B.colPivHouseholderQr().solve(ws.h);
    Eigen::VectorXd u0 = Eigen::VectorXd::Zero(model.num_inputs());
    for (size_t j = 0; j < idx.size(); ++j) u0[idx[j]] = us[j];
    return u0;
  };
}

// ========================================================= counterfactuals

std::vector<PointwiseCounterfactual> PointwiseZtcf(
    const Model& model,
    const Eigen::VectorXd& params,
    const std::vector<Sample>& achieved,
    const std::vector<std::string>& channels,
    const KktOptions& kkt_options) {
  const std::vector<int> idx = ChannelIndices(model, channels);
  Workspace ws(model);
  ws.SetParameters(params);
  KktSolver kkt(model, kkt_options);
  KktResult r;
  std::vector<PointwiseCounterfactual> out;
  out.reserve(achieved.size());
  for (const Sample& s : achieved) {
    PointwiseCounterfactual p;
    p.t = s.t;
    p.q = s.q;
    p.v = s.v;
    ws.SetState(s.t, s.q, s.v);
    EvaluateAll(&ws);
    kkt.Solve(ws, ws.bias, &r);
    p.vdot_achieved = r.vdot;
    p.lambda_achieved = r.lambda;
    // Remove the channels and solve again: the branch's own reactions.
    ws.Bu -= ChannelForce(ws, idx);
    kkt.Solve(ws, ws.bias, &r);
    p.vdot = r.vdot;
    p.lambda = r.lambda;
    out.push_back(std::move(p));
  }
  return out;
}

SimulationSummary ForwardZtcf(const Model& model,
                              const InitialState& x,
                              const Eigen::VectorXd& params,
                              const SimulationOptions& options,
                              const std::vector<std::string>& channels,
                              Observer* observer) {
  return Simulate(RemoveInputs(model, channels), x, params, options, observer);
}

BranchedCounterfactual BranchedZtcf(const Model& model,
                                    const Eigen::VectorXd& params,
                                    const SimulationOptions& options,
                                    double t_branch,
                                    const Eigen::VectorXd& q,
                                    const Eigen::VectorXd& v,
                                    const std::vector<std::string>& channels) {
  if (!(t_branch < options.t_end) || !std::isfinite(t_branch)) {
    std::ostringstream os;
    os << "branched ZTCF of model '" << model.name() << "': branch time "
       << t_branch
       << " is not before the end of the run (t_end = " << options.t_end
       << "); choose a branch time inside the run";
    throw std::invalid_argument(os.str());
  }
  const Model branch_model = RemoveInputs(model, channels);
  BranchedCounterfactual b;
  b.t_branch = t_branch;
  b.channels = channels;
  SimulationOptions o = options;
  o.t0 = t_branch;
  InitialState x{q, v};
  internal::SampleCollector original, counterfactual;
  b.original = Simulate(model, x, params, o, &original);
  b.counterfactual = Simulate(branch_model, x, params, o, &counterfactual);
  b.original_samples = std::move(original.samples);
  b.counterfactual_samples = std::move(counterfactual.samples);

  // Compare at equal times (root returns can add samples to either run).
  size_t i = 0, j = 0;
  const auto& a = b.original_samples;
  const auto& c = b.counterfactual_samples;
  while (i < a.size() && j < c.size()) {
    if (SameTime(a[i].t, c[j].t)) {
      ++b.common_samples;
      b.max_position_difference = std::max(
          b.max_position_difference, (a[i].q - c[j].q).cwiseAbs().maxCoeff());
      b.max_velocity_difference = std::max(
          b.max_velocity_difference, (a[i].v - c[j].v).cwiseAbs().maxCoeff());
      b.final_energy_difference = c[j].energy - a[i].energy;
      ++i;
      ++j;
    } else if (a[i].t < c[j].t) {
      ++i;
    } else {
      ++j;
    }
  }
  return b;
}

BranchedCounterfactual BranchedZtcfFrom(
    const Model& model,
    const InitialState& x0,
    const Eigen::VectorXd& params,
    const SimulationOptions& options,
    double t_branch,
    const std::vector<std::string>& channels) {
  if (!(t_branch >= options.t0 && t_branch < options.t_end)) {
    std::ostringstream os;
    os << "branched ZTCF of model '" << model.name() << "': branch time "
       << t_branch << " is outside the run [" << options.t0 << ", "
       << options.t_end << "); choose a time in that interval";
    throw std::invalid_argument(os.str());
  }
  if (t_branch == options.t0)
    return BranchedZtcf(model, params, options, t_branch, x0.q, x0.v, channels);
  SimulationOptions o = options;
  o.t_end = t_branch;
  internal::SampleCollector before;
  const SimulationSummary s = Simulate(model, x0, params, o, &before);
  if (!s.ok || before.samples.empty() ||
      !SameTime(before.samples.back().t, t_branch)) {
    std::ostringstream os;
    os << "branched ZTCF of model '" << model.name()
       << "': the original run did not reach the branch time " << t_branch
       << " (stopped at t = " << s.t_reached << ")"
       << (s.ok ? "" : ": " + s.error);
    throw std::runtime_error(os.str());
  }
  const Sample& at = before.samples.back();
  return BranchedZtcf(model, params, options, t_branch, at.q, at.v, channels);
}

ZvcfResult InstantaneousZvcf(const Model& model,
                             const Eigen::VectorXd& params,
                             double t,
                             const Eigen::VectorXd& q,
                             const ZvcfOptions& options) {
  ZvcfResult z;
  z.t = t;
  z.q = q;
  Workspace ws(model);
  ws.SetParameters(params);
  ws.SetState(t, q, Eigen::VectorXd::Zero(model.nv()));
  EvaluatePosition(&ws);
  EvaluateVelocity(&ws);
  // Admissibility of the reset: J 0 + Phi_t = 0 on every row.
  std::ostringstream why;
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = model.constraints()[ci];
    for (int k = 0; k < c.rows; ++k) {
      const int r = model.constraint_row(ci) + k;
      if (std::abs(ws.vel_residual[r]) <= options.admissibility_tol) continue;
      if (why.tellp() > 0) why << "; ";
      why << "constraint '" << model.RowName(r) << "' (" << ToString(c.kind)
          << ") has "
          << (c.kind == ConstraintKind::kNonholonomic ? "a(q, t) = "
                                                      : "Phi_t = ")
          << ws.vel_residual[r];
    }
  }
  if (why.tellp() > 0) {
    std::ostringstream os;
    os << "ZVCF undefined at t = " << t << ": resetting every velocity to "
       << "zero violates the velocity-level constraint J v + Phi_t = 0 ("
       << why.str()
       << "), so the reset is not admissible in the retained constrained "
          "model. Freezing the moving boundary or resetting only relative "
          "velocities is a different intervention that must be modelled "
          "and named separately";
    z.reason = os.str();
    return z;
  }
  EvaluateDynamics(&ws);
  z.holding_load = ws.h;
  z.drift_load = -ws.h;
  ws.Bu.setZero();  // u = 0 on every channel
  KktSolver kkt(model, options.kkt);
  KktResult r;
  kkt.Solve(ws, ws.bias, &r);
  z.vdot = r.vdot;
  z.lambda = r.lambda;
  z.defined = true;
  return z;
}

const char* ToString(CounterfactualRequest::Kind kind) {
  switch (kind) {
    case CounterfactualRequest::Kind::kPointwiseZtcf:
      return "pointwise-ztcf";
    case CounterfactualRequest::Kind::kBranchedZtcf:
      return "branched-ztcf";
    case CounterfactualRequest::Kind::kZvcf:
      return "zvcf";
  }
  return "?";
}

CounterfactualRequest ParseCounterfactual(const Model& model,
                                          const std::string& spec) {
  static const char* const kForms =
      "valid forms: pointwise-ztcf[:CH[+CH...]]@T, pointwise-ztcf[:CH]@all, "
      "ztcf[:CH[+CH...]]@T (branched; alias branched-ztcf), zvcf@T, zvcf@all";
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("--counterfactual '" + spec + "': " + what +
                                "; " + kForms);
  };
  CounterfactualRequest r;
  r.spec = spec;
  const size_t at = spec.rfind('@');
  if (at == std::string::npos) fail("missing '@TIME'");
  const std::string left = spec.substr(0, at), when = spec.substr(at + 1);
  const size_t colon = left.find(':');
  const std::string kind = left.substr(0, colon);
  if (kind == "pointwise-ztcf") {
    r.kind = CounterfactualRequest::Kind::kPointwiseZtcf;
  } else if (kind == "ztcf" || kind == "branched-ztcf") {
    r.kind = CounterfactualRequest::Kind::kBranchedZtcf;
  } else if (kind == "zvcf") {
    r.kind = CounterfactualRequest::Kind::kZvcf;
  } else {
    fail("unknown kind '" + kind + "'");
  }
  if (colon != std::string::npos) {
    if (r.kind == CounterfactualRequest::Kind::kZvcf)
      fail("zvcf sets every input to zero and takes no channel list");
    std::string list = left.substr(colon + 1);
    if (list.empty()) fail("empty channel list after ':'");
    size_t start = 0;
    while (true) {
      const size_t plus = list.find('+', start);
      const std::string ch = list.substr(start, plus - start);
      if (ch.empty()) fail("empty channel name in '" + list + "'");
      InputChannelIndex(model, ch);  // throws with the valid names
      r.channels.push_back(ch);
      if (plus == std::string::npos) break;
      start = plus + 1;
    }
  }
  if (r.kind != CounterfactualRequest::Kind::kZvcf && model.num_inputs() == 0) {
    fail("model '" + model.name() +
         "' declares no input channels, so there is no input to remove");
  }
  if (when == "all") {
    if (r.kind == CounterfactualRequest::Kind::kBranchedZtcf)
      fail("a branched ZTCF needs one branch time, not 'all'");
    r.all_samples = true;
    return r;
  }
  size_t used = 0;
  double t = 0.0;
  try {
    t = std::stod(when, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (when.empty() || used != when.size() || !std::isfinite(t))
    fail("time '" + when + "' is not a finite number or 'all'");
  r.t = t;
  return r;
}

// ======================================================== momentum balance

SymmetryGenerator SymmetryGenerator::Coordinate(const Model& model, int i) {
  const int n = model.nv();
  if (i < 0 || i >= n) {
    throw std::invalid_argument("SymmetryGenerator::Coordinate: index " +
                                std::to_string(i) + " outside the " +
                                std::to_string(n) + " coordinates of '" +
                                model.name() + "'");
  }
  return SymmetryGenerator("p_" + model.coordinate_names()[i],
                           [n, i](const auto& x) {
                             using S = Scalar<decltype(x)>;
                             VecX<S> xi = VecX<S>::Zero(n);
                             xi[i] = S(1.0);
                             return xi;
                           });
}

MomentumBalanceReport MomentumBalance(const Model& model,
                                      const Eigen::VectorXd& params,
                                      const std::vector<Sample>& samples,
                                      const SymmetryGenerator& xi) {
  const auto& d = model.data();
  const int n = model.nv();
  Workspace ws(model);
  ws.SetParameters(params);
  const VecX<D1> p1 = Lift1(params);
  VecX<D2> p2(params.size());
  for (Eigen::Index i = 0; i < params.size(); ++i)
    p2[i] = D2(D1(params[i], 0.0), D1(0.0, 0.0));
  MomentumBalanceReport rep;
  rep.generator = xi.name();
  double prev_t = 0.0, prev_applied = 0.0;
  for (size_t k = 0; k < samples.size(); ++k) {
    const Sample& s = samples[k];
    if (s.vdot.size() != n) {
      throw std::invalid_argument(
          "MomentumBalance: sample at t = " + std::to_string(s.t) +
          " has no acceleration (vdot); pass samples of a run");
    }
    MomentumSample m;
    m.t = s.t;
    ws.SetState(s.t, s.q, s.v);
    EvaluateAll(&ws);
    // xi(q) and its rate Dxi v: one first-order sweep with qdot = v.
    const VecX<D1> q1 = Lift1(s.q, &s.v), v1 = Lift1(s.v);
    const D1 t1(s.t, 0.0);
    VecX<D1> g;
    xi.fn().f1(Point<D1>{q1, v1, t1, p1}, g);
    if (g.size() != n) {
      throw std::invalid_argument("symmetry generator '" + xi.name() +
                                  "' returned " + std::to_string(g.size()) +
                                  " rows, the model has " + std::to_string(n) +
                                  " velocities");
    }
    Eigen::VectorXd gen(n), rate(n);
    for (int i = 0; i < n; ++i) {
      gen[i] = g[i].v;
      rate[i] = g[i].d;
    }
    m.I = ws.momentum.dot(gen);
    // Idot: mixed derivative of L along the symmetry (inner) and along the
    // motion (outer: qdot = v, vdot = sample vdot, tdot = 1).
    VecX<D2> q2(n), v2(n);
    for (int i = 0; i < n; ++i) {
      q2[i] = D2(D1(s.q[i], 0.0), D1(s.v[i], 0.0));
      v2[i] = D2(D1(s.v[i], gen[i]), D1(s.vdot[i], rate[i]));
    }
    const D2 t2(D1(s.t, 0.0), D1(1.0, 0.0));
    m.I_rate = EvalL(d, Point<D2>{q2, v2, t2, p2}).d.d;
    // Invariance defect: derivative of L along the lifted symmetry action.
    VecX<D1> qa(n), va(n);
    for (int i = 0; i < n; ++i) {
      qa[i] = D1(s.q[i], gen[i]);
      va[i] = D1(s.v[i], rate[i]);
    }
    m.invariance_defect = EvalL(d, Point<D1>{qa, va, t1, p1}).d;
    const Eigen::VectorXd Q = ws.Bu - ws.Dv + ws.Qr;
    m.applied = Q.dot(gen);
    if (model.nc() > 0) {
      const Eigen::VectorXd Jxi = ws.J * gen;
      m.admissibility = Jxi.cwiseAbs().maxCoeff();
      if (s.lambda.size() == model.nc()) m.reaction = s.lambda.dot(Jxi);
    }
    m.balance_residual = m.I_rate - m.applied;
    if (k == 0) {
      rep.I_initial = m.I;
    } else {
      rep.impulse += 0.5 * (m.t - prev_t) * (m.applied + prev_applied);
    }
    prev_t = m.t;
    prev_applied = m.applied;
    rep.I_final = m.I;
    rep.max_balance_residual =
        std::max(rep.max_balance_residual, std::abs(m.balance_residual));
    rep.max_invariance_defect =
        std::max(rep.max_invariance_defect, std::abs(m.invariance_defect));
    rep.max_admissibility = std::max(rep.max_admissibility, m.admissibility);
    rep.samples.push_back(m);
  }
  return rep;
}

std::vector<int> CyclicCoordinates(const Model& model,
                                   const Eigen::VectorXd& params,
                                   const std::vector<Sample>& states) {
  const auto& d = model.data();
  const int n = model.nq();
  std::vector<bool> cyclic(n, true);
  const VecX<D1> p1 = Lift1(params);
  for (const Sample& s : states) {
    const VecX<D1> v1 = Lift1(s.v);
    const D1 t1(s.t, 0.0);
    for (int i = 0; i < n; ++i) {
      if (!cyclic[i]) continue;
      Eigen::VectorXd e = Eigen::VectorXd::Zero(n);
      e[i] = 1.0;
      const VecX<D1> q1 = Lift1(s.q, &e);
      const D1 l = EvalL(d, Point<D1>{q1, v1, t1, p1});
      if (!std::isfinite(l.v) || !std::isfinite(l.d)) {
        throw std::runtime_error(
            "CyclicCoordinates: the Lagrangian of '" + model.name() +
            "' is not finite at a sampled state (t = " + std::to_string(s.t) +
            "); sample states inside the model's domain");
      }
      // Exact zero: a tangent that never meets q_i stays 0.0 in AD.
      if (l.d != 0.0) cyclic[i] = false;
    }
  }
  std::vector<int> out;
  for (int i = 0; i < n; ++i)
    if (cyclic[i]) out.push_back(i);
  return out;
}

std::vector<int> CyclicCoordinatesNear(const Model& model,
                                       const Eigen::VectorXd& params,
                                       double t,
                                       const Eigen::VectorXd& q,
                                       const Eigen::VectorXd& v,
                                       int count,
                                       double spread,
                                       unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-spread, spread);
  std::vector<Sample> states;
  for (int k = 0; k < count; ++k) {
    Sample s;
    s.t = t;
    s.q = q;
    s.v = v;
    for (Eigen::Index i = 0; i < q.size(); ++i) s.q[i] += u(gen);
    for (Eigen::Index i = 0; i < v.size(); ++i) s.v[i] += u(gen);
    states.push_back(std::move(s));
  }
  return CyclicCoordinates(model, params, states);
}

}  // namespace daedalus
