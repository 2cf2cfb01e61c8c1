#include "daedalus/output.hpp"

#include <cmath>
#include <iomanip>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

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

}  // namespace

std::vector<std::string> CsvColumns(const Model& model,
                                    const std::vector<std::string>& sens) {
  std::vector<std::string> c{"t"};
  for (const auto& n : model.coordinate_names()) c.push_back(n);
  for (const auto& n : model.coordinate_names()) c.push_back("v_" + n);
  for (int r = 0; r < model.nc(); ++r)
    c.push_back("lambda_" + model.RowName(r));
  for (int r = 0; r < model.nc(); ++r) c.push_back("power_" + model.RowName(r));
  c.insert(c.end(),
           {"drift_position", "drift_velocity", "energy", "energy_residual"});
  for (const auto& in : model.inputs()) c.push_back("work_input_" + in.name);
  c.push_back("damping_loss");
  c.push_back("work_other");
  for (int r = 0; r < model.nc(); ++r)
    c.push_back("work_constraint_" + model.RowName(r));
  c.push_back("work_stabilization");
  for (int k = 0; k < model.num_quadratures(); ++k)
    c.push_back(model.quadrature_name(k));
  // Forward sensitivities of the state and the multipliers, parameter by
  // parameter: d<col>/d<param>.
  const size_t n_state = 1 + 2 * model.nq() + model.nc();
  for (const auto& p : sens)
    for (size_t i = 1; i < n_state; ++i) c.push_back("d" + c[i] + "/d" + p);
  return c;
}

CsvWriter::CsvWriter(const Model& model,
                     const std::string& path,
                     const std::vector<std::string>& sens)
    : model_(model), out_(path), n_sens_(sens.size()) {
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
  out_ << s.t;
  auto put = [this](const Eigen::VectorXd& x) {
    for (Eigen::Index i = 0; i < x.size(); ++i) out_ << "," << x[i];
  };
  put(s.q);
  put(s.v);
  put(s.lambda);
  put(s.power);
  out_ << "," << s.drift_position << "," << s.drift_velocity << "," << s.energy
       << "," << s.energy_residual;
  put(s.input_work);
  out_ << "," << s.damping_loss << "," << s.other_work;
  put(s.constraint_work);
  out_ << "," << s.stabilization_work;
  put(s.quadratures);
  for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(n_sens_); ++j) {
    if (j < s.sens.cols()) {
      put(s.sens.col(j));
    } else {
      // A sample without sensitivities (cannot happen in a forward run);
      // keep the row rectangular.
      for (int i = 0; i < 2 * model_.nq() + model_.nc(); ++i) out_ << ",nan";
    }
  }
  out_ << "\n";
  out_.flush();
}

std::string SummaryJson(const Model& model,
                        const SimulationSummary& sum,
                        const Eigen::VectorXd& params) {
  using nlohmann::json;
  json j;
  j["problem"] = model.name();
  j["status"] = sum.ok ? "ok" : "failed";
  if (!sum.ok) j["error"] = sum.error;
  j["formulation"] = ToString(sum.formulation);
  j["integrator"] = ToString(sum.integrator);
  j["tolerances"] = {{"rtol", sum.rtol}, {"atol", sum.atol}};
  j["coordinates"] = model.coordinate_names();
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
    evj.push_back({{"name", e.name},
                   {"t", e.t},
                   {"direction", e.direction},
                   {"stopped", e.stopped}});
  }
  j["events"] = evj;
  j["drift"] = {{"position_max", Num(sum.drift_position_max)},
                {"velocity_max", Num(sum.drift_velocity_max)},
                {"tolerance", sum.drift_tol},
                {"escalations", esc}};
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
  j["constraint_work"] = {{"total", Num(total)},
                          {"per_constraint", cw},
                          {"ideal_total", Num(ideal_total)}};
  json iw = json::object();
  for (int k = 0; k < model.num_inputs() && k < f.input_work.size(); ++k)
    iw[model.inputs()[k].name] = Num(f.input_work[k]);
  j["work"] = {{"inputs", iw},
               {"damping_loss", Num(f.damping_loss)},
               {"other", Num(f.other_work)},
               {"explicit_time", Num(f.explicit_time_work)},
               {"stabilization", Num(f.stabilization_work)}};
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
    if (sr.method == SensMethod::kAdjoint)
      sj["functional_value"] = Num(sr.functional_value);
    j["sensitivities"] = sj;
  }
  j["stats"] = {
      {"steps", sum.stats.steps},
      {sum.integrator == Integrator::kIdas ? "residual_evals" : "rhs_evals",
       sum.stats.rhs_evals},
      {"jacobian_evals", sum.stats.jacobian_evals},
      {"error_test_failures", sum.stats.error_test_failures},
      {"nonlinear_conv_failures", sum.stats.nonlinear_conv_failures},
      {"projections", sum.stats.projections}};
  return j.dump(2) + "\n";
}

}  // namespace daedalus
