#include "monitor/recorder.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "eval/chart.hpp"

namespace daedalus::internal {

// -------------------------------------------------------------- recorder

Recorder::Recorder(const Model& model, SimulationSummary* sum, Observer* obs)
    : layout_(model),
      sum_(sum),
      obs_(obs),
      rows_(model),
      feasibility_(model),
      model_(model) {
  sum->unilateral_rows = feasibility_.num_unilateral();
  sum->friction_cones = feasibility_.size() - feasibility_.num_unilateral();
  sum->power_gap_max = Eigen::VectorXd::Zero(model.nc());
  // The tangential rows of contacts with friction (docs/friction.md).
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = model.constraints()[ci];
    for (const auto& n : model.constraints())
      if (n.unilateral && n.law && n.law->friction == c.name)
        for (int r = 0; r < c.rows; ++r)
          friction_rows_.push_back(model.constraint_row(ci) + r);
  }
  sum->kkt_health.checked = model.nc() > 0;
  sum->kkt_health.rank_J_min = model.nc();
}

void Recorder::SetContacts() {
  feasibility_ = FeasibilitySet(model_, true);
  sum_->unilateral_rows = feasibility_.num_unilateral();
  contacts_ = true;
  impulse_ = Eigen::VectorXd::Zero(model_.nc());
}

void Recorder::Record(Mechanics& mech,
                      const Eigen::VectorXd& vdot,
                      const Eigen::VectorXd& lambda,
                      const Eigen::VectorXd& quad,
                      double extra_stabilization,
                      bool first) {
  // A root found again at the instant of the previous sample (a
  // multiplier chattering about zero near a singular configuration, each
  // sign change a root: the model fuzzer's seed 12, case 13104, index 3 on
  // IDAS, 30 returns at t = 4.2e-4) adds no sample: sample times increase
  // strictly. Its events are still recorded.
  // The state after a reset is the one exception: a second row at the
  // event's time.
  const bool after_reset = after_reset_;
  after_reset_ = false;
  if (!first && sum_->samples > 0 && !(mech.t() > sum_->final.t) &&
      !(after_reset && mech.t() == sum_->final.t))
    return;
  const QuadLayout& L = layout_;
  Sample s;
  s.t = mech.t();
  s.q = mech.q();
  s.v = mech.v();
  s.vdot = vdot;
  s.lambda = lambda;
  s.power = lambda.cwiseProduct(mech.ConstraintRates());
  s.reaction_power = mech.v().cwiseProduct(mech.Reaction(lambda));
  s.phi = mech.phi();
  s.vel_residual = mech.vel_residual();
  for (int i = 0; i < L.nc; ++i) {
    if (rows_.holonomic[i])
      s.drift_position = std::max(s.drift_position, std::abs(s.phi[i]));
    s.drift_velocity = std::max(s.drift_velocity, std::abs(s.vel_residual[i]));
  }
  s.drift_quaternion = QuaternionNormDrift(mech.model().data(), s.q);
  s.energy = mech.energy();
  if (first) e0_ = s.energy;
  // Instantaneous power terms: the quadrature integrands at this state.
  Eigen::VectorXd rate(L.size());
  mech.Integrands(L, lambda, 0.0, rate);
  s.ideal_power = rate.segment(L.ideal(), L.nc);
  s.input_power = rate.head(L.nu);
  s.damping_power = rate[L.damping()];
  s.other_power = rate[L.other()];
  s.explicit_time_power = rate[L.time()];
  s.energy_rate = s.input_power.sum() - s.damping_power + s.other_power +
                  s.power.sum() + s.explicit_time_power;
  const Eigen::VectorXd w =
      first ? Eigen::VectorXd::Zero(L.size()) : Eigen::VectorXd(quad);
  s.input_work = w.head(L.nu);
  s.damping_loss = w[L.damping()];
  s.other_work = w[L.other()];
  s.constraint_work = w.segment(L.constraint(), L.nc);
  s.ideal_constraint_work = w.segment(L.ideal(), L.nc);
  s.explicit_time_work = w[L.time()];
  s.stabilization_work = w[L.stabilization()] + extra_stabilization;
  s.reset_work = reset_work_;
  s.impact_work = impact_work_;
  for (int r : friction_rows_) s.friction_work += s.constraint_work[r];
  if (contacts_) {
    s.impulse = impulse_;
    impulse_.setZero();
  }
  s.quadratures = w.tail(L.nuq);
  if (sens_) s.sens = *sens_;
  const double work = s.input_work.sum() - s.damping_loss + s.other_work +
                      s.constraint_work.sum() + s.explicit_time_work +
                      s.stabilization_work + s.reset_work + s.impact_work;
  s.energy_residual = s.energy - e0_ - work;
  SimulationSummary& sum = *sum_;
  RecordKktHealth(mech, &s);
  feasibility_.Check(&sum, s.t, lambda);
  sum.power_gap_max =
      sum.power_gap_max.cwiseMax((s.power - s.ideal_power).cwiseAbs());
  sum.drift_position_max = std::max(sum.drift_position_max, s.drift_position);
  sum.drift_quaternion_max =
      std::max(sum.drift_quaternion_max, s.drift_quaternion);
  sum.drift_velocity_max = std::max(sum.drift_velocity_max, s.drift_velocity);
  sum.energy_residual_max =
      std::max(sum.energy_residual_max, std::abs(s.energy_residual));
  if (first) sum.energy_initial = s.energy;
  sum.energy_final = s.energy;
  sum.t_reached = s.t;
  ++sum.samples;
  sum.final = s;
  if (obs_) obs_->OnSample(s);
}

int Recorder::WorstDriftRow(double* drift) const {
  const Sample& f = sum_->final;
  int worst = 0;
  double wd = -1.0;
  for (int i = 0; i < rows_.nc; ++i) {
    const double d = std::max(rows_.holonomic[i] ? std::abs(f.phi[i]) : 0.0,
                              std::abs(f.vel_residual[i]));
    if (d > wd) {
      wd = d;
      worst = i;
    }
  }
  *drift = wd;
  return worst;
}

void Recorder::RecordKktHealth(Mechanics& mech, Sample* s) {
  const int nc = mech.nc();
  if (nc == 0) return;
  KktHealthSummary& kh = sum_->kkt_health;
  const KktHealthSample h = mech.Health(false);
  s->kkt_rcond = h.rcond;
  s->rank_J = h.rank_J;
  kh.rank_J_min = std::min(kh.rank_J_min, s->rank_J);
  if (sum_->samples == 0 || s->kkt_rcond < kh.rcond_min) {
    const KktHealthSample d = mech.Health(true);
    kh.rcond_min = s->kkt_rcond;
    kh.t_worst = s->t;
    kh.q_worst = s->q;
    kh.v_worst = s->v;
    kh.sigma_min_at_worst = d.sigma_min;
    kh.weak_rows.clear();
    for (int r : d.weak_rows) kh.weak_rows.push_back(model_.RowName(r));
  }
  if (!kh.near_singular && s->kkt_rcond < kNearSingularRcond) {
    kh.near_singular = true;
    kh.t_first_near_singular = s->t;
    std::ostringstream os;
    os.precision(3);
    os << "near-singular configuration at t = " << s->t
       << ": reciprocal condition of J M^-1 J' is " << s->kkt_rcond << " (< "
       << kNearSingularRcond << "), rank(J) = " << s->rank_J << " of " << nc
       << "; nearly dependent rows:";
    for (const auto& r : kh.weak_rows) os << " '" << r << "'";
    os << ". The multipliers lose accuracy and the run fails if the "
          "mechanism reaches the singularity (a dead centre or a locked "
          "or redundant set of constraints)";
    sum_->warnings.push_back(os.str());
  }
}

}  // namespace daedalus::internal
