#include "contact/moreau_jean.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "contact/cone_solver.hpp"
#include "contact/friction_stage.hpp"
#include "monitor/recorder.hpp"

namespace daedalus::internal {

namespace {

// One contact of the scheme: a unilateral row with its law.
struct MjContact {
  int row = 0;
  int constraint = 0, within = 0;  // its constraint and row in it
  std::string name;
  double e = 0.0, mus = 0.0, muk = 0.0;
  std::vector<int> tangential;  // its friction rows (model rows)
};

// The rows of the model by their role in the scheme.
struct MjRows {
  std::vector<MjContact> contacts;
  std::vector<int> bilateral;
  std::vector<int> friction;  // every contact's tangential rows
};

MjRows ClassifyRows(const Model& m, const Eigen::VectorXd& p) {
  MjRows out;
  const ModelData& d = m.data();
  for (int ci = 0; ci < m.num_constraints(); ++ci) {
    const ConstraintDecl& c = d.constraints[static_cast<size_t>(ci)];
    for (int r = 0; r < c.rows; ++r) {
      const int row = m.constraint_row(ci) + r;
      if (!c.unilateral) {
        (IsFrictionRows(d, c.name) ? out.friction : out.bilateral)
            .push_back(row);
        continue;
      }
      MjContact k;
      k.row = row;
      k.constraint = ci;
      k.within = r;
      k.name = m.RowName(row);
      if (c.law) {
        const ContactLaw& law = *c.law;
        k.e = law.restitution_parameter.empty()
                  ? law.restitution
                  : p[m.ParameterIndex(law.restitution_parameter)];
        k.mus = law.mu_static_parameter.empty()
                    ? law.mu_static
                    : p[m.ParameterIndex(law.mu_static_parameter)];
        k.muk = law.mu_kinetic_parameter.empty()
                    ? law.mu_kinetic
                    : p[m.ParameterIndex(law.mu_kinetic_parameter)];
        if (k.muk < 0.0 && law.mu_kinetic_parameter.empty()) k.muk = k.mus;
        if (!law.friction.empty()) {
          for (int cj = 0; cj < m.num_constraints(); ++cj) {
            const ConstraintDecl& t = d.constraints[static_cast<size_t>(cj)];
            if (t.name != law.friction) continue;
            for (int rt = 0; rt < t.rows; ++rt)
              k.tangential.push_back(m.constraint_row(cj) + rt);
          }
        }
      }
      if (!(k.e >= 0.0 && k.e <= 1.0)) {
        std::ostringstream os;
        os << "contact '" << k.name << "': restitution " << k.e
           << " outside [0, 1]";
        throw std::invalid_argument(os.str());
      }
      if (!(k.mus >= 0.0) || !(k.muk >= 0.0)) {
        std::ostringstream os;
        os << "contact '" << k.name
           << "': friction coefficient mu_static = " << k.mus
           << ", mu_kinetic = " << k.muk
           << " is negative or NaN; Coulomb's mu is >= 0";
        throw std::invalid_argument(os.str());
      }
      out.contacts.push_back(std::move(k));
    }
  }
  return out;
}

// The velocity scale of a step's local problem: its free and pre-step
// local velocities, or the speed of the motion when both are zero (a body
// at rest on its contacts under no load).
double VelocityScale(const Eigen::VectorXd& qloc, const Eigen::VectorXd& v) {
  double s = qloc.size() > 0 ? qloc.cwiseAbs().maxCoeff() : 0.0;
  if (v.size() > 0) s = std::max(s, v.cwiseAbs().maxCoeff());
  return s;
}

// The gaps of every contact at (t, q) from the constraint functions'
// values alone (no derivatives), into *gaps (one per contact).
void ContactGaps(const ModelData& d,
                 const std::vector<MjContact>& contacts,
                 const Point<double>& x,
                 Eigen::VectorXd* scratch,
                 Eigen::VectorXd* gaps) {
  gaps->resize(static_cast<Eigen::Index>(contacts.size()));
  int last = -1;
  for (size_t k = 0; k < contacts.size(); ++k) {
    const MjContact& c = contacts[k];
    if (c.constraint != last) {
      last = c.constraint;
      d.constraints[static_cast<size_t>(last)].fn.f0(x, *scratch);
    }
    (*gaps)[static_cast<Eigen::Index>(k)] = (*scratch)[c.within];
  }
}

}  // namespace

void IntegrateMoreauJean(Mechanics* mech,
                         const InitialState& x0,
                         const SimulationOptions& options,
                         Observer* observer,
                         SimulationSummary* out) {
  SimulationSummary& sum = *out;
  const Model& model = mech->model();
  const int nv = model.nv(), nc = model.nc();
  const MoreauJeanOptions& mj = options.moreau_jean;
  const MjRows rows = ClassifyRows(model, mech->parameters());
  const int ncontacts = static_cast<int>(rows.contacts.size());

  ContactReport& rep = sum.contact;
  for (const MjContact& k : rows.contacts) {
    rep.rows.push_back(k.name);
    rep.restitution.push_back(k.e);
  }
  TimeSteppingReport& ts = rep.time_stepping;
  ts.used = true;
  ts.theta = mj.theta;
  ts.step = options.step;
  ts.tolerance = mj.tolerance;
  ts.max_iterations = mj.max_iterations;

  Recorder recorder(model, &sum, observer);
  if (ncontacts > 0) recorder.SetContacts();
  const QuadLayout& layout = recorder.layout();

  // Between steps every contact and friction row is open in the Mechanics
  // (a contact is an impulse within a step, not a constraint of a mode):
  // the start's projection and the samples' drift see the bilateral rows
  // only; the contacts' gaps are watched by the penetration record.
  std::vector<int> contact_rows = rows.friction;
  for (const MjContact& k : rows.contacts) contact_rows.push_back(k.row);

  Eigen::VectorXd q = x0.q, v = x0.v;
  try {
    mech->SetOpenRows(contact_rows);
    const ProjectionResult pp = mech->ProjectPositions(
        options.t0, &q, v, options.initial_projection_tol,
        options.initial_projection_max_iter);
    if (!pp.converged) {
      std::ostringstream os;
      os << "initial state cannot be made consistent: after " << pp.iterations
         << " Gauss-Newton iterations the position residual max|Phi| of the "
            "bilateral rows is "
         << pp.residual << " (tolerance " << options.initial_projection_tol
         << ")";
      sum.error = os.str();
      return;
    }
    sum.initial_correction_position = pp.correction;
    sum.initial_correction_velocity =
        mech->ProjectVelocities(options.t0, q, &v).correction;
  } catch (const std::exception& e) {
    sum.error =
        std::string("initial state cannot be made consistent: ") + e.what();
    return;
  }

  const double h = options.step;
  const double theta = mj.theta;
  const long steps_per_output =
      std::max(1L, std::lround(options.output_step / h));
  const long nsteps =
      static_cast<long>(std::ceil((options.t_end - options.t0) / h - 1e-9));

  Eigen::VectorXd quad = Eigen::VectorXd::Zero(layout.size());
  Eigen::VectorXd g_prev(layout.size()), g(layout.size());
  const Eigen::VectorXd zero_lambda = Eigen::VectorXd::Zero(nc);
  Eigen::VectorXd lambda = zero_lambda, vdot = Eigen::VectorXd::Zero(nv);
  Eigen::VectorXd impulse_sum = Eigen::VectorXd::Zero(nc);
  Eigen::VectorXd last_p = Eigen::VectorXd::Zero(nc);  // warm start
  double impact_work_since = 0.0;
  long evals = 0;

  // A sample at (t, q, v): every contact row open (the drift is the
  // bilateral rows'); the interval's impulses and their normal work.
  // The smooth work terms (inputs, damping, other forces) by the
  // trapezoidal rule on each step, once the mechanics holds the state at
  // its end (the next step's start, or a sample); the contact rows carry
  // none (their integrands take zero multipliers).
  bool pending = false;
  double h_pending = 0.0;
  auto settle_quad = [&]() {
    if (!pending) return;
    mech->Integrands(layout, zero_lambda, 0.0, g);
    quad += 0.5 * h_pending * (g_prev + g);
    g_prev = g;
    pending = false;
  };
  auto record = [&](double t, bool first) {
    mech->SetOpenRows(contact_rows);
    mech->Evaluate(t, q, v);
    ++evals;
    settle_quad();
    if (!first && ncontacts > 0) {
      recorder.NoteImpact(impact_work_since, impulse_sum);
      impact_work_since = 0.0;
      impulse_sum.setZero();
    }
    recorder.Record(*mech, vdot, lambda, quad, 0.0, first);
  };

  Eigen::MatrixXd M, JR, Y, W;
  Eigen::VectorXd phi, u, f, gap0, gap_p, gap_m, scratch, qp, qm;
  std::vector<int> open;   // the broad phase's far contacts' rows
  std::vector<char> near;  // per contact: near enough to close
  std::vector<int> R;
  std::vector<ConeBlock> blocks;
  double t = options.t0;
  try {
    {
      // The start: no contact penetrating.
      mech->SetOpenRows({});
      mech->Evaluate(t, q, v);
      for (const MjContact& k : rows.contacts) {
        const double gap = mech->phi()[k.row];
        if (gap < -options.contact.gap_tolerance) {
          std::ostringstream os;
          os << "contact '" << k.name << "' penetrates at the start, t = " << t
             << ": gap " << gap << " below -" << options.contact.gap_tolerance
             << " (ContactOptions::gap_tolerance); start moreau-jean with "
                "every gap >= 0 (it has no position projection of contacts)";
          sum.error = os.str();
          return;
        }
      }
      mech->Integrands(layout, zero_lambda, 0.0, g_prev);
      record(t, true);
    }
    for (long k = 1; k <= nsteps; ++k) {
      if (options.stop != nullptr &&
          options.stop->load(std::memory_order_relaxed) != 0)
        throw std::runtime_error("stop requested");
      const double hk = std::min(h, options.t_end - t);
      const double t1 = (k == nsteps) ? options.t_end : options.t0 + k * h;
      // The broad phase: a contact whose gap cannot come within
      // gap_tolerance in this step takes no part in it, and its rows
      // (normal and friction) are left open, so that neither its Jacobian
      // nor its velocity is evaluated (5450 rows of 100 spheres, a few
      // hundred of them near). The exact test below, gap + h u <=
      // gap_tolerance with u = J v, needs h |u|, which the gaps at q +- h v
      // give to O(h^3) without J: h u = (g+ - g-) / 2. A contact is near
      // when gap - (|g+ - gap| + |g- - gap|) <= gap_tolerance: twice the
      // estimate of h |u|, which also bounds the curvature terms. A far
      // contact then has gap + h u > gap_tolerance + h |u| - O(h^3): it
      // would not have been active. The near set only saves evaluations;
      // the step is the same (MoreauJeanOptions::broad_phase false
      // evaluates every row: MoreauJean.BroadPhaseKeepsTheRunBitwise).
      const Eigen::VectorXd& prm = mech->parameters();
      ContactGaps(model.data(), rows.contacts, Point<double>{q, v, t, prm},
                  &scratch, &gap0);
      open.clear();
      near.assign(static_cast<size_t>(ncontacts), 1);
      if (mj.broad_phase && ncontacts > 0) {
        qp = q + hk * v;
        qm = q - hk * v;
        ContactGaps(model.data(), rows.contacts, Point<double>{qp, v, t1, prm},
                    &scratch, &gap_p);
        ContactGaps(model.data(), rows.contacts, Point<double>{qm, v, t1, prm},
                    &scratch, &gap_m);
        for (int c = 0; c < ncontacts; ++c) {
          const double g0 = gap0[c];
          const double reach =
              std::abs(gap_p[c] - g0) + std::abs(gap_m[c] - g0);
          if (g0 - reach <= options.contact.gap_tolerance) continue;
          near[static_cast<size_t>(c)] = 0;
          const MjContact& k = rows.contacts[static_cast<size_t>(c)];
          open.push_back(k.row);
          open.insert(open.end(), k.tangential.begin(), k.tangential.end());
        }
        std::sort(open.begin(), open.end());
      }
      // The rows at the step's start (t, q, v-); the scheme reads no
      // acceleration bias b (one second-order sweep per constraint).
      mech->SetOpenRows(open);
      EvalRequest no_bias;
      no_bias.bias = false;
      mech->Evaluate(t, q, v, no_bias);
      ++evals;
      settle_quad();
      M = mech->DenseMass();
      phi = mech->phi();
      u = mech->vel_residual();
      f = mech->AppliedForce();
      const Eigen::LLT<Eigen::MatrixXd> llt(M);
      if (llt.info() != Eigen::Success)
        throw std::runtime_error(
            "the mass matrix is not positive definite "
            "at t = " +
            std::to_string(t));
      const Eigen::VectorXd vfree = v + hk * llt.solve(f);
      // The active rows: the bilateral ones, then each contact whose gap
      // predicted at the step's end is within gap_tolerance of 0 or below
      // (normal row, then its tangential rows when it has friction). The
      // tolerance keeps a touching contact whose gap is a round-off above
      // 0 in the impulse problem (a 5-ball cradle's last gap starts at
      // +1.4e-17 m); an active contact that separates takes no impulse.
      R = rows.bilateral;
      blocks.clear();
      for (size_t b = 0; b < R.size(); ++b)
        blocks.push_back({false, static_cast<int>(b), 1, 0.0, 0.0});
      std::vector<const MjContact*> active;
      for (int ci = 0; ci < ncontacts; ++ci) {
        const MjContact& c = rows.contacts[static_cast<size_t>(ci)];
        if (-gap0[ci] > ts.penetration_max) {
          ts.penetration_max = -gap0[ci];
          ts.t_penetration_max = t;
          ts.row_penetration_max = c.name;
        }
        if (!near[static_cast<size_t>(ci)]) continue;
        const double gap = phi[c.row];
        if (gap + hk * u[c.row] > options.contact.gap_tolerance) continue;
        active.push_back(&c);
        ConeBlock b;
        b.contact = true;
        b.start = static_cast<int>(R.size());
        R.push_back(c.row);
        const bool friction = c.mus > 0.0 || c.muk > 0.0;
        if (friction)
          for (int rt : c.tangential) R.push_back(rt);
        b.size = static_cast<int>(R.size()) - b.start;
        b.mu_static = c.mus;
        b.mu_kinetic = c.muk;
        blocks.push_back(b);
      }
      Eigen::VectorXd vnew = vfree;
      Eigen::VectorXd P_all = Eigen::VectorXd::Zero(nc);
      const int m = static_cast<int>(R.size());
      if (m > 0) {
        mech->JacobianRows(R, &JR);
        Y = llt.solve(JR.transpose());  // M^-1 J_R'
        W.noalias() = JR * Y;
        W = 0.5 * (W + W.transpose()).eval();
        ConeProblem prob;
        prob.W = W;
        prob.q = JR * (vfree - v);
        Eigen::VectorXd warm(m), uminus(m);
        for (int i = 0; i < m; ++i) {
          const int row = R[static_cast<size_t>(i)];
          prob.q[i] += u[row];
          uminus[i] = u[row];
          warm[i] = last_p[row];
        }
        // Newton's law: u_n+ + e u_n- >= 0 (an approaching u_n- only).
        size_t ai = 0;
        for (const ConeBlock& b : blocks) {
          if (!b.contact) continue;
          prob.q[b.start] += active[ai++]->e * std::min(uminus[b.start], 0.0);
        }
        prob.blocks = blocks;
        const double scale = VelocityScale(prob.q, uminus);
        const ConeSolution sol =
            SolveCone(prob, warm, scale, mj.tolerance, mj.max_iterations);
        ++ts.solves;
        ts.iterations += sol.iterations;
        ts.iterations_max = std::max(ts.iterations_max, sol.iterations);
        ts.active_max =
            std::max(ts.active_max, static_cast<int>(active.size()));
        if (!sol.converged) {
          ts.stalled = true;
          ts.t_stalled = t;
          ts.stalled_residual = sol.residual;
          ts.stalled_iterations = sol.iterations;
          std::ostringstream os;
          os << "the contact solver (projected Gauss-Seidel on "
             << active.size() << " active contacts and "
             << rows.bilateral.size()
             << " bilateral rows) stalled in the step from t = " << t
             << ": residual " << sol.residual << " above --pgs-tol "
             << mj.tolerance << " after " << sol.iterations
             << " sweeps (--pgs-max-iter " << mj.max_iterations
             << "); the run ends at its last step (the samples so far are "
                "kept). Raise --pgs-max-iter, or reduce --step";
          // The state the stalled step started from, as the last sample.
          if (sum.samples == 0 || t > sum.final.t) record(t, false);
          sum.error = os.str();
          sum.stats.rhs_evals = evals;
          return;
        }
        ts.residual_max = std::max(ts.residual_max, sol.residual);
        vnew = vfree + Y * sol.P;
        // The impulses' work: P_i (J_i v- + J_i v+) / 2 per row, exact for
        // an impulse at fixed configuration.
        const Eigen::VectorXd jm = JR * v, jp = JR * vnew;
        size_t bi = 0;
        for (int i = 0; i < m; ++i) {
          const int row = R[static_cast<size_t>(i)];
          const double w = 0.5 * sol.P[i] * (jm[i] + jp[i]);
          P_all[row] = sol.P[i];
          while (bi + 1 < blocks.size() && blocks[bi + 1].start <= i) ++bi;
          const bool normal = blocks[bi].contact && blocks[bi].start == i;
          if (normal) {
            impact_work_since += w;
            ts.impulse_work += w;
          } else {
            quad[layout.constraint() + row] += w;
            if (blocks[bi].contact) ts.friction_impulse_work += w;
          }
        }
        impulse_sum += P_all;
      }
      last_p = P_all;
      vdot = (vnew - v) / hk;
      lambda = P_all / hk;
      q += hk * (theta * vnew + (1.0 - theta) * v);
      v = vnew;
      t = t1;
      if (!q.allFinite() || !v.allFinite()) {
        std::ostringstream os;
        os << "the state became non-finite at t = " << t << " after step " << k
           << " of h = " << h << "; reduce --step";
        throw std::runtime_error(os.str());
      }
      pending = true;
      h_pending = hk;
      sum.stats.steps = k;
      if (k % steps_per_output == 0 || k == nsteps) record(t, false);
    }
    // The last step's penetration.
    mech->SetOpenRows({});
    mech->Evaluate(t, q, v);
    for (const MjContact& c : rows.contacts) {
      const double gap = mech->phi()[c.row];
      if (-gap > ts.penetration_max) {
        ts.penetration_max = -gap;
        ts.t_penetration_max = t;
        ts.row_penetration_max = c.name;
      }
    }
    mech->SetOpenRows(contact_rows);
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    sum.error = std::string("moreau-jean: ") + e.what();
    sum.stats.rhs_evals = evals;
    return;
  }
  rep.impact_work = ts.impulse_work;
  sum.stats.rhs_evals = evals;
  sum.ok = true;
}

}  // namespace daedalus::internal
