#include "daedalus/run.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "cli/ensemble.hpp"
#include "cli/run_extras.hpp"
#include "cli/run_files.hpp"
#include "cli/run_inverse.hpp"
#include "cli/run_optimize.hpp"
#include "cli/run_single.hpp"
#include "daedalus/output.hpp"
#include "daedalus/side_outputs.hpp"
#include "daedalus/symplectic.hpp"
#include "eval/compiled_model.hpp"
#include "eval/expr_program.hpp"
#include "eval/sparse_limits.hpp"
#include "formulation/dae_form.hpp"
#include "formulation/support.hpp"

namespace daedalus {

namespace {

const char* const kValueFlags[] = {"--t-end",
                                   "--rtol",
                                   "--atol",
                                   "--output-step",
                                   "--output-dir",
                                   "--param",
                                   "--q0",
                                   "--v0",
                                   "--formulation",
                                   "--integrator",
                                   "--baumgarte-alpha",
                                   "--baumgarte-beta",
                                   "--kkt",
                                   "--drift-tol",
                                   "--drift-action",
                                   "--linear-solver",
                                   "--jacobian",
                                   "--evaluator",
                                   "--emit-kernels",
                                   "--sens",
                                   "--sens-method",
                                   "--functional",
                                   "--multiplier-atol",
                                   "--step",
                                   "--rho-inf",
                                   "--counterfactual",
                                   "--max-steps",
                                   "--nonlin-conv-coef",
                                   "--max-samples",
                                   "--inverse-dynamics",
                                   "--sens-corrector",
                                   "--id-weights",
                                   "--id-degree",
                                   "--id-window",
                                   "--optimize",
                                   "--guess",
                                   "--contact",
                                   "--zeno-velocity",
                                   "--gap-tolerance",
                                   "--theta",
                                   "--pgs-tol",
                                   "--pgs-max-iter"};
const char* const kBoolFlags[] = {"--quiet",
                                  "--help",
                                  "--sens-dq",
                                  "--sens-staggered",
                                  "--sens-no-error-control",
                                  "--project-penetration",
                                  "--allow-redundant",
                                  "--no-broad-phase",
                                  "--no-joint-limits",
                                  "--error-estimate"};

// Splits "a,b,c" into names (empty entries are an error).
std::vector<std::string> SplitList(const std::string& flag,
                                   const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma - start);
    if (item.empty())
      throw std::invalid_argument(flag + ": empty name in '" + text +
                                  "' (expected NAME[,NAME...])");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string ValidFlags() {
  std::string s;
  for (const char* f : kValueFlags) s += std::string(" ") + f;
  for (const char* f : kBoolFlags) s += std::string(" ") + f;
  return s;
}

}  // namespace

namespace internal {

// A decimal number, the whole text: an optional sign, digits, an optional
// fraction and exponent (std::from_chars, which takes neither leading
// blanks nor "0x", which std::stod accepted), and finite.
double ParseNumber(const std::string& flag, const std::string& text) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (first != last && *first == '+') ++first;  // from_chars takes '-' only
  double x = 0.0;
  const auto [end, ec] = std::from_chars(first, last, x);
  if (text.empty() || first == last ||
      (first != text.data() && *first == '-') || ec != std::errc() ||
      end != last || !std::isfinite(x)) {
    throw std::invalid_argument(
        flag + ": '" + text +
        "' is not a finite decimal number (digits, optional sign, fraction "
        "and exponent; e.g. 1e-6)");
  }
  return x;
}

// A positive whole number (a count: --max-steps, --max-samples).
long ParseCount(const std::string& flag, const std::string& text) {
  long n = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      n <= 0) {
    throw std::invalid_argument(flag + ": '" + text +
                                "' is not a positive whole number");
  }
  return n;
}

bool IsValueFlag(const std::string& arg) {
  for (const char* f : kValueFlags)
    if (arg == f) return true;
  return false;
}

void CollectPrograms(const Problem& problem, const RunConfig& cfg) {
  const CompiledModel* cm = GetCompiled(problem.model);
  if (cm == nullptr) return;  // the dual-number path: nothing to generate
  for (int v = 0; v < kStageVariants; ++v) cm->Stage(v);
  // The IDAS programs of every form with the run's options (Baumgarte
  // gains are constants of the program: other gains are interpreted).
  for (Formulation f : {Formulation::kGgl, Formulation::kIndex3,
                        Formulation::kBaumgarte, Formulation::kUnstabilized}) {
    SimulationOptions o = cfg.options;
    o.formulation = f;
    o.integrator = Integrator::kIdas;
    o.compiled = true;
    // With exact forward sensitivities: their programs too (the others are
    // the same either way).
    o.sensitivity.method = SensMethod::kForward;
    o.sensitivity.difference_quotient = false;
    PrepareIdasPrograms(problem.model, o, cfg.params);
  }
}

int WriteKernels(const ProgramCollector& collector,
                 const std::string& program,
                 const std::string& path) {
  const std::string origin = std::filesystem::path(program).filename();
  std::ofstream out(path);
  out << collector.KernelSource(origin);
  if (!out) {
    std::cerr << program << ": cannot write '" << path << "'\n";
    return 2;
  }
  return 0;
}

}  // namespace internal

Eigen::MatrixXd InitialStateTangent(const Problem& problem,
                                    const Eigen::VectorXd& params) {
  const int nq = problem.model.nq(), nv = problem.model.nv(),
            np = problem.model.num_parameters();
  Eigen::MatrixXd T = Eigen::MatrixXd::Zero(nq + nv, np);
  for (int i = 0; i < np; ++i) {
    // Central difference of the problem's closed-form initial-state map:
    // step 1e-6 relative gives truncation ~1e-12 and round-off ~1e-10
    // relative, far below any integration tolerance in use.
    const double h = 1e-6 * std::max(1.0, std::abs(params[i]));
    Eigen::VectorXd pp = params, pm = params;
    pp[i] += h;
    pm[i] -= h;
    const InitialState a = problem.initial(pp), b = problem.initial(pm);
    T.col(i).head(nq) = (a.q - b.q) / (2.0 * h);
    T.col(i).tail(nv) = (a.v - b.v) / (2.0 * h);
  }
  return T;
}

RunConfig ParseCommandLine(const Problem& problem,
                           int argc,
                           const char* const* argv) {
  RunConfig cfg;
  cfg.options = problem.defaults;
  cfg.params = problem.model.default_parameters();
  bool integrator_given = false, formulation_given = false, sens_given = false,
       method_given = false, rho_inf_given = false;
  std::string moreau_jean_flag;  // the last --theta, --pgs-tol, --pgs-max-iter
  std::string id_flags;          // --id-* options given
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
      if (arg == "--sens-dq")
        cfg.options.sensitivity.difference_quotient = true;
      if (arg == "--sens-staggered")
        cfg.options.sensitivity.corrector = SensCorrector::kStaggered;
      if (arg == "--sens-no-error-control")
        cfg.options.sensitivity.error_control = false;
      if (arg == "--project-penetration")
        cfg.options.contact.project_penetration = true;
      if (arg == "--allow-redundant") cfg.options.kkt.allow_redundant = true;
      if (arg == "--no-broad-phase") {
        cfg.options.moreau_jean.broad_phase = false;
        moreau_jean_flag = arg;
      }
      if (arg == "--error-estimate") cfg.error_estimate = true;
      if (arg == "--no-joint-limits") cfg.joint_limits = false;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      value = argv[++i];
    }
    SimulationOptions& o = cfg.options;
    if (arg == "--t-end") {
      o.t_end = internal::ParseNumber(arg, value);
    } else if (arg == "--rtol") {
      o.rtol = internal::ParseNumber(arg, value);
    } else if (arg == "--atol") {
      o.atol = internal::ParseNumber(arg, value);
    } else if (arg == "--output-step") {
      o.output_step = internal::ParseNumber(arg, value);
    } else if (arg == "--output-dir") {
      cfg.output_dir = value;
    } else if (arg == "--formulation") {
      o.formulation = FormulationFromString(value);
      formulation_given = true;
    } else if (arg == "--integrator") {
      o.integrator = IntegratorFromString(value);
      integrator_given = true;
    } else if (arg == "--baumgarte-alpha") {
      o.baumgarte_alpha = internal::ParseNumber(arg, value);
    } else if (arg == "--baumgarte-beta") {
      o.baumgarte_beta = internal::ParseNumber(arg, value);
    } else if (arg == "--drift-tol") {
      o.drift_tol = internal::ParseNumber(arg, value);
    } else if (arg == "--drift-action") {
      o.drift_action = DriftActionFromString(value);
    } else if (arg == "--contact") {
      o.contact.mode = ContactModeFromString(value);
    } else if (arg == "--zeno-velocity") {
      o.contact.zeno_velocity = internal::ParseNumber(arg, value);
    } else if (arg == "--gap-tolerance") {
      o.contact.gap_tolerance = internal::ParseNumber(arg, value);
    } else if (arg == "--kkt") {
      o.kkt.method = KktMethodFromString(value);
    } else if (arg == "--multiplier-atol") {
      o.multiplier_atol = internal::ParseNumber(arg, value);
    } else if (arg == "--linear-solver") {
      o.linear_solver = LinearSolverFromString(value);
    } else if (arg == "--jacobian") {
      o.jacobian = JacobianMethodFromString(value);
    } else if (arg == "--evaluator") {
      if (value != "compiled" && value != "interpreted" && value != "ad")
        throw std::invalid_argument("--evaluator: unknown evaluator '" + value +
                                    "'; valid: compiled, interpreted, ad");
      o.compiled = value != "ad";
      cfg.interpreted = value == "interpreted";
    } else if (arg == "--emit-kernels") {
      cfg.emit_kernels = value;
    } else if (arg == "--sens") {
      o.sensitivity.parameters = SplitList(arg, value);
      // Names are checked here so that a typo fails before any work.
      ResolveSensParameters(problem.model, o.sensitivity.parameters);
      sens_given = true;
    } else if (arg == "--sens-method") {
      o.sensitivity.method = SensMethodFromString(value);
      method_given = true;
    } else if (arg == "--sens-corrector") {
      o.sensitivity.corrector = SensCorrectorFromString(value);
    } else if (arg == "--functional") {
      // Checked here, like --sens, so that a typo fails before any work
      // (the message lists the functionals the model declares).
      CheckFunctionalSpec(problem.model, value);
      o.sensitivity.functional = value;
    } else if (arg == "--step") {
      o.step = internal::ParseNumber(arg, value);
    } else if (arg == "--theta") {
      o.moreau_jean.theta = internal::ParseNumber(arg, value);
      moreau_jean_flag = arg;
    } else if (arg == "--pgs-tol") {
      o.moreau_jean.tolerance = internal::ParseNumber(arg, value);
      moreau_jean_flag = arg;
    } else if (arg == "--pgs-max-iter") {
      moreau_jean_flag = arg;
      const long n = internal::ParseCount(arg, value);
      if (n > 100000000L)
        throw std::invalid_argument(
            "--pgs-max-iter " + value +
            " is more sweeps than a step can take in reasonable time; give "
            "at most 100000000");
      o.moreau_jean.max_iterations = static_cast<int>(n);
    } else if (arg == "--rho-inf") {
      o.rho_inf = internal::ParseNumber(arg, value);
      rho_inf_given = true;
    } else if (arg == "--max-steps") {
      o.max_steps = internal::ParseCount(arg, value);
    } else if (arg == "--max-samples") {
      o.max_samples = internal::ParseCount(arg, value);
    } else if (arg == "--nonlin-conv-coef") {
      o.nonlin_conv_coef = internal::ParseNumber(arg, value);
    } else if (arg == "--inverse-dynamics") {
      if (value.empty())
        throw std::invalid_argument(
            "--inverse-dynamics needs a motion file (FILE.csv)");
      cfg.inverse_dynamics = value;
    } else if (arg == "--guess") {
      for (const std::string& item : SplitList(arg, value)) {
        const size_t e = item.find('=');
        if (e == std::string::npos || e == 0)
          throw std::invalid_argument(
              "--guess expects NAME=VALUE[,NAME=VALUE...] (a free variable "
              "of the --optimize spec: u.c0, a free parameter, q0[x]), got '" +
              item + "'");
        cfg.optimize_guess.emplace_back(
            item.substr(0, e),
            internal::ParseNumber("--guess " + item.substr(0, e),
                                  item.substr(e + 1)));
      }
    } else if (arg == "--optimize") {
      if (value.empty())
        throw std::invalid_argument("--optimize needs a spec file (SPEC.json)");
      cfg.optimize = value;
    } else if (arg == "--id-weights") {
      id_flags += " " + arg;
      Eigen::VectorXd& w = cfg.inverse_dynamics_options.input_weights;
      if (w.size() == 0) w = Eigen::VectorXd::Ones(problem.model.num_inputs());
      for (const std::string& item : SplitList(arg, value)) {
        const size_t e = item.find('=');
        if (e == std::string::npos)
          throw std::invalid_argument(
              "--id-weights expects CHANNEL=WEIGHT[,CHANNEL=WEIGHT...], got '" +
              item + "'");
        const int k = InputChannelIndex(problem.model, item.substr(0, e));
        w[k] = internal::ParseNumber(arg + " " + item.substr(0, e),
                                     item.substr(e + 1));
        if (!(w[k] > 0.0))
          throw std::invalid_argument("--id-weights " + item +
                                      ": a weight must be > 0");
      }
    } else if (arg == "--id-degree") {
      id_flags += " " + arg;
      cfg.inverse_dynamics_options.degree =
          static_cast<int>(std::min(internal::ParseCount(arg, value), 100L));
    } else if (arg == "--id-window") {
      id_flags += " " + arg;
      cfg.inverse_dynamics_options.window =
          static_cast<int>(std::min(internal::ParseCount(arg, value), 1000L));
    } else if (arg == "--counterfactual") {
      cfg.counterfactuals.push_back(ParseCounterfactual(problem.model, value));
    } else if (arg == "--param") {
      const size_t e = value.find('=');
      if (e == std::string::npos) {
        throw std::invalid_argument("--param expects NAME=VALUE, got '" +
                                    value + "'");
      }
      const std::string name = value.substr(0, e);
      const int idx = problem.model.ParameterIndex(name);
      cfg.params[idx] =
          internal::ParseNumber("--param " + name, value.substr(e + 1));
    } else if (arg == "--q0" || arg == "--v0") {
      const size_t e = value.find('=');
      if (e == std::string::npos) {
        throw std::invalid_argument(arg + " expects COORDINATE=VALUE, got '" +
                                    value + "'");
      }
      const std::string name = value.substr(0, e);
      const bool pos = arg == "--q0";
      const auto& names = pos ? problem.model.coordinate_names()
                              : problem.model.velocity_names();
      const auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) {
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        throw std::invalid_argument(
            arg + ": unknown " + (pos ? "coordinate" : "velocity") + " '" +
            name + "'; the " + (pos ? "coordinates" : "velocities") + " are " +
            known);
      }
      const int idx = static_cast<int>(it - names.begin());
      const double x =
          internal::ParseNumber(arg + " " + name, value.substr(e + 1));
      (arg == "--q0" ? cfg.q0_overrides : cfg.v0_overrides)
          .emplace_back(idx, x);
    }
  }
  // --optimize replaces the run: what only a run does would be ignored.
  if (!cfg.optimize.empty() &&
      (!cfg.inverse_dynamics.empty() || !cfg.counterfactuals.empty() ||
       cfg.error_estimate || !cfg.emit_kernels.empty()))
    throw std::invalid_argument(
        "--optimize replaces the run: it cannot be combined with "
        "--inverse-dynamics, --counterfactual, --error-estimate or "
        "--emit-kernels");
  if (cfg.optimize.empty() && !cfg.optimize_guess.empty())
    throw std::invalid_argument(
        "--guess sets initial guesses of an optimization: give --optimize "
        "SPEC.json too");
  if (cfg.inverse_dynamics.empty() && !id_flags.empty())
    throw std::invalid_argument(id_flags.substr(1) +
                                ": only with --inverse-dynamics FILE.csv");
  if (!cfg.inverse_dynamics.empty()) {
    if (!cfg.counterfactuals.empty() || sens_given || method_given ||
        !cfg.emit_kernels.empty() || cfg.error_estimate)
      throw std::invalid_argument(
          "--inverse-dynamics replaces the run: it cannot be combined with "
          "--counterfactual, --sens, --sens-method, --error-estimate or "
          "--emit-kernels");
    const InverseDynamicsOptions& o = cfg.inverse_dynamics_options;
    const int window = o.window > 0 ? o.window : o.degree + 1;
    if (o.degree < 2 || o.degree > 8 || window < o.degree + 1 ||
        window > 4 * (o.degree + 1))
      throw std::invalid_argument(
          "--id-degree " + std::to_string(o.degree) + ", --id-window " +
          std::to_string(window) +
          ": the degree must be 2..8 and the window degree + 1 .. 4 (degree "
          "+ 1) samples");
  }
  // --sens alone means forward sensitivities; a method without --sens
  // means all model parameters.
  if (sens_given && !method_given)
    cfg.options.sensitivity.method = SensMethod::kForward;
  // The DAE forms run on IDAS; pick it when the user did not choose.
  if (!integrator_given && (cfg.options.formulation == Formulation::kGgl ||
                            cfg.options.formulation == Formulation::kIndex3))
    cfg.options.integrator = Integrator::kIdas;
  if (!integrator_given && cfg.options.formulation == Formulation::kProjection)
    cfg.options.integrator = Integrator::kCvodesBdf;
  // RATTLE discretizes the index-3 form; pick it when the user did not
  // choose (formulation/support.cpp).
  if (!formulation_given && (cfg.options.integrator == Integrator::kRattle ||
                             internal::IsAlpha(cfg.options.integrator)))
    cfg.options.formulation = Formulation::kIndex3;
  // Moreau-Jean states its constraints at velocity level only
  // (formulation/support.cpp).
  if (!formulation_given && cfg.options.integrator == Integrator::kMoreauJean)
    cfg.options.formulation = Formulation::kUnstabilized;
  if (!moreau_jean_flag.empty() &&
      cfg.options.integrator != Integrator::kMoreauJean)
    throw std::invalid_argument(
        moreau_jean_flag + " is an option of --integrator moreau-jean; " +
        ToString(cfg.options.integrator) +
        " would ignore it: leave it out, or use --integrator moreau-jean");
  if (rho_inf_given && !internal::IsAlpha(cfg.options.integrator))
    throw std::invalid_argument(
        std::string("--rho-inf is the numerical damping of generalized-alpha "
                    "and hht; --integrator ") +
        ToString(cfg.options.integrator) +
        " has none and would ignore it: leave --rho-inf out, or use "
        "--integrator generalized-alpha or hht");
  if (!cfg.help) {
    const std::string bad = problem.model.ParameterRangeError(cfg.params);
    if (!bad.empty())
      throw std::invalid_argument("--param: " + bad +
                                  "; pass a value in that range");
  }
  std::string why = cfg.help ? "" : internal::OptionsRangeError(cfg.options);
  if (!why.empty()) throw std::invalid_argument("invalid options: " + why);
  if (!cfg.help) {
    // The model-dependent part of the support matrix, before any file is
    // written.
    const internal::KktPath path =
        internal::ResolveKktPath(problem.model, cfg.options);
    why =
        internal::Refusal(cfg.options, path, internal::TraitsOf(problem.model));
    if (!why.empty())
      throw std::invalid_argument("unsupported combination: " + why);
    // A model too large for the sparse evaluator's memory, or for the
    // dense evaluator's time in the energy form (a 1000-link URDF chain
    // with its joint limits ran for minutes without a word): refused with
    // the estimate before anything is built or written.
    if (path == internal::KktPath::kSparse) {
      internal::CheckSparseWorkspaceMemory(problem.model);
    } else if (path == internal::KktPath::kDense) {
      internal::CheckDenseEnergyCost(problem.model);
    }
    // Moreau-Jean never factors the nc x nc KKT system: a step factors M
    // and solves the cone problem on the Delassus operator of the active
    // contacts only (docs/moreau_jean.md), so 100 spheres in a box (5450
    // rows) are its case, not a refusal.
    if (path == internal::KktPath::kDense &&
        cfg.options.integrator != Integrator::kMoreauJean) {
      const internal::ModelTraits traits = internal::TraitsOf(problem.model);
      internal::CheckDenseKktCost(
          problem.model, traits.joint_limits,
          internal::EventDrivenContact(cfg.options, traits));
    }
  }
  if (!cfg.help)
    internal::ValidateCounterfactuals(cfg.counterfactuals, cfg.options);
  return cfg;
}

namespace {

// --no-joint-limits: DIR/<name>.joint_limits.csv, the gap of every limit
// row of the original model at every sample (negative: the joint is past
// that limit), so that a run without limits still shows which it passes.
SideOutput JointLimitGapsFile(const Model& model) {
  SideOutput so;
  so.suffix = "joint_limits.csv";
  std::vector<int> limits;
  std::vector<std::string> cols;
  for (int ci = 0; ci < model.num_constraints(); ++ci) {
    const internal::ConstraintDecl& c =
        model.constraints()[static_cast<size_t>(ci)];
    if (!(c.unilateral && c.law && !c.law->joint.empty())) continue;
    limits.push_back(ci);
    for (int r = 0; r < c.rows; ++r)
      cols.push_back("gap_" + model.RowName(model.constraint_row(ci) + r));
  }
  const Model m = model;
  so.open = [m, limits, cols](const std::string& path,
                              const Eigen::VectorXd& params) {
    auto out = std::make_shared<VecX<double>>();
    return std::make_unique<TableWriter>(
        path, cols,
        [m, limits, params, out](const Sample& s, std::vector<double>* row) {
          const Point<double> x{s.q, s.v, s.t, params};
          for (int ci : limits) {
            m.constraints()[static_cast<size_t>(ci)].fn.f0(x, *out);
            for (Eigen::Index r = 0; r < out->size(); ++r)
              row->push_back((*out)[r]);
          }
        });
  };
  so.summary_json =
      "{\"kind\": \"joint_limit_gaps\", \"content\": \"the gaps of the "
      "joint limits removed by --no-joint-limits, negative past the "
      "limit\"}";
  return so;
}

}  // namespace

int run(const Problem& given, int argc, char** argv) {
  // --no-joint-limits: the model without its joint limits' contacts, for
  // every kind of run below (docs/contact.md, "Joint limits").
  Problem free_joints;
  bool limits = true;
  for (int i = 1; i < argc; ++i)
    limits &= std::string(argv[i]) != "--no-joint-limits";
  const bool strip = !limits && NumJointLimitRows(given.model) > 0;
  if (strip) {
    free_joints = given;
    free_joints.model = WithoutJointLimits(given.model);
    free_joints.side_outputs.push_back(JointLimitGapsFile(given.model));
  }
  const Problem& problem = strip ? free_joints : given;
  // --ensemble, --monte-carlo, --multi-start: many runs (or optimizations)
  // of the problem (cli/ensemble.hpp).
  const std::string program = argc > 0 ? argv[0] : problem.model.name();
  if (internal::WantsEnsemble(argc, argv)) {
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]).rfind("--inverse-dynamics", 0) == 0) {
        std::cerr << program
                  << ": --inverse-dynamics cannot be combined with "
                     "--ensemble or --monte-carlo\n(see --help)\n";
        return 2;
      }
    }
    return internal::RunEnsemble(problem, argc, argv);
  }
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
  if (!cfg.emit_kernels.empty()) {
    try {
      internal::ProgramCollector collector;
      internal::CollectPrograms(problem, cfg);
      return internal::WriteKernels(collector, program, cfg.emit_kernels);
    } catch (const std::exception& e) {
      std::cerr << program << ": cannot emit the native kernels to '"
                << cfg.emit_kernels << "': " << e.what() << "\n";
      return 1;
    }
  }
  if (!cfg.inverse_dynamics.empty())
    return internal::RunInverseDynamics(problem, cfg, program);
  if (!cfg.optimize.empty())
    return internal::RunOptimize(problem, cfg, program);
  // An adjoint needs a functional: said before the plain run writes
  // anything (the integrators would say it only after). Not in
  // ParseCommandLine: an ensemble's members may name it in their table.
  if (cfg.options.sensitivity.method == SensMethod::kAdjoint &&
      cfg.options.sensitivity.functional.empty()) {
    std::string valid;
    for (const auto& f : problem.model.data().functionals)
      valid += (valid.empty() ? "" : ", ") + f.name;
    std::cerr << program
              << ": --sens-method adjoint needs --functional NAME; model '"
              << problem.model.name()
              << "' declares: " << (valid.empty() ? "(none)" : valid)
              << "\n(see --help)\n";
    return 2;
  }
  // SIGINT and SIGTERM end the run with the rows so far (run_files.hpp).
  internal::StopOnSignals signals;
  return internal::RunSingle(problem, cfg, program, true).exit_code;
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

int run(const ProblemVariants& choice, int argc, char** argv) {
  const std::string program = argc > 0 ? argv[0] : choice.option;
  const std::string flag = "--" + choice.option;
  std::string names;
  for (const auto& v : choice.variants)
    names += (names.empty() ? "" : ", ") + v.first;
  if (choice.variants.empty()) {
    std::cerr << program << ": no variants declared for " << flag << "\n";
    return 2;
  }
  // Take the option out of the command line; everything else goes on.
  std::vector<char*> rest;
  std::string chosen = choice.variants.front().first;
  bool help = false;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i > 0 && arg == "--help") help = true;
    if (i > 0 && (arg == flag || arg.rfind(flag + "=", 0) == 0)) {
      if (arg == flag) {
        if (i + 1 >= argc) {
          std::cerr << program << ": " << flag << " needs a value (one of "
                    << names << ")\n(see --help)\n";
          return 2;
        }
        chosen = argv[++i];
      } else {
        chosen = arg.substr(flag.size() + 1);
      }
      continue;
    }
    rest.push_back(argv[i]);
  }
  // The build's kernel pass covers every variant.
  std::string emit;
  for (size_t i = 1; i < rest.size(); ++i) {
    const std::string arg = rest[i];
    if (arg == "--emit-kernels" && i + 1 < rest.size()) emit = rest[i + 1];
    if (arg.rfind("--emit-kernels=", 0) == 0) emit = arg.substr(15);
  }
  if (!emit.empty()) {
    internal::ProgramCollector collector;
    for (const auto& v : choice.variants) {
      const Problem p = v.second();
      internal::CollectPrograms(
          p, ParseCommandLine(p, static_cast<int>(rest.size()), rest.data()));
    }
    return internal::WriteKernels(collector, program, emit);
  }
  for (const auto& v : choice.variants) {
    if (v.first != chosen) continue;
    if (help) {
      std::cout << "problem option:\n  " << flag << " NAME  one of " << names
                << " (default " << choice.variants.front().first
                << "); shown below: " << chosen << "\n\n";
    }
    return run(v.second, static_cast<int>(rest.size()), rest.data());
  }
  std::cerr << program << ": unknown " << flag << " '" << chosen
            << "'; valid: " << names << "\n(see --help)\n";
  return 2;
}

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
        const double x = internal::ParseNumber(flag, value);
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
