// The human summary of a run: SimulationSummary::BriefReport and
// FullReport (docs/diagnostics.md).
#include <algorithm>
#include <functional>
#include <iomanip>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "daedalus/simulate.hpp"

namespace daedalus {

// ----------------------------------------------------------- reports

std::string SimulationSummary::BriefReport() const {
  std::ostringstream os;
  os.precision(3);
  os << problem << ": "
     << (ok            ? "ok"
         : interrupted ? "INTERRUPTED"
                       : "FAILED")
     << ", t=" << t_reached << ", drift " << std::scientific
     << drift_position_max << " (pos) " << drift_velocity_max
     << " (vel), energy residual " << energy_residual_max << ", "
     << violations.size() << " feasibility violation"
     << (violations.size() == 1 ? "" : "s");
  if (kkt_health.checked) os << ", min KKT rcond " << kkt_health.rcond_min;
  os << ", " << stats.steps << " steps";
  if (!warnings.empty()) os << ", " << warnings.size() << " warning(s)";
  if (!ok) os << ": " << error;
  return os.str();
}

namespace {

// "name=value" pairs of a vector, or the values alone without names.
void PutVector(std::ostream& os,
               const Eigen::VectorXd& x,
               const std::function<std::string(int)>& name) {
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    os << " ";
    if (name) os << name(static_cast<int>(i)) << "=";
    os << x[i];
  }
}

}  // namespace

std::string SimulationSummary::FullReport(const Model& model) const {
  std::ostringstream os;
  const auto coord = [&](int i) { return model.coordinate_names()[i]; };
  const auto row = [&](int r) { return model.RowName(r); };
  os.precision(6);
  os << "Daedalus run: " << problem << "  [" << ToString(formulation) << ", "
     << ToString(integrator) << ", rtol " << rtol << ", atol " << atol << "]\n";
  os << "  status                 "
     << (ok            ? "ok"
         : interrupted ? "INTERRUPTED"
                       : "FAILED")
     << "\n";
  if (!ok) os << "  error                  " << error << "\n";
  os << "  time reached           " << t_reached << " s (" << samples
     << " samples)\n";
  // State, drift, energy and work at the last sample.
  const auto PutSampleSections = [&]() {
    os << "  final q               ";
    PutVector(os, final.q, coord);
    os << "\n  final v               ";
    PutVector(os, final.v, nullptr);
    os << "\n";
    if (final.lambda.size() > 0) {
      os << "  final lambda          ";
      PutVector(os, final.lambda, row);
      os << "\n";
    }
    os << std::scientific << std::setprecision(3);
    os << "  initial correction     position " << initial_correction_position
       << ", velocity " << initial_correction_velocity << "\n";
    os << "  max drift              position " << drift_position_max
       << ", velocity " << drift_velocity_max;
    if (drift_tol > 0.0) os << " (limit " << drift_tol << ")";
    os << "\n";
    for (const auto& e : escalations)
      os << "  escalation             t = " << e.t << ": " << ToString(e.from)
         << " -> " << ToString(e.to) << " (drift " << e.drift << " of '"
         << e.constraint << "')\n";
    os << "  energy (" << energy_kind << ")  initial " << energy_initial
       << ", final " << energy_final << ", change "
       << energy_final - energy_initial << " J\n";
    os << "  max energy residual    " << energy_residual_max
       << " J  (E - E0 - work; integration error only)\n";

    // Work terms: what changed the energy, by source.
    if (final.input_work.size() > 0 || model.has_damping() ||
        model.has_other_loads() || model.nc() > 0 ||
        final.explicit_time_work != 0.0 || final.stabilization_work != 0.0) {
      std::vector<std::pair<std::string, double>> terms;
      for (int k = 0; k < model.num_inputs() && k < final.input_work.size();
           ++k)
        terms.emplace_back("input '" + model.inputs()[k].name + "'",
                           final.input_work[k]);
      if (model.has_damping())
        terms.emplace_back("damping loss", final.damping_loss);
      if (model.has_other_loads())
        terms.emplace_back("other", final.other_work);
      if (final.explicit_time_work != 0.0)
        terms.emplace_back("explicit time", final.explicit_time_work);
      if (final.stabilization_work != 0.0)
        terms.emplace_back("stabilization", final.stabilization_work);
      if (model.nc() > 0)
        terms.emplace_back("constraints", final.constraint_work.sum());
      os << "  work [J]              ";
      for (size_t k = 0; k < terms.size(); ++k)
        os << (k ? ", " : " ") << terms[k].first << " " << terms[k].second;
      os << "\n";
    }
    if (model.nc() > 0 && final.constraint_work.size() == model.nc()) {
      // Per row: integrated lambda J v, and the largest gap of the identity
      // lambda J v = -lambda Phi_t met at a sample.
      const int shown = std::min(model.nc(), 6);
      os << "  constraint work [J]   ";
      for (int r = 0; r < shown; ++r)
        os << " " << row(r) << " " << final.constraint_work[r];
      if (shown < model.nc()) os << " ... (" << model.nc() - shown << " more)";
      double gap = 0.0;
      for (Eigen::Index r = 0; r < power_gap_max.size(); ++r)
        gap = std::max(gap, power_gap_max[r]);
      os << "\n  power identity gap     max |lambda J v + lambda Phi_t| = "
         << gap << " W\n";
    }
    for (Eigen::Index k = 0; k < final.quadratures.size(); ++k)
      os << "  quadrature '" << model.quadrature_name(static_cast<int>(k))
         << "'  " << std::setprecision(16) << final.quadratures[k]
         << std::setprecision(3) << "\n";
  };
  if (samples == 0) {
    // A run that failed before its first sample has no state, energy or
    // work to show (this printed "energy ()" and empty vectors).
    os << "  (no sample recorded: the run failed before its first output)\n";
    os << std::scientific << std::setprecision(3);
  } else {
    PutSampleSections();
  }

  // Feasibility: what was watched and every violation interval.
  if (unilateral_rows + friction_cones > 0) {
    os << "  feasibility            " << unilateral_rows
       << " unilateral row(s), " << friction_cones
       << " friction cone(s) watched: ";
    if (violations.empty())
      os << "no violation\n";
    else
      os << violations.size() << " violation interval(s)\n";
    for (const auto& v : violations) {
      const bool cone = v.kind == "friction_cone";
      os << "    " << (cone ? "cone" : "unilateral") << " '" << v.name
         << "'  t = " << v.t_start << " .. " << v.t_end
         << (v.ongoing ? " (still violated at the end)" : "") << ", worst "
         << (cone ? "mu lambda_n - |lambda_t| " : "lambda ") << v.worst
         << " at t = " << v.t_worst << "\n";
    }
  }
  if (kkt_health.checked && samples > 0) {
    os << "  KKT health             min rcond(J M^-1 J') "
       << kkt_health.rcond_min << " at t = " << kkt_health.t_worst
       << ", min rank(J) " << kkt_health.rank_J_min << " of " << model.nc()
       << "\n";
  }
  // Contact switches are summarized in one place (docs/contact.md); the
  // model's events are listed one by one.
  for (const auto& e : events) {
    if (contact.event_driven && e.name.rfind("contact_", 0) == 0) continue;
    os << "  event                  '" << e.name << "' at t = " << e.t
       << (e.direction > 0 ? " (rising)" : " (falling)")
       << (e.stopped ? " (run stopped)" : "") << "\n";
  }
  if (contact.event_driven) {
    const ContactReport& c = contact;
    os << "  contacts               " << c.impacts << " impacts, " << c.releases
       << " releases, " << c.closures << " closures; impact "
       << "work " << c.impact_work << " J";
    if (c.t_rest >= 0.0) os << "; at rest from t = " << c.t_rest;
    if (c.t_accumulation >= 0.0)
      os << " (accumulation point " << c.t_accumulation << ")";
    os << "\n";
    if (c.any_open)
      os << "  certificate            min open gap " << c.min_open_gap << " ('"
         << c.row_min_open_gap << "', t = " << c.t_min_open_gap << ")\n";
    if (c.any_closed)
      os << "  certificate            min closed lambda " << c.min_closed_lambda
         << " ('" << c.row_min_closed_lambda
         << "', t = " << c.t_min_closed_lambda << ")\n";
    for (const FrictionContactReport& f : c.friction) {
      os << "  friction               '" << f.contact << "' mu_s "
         << f.mu_static << ", mu_k " << f.mu_kinetic << ": " << f.stick_to_slip
         << " stick->slip, " << f.slip_to_stick << " slip->stick, "
         << f.reversals << " reversals; work " << final.friction_work
         << " J (all contacts)";
      if (f.any_stick)
        os << "; sticking: power <= " << f.max_stick_power
           << " W, slip margin >= " << f.min_stick_margin;
      os << "\n";
    }
  }
  if (contact.time_stepping.used) {
    // Moreau-Jean (docs/moreau_jean.md).
    const TimeSteppingReport& ts = contact.time_stepping;
    os << "  moreau-jean            h " << ts.step << ", theta " << ts.theta
       << "; " << ts.solves << " cone solves, " << ts.iterations
       << " Gauss-Seidel sweeps (at most " << ts.iterations_max
       << "), residual <= " << ts.residual_max << " (tol " << ts.tolerance
       << "), up to " << ts.active_max << " active contacts\n";
    os << "  moreau-jean            penetration max " << ts.penetration_max;
    if (!ts.row_penetration_max.empty())
      os << " ('" << ts.row_penetration_max << "', t = " << ts.t_penetration_max
         << ")";
    os << "; impulse work " << ts.impulse_work << " J (normal), "
       << ts.friction_impulse_work << " J (friction)\n";
    if (ts.stalled)
      os << "  moreau-jean            STALLED at t = " << ts.t_stalled
         << ": residual " << ts.stalled_residual << " after "
         << ts.stalled_iterations << " sweeps\n";
  }
  os << "  evaluator              " << evaluator << "\n";
  os << "  solver                 " << stats.steps << " steps, "
     << stats.rhs_evals
     << (integrator == Integrator::kIdas ||
                 integrator == Integrator::kGeneralizedAlpha ||
                 integrator == Integrator::kHht
             ? " residual evals, "
             : " RHS evals, ")
     << stats.jacobian_evals << " Jacobians, " << stats.error_test_failures
     << " error-test fails, " << stats.nonlinear_conv_failures
     << " convergence fails";
  if (stats.projections > 0) os << ", " << stats.projections << " projections";
  if (stats.newton_iterations > 0)
    os << ", " << stats.newton_iterations << " Newton iterations";
  os << "\n";
  for (const auto& w : warnings) os << "  WARNING                " << w << "\n";
  return os.str();
}

}  // namespace daedalus
