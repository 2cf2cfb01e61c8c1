#include "cli/ensemble_table.hpp"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "cli/ensemble_optimize.hpp"
#include "cli/run_optimize.hpp"
#include "cli/run_single.hpp"

namespace daedalus::internal {
namespace {

using ojson = nlohmann::ordered_json;

// The task's own fields, first in every row.
ojson RowHead(const ojson& task) {
  ojson row;
  row["member"] = task.at("member");
  row["name"] = task.value("name", "");
  row["inputs"] = task.at("inputs");
  row["dir"] = task.at("dir");
  return row;
}

// The summary's scalars a table of members compares.
void AddSummary(const nlohmann::json& s, ojson* row) {
  ojson& r = *row;
  r["t_reached"] = s.value("t_reached", nlohmann::json());
  r["samples"] = s.value("samples", 0);
  const nlohmann::json fin = s.value("final", nlohmann::json::object());
  r["final"] = {{"q", fin.value("q", nlohmann::json::array())},
                {"v", fin.value("v", nlohmann::json::array())}};
  const nlohmann::json drift = s.value("drift", nlohmann::json::object());
  r["drift_position_max"] = drift.value("position_max", nlohmann::json());
  r["drift_velocity_max"] = drift.value("velocity_max", nlohmann::json());
  const nlohmann::json energy = s.value("energy", nlohmann::json::object());
  r["energy_residual_max"] =
      energy.value("balance_residual_max", nlohmann::json());
  r["quadratures"] = s.value("quadratures", nlohmann::json::object());
  r["parameters"] = s.value("parameters", nlohmann::json::object());
  if (s.contains("sensitivities")) r["sensitivities"] = s["sensitivities"];
}

std::string Number(const ojson& x) {
  if (!x.is_number()) return x.is_null() ? "nan" : "";
  // The shortest text that reads back as the same double.
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, x.get<double>());
  return std::string(buf, res.ptr);
}

std::string Quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Writes `text` to `path` through `path.partial`.
std::string WriteFile(const std::string& path, const std::string& text) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary);
    out << text;
    if (!out) return "cannot write '" + partial + "'";
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) return "cannot rename '" + partial + "': " + ec.message();
  return "";
}

}  // namespace

std::string RunMemberTask(const Problem& problem,
                          const std::string& program,
                          const std::string& task_text,
                          int rank) {
  const auto start = std::chrono::steady_clock::now();
  ojson row;
  try {
    const ojson task = ojson::parse(task_text);
    row = RowHead(task);
    row["status"] = "failed";
    std::vector<std::string> args = task.at("argv");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    RunConfig cfg;
    bool parsed = false;
    try {
      cfg =
          ParseCommandLine(problem, static_cast<int>(argv.size()), argv.data());
      parsed = true;
    } catch (const std::invalid_argument& e) {
      // A parameter outside its range, or options this member cannot run
      // with: the member fails, the others go on.
      row["error"] = std::string("bad member options: ") + e.what();
    }
    if (parsed && !cfg.optimize.empty()) {
      // An optimization: the path of a single --optimize run.
      const OptimizeRunResult r = OptimizeSingle(problem, cfg, program, false);
      if (!r.json.empty()) AddSummary(nlohmann::json::parse(r.json), &row);
      AddOptimization(r, &row);
    } else if (parsed) {
      const SingleRunResult r = RunSingle(problem, cfg, program, false);
      if (!r.json.empty()) {
        const nlohmann::json s = nlohmann::json::parse(r.json);
        row["status"] = s.value("status", "failed");
        if (s.contains("error")) row["error"] = s["error"];
        AddSummary(s, &row);
      }
      if (r.exit_code != 0 && row["status"] == "ok") row["status"] = "failed";
      if (r.exit_code != 0 && !row.contains("error")) row["error"] = r.message;
    }
  } catch (const std::exception& e) {
    if (!row.contains("member")) row["member"] = -1;
    row["status"] = "failed";
    row["error"] = std::string("member could not run: ") + e.what();
  } catch (...) {
    if (!row.contains("member")) row["member"] = -1;
    row["status"] = "failed";
    row["error"] = "member could not run: an exception of unknown type";
  }
  if (!row.contains("error")) row["error"] = "";
  row["rank"] = rank;
  row["wall_time"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ojson PendingRow(const std::string& task) {
  ojson row = RowHead(ojson::parse(task));
  row["status"] = "pending";
  row["error"] = "not run (the ensemble was interrupted first)";
  return row;
}

std::string WriteEnsembleTables(const Model& model,
                                const ojson& meta,
                                const std::vector<ojson>& rows,
                                const std::string& base) {
  // Columns: the inputs of the first member (all members have the same),
  // then the summary's scalars; gradients of functionals as they appear.
  std::vector<std::string> inputs;
  if (!rows.empty())
    for (const auto& kv : rows.front().at("inputs")) inputs.push_back(kv[0]);
  std::vector<std::string> grads;  // "dF/dp"
  std::set<std::string> seen;
  bool functional_value = false;
  for (const ojson& r : rows) {
    if (!r.contains("sensitivities")) continue;
    const ojson& s = r["sensitivities"];
    functional_value |= s.contains("functional_value");
    const std::vector<std::string> ps = s.value("parameters", ojson::array());
    // Named: iterating items() of a temporary would dangle.
    const ojson funcs = s.value("functionals", ojson::object());
    for (auto it = funcs.begin(); it != funcs.end(); ++it)
      for (const std::string& p : ps)
        if (seen.insert("d" + it.key() + "/d" + p).second)
          grads.push_back("d" + it.key() + "/d" + p);
  }
  // An ensemble of optimizations: IPOPT's answer and the free variables'
  // final values ("opt:<name>") after the wall time.
  std::vector<std::string> vars;
  const bool optimization = meta.contains("optimization");
  if (optimization)
    for (const auto& v : meta["optimization"].at("variables"))
      vars.push_back(v.at("name"));
  std::ostringstream csv;
  csv << "member,name";
  for (const auto& c : inputs) csv << "," << Quote(c);
  csv << ",status,wall_time";
  if (optimization) {
    csv << ",ipopt_status,objective,kkt_residual,iterations,optimum";
    for (const auto& v : vars) csv << "," << Quote("opt:" + v);
  }
  csv << ",t_reached,samples";
  for (const auto& c : model.coordinate_names()) csv << "," << Quote(c);
  for (const auto& c : model.velocity_names()) csv << "," << Quote("v_" + c);
  csv << ",drift_position_max,drift_velocity_max,energy_residual_max";
  for (int k = 0; k < model.num_quadratures(); ++k)
    csv << "," << Quote(model.quadrature_name(k));
  if (functional_value) csv << ",functional_value";
  for (const auto& g : grads) csv << "," << Quote(g);
  csv << ",rank,dir,error\n";
  const int nq = model.nq(), nv = model.nv();
  for (const ojson& r : rows) {
    csv << r.value("member", -1) << "," << Quote(r.value("name", ""));
    const ojson in = r.value("inputs", ojson::array());
    for (size_t c = 0; c < inputs.size(); ++c)
      csv << "," << (c < in.size() ? Quote(in[c][1]) : "");
    const bool ran = r.contains("t_reached");
    csv << "," << r.value("status", "") << ","
        << (r.contains("wall_time") ? Number(r["wall_time"]) : "");
    if (optimization) {
      const ojson oc = r.value("optimal_control", ojson::object());
      const bool solved = !oc.empty();
      csv << "," << Quote(oc.value("status", "")) << ","
          << (solved ? Number(oc["objective"]) : "") << ","
          << (solved ? Number(oc["kkt_residual"]) : "") << ","
          << (solved ? std::to_string(oc.value("iterations", 0)) : "") << ","
          << (solved && oc.value("optimum", 0) > 0
                  ? std::to_string(oc.value("optimum", 0))
                  : "");
      const ojson values = oc.value("values", ojson::array());
      for (size_t k = 0; k < vars.size(); ++k)
        csv << ","
            << (k < values.size() && values[k][0] == vars[k]
                    ? Number(values[k][1])
                    : "");
    }
    csv << "," << (ran ? Number(r["t_reached"]) : "") << ","
        << (ran ? std::to_string(r.value("samples", 0)) : "");
    for (const char* key : {"q", "v"}) {
      const ojson v =
          ran ? r["final"].value(key, ojson::array()) : ojson::array();
      const int n = key[0] == 'q' ? nq : nv;
      for (int i = 0; i < n; ++i)
        csv << "," << (i < static_cast<int>(v.size()) ? Number(v[i]) : "");
    }
    for (const char* key :
         {"drift_position_max", "drift_velocity_max", "energy_residual_max"})
      csv << "," << (ran ? Number(r[key]) : "");
    const ojson quad = r.value("quadratures", ojson::object());
    for (int k = 0; k < model.num_quadratures(); ++k) {
      const std::string& qn = model.quadrature_name(k);
      csv << "," << (quad.contains(qn) ? Number(quad[qn]) : "");
    }
    const ojson sens = r.value("sensitivities", ojson::object());
    if (functional_value)
      csv << ","
          << (sens.contains("functional_value")
                  ? Number(sens["functional_value"])
                  : "");
    for (const auto& g : grads) {
      std::string cell;
      const std::vector<std::string> ps =
          sens.value("parameters", ojson::array());
      const ojson funcs = sens.value("functionals", ojson::object());
      for (auto it = funcs.begin(); it != funcs.end(); ++it)
        for (size_t p = 0; p < ps.size() && p < it.value().size(); ++p)
          if ("d" + it.key() + "/d" + ps[p] == g) cell = Number(it.value()[p]);
      csv << "," << cell;
    }
    csv << "," << (r.contains("rank") ? std::to_string(r.value("rank", 0)) : "")
        << "," << Quote(r.value("dir", "")) << ","
        << Quote(r.value("error", "")) << "\n";
  }
  std::string err = WriteFile(base + ".ensemble.csv", csv.str());
  if (!err.empty()) return err;
  ojson j = meta;
  j["rows"] = rows;
  return WriteFile(
      base + ".ensemble.json",
      j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace daedalus::internal
