#include "daedalus/run.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "daedalus/output.hpp"

namespace daedalus {

namespace {

const char* const kValueFlags[] = {
    "--t-end",           "--rtol",           "--atol",        "--output-step",
    "--output-dir",      "--param",          "--formulation", "--integrator",
    "--baumgarte-alpha", "--baumgarte-beta", "--kkt",         "--drift-tol",
    "--drift-action"};
const char* const kBoolFlags[] = {"--quiet", "--help"};

std::string ValidFlags() {
  std::string s;
  for (const char* f : kValueFlags) s += std::string(" ") + f;
  for (const char* f : kBoolFlags) s += std::string(" ") + f;
  return s;
}

double ParseNumber(const std::string& flag, const std::string& text) {
  size_t used = 0;
  double x = 0.0;
  try {
    x = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !std::isfinite(x)) {
    throw std::invalid_argument(flag + ": '" + text +
                                "' is not a finite number");
  }
  return x;
}

}  // namespace

RunConfig ParseCommandLine(const Problem& problem,
                           int argc,
                           const char* const* argv) {
  RunConfig cfg;
  cfg.options = problem.defaults;
  cfg.params = problem.model.default_parameters();
  bool integrator_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    bool is_value_flag = false, is_bool_flag = false;
    for (const char* f : kValueFlags) is_value_flag |= (arg == f);
    for (const char* f : kBoolFlags) is_bool_flag |= (arg == f);
    if (!is_value_flag && !is_bool_flag) {
      throw std::invalid_argument("unknown option '" + arg +
                                  "'; valid options:" + ValidFlags());
    }
    if (is_bool_flag) {
      if (has_value) throw std::invalid_argument(arg + " takes no value");
      if (arg == "--quiet") cfg.quiet = true;
      if (arg == "--help") cfg.help = true;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      value = argv[++i];
    }
    SimulationOptions& o = cfg.options;
    if (arg == "--t-end") {
      o.t_end = ParseNumber(arg, value);
    } else if (arg == "--rtol") {
      o.rtol = ParseNumber(arg, value);
    } else if (arg == "--atol") {
      o.atol = ParseNumber(arg, value);
    } else if (arg == "--output-step") {
      o.output_step = ParseNumber(arg, value);
    } else if (arg == "--output-dir") {
      cfg.output_dir = value;
    } else if (arg == "--formulation") {
      o.formulation = FormulationFromString(value);
    } else if (arg == "--integrator") {
      o.integrator = IntegratorFromString(value);
      integrator_given = true;
    } else if (arg == "--baumgarte-alpha") {
      o.baumgarte_alpha = ParseNumber(arg, value);
    } else if (arg == "--baumgarte-beta") {
      o.baumgarte_beta = ParseNumber(arg, value);
    } else if (arg == "--drift-tol") {
      o.drift_tol = ParseNumber(arg, value);
    } else if (arg == "--drift-action") {
      o.drift_action = DriftActionFromString(value);
    } else if (arg == "--kkt") {
      o.kkt.method = KktMethodFromString(value);
    } else if (arg == "--param") {
      const size_t e = value.find('=');
      if (e == std::string::npos) {
        throw std::invalid_argument("--param expects NAME=VALUE, got '" +
                                    value + "'");
      }
      const std::string name = value.substr(0, e);
      const int idx = problem.model.ParameterIndex(name);
      cfg.params[idx] = ParseNumber("--param " + name, value.substr(e + 1));
    }
  }
  // The DAE forms run on IDAS; pick it when the user did not choose.
  if (!integrator_given && (cfg.options.formulation == Formulation::kGgl ||
                            cfg.options.formulation == Formulation::kIndex3))
    cfg.options.integrator = Integrator::kIdas;
  if (!integrator_given && cfg.options.formulation == Formulation::kProjection)
    cfg.options.integrator = Integrator::kCvodesBdf;
  std::string why;
  if (!cfg.help && !cfg.options.IsValid(&why))
    throw std::invalid_argument("invalid options: " + why);
  return cfg;
}

std::string Usage(const Problem& problem, const std::string& program) {
  const Model& m = problem.model;
  const SimulationOptions& d = problem.defaults;
  std::ostringstream os;
  os << "usage: " << program << " [options]\n\n";
  if (!problem.description.empty()) os << problem.description << "\n\n";
  os << "options:\n"
     << "  --t-end T            final time [s] (default " << d.t_end << ")\n"
     << "  --rtol R             relative tolerance (default " << d.rtol << ")\n"
     << "  --atol A             absolute tolerance (default " << d.atol << ")\n"
     << "  --output-step DT     output spacing [s] (default " << d.output_step
     << ")\n"
     << "  --output-dir DIR     where <name>.csv and <name>.json go (default "
        ".)\n"
     << "  --param NAME=VALUE   set a model parameter (repeatable)\n"
     << "  --formulation F      unstabilized | baumgarte | projection | ggl |\n"
     << "                       index3 (default " << ToString(d.formulation)
     << ")\n"
     << "  --integrator I       cvodes-bdf | cvodes-adams | idas (default "
     << ToString(d.integrator) << ")\n"
     << "  --baumgarte-alpha A  velocity gain [1/s] (default "
     << d.baumgarte_alpha << ")\n"
     << "  --baumgarte-beta B   position gain [1/s] (default "
     << d.baumgarte_beta << ")\n"
     << "  --kkt M              auto | dense | full-lu | schur | sparse-lu |\n"
     << "                       sparse-cholesky | qr (default "
     << ToString(d.kkt.method) << ")\n"
     << "  --drift-tol D        largest accepted drift (0: off; default "
     << d.drift_tol << ")\n"
     << "  --drift-action A     fail | escalate (Baumgarte -> projection)\n"
     << "  --quiet              no summary on stdout\n"
     << "  --help               this text\n\n"
     << "parameters:";
  for (int i = 0; i < m.num_parameters(); ++i)
    os << "\n  " << m.parameter_names()[i] << " = "
       << m.default_parameters()[i];
  if (m.num_parameters() == 0) os << " (none)";
  os << "\n";
  return os.str();
}

int run(const Problem& problem, int argc, char** argv) {
  const std::string program = argc > 0 ? argv[0] : problem.model.name();
  const std::string name = problem.model.name();
  RunConfig cfg;
  try {
    cfg = ParseCommandLine(problem, argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": " << e.what() << "\n(see --help)\n";
    return 2;
  }
  if (cfg.help) {
    std::cout << Usage(problem, program);
    return 0;
  }
  try {
    std::filesystem::create_directories(cfg.output_dir);
  } catch (const std::exception& e) {
    std::cerr << program << ": cannot create output directory '"
              << cfg.output_dir << "': " << e.what() << "\n";
    return 2;
  }
  const std::string base =
      (std::filesystem::path(cfg.output_dir) / name).string();
  SimulationSummary summary;
  try {
    const InitialState x0 = problem.initial(cfg.params);
    CsvWriter csv(problem.model, base + ".csv");
    summary = Simulate(problem.model, x0, cfg.params, cfg.options, &csv);
  } catch (const std::exception& e) {
    summary.ok = false;
    summary.problem = name;
    summary.formulation = cfg.options.formulation;
    summary.integrator = cfg.options.integrator;
    summary.rtol = cfg.options.rtol;
    summary.atol = cfg.options.atol;
    summary.drift_tol = cfg.options.drift_tol;
    summary.error = e.what();
  }
  {
    std::ofstream js(base + ".json");
    js << SummaryJson(problem.model, summary, cfg.params);
    if (!js) {
      std::cerr << program << ": cannot write '" << base << ".json'\n";
      return 2;
    }
  }
  if (!cfg.quiet) {
    std::cout << summary.FullReport(problem.model);
    std::cout << "  wrote                  " << base << ".csv, " << base
              << ".json\n";
  }
  if (!summary.ok) {
    std::cerr << program << ": run failed: " << summary.error << "\n";
    return 1;
  }
  return 0;
}

}  // namespace daedalus

namespace daedalus {

int run(const std::function<Problem()>& make, int argc, char** argv) {
  Problem problem;
  try {
    problem = make();
  } catch (const std::exception& e) {
    std::cerr << (argc > 0 ? argv[0] : "daedalus")
              << ": invalid problem definition: " << e.what() << "\n";
    return 2;
  }
  return run(problem, argc, argv);
}

}  // namespace daedalus

namespace daedalus {

int run(std::vector<IntOption> options,
        const std::function<Problem(const std::vector<IntOption>&)>& make,
        int argc,
        char** argv) {
  const std::string program = argc > 0 ? argv[0] : "daedalus";
  std::vector<char*> rest;
  if (argc > 0) rest.push_back(argv[0]);
  try {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i], value;
      bool matched = false;
      for (IntOption& o : options) {
        const std::string flag = "--" + o.name;
        if (arg == flag) {
          if (i + 1 >= argc)
            throw std::invalid_argument(flag + " needs a value");
          value = argv[++i];
        } else if (arg.rfind(flag + "=", 0) == 0) {
          value = arg.substr(flag.size() + 1);
        } else {
          continue;
        }
        const double x = ParseNumber(flag, value);
        if (x != std::floor(x) || x < o.min || x > o.max)
          throw std::invalid_argument(
              flag + ": '" + value + "' must be an integer from " +
              std::to_string(o.min) + " to " + std::to_string(o.max));
        o.value = static_cast<int>(x);
        matched = true;
      }
      if (!matched) rest.push_back(argv[i]);
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << program << ": " << e.what() << "\n(see --help)\n";
    return 2;
  }
  auto build = [&] {
    Problem p = make(options);
    p.description += "\n\nproblem options:";
    for (const IntOption& o : options)
      p.description += "\n  --" + o.name + " N  " + o.help + " (" +
                       std::to_string(o.min) + ".." + std::to_string(o.max) +
                       ", this run " + std::to_string(o.value) + ")";
    return p;
  };
  rest.push_back(nullptr);
  return run(build, static_cast<int>(rest.size()) - 1, rest.data());
}

}  // namespace daedalus
