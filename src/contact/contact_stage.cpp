#include "contact/contact_stage.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "contact/contact_problems.hpp"
#include "contact/friction_stage.hpp"
#include "contact/impact_map.hpp"
#include "contact/impulse.hpp"
#include "contact/lcp.hpp"
#include "contact/switch_counter.hpp"
#include "contact/witness_jump.hpp"
#include "contact/zeno.hpp"
#include "formulation/support.hpp"

namespace daedalus::internal {

namespace {

class ContactStage final : public ModeSwitcher {
 public:
  ContactStage(Mechanics* mech,
               const SimulationOptions& o,
               SimulationSummary* sum)
      : mech_(mech), opt_(o), co_(o.contact), sum_(sum) {
    const Model& m = mech->model();
    const ModelData& d = m.data();
    const Eigen::VectorXd& p = mech->parameters();
    for (int ci = 0; ci < m.num_constraints(); ++ci) {
      const ConstraintDecl& c = d.constraints[static_cast<size_t>(ci)];
      for (int r = 0; r < c.rows; ++r) {
        const int row = m.constraint_row(ci) + r;
        if (!c.unilateral) {
          // A contact's friction rows are the friction stage's
          // (friction_stage.hpp): open here, in no LCP.
          (IsFrictionRows(d, c.name) ? friction_ : bilateral_).push_back(row);
          continue;
        }
        double e = 0.0;
        int e_param = -1;
        if (c.law) {
          e = c.law->restitution;
          if (!c.law->restitution_parameter.empty()) {
            e_param = m.ParameterIndex(c.law->restitution_parameter);
            e = p[e_param];
          }
        }
        if (!(e >= 0.0 && e <= 1.0)) {
          std::ostringstream os;
          os << "contact '" << m.RowName(row) << "': restitution " << e
             << " (parameter '" << c.law->restitution_parameter
             << "') outside [0, 1]";
          throw std::invalid_argument(os.str());
        }
        rows_.push_back(row);
        constraint_.push_back(ci);
        within_.push_back(r);
        e_.push_back(e);
        e_param_.push_back(e_param);
        names_.push_back(m.RowName(row));
        // Friction at impacts: contacts with mu_kinetic > 0, planar (one
        // tangential row) or on a 3D cone (two).
        std::vector<int> tr;
        double mu = 0.0;
        if (c.law && !c.law->friction.empty()) {
          const FrictionLaw f = ResolveFriction(m, c.name, *c.law, p);
          if (f.mu_kinetic > 0.0) {
            tr = f.rows;
            mu = f.mu_kinetic;
          }
        }
        trows_.push_back(tr);
        mu_.push_back(mu);
        poisson_.push_back(c.law && c.law->impact_law == ImpactLaw::kPoisson);
      }
    }
    const int n = static_cast<int>(rows_.size());
    closed_.assign(static_cast<size_t>(n), false);
    offset_.assign(static_cast<size_t>(n), 0.0);
    impact_times_.resize(static_cast<size_t>(n));
    ContactReport& rep = sum_->contact;
    rep.event_driven = true;
    rep.rows = names_;
    rep.restitution = e_;
  }

  // ---- ModeRoots
  int num_roots() const override { return static_cast<int>(rows_.size()); }
  std::vector<int> RootDirections() const override {
    // Both witnesses fall through zero: a gap closing, a multiplier going.
    return std::vector<int>(rows_.size(), -1);
  }
  void EvaluateRoots(const Mechanics& mech,
                     const Eigen::Ref<const Eigen::VectorXd>& lambda,
                     double* g) const override {
    const Eigen::VectorXd gaps = Gaps(mech.point());
    for (size_t k = 0; k < rows_.size(); ++k)
      g[k] =
          (closed_[k] ? lambda[rows_[k]] : gaps[static_cast<Eigen::Index>(k)]) -
          offset_[k];
  }

  // A closed contact's witness is its multiplier; an open one's, its gap.
  bool NeedsMultipliers() const override {
    return std::find(closed_.begin(), closed_.end(), true) != closed_.end();
  }

  // ---- ModeSwitcher
  bool Release(double t,
               const Eigen::VectorXd& q,
               const Eigen::VectorXd& v,
               const std::vector<int>& rows) override {
    const Eigen::VectorXd gaps =
        Gaps(Point<double>{q, v, t, mech_->parameters()});
    ContactEvent ev;
    ev.kind = "release";
    ev.t = t;
    std::vector<int> open;
    for (size_t k = 0; k < rows_.size(); ++k) {
      if (closed_[k] &&
          std::find(rows.begin(), rows.end(), rows_[k]) != rows.end()) {
        closed_[k] = false;
        // At zero normal velocity: re-armed as a release in Decide.
        offset_[k] = gaps[static_cast<Eigen::Index>(k)];
        ev.rows.push_back(names_[k]);
      }
      if (closed_[k]) ev.closed.push_back(names_[k]);
      if (!closed_[k]) open.push_back(rows_[k]);
    }
    if (ev.rows.empty()) return false;
    SetOpen(open);
    BookContactEvent(ev, closed_, sum_);
    return true;
  }

  void Start(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) override {
    const AllRows x = Evaluate(t, *q, *v);
    std::vector<bool> released(rows_.size(), false);
    for (size_t k = 0; k < rows_.size(); ++k) {
      const double gap = x.phi[rows_[k]];
      if (gap >= -co_.gap_tolerance) continue;
      if (!co_.project_penetration) {
        std::ostringstream os;
        os << "contact '" << names_[k] << "' penetrates at the start, t = " << t
           << ": gap " << gap << " below -" << co_.gap_tolerance
           << " (ContactOptions::gap_tolerance); start the run with every "
              "gap >= 0, or pass --project-penetration to project the state "
              "onto the closed contact (the correction is reported)";
        throw std::runtime_error(os.str());
      }
      forced_.push_back(static_cast<int>(k));
    }
    ContactEvent ev;
    ev.kind = "start";
    Decide(t, x, released, q, v, &ev);
    forced_.clear();
    BookContactEvent(ev, closed_, sum_);
  }

  bool Fired(const int* found) const override {
    for (size_t k = 0; k < rows_.size(); ++k)
      if (found[k] != 0) return true;
    return false;
  }

  ModeRestart Switch(double t,
                     const Eigen::VectorXd& q,
                     const Eigen::VectorXd& v,
                     const int* found) override {
    const AllRows x = Evaluate(t, q, v);
    ModeRestart out;
    out.q = q;
    out.v = v;
    // An open contact's gap crossing zero while it separates is below the
    // integrator's resolution (a gap within atol of zero after a bounce
    // too small to resolve): its witness is re-armed where it is, and
    // nothing switches.
    const double utol = VelocityTolerance(x, v);
    bool real = false;
    last_ = SwitchLinearization{};
    for (size_t k = 0; k < rows_.size(); ++k) {
      if (found[k] == 0) continue;
      if (!closed_[k] && x.u[rows_[k]] > utol) {
        // RearmDepth below where it is: noise cannot make it chatter.
        offset_[k] = x.phi[rows_[k]] - Rearm(x, k, q);
        ++sum_->contact.spurious_roots;
      } else {
        real = true;
        last_.witnesses.push_back(static_cast<int>(k));
      }
    }
    if (!real) return NoSwitch(t, &out);
    last_.t = t;
    last_.q = q;
    last_.v = v;
    last_.witness_closed = closed_[static_cast<size_t>(last_.witnesses[0])];
    for (size_t k = 0; k < rows_.size(); ++k)
      if (!closed_[k]) last_.open_before.push_back(rows_[k]);
    std::vector<bool> released(rows_.size(), false);
    ContactEvent ev;
    ev.kind = "close";
    for (size_t k = 0; k < rows_.size(); ++k) {
      if (found[k] == 0) continue;
      ev.rows.push_back(names_[k]);
      if (closed_[k]) {
        released[k] = true;
        ev.kind = "release";
      }
    }
    const std::vector<bool> was_closed = closed_;
    const std::vector<double> was_offset = offset_;
    impact_ = ImpactLinearization{};
    const bool impact = Decide(t, x, released, &out.q, &out.v, &ev);
    if (!impact && closed_ == was_closed) {
      last_ = SwitchLinearization{};
      // Nothing switches (a grazing witness: a gap touching zero with
      // zero normal velocity and acceleration, a multiplier touching zero
      // and staying): the witnesses that fired are re-armed where they
      // are and the integration goes on, as for a spurious root.
      offset_ = was_offset;
      std::vector<int> open;
      for (size_t k = 0; k < rows_.size(); ++k)
        if (!closed_[k]) open.push_back(rows_[k]);
      SetOpen(open);
      // The closed contacts' multipliers here (the reported, ideal ones).
      mech_->Evaluate(t, q, v);
      KktResult r;
      mech_->SolveKkt(mech_->bias(), &r);
      for (size_t k = 0; k < rows_.size(); ++k) {
        if (found[k] == 0) continue;
        offset_[k] =
            closed_[k] ? r.lambda[rows_[k]] : x.phi[rows_[k]] - Rearm(x, k, q);
        ++sum_->contact.spurious_roots;
      }
      out.q = q;
      out.v = v;
      return NoSwitch(t, &out);
    }
    CountAtInstant(t, ev.rows);
    mech_->Evaluate(t, out.q, out.v);
    const double e_plus = mech_->energy();
    ev.energy_change = e_plus - x.energy;
    out.energy_change = ev.energy_change;
    out.impulse =
        ev.impulse.size() > 0 ? ev.impulse : Eigen::VectorXd::Zero(mech_->nc());
    out.restart = true;
    out.fine_start = fine_;
    last_.valid = true;
    last_.impact = impact_;
    last_.record = sum_->events.size();
    BookContactEvent(ev, closed_, sum_);
    return out;
  }

  std::unique_ptr<EventJump> Jump(const FlowPoint& minus,
                                  const FlowPoint& plus) override {
    if (!last_.valid) return nullptr;  // nothing switched
    if (!last_.impact.refused.empty()) Refuse(last_.impact.refused);
    auto j = std::make_unique<EventJump>(Linearize(minus));
    if (j->grazing())
      Refuse("its witness crosses zero grazing (rate " +
             std::to_string(j->rate()) +
             "), so the switch time is not differentiable");
    // The restart's projection onto the new mode, linearized there.
    SaltationAfterSwitch(mech_, plus, j.get());
    return j;
  }

  Eigen::MatrixXd SensitivitiesAfter(const FlowPoint& minus,
                                     const FlowPoint& plus,
                                     const Eigen::MatrixXd& s_minus,
                                     const std::vector<Eigen::VectorXd>& dirs,
                                     Eigen::VectorXd* tau) override {
    const std::unique_ptr<EventJump> j = Jump(minus, plus);
    EventRecord* rec = last_.record < sum_->events.size()
                           ? &sum_->events[last_.record]
                           : nullptr;
    return SensitivitiesAcross(j.get(), s_minus, dirs, tau, rec);
  }

  void AtSample(const Mechanics& mech, const Eigen::VectorXd& lambda) override {
    const Eigen::VectorXd gaps = Gaps(mech.point());
    ContactReport& rep = sum_->contact;
    for (size_t k = 0; k < rows_.size(); ++k) {
      const double gk = gaps[static_cast<Eigen::Index>(k)];
      // Re-armed witnesses: dropped once clear of their restart value.
      const double g = closed_[k] ? lambda[rows_[k]] : gk;
      if (offset_[k] != 0.0 && std::abs(g) > 2.0 * std::abs(offset_[k]))
        offset_[k] = 0.0;
      if (closed_[k]) {
        const double l = lambda[rows_[k]];
        if (!rep.any_closed || l < rep.min_closed_lambda) {
          rep.min_closed_lambda = l;
          rep.t_min_closed_lambda = mech.t();
          rep.row_min_closed_lambda = names_[k];
        }
        rep.any_closed = true;
      } else {
        // An open contact this deep has passed through an impact that no
        // witness saw (a rebound below the integrator's resolution):
        // never reported as a plausible run.
        const double depth = 1e3 * std::max(co_.gap_tolerance, opt_.atol);
        if (gk < -depth) MissedImpact(mech.t(), k, gk, depth);
        if (!rep.any_open || gk < rep.min_open_gap) {
          rep.min_open_gap = gk;
          rep.t_min_open_gap = mech.t();
          rep.row_min_open_gap = names_[k];
        }
        rep.any_open = true;
      }
    }
  }

 private:
  [[noreturn]] void MissedImpact(double t,
                                 size_t k,
                                 double gap,
                                 double depth) const {
    std::ostringstream os;
    os << "contact '" << names_[k] << "' is open with gap " << gap
       << " at t = " << t << ", deeper than " << depth
       << " (1000 x max(gap tolerance, atol)): an impact was missed, "
          "its rebound too small for the integrator to resolve; raise "
          "--zeno-velocity (a rebound at speed v rises v^2 / (2 a)) or "
          "tighten --atol";
    throw std::runtime_error(os.str());
  }

  // Never a hang: a mode that does not settle at one instant (the
  // contacts switching back and forth, or their witnesses re-armed again
  // and again, at the same time) ends the run.
  void CountAtInstant(double t, const std::vector<std::string>& rows) {
    if (!switches_.Exceeded(t)) return;
    std::ostringstream os;
    os << "contact switches do not settle at t = " << t << ": the contacts";
    for (const std::string& r : rows) os << " '" << r << "'";
    os << " switched " << switches_.count()
       << " times at this instant (chattering between modes); loosen "
          "--gap-tolerance or raise --zeno-velocity";
    throw std::runtime_error(os.str());
  }

  // A root that switches nothing: the integrator restarts from the same
  // state with the re-armed witnesses (SUNDIALS refuses to go on from a
  // root function that is zero at its root; a restart watches it from the
  // sign it takes next).
  ModeRestart NoSwitch(double t, ModeRestart* out) {
    std::vector<std::string> fired;
    CountAtInstant(t, fired);
    out->restart = true;
    out->energy_change = 0.0;
    out->impulse = Eigen::VectorXd::Zero(mech_->nc());
    return *out;
  }

  void SetOpen(std::vector<int> open) {
    open.insert(open.end(), friction_.begin(), friction_.end());
    mech_->SetOpenRows(open);
  }

  // The raw gaps of every contact (the constraint functions, whatever the
  // mode: an open row's Phi is masked in the workspace).
  Eigen::VectorXd Gaps(const Point<double>& x) const {
    const ModelData& d = mech_->model().data();
    Eigen::VectorXd out(static_cast<Eigen::Index>(rows_.size()));
    int last = -1;
    for (size_t k = 0; k < rows_.size(); ++k) {
      if (constraint_[k] != last) {
        last = constraint_[k];
        d.constraints[static_cast<size_t>(last)].fn.f0(x, scratch_);
      }
      out[static_cast<Eigen::Index>(k)] = scratch_[within_[k]];
    }
    return out;
  }

  // Every row evaluated at (t, q, v), open contacts included.
  AllRows Evaluate(double t,
                   const Eigen::VectorXd& q,
                   const Eigen::VectorXd& v) {
    const std::vector<int> open = mech_->open_rows();
    mech_->SetOpenRows({});
    mech_->Evaluate(t, q, v);
    AllRows x;
    x.M = mech_->DenseMass();
    x.J = mech_->DenseJacobian();
    x.phi = mech_->phi();
    x.u = mech_->vel_residual();
    x.b = mech_->bias();
    x.f = mech_->AppliedForce();
    x.energy = mech_->energy();
    mech_->SetOpenRows(open);
    return x;
  }

  double Rearm(const AllRows& x, size_t k, const Eigen::VectorXd& q) const {
    return RearmDepth(x, rows_[k], mech_->model(), opt_, q, co_.gap_tolerance);
  }
  double VelocityTolerance(const AllRows& x, const Eigen::VectorXd& v) const {
    const double scale = x.u.size() > 0 ? x.u.cwiseAbs().maxCoeff() : 0.0;
    return std::max(
        {kZenoVelocityFraction * co_.zeno_velocity, kVelocityRoundOff * scale,
         NormalVelocityResolution(x.J, rows_, v, opt_.rtol, opt_.atol)});
  }

  [[noreturn]] void NoSolution(const char* which,
                               double t,
                               const std::vector<int>& cand,
                               const LcpSolution& s) const {
    std::ostringstream os;
    os << "the " << which << " LCP of the contacts";
    for (int k : cand) os << " '" << names_[static_cast<size_t>(k)] << "'";
    os << " at t = " << t << " has no solution (" << s.method << ", best "
       << "complementarity residual " << s.residual << " above " << s.tolerance
       << "): no mode of these contacts is consistent (a Painleve-type "
          "configuration, or contacts whose normals contradict the "
          "bilateral constraints)";
    throw std::runtime_error(os.str());
  }

  // Steps 1-4 of the file comment at (t, q, v) with every row evaluated in
  // x; `released`: contacts whose multiplier has just reached zero (ties
  // of the acceleration LCP open them). Writes the consistent restart into
  // (q, v) and the switch into ev.
  // Returns true when an impact changed the velocities.
  bool Decide(double t,
              const AllRows& x,
              const std::vector<bool>& released,
              Eigen::VectorXd* q,
              Eigen::VectorXd* v,
              ContactEvent* ev) {
    ev->t = t;
    fine_ = false;
    // 1. The contacts that touch.
    std::vector<int> touch;
    for (size_t k = 0; k < rows_.size(); ++k) {
      const bool forced = std::find(forced_.begin(), forced_.end(),
                                    static_cast<int>(k)) != forced_.end();
      if (closed_[k] || forced || x.phi[rows_[k]] <= co_.gap_tolerance ||
          std::find(ev->rows.begin(), ev->rows.end(), names_[k]) !=
              ev->rows.end())
        touch.push_back(static_cast<int>(k));
    }
    std::vector<int> trows;
    for (int k : touch) trows.push_back(rows_[static_cast<size_t>(k)]);
    const Eigen::Index m = static_cast<Eigen::Index>(touch.size());
    Eigen::VectorXd u(m);
    for (Eigen::Index i = 0; i < m; ++i)
      u[i] = x.u[trows[static_cast<size_t>(i)]];
    const double utol = VelocityTolerance(x, *v);
    // 2. The impact, when a touching contact approaches. Accumulation: a
    // contact that strikes slower than an explicit zeno_velocity, or whose
    // rebound would fall below the integrator's resolution (zeno.hpp),
    // restitutes with e = 0 (the impact solved again without its rebound)
    // and closes for good.
    Eigen::VectorXd u_plus = u;
    AllRows after = x;
    bool impact = false;
    std::vector<bool> zeno(touch.size(), false), below(touch.size(), false);
    std::vector<double> margin(touch.size(), 0.0);
    for (Eigen::Index i = 0; i < m; ++i) {
      impact |= u[i] < -utol;
      zeno[static_cast<size_t>(i)] = u[i] < -utol && u[i] >= -co_.zeno_velocity;
    }
    if (impact) {
      const Eigen::VectorXd v_minus = *v;
      for (int pass = 0; pass < 2; ++pass) {  // again without those rebounds
        *v = v_minus;
        u_plus = Strike(t, x, touch, utol, zeno, v, ev);
        after = Evaluate(t, *q, *v);
        margin = ReboundMargins(after, trows, bilateral_, u_plus, utol,
                                mech_->model(), opt_, t, *q);
        bool again = false;
        for (size_t i = 0; i < touch.size(); ++i) {
          const Eigen::Index ii = static_cast<Eigen::Index>(i);
          below[i] = u_plus[ii] > utol && margin[i] <= 1.0;
          const bool slow = u[ii] < -utol && below[i] &&
                            e_[static_cast<size_t>(touch[i])] > 0.0;
          again |= slow && !zeno[i];
          zeno[i] = zeno[i] || slow;
        }
        if (!again) break;
      }
      // The accumulation point from the impacts with well resolved
      // rebounds; a fine restart after a short one (zeno.hpp).
      for (size_t i = 0; i < touch.size(); ++i) {
        if (!(u[static_cast<Eigen::Index>(i)] < -utol)) continue;
        fine_ |= !zeno[i] && margin[i] > 1.0 && margin[i] < kFineStartMargin;
        const double ta = AccumulationPoint(
            &impact_times_[static_cast<size_t>(touch[i])], t,
            !zeno[i] && margin[i] >= kExtrapolationMargin, zeno[i]);
        if (ta >= 0.0) sum_->contact.t_accumulation = ta;
      }
    }
    // 3. Which of the touching contacts that do not separate close.
    std::vector<int> cand;
    std::vector<bool> prefer_open;
    for (Eigen::Index i = 0; i < m; ++i) {
      // A touching contact kicked off by the impulses of the others
      // (through the bodies' coupling) on a rebound below the integrator's
      // resolution (zeno.hpp), or one that did not approach kicked off
      // slower than an explicit zeno_velocity: as at an accumulation, it
      // stays a candidate, and closing it projects its u+ away, which
      // only removes kinetic energy. Left open, its witness met the gap
      // again at the integrator's noise and was re-armed gap_tolerance
      // below, so each bounce sank gap_tolerance and the projection at its
      // next impact gave the energy back: two joint limits of a humanoid
      // (neck and elbow) kicked each other off forever (1e5 impacts per
      // second of 4e-6 and 4e-4 rad/s, the energy rising 2e-10 J each).
      const bool kicked_slow =
          impact && (below[static_cast<size_t>(i)] ||
                     (u[i] >= -utol && u_plus[i] <= co_.zeno_velocity));
      if (u_plus[i] > utol && !kicked_slow) continue;
      const int k = touch[static_cast<size_t>(i)];
      cand.push_back(k);
      prefer_open.push_back(released[static_cast<size_t>(k)]);
    }
    const std::vector<bool> was_closed = closed_;
    std::fill(closed_.begin(), closed_.end(), false);
    std::fill(offset_.begin(), offset_.end(), 0.0);
    if (!cand.empty()) {
      std::vector<int> crows;
      for (int k : cand) crows.push_back(rows_[static_cast<size_t>(k)]);
      const ContactOperator opc(after, crows, bilateral_);
      const LcpSolution s =
          SolveLcp(opc.A(), opc.FreeAcceleration(after), prefer_open);
      if (!s.solved) NoSolution("acceleration", t, cand, s);
      if (!impact) {
        ev->lcp_size = static_cast<int>(cand.size());
        ev->lcp_residual = s.residual;
      }
      for (size_t i = 0; i < cand.size(); ++i) {
        const size_t k = static_cast<size_t>(cand[i]);
        const Eigen::Index ii = static_cast<Eigen::Index>(i);
        // A tie (lambda and Phi'' both zero to the tolerance) closes the
        // contact unless its multiplier has just reached zero.
        const bool tie = s.z[ii] <= s.tolerance && s.w[ii] <= s.tolerance;
        const bool forced = std::find(forced_.begin(), forced_.end(),
                                      static_cast<int>(k)) != forced_.end();
        closed_[k] = s.z[ii] > s.tolerance || (tie && !released[k]) || forced;
        // A contact released with zero normal velocity separates at third
        // order: its gap witness is re-armed at its restart value.
        if (!closed_[k]) offset_[k] = after.phi[rows_[k]];
      }
    }
    for (size_t k = 0; k < rows_.size(); ++k)
      if (closed_[k]) ev->closed.push_back(names_[k]);
    // 4. The mode, and the restart projected onto it.
    std::vector<int> open;
    for (size_t k = 0; k < rows_.size(); ++k)
      if (!closed_[k]) open.push_back(rows_[k]);
    SetOpen(open);
    const ProjectionResult pp =
        mech_->ProjectPositions(t, q, *v, opt_.initial_projection_tol,
                                opt_.initial_projection_max_iter);
    if (!pp.converged) {
      std::ostringstream os;
      os << "contact switch at t = " << t
         << ": projecting the state onto the closed contacts did not "
            "converge (residual "
         << pp.residual << " after " << pp.iterations << " iterations)";
      throw std::runtime_error(os.str());
    }
    // A closed contact with planar friction whose slip the impact left at
    // zero (it sticks, docs/friction.md) keeps it through the velocity
    // projection: projecting a kicked-off contact back onto its normal
    // alone would leave a slip of the order of zeno_velocity at the
    // others (a rocking block coming to rest on both corners).
    // Only those independent of the closed rows (IndependentRows).
    std::vector<int> closed_rows = bilateral_, sticking;
    for (size_t k = 0; k < rows_.size(); ++k) {
      if (!closed_[k]) continue;
      closed_rows.push_back(rows_[k]);
      if (!trows_[k].empty() && std::abs(after.u[trows_[k][0]]) <= utol)
        sticking.push_back(trows_[k][0]);
    }
    sticking = IndependentRows(after.J, closed_rows, sticking);
    std::vector<int> vopen = open;
    for (int r : friction_)
      if (std::find(sticking.begin(), sticking.end(), r) == sticking.end())
        vopen.push_back(r);
    mech_->SetOpenRows(vopen);
    const ProjectionResult pv = mech_->ProjectVelocities(t, *q, v);
    SetOpen(open);
    ev->correction_position = pp.correction;
    ev->correction_velocity = pv.correction;
    return impact;
  }

  // Step 2 of Decide: the impulse problem (impulse.hpp) over the
  // touching contacts `touch`, with the tangential rows of those with
  // planar friction, e = 0 for those closed by accumulation (`zeno`);
  // v += the impact's velocity change, the impact's map into impact_.
  // Returns the contacts' normal velocities after it.
  Eigen::VectorXd Strike(double t,
                         const AllRows& x,
                         const std::vector<int>& touch,
                         double utol,
                         const std::vector<bool>& zeno,
                         Eigen::VectorXd* v,
                         ContactEvent* ev) {
    ev->kind = "impact";
    ev->zeno.clear();
    impact_ = ImpactLinearization{};
    const Eigen::Index m = static_cast<Eigen::Index>(touch.size());
    std::vector<int> rows;  // the normals, then the tangential rows
    for (int k : touch) rows.push_back(rows_[static_cast<size_t>(k)]);
    ImpulseProblem ip;
    ip.tangent.assign(static_cast<size_t>(m), -1);
    ip.tangent2.assign(static_cast<size_t>(m), -1);
    Eigen::VectorXd u(m);
    std::string cone, poisson;  // names: contacts with a cone, Poisson's
    for (Eigen::Index i = 0; i < m; ++i) {
      const size_t k = static_cast<size_t>(touch[static_cast<size_t>(i)]);
      u[i] = x.u[rows_[k]];
      const bool slow = zeno[static_cast<size_t>(i)];
      const double e = u[i] < -utol && !slow ? e_[k] : 0.0;
      if (slow) ev->zeno.push_back(names_[k]);
      if (trows_[k].size() == 2) cone += " '" + names_[k] + "'";
      if (poisson_[k]) poisson += " '" + names_[k] + "'";
      ip.e.push_back(e);
      ip.poisson.push_back(poisson_[k]);
      ip.mu.push_back(mu_[k]);
      if (trows_[k].empty()) continue;
      ip.tangent[static_cast<size_t>(i)] = static_cast<int>(rows.size());
      rows.push_back(trows_[k][0]);
      if (trows_[k].size() < 2) continue;
      ip.tangent2[static_cast<size_t>(i)] = static_cast<int>(rows.size());
      rows.push_back(trows_[k][1]);
    }
    if (!cone.empty() && !poisson.empty()) RefusePoissonCone(t, cone, poisson);
    const ContactOperator op(x, rows, bilateral_);
    ip.A = op.A();
    ip.u.resize(static_cast<Eigen::Index>(rows.size()));
    for (size_t j = 0; j < rows.size(); ++j)
      ip.u[static_cast<Eigen::Index>(j)] = x.u[rows[j]];
    const ImpulseSolution s = SolveImpulse(ip);
    if (!s.solved) NoSolution("impulse", t, touch, s.last);
    ev->lcp_size = s.lcp_size;
    ev->lcp_residual = s.residual;
    // The impact map on its active set (SensitivitiesAfter).
    impact_.happened = true;
    impact_.dv = op.WJt() * s.P;
    const double tol = s.last.tolerance;
    int active = 0;
    std::string frictional;
    for (Eigen::Index i = 0; i < m; ++i) {
      if (!(s.P[i] > tol)) continue;
      const size_t k = static_cast<size_t>(touch[static_cast<size_t>(i)]);
      const bool restitutes = u[i] < -utol && !zeno[static_cast<size_t>(i)];
      impact_.rows.push_back(rows_[k]);
      impact_.impulse.push_back(s.P[i]);
      impact_.e.push_back(restitutes ? e_[k] : 0.0);
      impact_.e_param.push_back(restitutes ? e_param_[k] : -1);
      ++active;
      if (ip.tangent[static_cast<size_t>(i)] >= 0)
        frictional += " '" + names_[k] + "'";
    }
    if (!frictional.empty())
      impact_.refused = "the impact with Coulomb friction on" + frictional +
                        " is not linearized (sensitivities across "
                        "frictional impacts are not implemented)";
    else if (s.law == "poisson" && active > 1)
      impact_.refused =
          "the Poisson impact of several contacts is not linearized";
    // A frictional impact only dissipates (docs/friction.md).
    const double t_minus = 0.5 * v->dot(x.M * *v);
    const double gain = impact_.dv.dot(x.M * (*v + 0.5 * impact_.dv));
    if (!frictional.empty())
      CheckDissipation(t, frictional, gain, t_minus, s.law);
    *v += impact_.dv;
    const int nc = mech_->nc();
    ev->impulse = Eigen::VectorXd::Zero(nc);
    ev->u_minus = Eigen::VectorXd::Zero(nc);
    ev->u_plus = Eigen::VectorXd::Zero(nc);
    for (size_t j = 0; j < rows.size(); ++j) {
      const Eigen::Index i = static_cast<Eigen::Index>(j);
      ev->impulse[rows[j]] = s.P[i];
      ev->u_minus[rows[j]] = ip.u[i];
      ev->u_plus[rows[j]] = s.u_plus[i];
    }
    return s.u_plus.head(m);
  }

  [[noreturn]] void Refuse(const std::string& why) const {
    std::ostringstream os;
    os << "sensitivities across the contact switch at t = " << last_.t << " of";
    for (int k : last_.witnesses)
      os << " '" << names_[static_cast<size_t>(k)] << "'";
    os << ": " << why
       << "; the sensitivities are not defined there (run without --sens, "
          "or move the start off this configuration)";
    throw std::runtime_error(os.str());
  }

  // The last switch linearized at `minus` (docs/contact.md,
  // "Sensitivities"): the gradient of the witness that fired (the gap
  // Phi_i of an open contact; the multiplier lambda_i of a closed one, a
  // function of the state through the KKT solve of the mode before) and
  // the state map: the impact map on its active set (ImpactLinearization),
  // or the identity (a release, a closure at rest). One exact directional
  // derivative (dual numbers) per coordinate, velocity, parameter and time.
  // Leaves the Mechanics in the new mode, not evaluated.
  EventJump Linearize(const FlowPoint& minus) {
    if (last_.witnesses.size() != 1)
      Refuse(
          "several witnesses fired at once, and a perturbation separates "
          "their times");
    const Model& m = mech_->model();
    const int nq = m.nq(), nv = m.nv(), np = m.num_parameters();
    const std::vector<int> open_after = mech_->open_rows();

    // The witness.
    const bool closed = last_.witness_closed;
    const int row = rows_[static_cast<size_t>(last_.witnesses[0])];
    mech_->SetOpenRows(closed ? last_.open_before : std::vector<int>{});
    mech_->Evaluate(last_.t, last_.q, last_.v);
    KktResult r;
    if (closed) {
      mech_->SolveKkt(mech_->bias(), &r);
      mech_->FactorTangentKkt();
    }
    auto dg = [&](const Eigen::VectorXd& dq, const Eigen::VectorXd& dv,
                  const Eigen::VectorXd& dp, double dt) {
      TangentWorkspace& tws = mech_->Tangent(dq, dv, dp, {}, dt);
      if (!closed) return tws.phi[row].d;
      Eigen::VectorXd dvdot, dlambda;
      mech_->SolveTangentKkt(tws, tws.bias, r.vdot, r.lambda, &dvdot, &dlambda);
      return dlambda[row];
    };
    const WitnessGradient g = DifferentiateWitness(nq, nv, np, dg);

    // The state map.
    VectorJacobian d = IdentityStateMap(minus.y, nq, nv, np);
    const ImpactLinearization& im = last_.impact;
    if (im.happened) {
      AddImpactMap(mech_, last_.t, last_.q, last_.v, im, bilateral_, &d);
    }
    mech_->SetOpenRows(open_after);
    return EventJump(minus, g.gy, g.gp, g.gt, std::move(d));
  }

  Mechanics* mech_;
  const SimulationOptions& opt_;
  const ContactOptions& co_;
  SimulationSummary* sum_;
  std::vector<int> rows_;        // per contact: its model row
  std::vector<int> constraint_;  // per contact: its constraint
  std::vector<int> within_;      // per contact: its row within it
  std::vector<double> e_;        // per contact: Newton's restitution
  std::vector<int> e_param_;     // per contact: e's parameter, or -1
  std::vector<std::string> names_;
  std::vector<int> bilateral_;  // the model's other rows
  std::vector<int> friction_;   // contacts' friction rows (always open here)
  std::vector<bool> closed_;
  std::vector<double> offset_;  // re-armed witnesses (per contact)
  std::vector<int> forced_;     // penetrating at a projected start
  SwitchCounter switches_;
  // Per contact: the tangential rows of its friction (empty when
  // frictionless or mu_kinetic = 0; two on a 3D cone), mu_kinetic, and
  // whether it restitutes by Poisson's law.
  std::vector<std::vector<int>> trows_;
  std::vector<double> mu_;
  std::vector<bool> poisson_;
  std::vector<std::vector<double>> impact_times_;  // last impact times
  bool fine_ = false;  // the last impact left a short rebound (zeno.hpp)
  // The last impact's map on its active set, and the last switch, for
  // the sensitivities across it (SensitivitiesAfter).
  ImpactLinearization impact_;
  SwitchLinearization last_;
  mutable VecX<double> scratch_;
};

}  // namespace

std::unique_ptr<ModeSwitcher> MakeContactStage(Mechanics* mech,
                                               const SimulationOptions& options,
                                               SimulationSummary* sum) {
  const ModelTraits traits = TraitsOf(mech->model());
  if (!EventDrivenContact(options, traits)) return nullptr;
  auto stage = std::make_unique<ContactStage>(mech, options, sum);
  if (!traits.friction) return stage;
  return MakeFrictionStage(mech, options, sum, std::move(stage));
}

}  // namespace daedalus::internal
