#include "contact/friction_stage.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "contact/contact_problems.hpp"
#include "contact/friction_tolerances.hpp"
#include "contact/frictional_release.hpp"
#include "contact/slip_onset.hpp"
#include "contact/stick_split.hpp"
#include "contact/switch_counter.hpp"
#include "contact/witness_jump.hpp"

namespace daedalus::internal {

namespace {

enum class Mode { kOpen, kStick, kSlip };

const char* Name(Mode m) {
  return m == Mode::kOpen ? "open" : m == Mode::kStick ? "stick" : "slip";
}

struct Contact {
  std::string name, tname;
  int normal = -1;        // the normal row
  int constraint_t = -1;  // the tangential constraint
  std::vector<int> t;     // its rows (1 or 2)
  double mus = 0.0, muk = 0.0;
  int mus_param = -1, muk_param = -1;  // their parameters, or -1
  Mode mode = Mode::kOpen;
  Eigen::Vector2d dir = Eigen::Vector2d(1.0, 0.0);  // slip direction
  double offset = 0.0;                              // re-armed witness
};

class FrictionStage final : public ModeSwitcher {
 public:
  FrictionStage(Mechanics* mech,
                const SimulationOptions& o,
                SimulationSummary* sum,
                std::unique_ptr<ModeSwitcher> inner)
      : mech_(mech),
        co_(o.contact),
        rtol_(o.rtol),
        atol_(o.atol),
        sum_(sum),
        inner_(std::move(inner)),
        chatter_(o.t_end - o.t0) {
    const Model& m = mech->model();
    const ModelData& d = m.data();
    for (int ci = 0; ci < m.num_constraints(); ++ci) {
      const ConstraintDecl& c = d.constraints[static_cast<size_t>(ci)];
      const bool friction = !c.unilateral && IsFrictionRows(d, c.name);
      for (int r = 0; r < c.rows && !friction; ++r)
        (c.unilateral ? unilateral_ : bilateral_)
            .push_back(m.constraint_row(ci) + r);
      if (!c.unilateral || !c.law || c.law->friction.empty()) continue;
      Contact k;
      k.name = c.name;
      k.tname = c.law->friction;
      k.normal = m.constraint_row(ci);
      const FrictionLaw f =
          ResolveFriction(m, k.name, *c.law, mech->parameters());
      k.mus = f.mu_static;
      k.muk = f.mu_kinetic;
      k.mus_param = f.mu_static_param;
      k.muk_param = f.mu_kinetic_param;
      k.constraint_t = f.constraint;
      k.t = f.rows;
      FrictionContactReport rep;
      rep.contact = k.name;
      rep.tangential = k.tname;
      rep.mu_static = k.mus;
      rep.mu_kinetic = k.muk;
      sum_->contact.friction.push_back(rep);
      c_.push_back(std::move(k));
    }
  }

  // ---- ModeRoots
  int num_roots() const override {
    return inner_->num_roots() + static_cast<int>(c_.size());
  }
  std::vector<int> RootDirections() const override {
    std::vector<int> d = inner_->RootDirections();
    d.insert(d.end(), c_.size(), -1);  // both witnesses fall through 0
    return d;
  }
  void EvaluateRoots(const Mechanics& mech,
                     const Eigen::Ref<const Eigen::VectorXd>& lambda,
                     double* g) const override {
    const Eigen::VectorXd l = StickForces(lambda);  // the releases' too
    inner_->EvaluateRoots(mech, l, g);
    const int ni = inner_->num_roots();
    for (size_t k = 0; k < c_.size(); ++k)
      g[static_cast<size_t>(ni) + k] =
          Witness(c_[k], mech.point(), l) - c_[k].offset;
  }

  // ---- ModeSwitcher
  void Start(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) override {
    inner_->Start(t, q, v);
    std::vector<bool> fired(c_.size(), false);
    ContactEvent ev;
    Decide(t, q, v, fired, true, &ev);
    last_modes_ = Modes();
    // The contact stage's start event names each closed contact with
    // friction with its mode ("ground:slip").
    std::vector<ContactEvent>& events = sum_->contact.events;
    if (events.empty() || events.back().kind != "start") return;
    for (std::string& name : events.back().closed)
      for (const Contact& c : c_)
        if (c.name == name) name += std::string(":") + Name(c.mode);
    events.back().correction_velocity =
        std::max(events.back().correction_velocity, ev.correction_velocity);
  }

  bool Fired(const int* found) const override {
    if (inner_->Fired(found)) return true;
    const size_t ni = static_cast<size_t>(inner_->num_roots());
    for (size_t k = 0; k < c_.size(); ++k)
      if (found[ni + k] != 0) return true;
    return false;
  }

  ModeRestart Switch(double t,
                     const Eigen::VectorXd& q,
                     const Eigen::VectorXd& v,
                     const int* found) override {
    const bool inner_fired = inner_->Fired(found);
    // The mode before, for the linearization of this switch (Jump).
    last_ = FrictionSwitch{};
    last_.t = t;
    last_.q = q;
    last_.v = v;
    last_.inner = inner_fired;
    last_.open_before = mech_->open_rows();
    last_.slip_before = mech_->slip_rows();
    last_.modes_before = Modes();
    last_.split_before = split_.active();
    released_ = false;
    ModeRestart out;
    if (inner_fired) {
      out = inner_->Switch(t, q, v, found);
    } else {
      out.q = q;
      out.v = v;
      out.impulse = Eigen::VectorXd::Zero(mech_->nc());
    }
    const size_t ni = static_cast<size_t>(inner_->num_roots());
    std::vector<bool> fired(c_.size(), false);
    ContactEvent ev;
    for (size_t k = 0; k < c_.size(); ++k) {
      fired[k] = found[ni + k] != 0;
      if (!fired[k]) continue;
      ev.rows.push_back(c_[k].name);
      last_.witnesses.push_back(k);
      last_.dir_before = c_[k].dir;
    }
    mech_->Evaluate(t, out.q, out.v);
    const double e_minus = mech_->energy();
    const std::vector<Mode> before = Modes();
    std::vector<Eigen::Vector2d> dir_before;
    for (const Contact& c : c_) dir_before.push_back(c.dir);
    Decide(t, &out.q, &out.v, fired, inner_fired, &ev);
    mech_->Evaluate(t, out.q, out.v);
    const double change = mech_->energy() - e_minus;
    friction_switched_ = Modes() != before;
    // A slip that reverses (slip -> slip through zero speed) switches too.
    for (size_t k = 0; k < c_.size(); ++k)
      friction_switched_ |= fired[k] && before[k] == Mode::kSlip &&
                            c_[k].mode == Mode::kSlip &&
                            c_[k].dir.dot(dir_before[k]) < 0.0;
    if (!friction_switched_ && !inner_fired) {
      // A witness that switched nothing (a cone's slip direction turned,
      // a margin touching zero): re-armed where it is.
      CountAtInstant(t);
      out.restart = true;
      out.energy_change = 0.0;
      return out;
    }
    out.restart = true;
    out.energy_change += change;
    if (friction_switched_) {
      // After a contact switch no friction witness fired: the contacts
      // whose friction mode changed are the event's.
      if (ev.rows.empty())
        for (size_t k = 0; k < c_.size(); ++k)
          if (c_[k].mode != before[k]) ev.rows.push_back(c_[k].name);
      CountAtInstant(t);
      ev.t = t;
      ev.energy_change = change;
      Book(ev);
    }
    return out;
  }

  // Sensitivities (docs/friction.md, "Sensitivities"): a friction switch
  // of a planar contact is linearized here (its witness in the mode
  // before, the identity state map, the restart's projection onto the
  // new mode); a contact switch by the contact stage, as long as no
  // contact with friction is closed on either side of it.
  std::unique_ptr<EventJump> Jump(const FlowPoint& minus,
                                  const FlowPoint& plus) override {
    if (last_.inner) {
      CheckContactSwitchLinearizable();
      return inner_->Jump(minus, plus);
    }
    if (!friction_switched_) return nullptr;  // a re-armed witness
    auto j = std::make_unique<EventJump>(Linearize(minus));
    if (j->grazing())
      RefuseSensitivities("its witness crosses zero grazing (rate " +
                          std::to_string(j->rate()) +
                          "), so the switch time is not differentiable");
    SaltationAfterSwitch(mech_, plus, j.get());
    return j;
  }

  Eigen::MatrixXd SensitivitiesAfter(const FlowPoint& minus,
                                     const FlowPoint& plus,
                                     const Eigen::MatrixXd& s_minus,
                                     const std::vector<Eigen::VectorXd>& dirs,
                                     Eigen::VectorXd* tau) override {
    if (last_.inner) {
      CheckContactSwitchLinearizable();
      return inner_->SensitivitiesAfter(minus, plus, s_minus, dirs, tau);
    }
    const std::unique_ptr<EventJump> j = Jump(minus, plus);
    EventRecord* rec = last_.record < sum_->events.size()
                           ? &sum_->events[last_.record]
                           : nullptr;
    return SensitivitiesAcross(j.get(), s_minus, dirs, tau, rec);
  }

  void AtSample(const Mechanics& mech, const Eigen::VectorXd& lambda) override {
    // The report reads the forces the stick test reads (StickForces).
    const Eigen::VectorXd l = StickForces(lambda);
    inner_->AtSample(mech, l);
    const Point<double> x = mech.point();
    for (size_t k = 0; k < c_.size(); ++k) {
      Contact& c = c_[k];
      const double g = Witness(c, x, l);
      if (c.offset != 0.0 && std::abs(g) > 2.0 * std::abs(c.offset))
        c.offset = 0.0;
      FrictionContactReport& rep = sum_->contact.friction[k];
      const double ln = l[c.normal];
      const double lt = TangentialForce(c, l).norm();
      if (c.mode == Mode::kStick) {
        double power = 0.0;
        for (int r : c.t) power += l[r] * mech.vel_residual()[r];
        rep.max_stick_power = std::max(rep.max_stick_power, std::abs(power));
        const double margin = c.mus * ln - lt;
        if (!rep.any_stick || margin < rep.min_stick_margin) {
          rep.min_stick_margin = margin;
          rep.t_min_stick_margin = mech.t();
        }
        rep.any_stick = true;
      } else if (c.mode == Mode::kSlip) {
        rep.max_slip_cone_error =
            std::max(rep.max_slip_cone_error, std::abs(lt - c.muk * ln));
      }
    }
  }

 private:
  std::vector<Mode> Modes() const {
    std::vector<Mode> m;
    for (const Contact& c : c_) m.push_back(c.mode);
    return m;
  }

  Eigen::VectorXd TangentialForce(
      const Contact& c, const Eigen::Ref<const Eigen::VectorXd>& l) const {
    Eigen::VectorXd out(static_cast<Eigen::Index>(c.t.size()));
    for (size_t i = 0; i < c.t.size(); ++i)
      out[static_cast<Eigen::Index>(i)] = l[c.t[i]];
    return out;
  }

  // The forces the stick test reads: the KKT solve's, or where that split
  // of statically indeterminate forces leaves a sticking contact outside
  // its cone, the one that keeps them all inside longest (stick_split.hpp).
  // Witnesses stay continuous: both agree in sign where it crosses zero.
  Eigen::VectorXd StickForces(const Eigen::VectorXd& lambda) const {
    if (!split_.active() || split_.MinMargin(lambda) >= 0.0) return lambda;
    return split_.Best(lambda).lambda;
  }
  // StickForces of the KKT solve at (t, q, v) in the current mode.
  Eigen::VectorXd SplitForces(double t,
                              const Eigen::VectorXd& q,
                              const Eigen::VectorXd& v) {
    KktResult r;
    mech_->Evaluate(t, q, v);
    mech_->SolveKkt(mech_->bias(), &r);
    return StickForces(r.lambda);
  }

  // The tangential velocity v_t = A v + a of contact c (its constraint's
  // function: the workspace zeroes an open row's J v + Phi_t).
  Eigen::VectorXd TangentialVelocity(const Contact& c,
                                     const Point<double>& x) const {
    const ModelData& d = mech_->model().data();
    d.constraints[static_cast<size_t>(c.constraint_t)].fn.f0(x, scratch_);
    return Eigen::VectorXd(
        scratch_.head(static_cast<Eigen::Index>(c.t.size())));
  }

  // The witness of contact c: falls through zero at its next switch.
  double Witness(const Contact& c,
                 const Point<double>& x,
                 const Eigen::Ref<const Eigen::VectorXd>& lambda) const {
    if (c.mode == Mode::kStick)
      return c.mus * lambda[c.normal] - TangentialForce(c, lambda).norm();
    if (c.mode == Mode::kSlip) {
      const Eigen::VectorXd u = TangentialVelocity(c, x);
      double g = 0.0;
      for (Eigen::Index i = 0; i < u.size(); ++i) g += c.dir[i] * u[i];
      return g;
    }
    return 1.0;  // open: no friction
  }

  // The friction modes at (t, q, v) after the contact stage set the
  // normal modes: a contact that opened is open; one that is fresh (the
  // start, or after a contact switch) slips if its tangential velocity is
  // not zero, else is tested for stick; a witness that fired switches
  // (stick -> slip; a slip whose speed reached zero is tested for stick).
  void Decide(double t,
              Eigen::VectorXd* q,
              Eigen::VectorXd* v,
              const std::vector<bool>& fired,
              bool fresh,
              ContactEvent* ev) {
    std::vector<int> inner_open = InnerOpen();
    const Point<double> x{*q, *v, t, mech_->parameters()};
    double scale_u = v->norm();
    for (const Contact& c : c_)
      scale_u = std::max(scale_u, TangentialVelocity(c, x).norm());
    const double utol = std::max({kSlipVelocityFraction * co_.zeno_velocity,
                                  kSlipResolution * (atol_ + rtol_ * scale_u),
                                  kSlipRoundOff * scale_u});
    std::vector<size_t> test;       // contacts to test for stick
    std::vector<size_t> onset;      // stick -> slip: direction from lambda_t
    std::vector<size_t> from_rest;  // slips that start at zero speed
    for (size_t k = 0; k < c_.size(); ++k) {
      Contact& c = c_[k];
      c.offset = 0.0;
      const bool closed = std::find(inner_open.begin(), inner_open.end(),
                                    c.normal) == inner_open.end();
      if (!closed) {
        c.mode = Mode::kOpen;
        continue;
      }
      if (!fresh && !fired[k] && c.mode != Mode::kOpen) continue;
      if (c.mode == Mode::kStick && fired[k] && !fresh) {
        onset.push_back(k);
        continue;
      }
      const Eigen::VectorXd u = TangentialVelocity(c, x);
      if (u.norm() > utol) {
        c.mode = Mode::kSlip;
        c.dir.setZero();
        c.dir.head(u.size()) = u / u.norm();
      } else {
        test.push_back(k);
      }
    }
    for (size_t k : test) c_[k].mode = Mode::kStick;
    Apply(inner_open, t, *q, *v);
    // The releases the friction modes force, then the stick test (slips
    // from rest against the force sticking needs), until neither changes a
    // mode (each pass opens or slips a contact).
    for (int pass = 0; pass <= static_cast<int>(c_.size()); ++pass) {
      const bool released = ReleaseUnderFriction(t, *q, *v, &inner_open);
      if (released) {
        Apply(inner_open, t, *q, *v);
        ConsistentOnsets(from_rest, inner_open, t, *q, *v);
      }
      if (!StickRounds(t, *q, *v, inner_open, &onset, &from_rest) && !released)
        break;
    }
    for (const Contact& c : c_)
      if (c.mode == Mode::kSlip)
        CheckSlipPainleve(mech_, t, *q, *v,
                          SlipCoupling{c.normal, c.t, c.muk, c.dir}, c.name);
    // Re-arm the witnesses that start on their surface.
    const Eigen::VectorXd lambda = SplitForces(t, *q, *v);
    const ProjectionResult pv = mech_->ProjectVelocities(t, *q, v);
    ev->correction_velocity = pv.correction;
    const Point<double> xp{*q, *v, t, mech_->parameters()};
    for (Contact& c : c_) {
      const double g = Witness(c, xp, lambda);
      if (c.mode != Mode::kOpen && std::abs(g) <= 1e-9 * (1.0 + std::abs(g)))
        c.offset = g;
    }
    for (size_t k = 0; k < c_.size(); ++k) {
      if (c_[k].mode == Mode::kOpen) continue;
      ev->closed.push_back(c_[k].name + ":" + Name(c_[k].mode));
    }
  }

  // The stick test: returns whether a contact came to slip.
  bool StickRounds(double t,
                   const Eigen::VectorXd& q,
                   const Eigen::VectorXd& v,
                   const std::vector<int>& inner_open,
                   std::vector<size_t>* onset,
                   std::vector<size_t>* from_rest) {
    bool flipped = false;
    // One contact slips per round, the one most outside its cone (after
    // the onsets, at once): where sticking contacts hold each other's
    // motion the split of their forces is one of many, and another's
    // excess may be the first one's force passed on ("Slip onset").
    for (int round = 0; round <= static_cast<int>(c_.size()); ++round) {
      const Eigen::VectorXd lambda = SplitForces(t, q, v);
      std::vector<size_t> flip;
      size_t worst = c_.size();
      double worst_ratio = 0.0;
      for (size_t k = 0; k < c_.size(); ++k) {
        const Contact& c = c_[k];
        if (c.mode != Mode::kStick) continue;
        const double lt = TangentialForce(c, lambda).norm();
        const double cap = c.mus * lambda[c.normal];
        if (std::find(onset->begin(), onset->end(), k) != onset->end()) {
          flip.push_back(k);
          continue;
        }
        if (lt <= cap * (1.0 + kStickSlack)) continue;
        const double ratio =
            cap > 0.0 ? lt / cap : std::numeric_limits<double>::infinity();
        if (worst == c_.size() || ratio > worst_ratio) {
          worst = k;
          worst_ratio = ratio;
        }
      }
      if (flip.empty() && worst < c_.size()) flip.push_back(worst);
      for (size_t k : flip) {
        Contact& c = c_[k];
        const Eigen::VectorXd lt = TangentialForce(c, lambda);
        c.mode = Mode::kSlip;
        c.dir.setZero();
        if (lt.norm() > 0.0) c.dir.head(lt.size()) = -lt / lt.norm();
        from_rest->push_back(k);
      }
      onset->clear();
      if (flip.empty()) break;
      flipped = true;
      Apply(inner_open, t, q, v);
      ConsistentOnsets(*from_rest, inner_open, t, q, v);
    }
    return flipped;
  }

  // Releases under the friction modes (frictional_release.hpp); true if any.
  bool ReleaseUnderFriction(double t,
                            const Eigen::VectorXd& q,
                            const Eigen::VectorXd& v,
                            std::vector<int>* inner_open) {
    std::vector<int> bilateral = bilateral_, closed, sticking;
    std::vector<SlipCoupling> slip;
    for (const Contact& c : c_) {
      if (c.mode == Mode::kStick) {
        bilateral.insert(bilateral.end(), c.t.begin(), c.t.end());
        sticking.push_back(c.normal);
      }
      if (c.mode == Mode::kSlip)
        slip.push_back(SlipCoupling{c.normal, c.t, c.muk, c.dir});
    }
    if (bilateral.size() == bilateral_.size() && slip.empty()) return false;
    for (int r : unilateral_)
      if (std::find(inner_open->begin(), inner_open->end(), r) ==
          inner_open->end())
        closed.push_back(r);
    // Sticking contacts the split leaves unloaded open on ties.
    const std::vector<int> unloaded =
        UnloadedNormals(SplitForces(t, q, v), sticking);
    const FrictionalRelease rel = DecideFrictionalRelease(
        EvaluateAllRows(mech_, t, q, v), closed, bilateral, slip, unloaded);
    if (rel.open.empty() || !inner_->Release(t, q, v, rel.open)) return false;
    released_ = true;
    *inner_open = InnerOpen();
    for (Contact& c : c_)
      if (std::find(inner_open->begin(), inner_open->end(), c.normal) !=
          inner_open->end())
        c.mode = Mode::kOpen;
    return true;
  }

  // The slips from rest on 3D cones take their consistent direction
  // (slip_onset.hpp).
  void ConsistentOnsets(const std::vector<size_t>& from_rest,
                        const std::vector<int>& inner_open,
                        double t,
                        const Eigen::VectorXd& q,
                        const Eigen::VectorXd& v) {
    std::vector<SlipOnset> onsets;
    for (size_t k : from_rest) {
      Contact& c = c_[k];
      if (c.mode != Mode::kSlip || c.t.size() != 2) continue;
      onsets.push_back(SlipOnset{{c.t[0], c.t[1]}, &c.dir, c.name});
    }
    internal::ConsistentOnsets(mech_, t, q, v, onsets,
                               [&] { Apply(inner_open, t, q, v); });
  }

  // The normal rows the contact stage left open (its open set less the
  // friction rows, which it keeps open).
  std::vector<int> InnerOpen() const {
    std::vector<int> open;
    for (int r : mech_->open_rows()) {
      bool friction = false;
      for (const Contact& c : c_)
        friction |= std::find(c.t.begin(), c.t.end(), r) != c.t.end();
      if (!friction) open.push_back(r);
    }
    return open;
  }

  // The mode into the Mechanics: sticking rows closed; slipping rows open
  // with their J kept and lambda_t = -mu_k sigma lambda_n (Workspace::slip).
  // A sticking contact's rows that depend on the other closed rows (a
  // body on two sticking planar contacts: 4 rows on 3 velocities) stay
  // open (IndependentRows): the others hold its velocity, and the split
  // of the friction force between them is statically indeterminate.
  void Apply(std::vector<int> open,
             double t,
             const Eigen::VectorXd& q,
             const Eigen::VectorXd& v) {
    std::vector<SlipRow> slip;
    std::vector<int> stick;
    for (const Contact& c : c_) {
      if (c.mode == Mode::kStick) {
        stick.insert(stick.end(), c.t.begin(), c.t.end());
        continue;
      }
      open.insert(open.end(), c.t.begin(), c.t.end());
      if (c.mode != Mode::kSlip) continue;
      for (size_t i = 0; i < c.t.size(); ++i) {
        SlipRow s;
        s.row = c.t[i];
        s.normal = c.normal;
        s.partner = c.t.size() == 2 ? c.t[1 - i] : -1;
        s.mu = c.muk;
        s.mu_param = c.muk_param;
        s.sigma = c.dir[static_cast<Eigen::Index>(i)];
        s.d_row = s.sigma;
        s.d_partner = c.dir[static_cast<Eigen::Index>(1 - i)];
        slip.push_back(s);
      }
    }
    split_.Clear();
    if (!stick.empty()) {
      mech_->SetOpenRows({});
      mech_->SetSlipRows({});
      mech_->Evaluate(t, q, v);
      std::vector<int> closed;
      for (int r = 0; r < mech_->nc(); ++r)
        if (std::find(open.begin(), open.end(), r) == open.end() &&
            std::find(stick.begin(), stick.end(), r) == stick.end())
          closed.push_back(r);
      const Eigen::MatrixXd J = mech_->DenseJacobian();
      const std::vector<int> kept = IndependentRows(J, closed, stick);
      std::vector<StickCone> cones;
      for (const Contact& c : c_)
        if (c.mode == Mode::kStick)
          cones.push_back(StickCone{c.normal, c.t, c.mus});
      split_.Prepare(J, std::move(cones));
      for (int r : stick)
        if (std::find(kept.begin(), kept.end(), r) == kept.end())
          open.push_back(r);
    }
    mech_->SetOpenRows(open);
    mech_->SetSlipRows(slip);
  }

  void CountAtInstant(double t) {
    const bool chatter = chatter_.Exceeded(t);
    if (chatter_.count() == 0 || chattered_.size() != c_.size())
      chattered_.assign(c_.size(), false);
    for (size_t k : last_.witnesses) chattered_[k] = true;
    if (chatter) {
      std::ostringstream os;
      os.precision(10);
      os << "friction witnesses chatter: " << chatter_.count()
         << " roots between t = " << chatter_.start() << " and t = " << t
         << " (a window of " << chatter_.window()
         << " s) without settling; the contacts whose witnesses fired:";
      for (size_t k = 0; k < c_.size(); ++k)
        if (chattered_[k])
          os << " '" << c_[k].name << "' (now " << Name(c_[k].mode) << ")";
      os << ". A slip whose speed stays near zero while its stick test fails "
            "does this, e.g. a contact beside others that hold its velocity "
            "(a foot's redundant corners, docs/friction.md, \"Redundant "
            "slipping corners\"); model the contact's compliance or fewer "
            "contact points";
      throw std::runtime_error(os.str());
    }
    if (!switches_.Exceeded(t)) return;
    std::ostringstream os;
    os << "friction switches do not settle at t = " << t << ": the contacts";
    for (const Contact& c : c_)
      os << " '" << c.name << "' (" << Name(c.mode) << ")";
    os << " switched " << switches_.count() << " times at this instant";
    throw std::runtime_error(os.str());
  }

  [[noreturn]] void RefuseSensitivities(const std::string& why) const {
    std::ostringstream os;
    os << "sensitivities across the switch at t = " << last_.t << " of";
    for (size_t k : last_.witnesses) os << " '" << c_[k].name << "'";
    if (last_.witnesses.empty())
      for (const Contact& c : c_) os << " '" << c.name << "'";
    os << ": " << why
       << "; the sensitivities are not defined there (run without --sens, "
          "or move the start off this configuration)";
    throw std::runtime_error(os.str());
  }

  // A contact switch (impact, release, closure) is the contact stage's to
  // linearize; with a contact with friction closed on either side of it,
  // its witness and restart also depend on the friction modes, which that
  // linearization does not take.
  void CheckContactSwitchLinearizable() const {
    if (!last_.witnesses.empty())
      RefuseSensitivities(
          "a contact switch and a friction switch at the same instant, and "
          "a perturbation separates their times");
    for (size_t k = 0; k < c_.size(); ++k)
      if (last_.modes_before[k] != Mode::kOpen || c_[k].mode != Mode::kOpen)
        RefuseSensitivities(
            "a contact switch while '" + c_[k].name +
            "' (with friction) is closed is not linearized (docs/friction.md, "
            "\"Sensitivities\")");
  }

  // The friction switch linearized at `minus`: the gradient of the witness
  // that fired, in the mode before (stick: mu_s lambda_n - |lambda_t|, a
  // function of the state through the KKT solve; slip: sigma v_t, the
  // tangential velocity), and the identity state map. Leaves the
  // Mechanics in the new mode, not evaluated.
  EventJump Linearize(const FlowPoint& minus) {
    if (last_.witnesses.size() != 1)
      RefuseSensitivities(
          "several witnesses fired at once, and a perturbation separates "
          "their times");
    const size_t k = last_.witnesses[0];
    const Contact& c = c_[k];
    if (c.t.size() != 1)
      RefuseSensitivities("a 3D cone's switch is not linearized");
    if (released_)
      RefuseSensitivities("the friction modes released a contact at it");
    if (last_.split_before)
      RefuseSensitivities(
          "the sticking contacts' forces were statically indeterminate and "
          "the stick test read the split that keeps them inside their cones "
          "longest, which this linearization does not differentiate");
    const Mode before = last_.modes_before[k];
    const Model& m = mech_->model();
    const int nq = m.nq(), nv = m.nv(), np = m.num_parameters();
    const std::vector<int> open_after = mech_->open_rows();
    const std::vector<SlipRow> slip_after = mech_->slip_rows();
    const int rt = c.t[0];
    KktResult r;
    if (before == Mode::kStick) {
      mech_->SetOpenRows(last_.open_before);
      mech_->SetSlipRows(last_.slip_before);
      mech_->Evaluate(last_.t, last_.q, last_.v);
      mech_->SolveKkt(mech_->bias(), &r);
      mech_->FactorTangentKkt();
    } else {
      // sigma v_t is kinematic: with the tangential row closed the velocity
      // stage evaluates v_t = A v + a (an open row's is left at zero).
      std::vector<int> open;
      for (int row : last_.open_before)
        if (row != rt) open.push_back(row);
      mech_->SetOpenRows(open);
      mech_->SetSlipRows({});
      mech_->Evaluate(last_.t, last_.q, last_.v);
    }
    const double sigma = last_.dir_before[0];
    const double sign_t =
        r.lambda.size() > 0 && r.lambda[rt] < 0.0 ? -1.0 : 1.0;
    auto dg = [&](const Eigen::VectorXd& dq, const Eigen::VectorXd& dv,
                  const Eigen::VectorXd& dp, double dt) {
      TangentWorkspace& tws = mech_->Tangent(dq, dv, dp, {}, dt);
      if (before != Mode::kStick) return sigma * tws.vel_residual[rt].d;
      Eigen::VectorXd dvdot, dlambda;
      mech_->SolveTangentKkt(tws, tws.bias, r.vdot, r.lambda, &dvdot, &dlambda);
      const double dmu = c.mus_param >= 0 ? dp[c.mus_param] : 0.0;
      return c.mus * dlambda[c.normal] + r.lambda[c.normal] * dmu -
             sign_t * dlambda[rt];
    };
    const WitnessGradient g = DifferentiateWitness(nq, nv, np, dg);
    mech_->SetOpenRows(open_after);
    mech_->SetSlipRows(slip_after);
    return EventJump(minus, g.gy, g.gp, g.gt,
                     IdentityStateMap(minus.y, nq, nv, np));
  }

  void Book(ContactEvent ev) {
    // The kind: stick when a contact came to stick, else slip; contacts
    // that only opened are the contact stage's event.
    ev.kind = "";
    for (const Contact& c : c_) {
      if (std::find(ev.rows.begin(), ev.rows.end(), c.name) == ev.rows.end())
        continue;
      if (c.mode == Mode::kStick) ev.kind = "stick";
      if (c.mode == Mode::kSlip && ev.kind.empty()) ev.kind = "slip";
    }
    if (ev.kind.empty()) {
      last_modes_ = Modes();
      return;
    }
    for (size_t k = 0; k < c_.size(); ++k) {
      if (std::find(ev.rows.begin(), ev.rows.end(), c_[k].name) ==
          ev.rows.end())
        continue;
      FrictionContactReport& rep = sum_->contact.friction[k];
      const bool known = last_modes_.size() == c_.size();
      if (c_[k].mode == Mode::kStick && known && last_modes_[k] == Mode::kSlip)
        ++rep.slip_to_stick;
      if (c_[k].mode == Mode::kSlip && last_modes_.size() == c_.size() &&
          last_modes_[k] == Mode::kStick)
        ++rep.stick_to_slip;
      if (c_[k].mode == Mode::kSlip && last_modes_.size() == c_.size() &&
          last_modes_[k] == Mode::kSlip)
        ++rep.reversals;
    }
    last_modes_ = Modes();
    sum_->contact.events.push_back(ev);
    last_.record = sum_->events.size();
    EventRecord r;
    r.name = "contact_" + ev.kind;
    r.t = ev.t;
    r.direction = -1.0;
    r.reset = true;
    r.energy_change = ev.energy_change;
    r.reset_correction_velocity = ev.correction_velocity;
    sum_->events.push_back(r);
  }

  Mechanics* mech_;
  const ContactOptions& co_;
  double rtol_, atol_;  // the run's tolerances (slip speed resolution)
  SimulationSummary* sum_;
  std::unique_ptr<ModeSwitcher> inner_;
  std::vector<Contact> c_;
  std::vector<Mode> last_modes_;
  bool friction_switched_ = false;
  // The last Switch, for its linearization (Jump).
  struct FrictionSwitch {
    double t = 0.0;
    Eigen::VectorXd q, v;
    bool inner = false;             // the contact stage's witness fired
    std::vector<size_t> witnesses;  // the friction witnesses that fired
    Eigen::Vector2d dir_before = Eigen::Vector2d(1.0, 0.0);
    std::vector<int> open_before;
    std::vector<SlipRow> slip_before;
    std::vector<Mode> modes_before;
    bool split_before = false;  // the stick test redistributed forces
    size_t record = static_cast<size_t>(-1);  // its EventRecord
  } last_;
  StickSplit split_;  // the sticking contacts' indeterminate forces
  std::vector<int> unilateral_, bilateral_;  // the model's (no friction)
  bool released_ = false;                    // the last Decide opened a contact
  SwitchCounter switches_;
  ChatterGuard chatter_;
  std::vector<bool> chattered_;  // the witnesses fired in chatter_'s window
  mutable VecX<double> scratch_;
};

}  // namespace

std::unique_ptr<ModeSwitcher> MakeFrictionStage(
    Mechanics* mech,
    const SimulationOptions& options,
    SimulationSummary* sum,
    std::unique_ptr<ModeSwitcher> contact) {
  return std::make_unique<FrictionStage>(mech, options, sum,
                                         std::move(contact));
}

}  // namespace daedalus::internal
