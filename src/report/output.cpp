#include "daedalus/output.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace daedalus {

namespace {

// JSON has no NaN/Inf; write null for them rather than an invalid file.
nlohmann::json Num(double x) {
  if (std::isfinite(x)) return x;
  return nullptr;
}

nlohmann::json NumVec(const Eigen::VectorXd& x) {
  nlohmann::json a = nlohmann::json::array();
  for (Eigen::Index i = 0; i < x.size(); ++i) a.push_back(Num(x[i]));
  return a;
}

// The contact report (docs/output.md, "contact").
nlohmann::json ContactJson(const ContactReport& c) {
  using nlohmann::json;
  json ev = json::array();
  for (const ContactEvent& e : c.events) {
    json x = {{"t", Num(e.t)},
              {"kind", e.kind},
              {"rows", e.rows},
              {"closed", e.closed},
              {"energy_change", Num(e.energy_change)},
              {"lcp_size", e.lcp_size},
              {"lcp_residual", Num(e.lcp_residual)},
              {"correction_position", Num(e.correction_position)},
              {"correction_velocity", Num(e.correction_velocity)}};
    if (e.impulse.size() > 0) {
      x["impulse"] = NumVec(e.impulse);
      x["u_minus"] = NumVec(e.u_minus);
      x["u_plus"] = NumVec(e.u_plus);
    }
    if (!e.zeno.empty()) x["zeno"] = e.zeno;
    ev.push_back(x);
  }
  json j = {{"rows", c.rows},
            {"restitution", c.restitution},
            {"impacts", c.impacts},
            {"releases", c.releases},
            {"closures", c.closures},
            {"impact_work", Num(c.impact_work)},
            {"t_rest", c.t_rest >= 0.0 ? Num(c.t_rest) : json(nullptr)},
            {"t_accumulation",
             c.t_accumulation >= 0.0 ? Num(c.t_accumulation) : json(nullptr)},
            {"spurious_roots", c.spurious_roots},
            {"events", ev}};
  json cert = json::object();
  if (c.any_open)
    cert["min_open_gap"] = {{"value", Num(c.min_open_gap)},
                            {"t", Num(c.t_min_open_gap)},
                            {"row", c.row_min_open_gap}};
  if (c.any_closed)
    cert["min_closed_lambda"] = {{"value", Num(c.min_closed_lambda)},
                                 {"t", Num(c.t_min_closed_lambda)},
                                 {"row", c.row_min_closed_lambda}};
  j["certificate"] = cert;
  json fr = json::array();
  for (const FrictionContactReport& f : c.friction) {
    json x = {{"contact", f.contact},
              {"tangential", f.tangential},
              {"mu_static", Num(f.mu_static)},
              {"mu_kinetic", Num(f.mu_kinetic)},
              {"stick_to_slip", f.stick_to_slip},
              {"slip_to_stick", f.slip_to_stick},
              {"reversals", f.reversals},
              {"max_slip_cone_error", Num(f.max_slip_cone_error)}};
    if (f.any_stick) {
      x["max_stick_power"] = Num(f.max_stick_power);
      x["min_stick_margin"] = {{"value", Num(f.min_stick_margin)},
                               {"t", Num(f.t_min_stick_margin)}};
    }
    fr.push_back(x);
  }
  if (!c.friction.empty()) j["friction"] = fr;
  const TimeSteppingReport& ts = c.time_stepping;
  if (ts.used) {
    // Moreau-Jean (docs/moreau_jean.md): its cone solves and penetration.
    json x = {{"scheme", "moreau-jean"},
              {"theta", Num(ts.theta)},
              {"step", Num(ts.step)},
              {"pgs_tolerance", Num(ts.tolerance)},
              {"pgs_max_iterations", ts.max_iterations},
              {"solves", ts.solves},
              {"iterations", ts.iterations},
              {"iterations_max", ts.iterations_max},
              {"residual_max", Num(ts.residual_max)},
              {"active_max", ts.active_max},
              {"penetration_max",
               {{"value", Num(ts.penetration_max)},
                {"t", Num(ts.t_penetration_max)},
                {"row", ts.row_penetration_max}}},
              {"impulse_work", Num(ts.impulse_work)},
              {"friction_impulse_work", Num(ts.friction_impulse_work)},
              {"stalled", ts.stalled}};
    if (ts.stalled)
      x["stall"] = {{"t", Num(ts.t_stalled)},
                    {"residual", Num(ts.stalled_residual)},
                    {"iterations", ts.stalled_iterations}};
    j["time_stepping"] = x;
  }
  return j;
}

}  // namespace

bool HasResets(const Model& model) {
  for (const auto& e : model.data().events)
    if (e.reset) return true;
  return false;
}

std::vector<int> ContactLawRows(const Model& model) {
  std::vector<int> rows;
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const auto& c = model.constraints()[ci];
    if (!c.unilateral || !c.law) continue;
    for (int r = 0; r < c.rows; ++r)
      rows.push_back(model.constraint_row(ci) + r);
  }
  return rows;
}

std::vector<std::string> CsvColumns(const Model& model,
                                    const std::vector<std::string>& sens) {
  std::vector<std::string> c{"t"};
  for (const auto& n : model.coordinate_names()) c.push_back(n);
  for (const auto& n : model.velocity_names()) c.push_back("v_" + n);
  for (int r = 0; r < model.nc(); ++r)
    c.push_back("lambda_" + model.RowName(r));
  for (const auto& n : model.velocity_names()) c.push_back("vdot_" + n);
  for (int r = 0; r < model.nc(); ++r) c.push_back("power_" + model.RowName(r));
  c.insert(c.end(), {"drift_position", "drift_velocity"});
  if (!model.quaternions().empty()) c.push_back("drift_quaternion");
  c.insert(c.end(), {"energy", "energy_residual"});
  for (const auto& in : model.inputs()) c.push_back("work_input_" + in.name);
  c.push_back("damping_loss");
  c.push_back("work_other");
  for (int r = 0; r < model.nc(); ++r)
    c.push_back("work_constraint_" + model.RowName(r));
  c.push_back("work_stabilization");
  if (HasResets(model)) c.push_back("work_reset");
  const std::vector<int> contacts = ContactLawRows(model);
  if (!contacts.empty()) {
    c.push_back("work_impact");
    for (int r : contacts) c.push_back("impulse_" + model.RowName(r));
  }
  c.push_back("work_explicit_time");
  for (int r = 0; r < model.nc(); ++r)
    c.push_back("power_ideal_" + model.RowName(r));
  for (int r = 0; r < model.nc(); ++r)
    c.push_back("power_gap_" + model.RowName(r));
  for (const auto& n : model.velocity_names())
    c.push_back("reaction_power_" + n);
  for (const auto& in : model.inputs()) c.push_back("power_input_" + in.name);
  c.insert(c.end(), {"power_damping", "power_other", "power_explicit_time",
                     "energy_rate"});
  if (model.nc() > 0) c.insert(c.end(), {"kkt_rcond", "rank_J"});
  for (int k = 0; k < model.num_quadratures(); ++k)
    c.push_back(model.quadrature_name(k));
  // Forward sensitivities of the state and the multipliers, parameter by
  // parameter: d<col>/d<param>.
  const size_t n_state = 1 + model.nq() + model.nv() + model.nc();
  for (const auto& p : sens)
    for (size_t i = 1; i < n_state; ++i) c.push_back("d" + c[i] + "/d" + p);
  return c;
}

CsvWriter::CsvWriter(const Model& model,
                     const std::string& path,
                     const std::vector<std::string>& sens)
    : model_(model),
      out_(path),
      n_sens_(sens.size()),
      has_resets_(HasResets(model)),
      contact_rows_(ContactLawRows(model)) {
  if (!out_) {
    throw std::runtime_error("cannot open '" + path +
                             "' for writing; check that the output "
                             "directory exists and is writable");
  }
  const auto cols = CsvColumns(model_, sens);
  for (size_t i = 0; i < cols.size(); ++i) out_ << (i ? "," : "") << cols[i];
  out_ << "\n";
  out_ << std::setprecision(std::numeric_limits<double>::max_digits10);
}

void CsvWriter::OnSample(const Sample& s) {
  // One row built with std::to_chars (shortest representation that reads
  // back to the same double) and written at once: a stream insertion per
  // number at max_digits10 cost a tenth of a short run's time.
  std::string& row = row_;
  row.clear();
  char buf[32];
  auto num = [&](double x) {
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    row.append(buf, r.ptr);
  };
  // A vector written into exactly n columns: a sample from a path that does
  // not compute it (empty) gets "nan" cells, so the row stays rectangular
  // and says "not computed" rather than shifting the columns.
  auto put_n = [&](const Eigen::VectorXd& x, Eigen::Index n) {
    for (Eigen::Index i = 0; i < n; ++i) {
      row.push_back(',');
      if (x.size() == n)
        num(x[i]);
      else
        row.append("nan");
    }
  };
  auto put = [&](const auto& x) {
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      row.push_back(',');
      num(x[i]);
    }
  };
  auto one = [&](double x) {
    row.push_back(',');
    num(x);
  };
  const Eigen::Index nq = model_.nq(), nv = model_.nv(), nc = model_.nc();
  const Eigen::Index nu = model_.num_inputs();
  num(s.t);
  put_n(s.q, nq);
  put_n(s.v, nv);
  put_n(s.lambda, nc);
  put_n(s.vdot, nv);
  put_n(s.power, nc);
  one(s.drift_position);
  one(s.drift_velocity);
  if (!model_.quaternions().empty()) one(s.drift_quaternion);
  one(s.energy);
  one(s.energy_residual);
  put_n(s.input_work, nu);
  one(s.damping_loss);
  one(s.other_work);
  put_n(s.constraint_work, nc);
  one(s.stabilization_work);
  if (has_resets_) one(s.reset_work);
  if (!contact_rows_.empty()) {
    one(s.impact_work);
    for (int r : contact_rows_) one(s.impulse.size() > r ? s.impulse[r] : 0.0);
  }
  one(s.explicit_time_work);
  put_n(s.ideal_power, nc);
  put_n(s.power.size() == s.ideal_power.size()
            ? Eigen::VectorXd(s.power - s.ideal_power)
            : Eigen::VectorXd(),
        nc);
  put_n(s.reaction_power, nv);
  put_n(s.input_power, nu);
  one(s.damping_power);
  one(s.other_power);
  one(s.explicit_time_power);
  one(s.energy_rate);
  if (model_.nc() > 0) {
    one(s.kkt_rcond);
    row.push_back(',');
    const auto r = std::to_chars(buf, buf + sizeof buf, s.rank_J);
    row.append(buf, r.ptr);
  }
  put_n(s.quadratures, model_.num_quadratures());
  for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(n_sens_); ++j) {
    if (j < s.sens.cols()) {
      put(s.sens.col(j));
    } else {
      // A sample without sensitivities (cannot happen in a forward run);
      // keep the row rectangular.
      for (int i = 0; i < model_.nq() + model_.nv() + model_.nc(); ++i)
        row.append(",nan");
    }
  }
  row.push_back('\n');
  out_.write(row.data(), static_cast<std::streamsize>(row.size()));
  // Flushed at most every kFlushInterval of wall time (and by the stream's
  // destructor, also when a run fails): a write(2) per row was 5 % of a
  // 10 s four_bar run. A process killed outright loses at most that much.
  const auto now = std::chrono::steady_clock::now();
  if (now - last_flush_ >= kFlushInterval) {
    out_.flush();
    last_flush_ = now;
  }
}

ProgressLine::ProgressLine(std::string name,
                           double t0,
                           double t_end,
                           Observer* next,
                           std::ostream* err,
                           bool enabled,
                           std::function<double()> clock)
    : name_(std::move(name)),
      t0_(t0),
      t_end_(t_end),
      next_(next),
      err_(err),
      enabled_(enabled && err != nullptr),
      clock_(std::move(clock)) {
  if (!clock_) {
    clock_ = [] {
      return std::chrono::duration<double>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  start_ = clock_();
}

ProgressLine::~ProgressLine() { Finish(); }

void ProgressLine::OnSample(const Sample& s) {
  if (next_) next_->OnSample(s);
  if (!enabled_) return;
  const double now = clock_();
  const double elapsed = now - start_;
  // Nothing for runs under a second; then at most five updates a second.
  if (elapsed < 1.0 || (last_ >= 0.0 && now - last_ < 0.2)) return;
  last_ = now;
  const double span = t_end_ - t0_;
  const double frac =
      span > 0.0 ? std::clamp((s.t - t0_) / span, 0.0, 1.0) : 1.0;
  std::ostringstream os;
  os.precision(3);
  os << "\r" << name_ << ": t = " << s.t << " / " << t_end_ << " s ("
     << static_cast<int>(100.0 * frac) << "%), " << std::fixed
     << std::setprecision(1) << elapsed << " s elapsed";
  if (frac > 0.0 && frac < 1.0)
    os << ", ~" << elapsed * (1.0 - frac) / frac << " s left";
  os << "\033[K";  // erase the rest of a longer previous line
  *err_ << os.str() << std::flush;
  written_ = true;
}

void ProgressLine::Finish() {
  if (written_) *err_ << "\r\033[K" << std::flush;
  written_ = false;
}

bool ProgressLine::StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

std::string SummaryJson(const Model& model,
                        const SimulationSummary& sum,
                        const Eigen::VectorXd& params) {
  using nlohmann::json;
  json j;
  j["problem"] = model.name();
  j["status"] = sum.ok ? "ok" : sum.interrupted ? "interrupted" : "failed";
  if (!sum.ok) j["error"] = sum.error;
  if (sum.interrupted) j["stop_code"] = sum.stop_code;
  j["formulation"] = ToString(sum.formulation);
  j["integrator"] = ToString(sum.integrator);
  j["tolerances"] = {{"rtol", sum.rtol}, {"atol", sum.atol}};
  j["coordinates"] = model.coordinate_names();
  j["velocities"] = model.velocity_names();
  std::vector<std::string> cons;
  for (const auto& c : model.constraints()) cons.push_back(c.name);
  j["constraints"] = cons;
  json cdetail = json::array();
  for (const auto& c : model.constraints()) {
    cdetail.push_back({{"name", c.name},
                       {"kind", ToString(c.kind)},
                       {"rows", c.rows},
                       {"unilateral", c.unilateral}});
  }
  j["constraint_details"] = cdetail;
  json pj = json::object();
  for (int i = 0; i < model.num_parameters(); ++i)
    pj[model.parameter_names()[i]] = params[i];
  j["parameters"] = pj;
  const Sample& f = sum.final;
  j["final"] = {{"t", Num(f.t)},
                {"q", NumVec(f.q)},
                {"v", NumVec(f.v)},
                {"lambda", NumVec(f.lambda)}};
  j["t_reached"] = Num(sum.t_reached);
  j["samples"] = sum.samples;
  j["initial_correction"] = {
      {"position", Num(sum.initial_correction_position)},
      {"velocity", Num(sum.initial_correction_velocity)}};
  json esc = json::array();
  for (const auto& e : sum.escalations) {
    esc.push_back({{"t", e.t},
                   {"constraint", e.constraint},
                   {"drift", e.drift},
                   {"from", ToString(e.from)},
                   {"to", ToString(e.to)}});
  }
  json evj = json::array();
  for (const auto& e : sum.events) {
    json ej = {{"name", e.name},
               {"t", e.t},
               {"direction", e.direction},
               {"stopped", e.stopped}};
    // dt_e/dp per sensitivity parameter (forward sensitivities only; a
    // model event's or a contact switch's, docs/contact.md).
    if (e.dt_dp.size() > 0 &&
        e.dt_dp.size() ==
            static_cast<Eigen::Index>(sum.sensitivities.parameters.size())) {
      json d = json::object();
      for (Eigen::Index i = 0; i < e.dt_dp.size(); ++i)
        d[sum.sensitivities.parameters[static_cast<size_t>(i)]] =
            Num(e.dt_dp[i]);
      ej["dt_dp"] = d;
    }
    if (e.index >= 0) {
      ej["occurrence"] = e.occurrence;
      ej["rate"] = Num(e.rate);
      ej["grazing"] = e.grazing;
      if (e.reset)
        ej["reset"] = {
            {"energy_change", Num(e.energy_change)},
            {"correction_position", Num(e.reset_correction_position)},
            {"correction_velocity", Num(e.reset_correction_velocity)}};
    }
    evj.push_back(ej);
  }
  j["events"] = evj;
  json fj = json::array();
  for (const auto& fv : sum.functionals) {
    json one = {{"name", fv.name},
                {"at", fv.at},
                {"evaluated", fv.evaluated},
                {"t", Num(fv.t)},
                {"value", fv.evaluated ? Num(fv.value) : json(nullptr)}};
    if (fv.gradient.size() > 0) {
      json g = json::object();
      for (Eigen::Index i = 0;
           i < fv.gradient.size() &&
           i < static_cast<Eigen::Index>(sum.sensitivities.parameters.size());
           ++i)
        g[sum.sensitivities.parameters[static_cast<size_t>(i)]] =
            Num(fv.gradient[i]);
      one["gradient"] = g;
    }
    fj.push_back(one);
  }
  j["functionals"] = fj;
  j["drift"] = {{"position_max", Num(sum.drift_position_max)},
                {"velocity_max", Num(sum.drift_velocity_max)},
                {"tolerance", sum.drift_tol},
                {"escalations", esc}};
  if (!model.quaternions().empty())
    j["drift"]["quaternion_max"] = Num(sum.drift_quaternion_max);
  j["evaluator"] = sum.evaluator;
  j["energy"] = {{"kind", sum.energy_kind},
                 {"initial", Num(sum.energy_initial)},
                 {"final", Num(sum.energy_final)},
                 {"balance_residual_max", Num(sum.energy_residual_max)}};
  json cw = json::object();
  double total = 0.0, ideal_total = 0.0;
  for (int r = 0; r < model.nc() && r < f.constraint_work.size(); ++r) {
    cw[model.RowName(r)] = Num(f.constraint_work[r]);
    total += f.constraint_work[r];
    ideal_total += f.ideal_constraint_work[r];
  }
  json gap = json::object();
  double gap_max = 0.0;
  for (int r = 0; r < model.nc() && r < sum.power_gap_max.size(); ++r) {
    gap[model.RowName(r)] = Num(sum.power_gap_max[r]);
    gap_max = std::max(gap_max, sum.power_gap_max[r]);
  }
  j["constraint_work"] = {{"total", Num(total)},
                          {"per_constraint", cw},
                          {"ideal_total", Num(ideal_total)}};
  j["constraint_power_identity"] = {{"gap_max", Num(gap_max)},
                                    {"gap_max_per_constraint", gap}};
  json viol = json::array();
  for (const auto& v : sum.violations) {
    viol.push_back({{"kind", v.kind},
                    {"name", v.name},
                    {"t_start", Num(v.t_start)},
                    {"t_end", Num(v.t_end)},
                    {"ongoing", v.ongoing},
                    {"worst", Num(v.worst)},
                    {"t_worst", Num(v.t_worst)}});
  }
  json cones = json::array();
  for (const auto& c : model.data().friction_cones) {
    cones.push_back({{"name", c.name},
                     {"normal", c.normal},
                     {"tangential", c.tangential},
                     {"mu", c.mu}});
  }
  j["feasibility"] = {{"unilateral_rows", sum.unilateral_rows},
                      {"friction_cones", cones},
                      {"violations", viol}};
  const KktHealthSummary& kh = sum.kkt_health;
  if (kh.checked) {
    j["kkt_health"] = {{"rcond_min", Num(kh.rcond_min)},
                       {"rank_J_min", kh.rank_J_min},
                       {"rows", model.nc()},
                       {"sigma_min_at_worst", Num(kh.sigma_min_at_worst)},
                       {"worst",
                        {{"t", Num(kh.t_worst)},
                         {"q", NumVec(kh.q_worst)},
                         {"v", NumVec(kh.v_worst)}}},
                       {"weak_rows", kh.weak_rows},
                       {"near_singular", kh.near_singular},
                       {"near_singular_threshold", kNearSingularRcond}};
    if (kh.near_singular)
      j["kkt_health"]["t_first_near_singular"] = Num(kh.t_first_near_singular);
  } else {
    j["kkt_health"] = nullptr;
  }
  j["warnings"] = sum.warnings;
  json iw = json::object();
  for (int k = 0; k < model.num_inputs() && k < f.input_work.size(); ++k)
    iw[model.inputs()[k].name] = Num(f.input_work[k]);
  j["work"] = {{"inputs", iw},
               {"damping_loss", Num(f.damping_loss)},
               {"other", Num(f.other_work)},
               {"explicit_time", Num(f.explicit_time_work)},
               {"stabilization", Num(f.stabilization_work)},
               {"reset", Num(f.reset_work)},
               {"impact", Num(f.impact_work)},
               {"friction", Num(f.friction_work)}};
  if (sum.contact.event_driven || sum.contact.time_stepping.used)
    j["contact"] = ContactJson(sum.contact);
  j["stabilization_work"] = Num(f.stabilization_work);
  json qj = json::object();
  for (int k = 0; k < model.num_quadratures() && k < f.quadratures.size(); ++k)
    qj[model.quadrature_name(k)] = Num(f.quadratures[k]);
  j["quadratures"] = qj;
  const SensitivityResult& sr = sum.sensitivities;
  if (sr.method != SensMethod::kNone) {
    json sj;
    sj["method"] = ToString(sr.method);
    sj["parameters"] = sr.parameters;
    if (sr.method == SensMethod::kForward) {
      sj["components"] = sr.components;
      json rows = json::array();
      for (Eigen::Index i = 0; i < sr.final.rows(); ++i)
        rows.push_back(NumVec(Eigen::VectorXd(sr.final.row(i).transpose())));
      sj["final"] = rows;
    }
    json sq = json::object();
    for (const auto& [name, g] : sr.quadratures) sq[name] = NumVec(g);
    sj["quadratures"] = sq;
    json sf = json::object();
    for (const auto& [name, g] : sr.functionals) sf[name] = NumVec(g);
    sj["functionals"] = sf;
    if (sr.method == SensMethod::kAdjoint || !sr.functionals.empty())
      sj["functional_value"] = Num(sr.functional_value);
    j["sensitivities"] = sj;
  }
  j["stats"] = {{"steps", sum.stats.steps},
                {sum.integrator == Integrator::kIdas ||
                         sum.integrator == Integrator::kGeneralizedAlpha ||
                         sum.integrator == Integrator::kHht
                     ? "residual_evals"
                     : "rhs_evals",
                 sum.stats.rhs_evals},
                {"newton_iterations", sum.stats.newton_iterations},
                {"jacobian_evals", sum.stats.jacobian_evals},
                {"error_test_failures", sum.stats.error_test_failures},
                {"nonlinear_conv_failures", sum.stats.nonlinear_conv_failures},
                {"projections", sum.stats.projections}};
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace daedalus
