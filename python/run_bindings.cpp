// Running problems from Python: the catalogue, one run with the options of
// the command line (parsed by the command line's own parser, run.hpp)
// returning numpy arrays and the JSON summary, and batches for optimizers
// (ensemble.hpp).
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "andrews_squeezer.hpp"
#include "atwood.hpp"
#include "bead_parabola.hpp"
#include "bindings.hpp"
#include "block_on_incline.hpp"
#include "bouncing_ball.hpp"
#include "bouncing_ball_contact.hpp"
#include "car_axis.hpp"
#include "chain.hpp"
#include "chain_reduced.hpp"
#include "chaplygin_sleigh.hpp"
#include "cli/run_extras.hpp"
#include "cli/run_files.hpp"
#include "cli/run_single.hpp"
#include "coupled_springs.hpp"
#include "daedalus/ensemble.hpp"
#include "daedalus/output.hpp"
#include "daedalus/symplectic.hpp"
#include "double_pendulum.hpp"
#include "dynamics_variants.hpp"
#include "eval/expr_program.hpp"
#include "formulation/support.hpp"
#include "four_bar.hpp"
#include "four_bar_mb.hpp"
#include "free_body.hpp"
#include "golf_impact.hpp"
#include "golf_swing.hpp"
#include "golfer_3d.hpp"
#include "golfer_3d_strike.hpp"
#include "heavy_top.hpp"
#include "monitor/sample_collector.hpp"
#include "moving_support.hpp"
#include "newtons_cradle.hpp"
#include "painleve_rod.hpp"
#include "particle_hemisphere.hpp"
#include "particle_sphere.hpp"
#include "pendulum.hpp"
#include "planet.hpp"
#include "rocking_block.hpp"
#include "rod_pair.hpp"
#include "rolling_disk.hpp"
#include "rotating_particle.hpp"
#include "slider_crank.hpp"
#include "slider_crank_mb.hpp"
#include "sliding_sphere.hpp"
#include "squat_to_stand.hpp"
#include "stiff_linkage.hpp"
#include "woodpecker_toy.hpp"

namespace py = pybind11;

namespace daedalus::python {
namespace {

// One catalogue problem, as its executable offers it: a factory taking the
// problem-specific options (--coordinates NAME, --bodies N, --dynamics
// NAME, ...), each a word among choices or a whole number in a range.
struct OptionSpec {
  std::string name;                  // the flag without the dashes
  std::vector<std::string> choices;  // words; empty: a whole number
  int min = 0, max = 0;              // the whole number's range
  std::string value;                 // the default, as text
};
using Shape = std::map<std::string, std::string>;  // every option's value
struct Entry {
  std::string name;
  std::vector<OptionSpec> options;
  std::function<Problem(const Shape&)> make;
};

OptionSpec Words(const ProblemVariants& v) {
  OptionSpec o{v.option, {}, 0, 0, v.variants.front().first};
  for (const auto& [n, f] : v.variants) o.choices.push_back(n);
  return o;
}
OptionSpec Count(const IntOption& i) {
  return {i.name, {}, i.min, i.max, std::to_string(i.value)};
}
const std::vector<Entry>& Catalogue() {
  using namespace daedalus::problems;  // NOLINT(google-build-using-namespace)
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> e;
    auto plain = [&](const char* n, Problem (*f)()) {
      e.push_back({n, {}, [f](const Shape&) { return f(); }});
    };
    auto variants = [&](const char* n, ProblemVariants (*f)()) {
      const ProblemVariants v = f();
      e.push_back({n, {Words(v)}, [f](const Shape& s) {
                     const ProblemVariants pv = f();
                     for (const auto& [name, make] : pv.variants)
                       if (name == s.at(pv.option)) return make();
                     throw std::logic_error("variant checked before");
                   }});
    };
    auto sized = [&](const char* n, IntOption o, Problem (*f)(int)) {
      const std::string opt = o.name;
      e.push_back({n, {Count(o)}, [f, opt](const Shape& s) {
                     return f(std::stoi(s.at(opt)));
                   }});
    };
    // --dynamics auto|energy|recursive (problems/dynamics_variants.hpp).
    auto multibody = [&](const char* n, Problem (*f)(mb::DynamicsForm)) {
      e.push_back({n, {Words(DynamicsVariants(f))}, [f](const Shape& s) {
                     return f(mb::DynamicsFormFromString(s.at("dynamics")));
                   }});
    };
    plain("pendulum", PendulumProblem);
    plain("slider_crank", SliderCrankProblem);
    variants("rod_pair", RodPairVariants);
    plain("double_pendulum", DoublePendulumProblem);
    plain("planet", PlanetProblem);
    plain("coupled_springs", CoupledSpringsProblem);
    variants("atwood", AtwoodVariants);
    variants("bead_parabola", BeadParabolaVariants);
    plain("particle_sphere", ParticleSphereProblem);
    plain("rotating_particle", RotatingParticleProblem);
    plain("moving_support", MovingSupportProblem);
    plain("four_bar", FourBarProblem);
    plain("rolling_disk", RollingDiskProblem);
    plain("chaplygin_sleigh", ChaplyginSleighProblem);
    plain("golf_swing", GolfSwingProblem);
    multibody("four_bar_mb", FourBarMbProblemForm);
    multibody("slider_crank_mb", SliderCrankMbProblemForm);
    plain("free_body", FreeBodyProblem);
    multibody("heavy_top", HeavyTopProblemForm);
    plain("stiff_linkage", StiffLinkageProblem);
    multibody("golfer_3d", Golfer3dProblemForm);
    multibody("golfer_3d_strike", Golfer3dStrikeProblemForm);
    plain("bouncing_ball", BouncingBallProblem);
    plain("bouncing_ball_contact", BouncingBallContactProblem);
    plain("particle_hemisphere", ParticleHemisphereProblem);
    plain("golf_impact", GolfImpactProblem);
    plain("sliding_sphere", SlidingSphereProblem);
    plain("block_on_incline", BlockOnInclineProblem);
    plain("painleve_rod", PainleveRodProblem);
    plain("andrews_squeezer", AndrewsSqueezerProblem);
    plain("car_axis", CarAxisProblem);
    plain("rocking_block", RockingBlockProblem);
    plain("woodpecker_toy", WoodpeckerToyProblem);
    plain("squat_to_stand", SquatToStandProblem);
    sized("newtons_cradle", {"balls", 3, 2, 20, "number of balls"},
          NewtonsCradleProblem);
    // Sizes as the executables (problems/chain.cpp, chain_reduced.cpp).
    sized("chain", {"bodies", 10, 1, 10000, "number of links"}, ChainProblem);
    // chain_reduced: --bodies N and --dynamics recursive|energy|auto, as
    // problems/chain_reduced.cpp (the energy form's limit, 200 links, is
    // checked by ChainReducedProblem).
    e.push_back(
        {"chain_reduced",
         {Count({"bodies", 10, 1, kChainReducedMax, ""}),
          {"dynamics", {"recursive", "energy", "auto"}, 0, 0, "recursive"}},
         [](const Shape& s) {
           return ChainReducedProblem(
               std::stoi(s.at("bodies")),
               mb::DynamicsFormFromString(s.at("dynamics")));
         }});
    return e;
  }();
  return entries;
}

const Entry& Find(const std::string& name) {
  std::string names;
  for (const Entry& e : Catalogue()) {
    if (e.name == name) return e;
    names += " " + e.name;
  }
  throw std::invalid_argument("unknown problem '" + name +
                              "'; the catalogue:" + names);
}

// The problem-specific options of a problem: (name, its choices or
// [min, max], default) each; empty for none.
py::list ProblemOptions(const std::string& name) {
  py::list out;
  for (const OptionSpec& o : Find(name).options) {
    if (o.choices.empty())
      out.append(py::make_tuple(o.name, std::vector<int>{o.min, o.max},
                                std::stoi(o.value)));
    else
      out.append(py::make_tuple(o.name, o.choices, o.value));
  }
  return out;
}

// The catalogue problem `name` with the given problem-specific options
// (the others at their defaults), each checked as its executable checks
// it.
Problem MakeCatalogueProblem(const std::string& name, const Shape& given) {
  const Entry& e = Find(name);
  Shape shape;
  for (const OptionSpec& o : e.options) shape[o.name] = o.value;
  for (const auto& [key, value] : given) {
    const auto it =
        std::find_if(e.options.begin(), e.options.end(),
                     [&](const OptionSpec& o) { return o.name == key; });
    if (it == e.options.end()) {
      std::string valid;
      for (const OptionSpec& o : e.options) valid += " " + o.name;
      throw std::invalid_argument(
          "problem '" + name + "' has no option '" + key + "'" +
          (valid.empty() ? std::string("; it takes no problem-specific option")
                         : "; its options:" + valid));
    }
    const OptionSpec& o = *it;
    if (!o.choices.empty()) {
      if (std::find(o.choices.begin(), o.choices.end(), value) ==
          o.choices.end()) {
        std::string names;
        for (const std::string& c : o.choices) names += " " + c;
        throw std::invalid_argument("unknown " + o.name + " '" + value +
                                    "' for " + name + "; valid:" + names);
      }
    } else {
      size_t used = 0;
      int n = 0;
      try {
        n = std::stoi(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != value.size() || n < o.min || n > o.max)
        throw std::invalid_argument(
            o.name + " must be a whole number in [" + std::to_string(o.min) +
            ", " + std::to_string(o.max) + "], not '" + value + "'");
    }
    shape[key] = value;
  }
  return e.make(shape);
}

RunConfig Parse(const Problem& problem, const std::vector<std::string>& args) {
  std::vector<const char*> argv{"daedalus"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  RunConfig cfg =
      ParseCommandLine(problem, static_cast<int>(argv.size()), argv.data());
  if (cfg.help)
    throw std::invalid_argument(
        "help is not a run option; daedalus.usage(problem) prints the "
        "options");
  if (!cfg.emit_kernels.empty())
    throw std::invalid_argument(
        "emit_kernels is for the problem executables' build, not for Python");
  if (!cfg.inverse_dynamics.empty())
    throw std::invalid_argument(
        "inverse_dynamics='" + cfg.inverse_dynamics +
        "': daedalus.run integrates the model forward and has no inverse "
        "dynamics; run the problem's executable with --inverse-dynamics "
        "FILE.csv (docs/inverse_dynamics.md)");
  return cfg;
}

py::array_t<double> Column(const std::vector<Sample>& s,
                           double Sample::*field) {
  py::array_t<double> a(static_cast<py::ssize_t>(s.size()));
  auto w = a.mutable_unchecked<1>();
  for (size_t i = 0; i < s.size(); ++i)
    w(static_cast<py::ssize_t>(i)) = s[i].*field;
  return a;
}

// N x width; a sample whose vector has another size (none: the run failed
// before it was filled) gives a row of NaN.
py::array_t<double> Rows(const std::vector<Sample>& s,
                         Eigen::VectorXd Sample::*field,
                         int width) {
  py::array_t<double> a(
      {static_cast<py::ssize_t>(s.size()), static_cast<py::ssize_t>(width)});
  auto w = a.mutable_unchecked<2>();
  for (size_t i = 0; i < s.size(); ++i) {
    const Eigen::VectorXd& x = s[i].*field;
    for (int j = 0; j < width; ++j)
      w(static_cast<py::ssize_t>(i), j) =
          x.size() == width ? x[j] : std::numeric_limits<double>::quiet_NaN();
  }
  return a;
}

py::dict Arrays(const Model& model,
                const std::vector<Sample>& s,
                int num_sens) {
  const int nq = model.nq(), nv = model.nv(), nc = model.nc();
  const int nu = model.num_inputs(), nquad = model.num_quadratures();
  py::dict d;
  d["t"] = Column(s, &Sample::t);
  d["q"] = Rows(s, &Sample::q, nq);
  d["v"] = Rows(s, &Sample::v, nv);
  d["vdot"] = Rows(s, &Sample::vdot, nv);
  d["lambda"] = Rows(s, &Sample::lambda, nc);
  d["power"] = Rows(s, &Sample::power, nc);
  d["ideal_power"] = Rows(s, &Sample::ideal_power, nc);
  d["reaction_power"] = Rows(s, &Sample::reaction_power, nv);
  d["phi"] = Rows(s, &Sample::phi, nc);
  d["vel_residual"] = Rows(s, &Sample::vel_residual, nc);
  d["drift_position"] = Column(s, &Sample::drift_position);
  d["drift_velocity"] = Column(s, &Sample::drift_velocity);
  d["energy"] = Column(s, &Sample::energy);
  d["energy_residual"] = Column(s, &Sample::energy_residual);
  d["input_power"] = Rows(s, &Sample::input_power, nu);
  d["damping_power"] = Column(s, &Sample::damping_power);
  d["other_power"] = Column(s, &Sample::other_power);
  d["explicit_time_power"] = Column(s, &Sample::explicit_time_power);
  d["energy_rate"] = Column(s, &Sample::energy_rate);
  d["input_work"] = Rows(s, &Sample::input_work, nu);
  d["damping_loss"] = Column(s, &Sample::damping_loss);
  d["other_work"] = Column(s, &Sample::other_work);
  d["constraint_work"] = Rows(s, &Sample::constraint_work, nc);
  d["ideal_constraint_work"] = Rows(s, &Sample::ideal_constraint_work, nc);
  d["explicit_time_work"] = Column(s, &Sample::explicit_time_work);
  d["stabilization_work"] = Column(s, &Sample::stabilization_work);
  d["quadratures"] = Rows(s, &Sample::quadratures, nquad);
  d["kkt_rcond"] = Column(s, &Sample::kkt_rcond);
  // sens: N x (nq + nv + nc) x parameters.
  const int rows = nq + nv + nc;
  py::array_t<double> sens({static_cast<py::ssize_t>(s.size()),
                            static_cast<py::ssize_t>(rows),
                            static_cast<py::ssize_t>(num_sens)});
  auto w = sens.mutable_unchecked<3>();
  for (size_t i = 0; i < s.size(); ++i) {
    const Eigen::MatrixXd& m = s[i].sens;
    const bool ok = m.rows() == rows && m.cols() == num_sens;
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < num_sens; ++c)
        w(static_cast<py::ssize_t>(i), r, c) =
            ok ? m(r, c) : std::numeric_limits<double>::quiet_NaN();
  }
  d["sens"] = sens;
  return d;
}

// One run, as the command line's RunSingle without the files: the arrays
// of every sample and the JSON summary (with the counterfactuals, whose
// CSV files go to output_dir as on the command line).
// With `interruptible` (the caller is Python's main thread), SIGINT and
// SIGTERM end the run at its next evaluation, as on the command line:
// SIGINT then raises KeyboardInterrupt, SIGTERM takes its default action.
py::dict Run(const Problem& problem,
             const std::vector<std::string>& args,
             bool interruptible) {
  RunConfig cfg = Parse(problem, args);
  const Model& model = problem.model;
  internal::SetNativeKernels(!cfg.interpreted);
  // Checked before the initial state, which a Python model computes with
  // the parameters.
  std::string why;
  if (!cfg.options.IsValid(&why)) throw std::invalid_argument(why);
  const std::string bad = model.ParameterRangeError(cfg.params);
  if (!bad.empty()) throw std::invalid_argument(bad);
  // The problem's start with the q0= / v0= overrides (--q0, --v0).
  const InitialState x0 = internal::StartingState(problem, cfg);
  if (internal::IsFixedStep(cfg.options.integrator)) {
    if (!SchemeFits(model, cfg.options.integrator, cfg.params, cfg.options.t0,
                    x0.q, x0.v, &why))
      throw std::invalid_argument("unsupported combination: " + why);
  }
  std::vector<std::string> sens_names;
  if (cfg.options.sensitivity.method == SensMethod::kForward)
    for (const auto& sp :
         ResolveSensParameters(model, cfg.options.sensitivity.parameters))
      sens_names.push_back(sp.name);
  if (cfg.options.sensitivity.method != SensMethod::kNone) {
    Eigen::MatrixXd& tangent = cfg.options.sensitivity.initial_tangent;
    tangent = InitialStateTangent(problem, cfg.params);
    // An overridden entry is a number, independent of the parameters.
    for (const auto& ov : cfg.q0_overrides) tangent.row(ov.first).setZero();
    for (const auto& ov : cfg.v0_overrides)
      tangent.row(x0.q.size() + ov.first).setZero();
  }
  internal::SampleCollector collector;
  internal::RunExtras extras(problem, cfg);
  extras.set_forward(&collector);
  SimulationSummary summary;
  std::optional<internal::StopOnSignals> signals;
  if (interruptible) {
    signals.emplace();
    cfg.options.stop = internal::StopOnSignals::flag();
  }
  try {
    summary = Simulate(model, x0, cfg.params, cfg.options, &extras);
    signals.reset();
    if (summary.interrupted) {
      if (summary.stop_code != SIGINT) std::raise(summary.stop_code);
      PyErr_SetString(
          PyExc_KeyboardInterrupt,
          ("run of '" + model.name() + "' interrupted: " + summary.error)
              .c_str());
      throw py::error_already_set();
    }
  } catch (const py::error_already_set&) {
    throw;
  } catch (const std::invalid_argument&) {
    throw;  // bad options or sizes: a ValueError, as at the command line
  } catch (const std::exception& e) {
    summary.ok = false;
    summary.problem = model.name();
    summary.formulation = cfg.options.formulation;
    summary.integrator = cfg.options.integrator;
    summary.rtol = cfg.options.rtol;
    summary.atol = cfg.options.atol;
    summary.error = e.what();
  }
  extras.set_forward(nullptr);
  // Counterfactual CSV files only; in output_dir whatever the model's name.
  const std::string base = internal::OutputBase(cfg.output_dir, model.name());
  std::optional<internal::StopOnSignals> analysis_signals;
  if (interruptible) analysis_signals.emplace();
  const bool extras_ok = extras.Finish(summary, base);
  analysis_signals.reset();
  if (extras.interrupted() != 0) {
    if (extras.interrupted() != SIGINT) std::raise(extras.interrupted());
    PyErr_SetString(PyExc_KeyboardInterrupt, ("counterfactual analyses of '" +
                                              model.name() + "' interrupted")
                                                 .c_str());
    throw py::error_already_set();
  }
  py::dict out =
      Arrays(model, collector.samples, static_cast<int>(sens_names.size()));
  out["summary_json"] =
      extras.Decorate(SummaryJson(model, summary, cfg.params));
  out["ok"] = summary.ok && extras_ok;
  out["error"] = summary.ok ? extras.error() : summary.error;
  out["sens_parameters"] = sens_names;
  out["params"] = cfg.params;
  return out;
}

// EvaluateBatch with the options of `args` (which must ask for an adjoint
// functional); one dict per member.
py::list Batch(const Problem& problem,
               const std::vector<Eigen::VectorXd>& params,
               const std::vector<std::string>& args,
               bool interruptible) {
  RunConfig cfg = Parse(problem, args);
  internal::SetNativeKernels(!cfg.interpreted);
  // An unknown functional is a usage error, not a failure of every member.
  CheckFunctionalSpec(problem.model, cfg.options.sensitivity.functional);
  for (const Eigen::VectorXd& p : params)
    for (Eigen::Index i = 0; i < p.size(); ++i)
      if (!std::isfinite(p[i]))
        throw std::invalid_argument(
            "a parameter vector has a non-finite "
            "entry (" +
            problem.model.parameter_names().at(static_cast<size_t>(i)) + ")");
  // As a run: SIGINT and SIGTERM end the running member at its next
  // evaluation and start no other; SIGINT then raises KeyboardInterrupt.
  std::optional<internal::StopOnSignals> signals;
  if (interruptible) {
    signals.emplace();
    cfg.options.stop = internal::StopOnSignals::flag();
  }
  const std::vector<BatchResult> results =
      EvaluateBatch(problem, params, cfg.options);
  signals.reset();
  size_t finished = 0;
  int stop = 0;
  for (const BatchResult& r : results) {
    if (r.summary.interrupted) {
      stop = r.summary.stop_code;
      break;
    }
    ++finished;
  }
  if (stop != 0) {
    if (stop != SIGINT) std::raise(stop);
    PyErr_SetString(PyExc_KeyboardInterrupt,
                    ("evaluate_batch of '" + problem.model.name() +
                     "' interrupted after " + std::to_string(finished) +
                     " of " + std::to_string(results.size()) + " members")
                        .c_str());
    throw py::error_already_set();
  }
  py::list out;
  for (size_t i = 0; i < results.size(); ++i) {
    const BatchResult& r = results[i];
    py::dict d;
    d["ok"] = r.ok;
    d["error"] = r.error;
    d["value"] = r.value;
    d["gradient"] = r.gradient;
    d["summary_json"] = SummaryJson(problem.model, r.summary, params[i]);
    out.append(d);
  }
  return out;
}

Problem WithDefaults(const Problem& problem,
                     const std::vector<std::string>& args) {
  const RunConfig cfg = Parse(problem, args);
  Problem p = problem;
  p.defaults = cfg.options;
  return p;
}

}  // namespace

void BindRun(py::module_& m) {
  m.def(
      "problems",
      [] {
        std::vector<std::string> names;
        for (const Entry& e : Catalogue()) names.push_back(e.name);
        return names;
      },
      "The names of the catalogue's problems (docs/problems.md).");
  m.def("_problem_options", &ProblemOptions);
  m.def("_catalogue_problem", &MakeCatalogueProblem, py::arg("name"),
        py::arg("shape"));
  m.def(
      "usage", [](const Problem& p) { return Usage(p, "daedalus.run"); },
      "The options of the command line for this problem (its --help).");
  m.def("_with_defaults", &WithDefaults);
  m.def("_run", &Run);
  m.def("_evaluate_batch", &Batch);
}

}  // namespace daedalus::python
