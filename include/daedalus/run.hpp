// The common command line of every problem executable.
//
//   build/problems/<name> [--t-end T] [--rtol R] [--atol A]
//       [--output-step DT] [--output-dir DIR] [--param NAME=VALUE]...
//       [--formulation F] [--integrator I] [--baumgarte-alpha A]
//       [--baumgarte-beta B]
//       [--kkt auto|dense|full-lu|schur|sparse-lu|sparse-cholesky|qr]
//       [--step H] [--counterfactual SPEC]... [--sens P,...]
//       [--sens-method forward|adjoint] [--functional G] [--quiet] [--help]
//       [--inverse-dynamics FILE.csv [--id-weights CH=W,...] [--id-degree D]
//        [--id-window W]]
//
// writes DIR/<name>.csv (time series), DIR/<name>.json (summary) and the
// problem's side files DIR/<name>.<suffix>, and prints a human summary;
// each --counterfactual adds DIR/<name>.counterfactual<i>.csv and an entry
// of the summary's "counterfactuals" list (docs/analysis.md). Exit status:
// 0 ok, 1 failed run or failed counterfactual, 2 bad usage.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "daedalus/analysis.hpp"
#include "daedalus/inverse_dynamics.hpp"
#include "daedalus/model.hpp"
#include "daedalus/side_outputs.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus {

/// A model plus what a run of it needs.
struct Problem {
  Model model;
  /// One paragraph shown by --help.
  std::string description;
  /// Initial state as a function of the parameters (np).
  std::function<InitialState(const Eigen::VectorXd& params)> initial;
  /// Defaults of the run options (the command line overrides them).
  SimulationOptions defaults;
  /// Files the run writes beside DIR/<name>.csv, e.g. a multibody model's
  /// body poses (mb::PosesFile) or the generalized momenta (MomentaFile);
  /// docs/output.md, "Files beside the CSV".
  std::vector<SideOutput> side_outputs = {};
};

/// Parses the command line into options and parameters.
/// @throws std::invalid_argument with a message listing the valid flags or
/// parameter names.
struct RunConfig {
  SimulationOptions options;
  Eigen::VectorXd params;
  std::string output_dir = ".";
  bool quiet = false;
  bool help = false;
  /// --counterfactual requests, in command-line order.
  std::vector<CounterfactualRequest> counterfactuals;
  /// --emit-kernels FILE: write the native kernels of the model's compiled
  /// programs to FILE instead of running (the build does this;
  /// include/daedalus/kernels.hpp).
  std::string emit_kernels;
  /// --evaluator interpreted: the compiled programs without native kernels.
  bool interpreted = false;
  /// --q0 NAME=VALUE and --v0 NAME=VALUE: (coordinate index, value) set in
  /// the problem's initial state, in command-line order (later wins). The
  /// run then makes the start consistent with the constraints as for any
  /// start (SimulationSummary::initial_correction_position).
  std::vector<std::pair<int, double>> q0_overrides, v0_overrides;
  /// --inverse-dynamics FILE.csv: instead of a run, the inputs and
  /// multipliers of the motion in FILE, written to
  /// DIR/<name>.inverse_dynamics.csv and .json (docs/inverse_dynamics.md).
  std::string inverse_dynamics;
  /// --id-weights CH=W[,CH=W...], --id-degree D, --id-window W.
  InverseDynamicsOptions inverse_dynamics_options;
  /// --error-estimate: after the run, the estimated global error of its
  /// final state, multipliers and energy residual from a second run at a
  /// tighter tolerance (include/daedalus/error_estimate.hpp), in the
  /// summary's "error_estimate".
  bool error_estimate = false;
  /// --no-joint-limits: false. run() then runs the problem's model without
  /// its joints' position limits (WithoutJointLimits, docs/contact.md,
  /// "Joint limits").
  bool joint_limits = true;
  /// --optimize SPEC.json: instead of a run, the optimal control problem of
  /// the spec (optimal_control.hpp, docs/optimal_control.md).
  std::string optimize;
  /// --guess NAME=VALUE[,NAME=VALUE...] (with --optimize): the initial
  /// guesses of the named free variables ("u.c0", a free parameter,
  /// "q0[x]"), in command-line order (later wins); WithInitialGuess.
  std::vector<std::pair<std::string, double>> optimize_guess;
};
RunConfig ParseCommandLine(const Problem& problem,
                           int argc,
                           const char* const* argv);

/// d x0 / d p of the problem's initial-state map ((nq + nv) x np), by
/// central differences of `problem.initial` (a closed-form user function of
/// doubles); zero columns when the start does not depend on a parameter.
Eigen::MatrixXd InitialStateTangent(const Problem& problem,
                                    const Eigen::VectorXd& params);

/// Help text for a problem's executable.
std::string Usage(const Problem& problem, const std::string& program);

/// Runs a problem from the command line; returns the process exit status.
int run(const Problem& problem, int argc, char** argv);

/// Builds the problem with `make` and runs it; an error while building the
/// model (std::exception) is reported on stderr with exit status 2 instead
/// of escaping main.
int run(const std::function<Problem()>& make, int argc, char** argv);

/// One problem offered in several forms chosen by one problem-specific
/// option, e.g. `rod_pair --coordinates absolute|relative|maximal`. Each
/// form is a whole Problem (its own model, coordinates and initial state).
struct ProblemVariants {
  /// The option's name without the leading dashes ("coordinates").
  std::string option;
  /// (name, factory) pairs; the first is the default.
  std::vector<std::pair<std::string, std::function<Problem()>>> variants;
};

/// Runs the variant named by `--<option> NAME` (or `--<option>=NAME`; the
/// first variant when the option is absent) with the rest of the command
/// line, as run(make, argc, argv) does. An unknown name is a usage error
/// (exit status 2) that lists the valid ones; --help also lists them.
int run(const ProblemVariants& choice, int argc, char** argv);
/// A per-problem integer option that shapes the model itself (such as
/// `--bodies N`), parsed before the model is built.
struct IntOption {
  std::string name;  ///< flag without the dashes: "bodies" for --bodies
  int value = 0;     ///< default; replaced by the command-line value
  int min = 0, max = 0;
  std::string help;
};

/// Like run(make, ...) for a problem whose model depends on integer options:
/// takes `--NAME N` / `--NAME=N` for each option out of the command line
/// (checking min <= N <= max), builds the problem from the values, lists the
/// options in --help, and runs it with the remaining arguments.
int run(std::vector<IntOption> options,
        const std::function<Problem(const std::vector<IntOption>&)>& make,
        int argc,
        char** argv);

}  // namespace daedalus
