#include "cli/run_inverse.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "cli/run_files.hpp"
#include "daedalus/inverse_dynamics.hpp"
#include "eval/eval_stop.hpp"

namespace daedalus::internal {

namespace {

using nlohmann::json;

json JsonNumber(double x) {
  if (std::isfinite(x)) return x;
  return nullptr;
}

// {name: value} over names and a vector of the same size.
json Named(const std::vector<std::string>& names, const Eigen::VectorXd& x) {
  json o = json::object();
  for (size_t i = 0; i < names.size(); ++i)
    o[names[i]] = JsonNumber(x[static_cast<Eigen::Index>(i)]);
  return o;
}

std::vector<std::string> Channels(const Model& m) {
  std::vector<std::string> c;
  for (const auto& in : m.inputs()) c.push_back(in.name);
  return c;
}

std::vector<std::string> Rows(const Model& m) {
  std::vector<std::string> r;
  for (int i = 0; i < m.nc(); ++i) r.push_back(m.RowName(i));
  return r;
}

// The error order of the derivatives, as the JSON and the summary state it.
std::string ErrorOrder(const InverseDynamicsResult& r, int degree) {
  const std::string d = std::to_string(degree);
  const std::string dm1 = std::to_string(degree - 1);
  if (r.accelerations_from == "given") return "exact (given)";
  if (r.accelerations_from == "differentiated velocities")
    return "O(h^" + d + ") (first derivative of the velocity samples)";
  return "O(h^" + dm1 + "); O(h^" + d +
         ") at samples centred in a uniform stencil when the degree is even "
         "(second derivative of the positions)";
}

void WriteCsv(const std::string& path,
              const Model& model,
              const InverseDynamicsResult& r) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot open '" + path + "'");
  std::vector<std::string> cols{"t"};
  for (const auto& c : Channels(model)) cols.push_back("u_" + c);
  for (const auto& row : Rows(model)) cols.push_back("lambda_" + row);
  for (const auto& c : Channels(model)) cols.push_back("power_input_" + c);
  for (const auto& row : Rows(model)) cols.push_back("power_" + row);
  for (const auto& c : model.velocity_names()) cols.push_back("residual_" + c);
  cols.push_back("residual_norm");
  for (const auto& c : model.velocity_names()) cols.push_back("vdot_" + c);
  if (model.nc() > 0)
    cols.insert(cols.end(), {"constraint_position", "constraint_velocity",
                             "constraint_acceleration"});
  for (size_t i = 0; i < cols.size(); ++i) out << (i ? "," : "") << cols[i];
  out << "\n";
  std::string row;
  char buf[32];
  auto num = [&](double x) {
    if (!row.empty()) row.push_back(',');
    const auto res = std::to_chars(buf, buf + sizeof buf, x);
    row.append(buf, res.ptr);
  };
  auto vec = [&](const Eigen::VectorXd& x) {
    for (Eigen::Index i = 0; i < x.size(); ++i) num(x[i]);
  };
  for (const InverseDynamicsSample& s : r.samples) {
    row.clear();
    num(s.t);
    vec(s.u);
    vec(s.lambda);
    vec(s.input_power);
    vec(s.constraint_power);
    vec(s.residual);
    num(s.residual_norm);
    vec(s.vdot);
    if (model.nc() > 0) {
      num(s.constraint_position);
      num(s.constraint_velocity);
      num(s.constraint_acceleration);
    }
    row.push_back('\n');
    out << row;
  }
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

json SummaryJson(const Problem& problem,
                 const RunConfig& cfg,
                 const MotionSamples& motion,
                 const InverseDynamicsResult& r,
                 const std::string& csv) {
  const Model& m = problem.model;
  const InverseDynamicsOptions& o = cfg.inverse_dynamics_options;
  const int window = o.window > 0 ? o.window : o.degree + 1;
  json j;
  j["problem"] = m.name();
  j["analysis"] = "inverse_dynamics";
  j["status"] = r.ok ? "ok" : r.stop_code != 0 ? "interrupted" : "failed";
  if (!r.ok) j["error"] = r.error;
  if (r.stop_code != 0) j["stop_code"] = r.stop_code;
  j["file"] = csv;
  j["motion"] = {{"file", cfg.inverse_dynamics},
                 {"samples", motion.t.size()},
                 {"t_first", JsonNumber(motion.t.front())},
                 {"t_last", JsonNumber(motion.t.back())},
                 {"velocities", r.velocities_from},
                 {"accelerations", r.accelerations_from}};
  j["differentiation"] = {
      {"method", "local polynomial, least squares"},
      {"degree", o.degree},
      {"window", window},
      {"acceleration_error_order", ErrorOrder(r, o.degree)}};
  j["coordinates"] = m.coordinate_names();
  j["inputs"] = Channels(m);
  j["constraint_rows"] = Rows(m);
  j["parameters"] = Named(m.parameter_names(), cfg.params);
  Eigen::VectorXd w = o.input_weights;
  if (w.size() == 0) w = Eigen::VectorXd::Ones(m.num_inputs());
  j["input_weights"] = Named(Channels(m), w);
  j["actuation"] = {{"classification", r.actuation()},
                    {"nv", m.nv()},
                    {"nu", m.num_inputs()},
                    {"nc", m.nc()},
                    {"dof", r.dof},
                    {"under_actuated", r.under_actuated},
                    {"over_actuated", r.over_actuated},
                    {"redundant_constraints", r.redundant_constraints}};
  j["residual"] = {{"max_norm", JsonNumber(r.residual_max)},
                   {"t_max", JsonNumber(r.t_residual_max)},
                   {"max_per_coordinate",
                    Named(m.velocity_names(), r.residual_max_per_coordinate)}};
  j["input_max_abs"] = Named(Channels(m), r.input_max_abs);
  j["input_work"] = Named(Channels(m), r.input_work);
  j["constraint_work"] = Named(Rows(m), r.constraint_work);
  j["motion_constraint_residual"] = {
      {"position", JsonNumber(r.constraint_position_max)},
      {"velocity", JsonNumber(r.constraint_velocity_max)},
      {"acceleration", JsonNumber(r.constraint_acceleration_max)}};
  j["samples"] = r.samples.size();
  j["warnings"] = r.warnings;
  j["notes"] = r.notes;
  return j;
}

void PrintSummary(std::ostream& os,
                  const Model& m,
                  const MotionSamples& motion,
                  const InverseDynamicsResult& r,
                  int degree) {
  os << std::setprecision(6);
  os << "inverse dynamics of '" << m.name() << "': " << (r.ok ? "ok" : "FAILED")
     << "\n";
  if (!r.ok) os << "  error                  " << r.error << "\n";
  os << "  motion                 " << motion.source << ", " << motion.t.size()
     << " samples, t = " << motion.t.front() << " .. " << motion.t.back()
     << " s\n";
  os << "  velocities             " << r.velocities_from << "\n";
  os << "  accelerations          " << r.accelerations_from << ", error "
     << ErrorOrder(r, degree) << "\n";
  os << "  actuation              " << r.actuation() << " (nv " << m.nv()
     << ", nu " << m.num_inputs() << ", nc " << m.nc() << ", dof " << r.dof
     << ")\n";
  // Names pad to the label column (23 characters after the indent) and
  // are always followed by a space, so a long name never runs into the
  // figures.
  size_t name_width = 0;
  for (int k = 0; k < m.num_inputs(); ++k)
    name_width = std::max(name_width, m.inputs()[k].name.size() + 6);
  for (int i = 0; i < m.nc(); ++i)
    name_width = std::max(name_width, m.RowName(i).size() + 11);
  const auto label = [&](const std::string& text) {
    return text +
           std::string(std::max(name_width, size_t{22}) + 1 - text.size(), ' ');
  };
  for (int k = 0; k < m.num_inputs(); ++k)
    os << "  " << label("input " + m.inputs()[k].name) << "max |u| "
       << r.input_max_abs[k] << ", work " << r.input_work[k] << " J\n";
  for (int i = 0; i < m.nc(); ++i)
    os << "  " << label("constraint " + m.RowName(i)) << "work "
       << r.constraint_work[i] << " J\n";
  os << "  residual               max " << r.residual_max
     << " at t = " << r.t_residual_max << " s\n";
  if (m.nc() > 0)
    os << "  motion constraints     |Phi| " << r.constraint_position_max
       << ", |J v + Phi_t| " << r.constraint_velocity_max << ", |J vdot + b| "
       << r.constraint_acceleration_max << "\n";
  for (const auto& n : r.notes) os << "  note: " << n << "\n";
  for (const auto& w : r.warnings) os << "  warning: " << w << "\n";
}

}  // namespace

int RunInverseDynamics(const Problem& problem,
                       const RunConfig& cfg,
                       const std::string& program) {
  const Model& model = problem.model;
  // SIGINT, SIGTERM and SIGHUP: while the motion is read nothing is
  // written yet; then the computation ends after the sample being
  // computed, with the samples so far and a JSON marked "interrupted".
  StopOnSignals signals;
  MotionSamples motion;
  InverseDynamicsOptions options = cfg.inverse_dynamics_options;
  options.stop = StopOnSignals::flag();
  std::string base;
  try {
    // The reading looks at the flag every few thousand lines: a motion of
    // 10^5 samples or more takes seconds to read.
    ScopedEvalStop reading(options.stop);
    motion = ReadMotionCsv(cfg.inverse_dynamics, model);
    CheckInverseDynamicsInput(model, cfg.params, motion, options);
    base = OutputBase(cfg.output_dir, model.name()) + ".inverse_dynamics";
  } catch (const std::invalid_argument& e) {
    if (options.stop->load() == 0) {
      std::cerr << program << ": --inverse-dynamics: " << e.what() << "\n";
      return 2;
    }
  }
  if (options.stop->load() != 0) {
    std::cerr << program << ": interrupted by "
              << SignalName(options.stop->load())
              << " while reading the motion; nothing written\n";
    return 128 + options.stop->load();
  }
  try {
    std::filesystem::create_directories(cfg.output_dir);
  } catch (const std::exception& e) {
    std::cerr << program << ": cannot create output directory '"
              << cfg.output_dir << "': " << e.what() << "\n";
    return 2;
  }
  RunFiles files(base);
  // The first act: the previous results no longer look current.
  const std::string marked = files.MarkSuperseded();
  if (!marked.empty()) {
    std::cerr << program << ": " << marked
              << "; choose a writable --output-dir\n";
    return 2;
  }
  InverseDynamicsResult result;
  try {
    result = InverseDynamics(model, cfg.params, motion, options);
  } catch (const std::invalid_argument& e) {
    // Checked above: not expected; reported as a failed analysis.
    result.ok = false;
    result.error = e.what();
  }
  try {
    WriteCsv(files.csv_partial(), model, result);
    // A signal after the last sample (while the rows were written) is
    // answered as one during the computation: the samples are complete,
    // the JSON says "interrupted", the exit status is 128 + N.
    if (result.stop_code == 0 && options.stop->load() != 0) {
      result.stop_code = options.stop->load();
      if (result.ok)
        result.error = "interrupted (signal " +
                       std::to_string(result.stop_code) +
                       ") after the last of " +
                       std::to_string(result.samples.size()) + " samples";
      result.ok = false;
    }
    std::ofstream js(files.json_partial());
    js << SummaryJson(problem, cfg, motion, result, files.csv())
              .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
       << "\n";
    if (!js)
      throw std::runtime_error("cannot write '" + files.json_partial() + "'");
  } catch (const std::exception& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
  const std::string commit = files.Commit();
  if (!commit.empty()) {
    std::cerr << program << ": " << commit << "\n";
    return 1;
  }
  if (!cfg.quiet) {
    PrintSummary(std::cout, model, motion, result,
                 cfg.inverse_dynamics_options.degree);
    std::cout << "  wrote                  " << files.csv() << ", "
              << files.json() << "\n";
  }
  if (result.stop_code != 0) {
    std::cerr << program << ": inverse dynamics interrupted by "
              << SignalName(result.stop_code) << ": " << result.error << "; "
              << files.csv() << " keeps the " << result.samples.size()
              << " samples computed, " << files.json()
              << " says \"interrupted\"\n";
    return 128 + result.stop_code;
  }
  if (!result.ok) {
    std::cerr << program << ": inverse dynamics failed: " << result.error
              << "\n";
    return 1;
  }
  return 0;
}

}  // namespace daedalus::internal
