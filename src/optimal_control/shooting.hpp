// Direct multiple shooting (Bock and Plitt, "A multiple shooting algorithm
// for direct solution of optimal control problems", IFAC World Congress
// 1984) on Simulate(): the NLP of an OptimalControlProblem, its values and
// exact gradients.
//
// Variables w = (control coefficients, free parameters, free initial
// state entries, node states s_1 .. s_{M-1}, each (q, v)); constraints
// g = (continuity x(t_{i+1}; s_i) - s_{i+1} per interval but the last,
// point constraints, path samples, control-rate rows). Interval i is a run
// of the controlled model from s_i (s_0: the problem's start with the free
// entries) over [t_i, t_{i+1}]; a functional "NAME@EVENT#K" is located at
// the K-th occurrence of EVENT over the concatenated intervals.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "daedalus/optimal_control.hpp"
#include "daedalus/run.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus::internal {

/// A functional of the objective or of a point constraint.
struct ShootingTarget {
  std::string spec;     // as the user wrote it
  int functional = -1;  // in the controlled model
  int event = -1;       // -1: at the end of the horizon
  int occurrence = 1;   // over the horizon
  int quadrature = -1;  // the running part's quadrature, or -1
  // Where it was found at the last evaluation: interval and the
  // occurrence within it.
  int interval = -1, local = 1;
  std::string LocalSpec(const Model& m) const;
};

/// One plain or sensitivity run of an interval.
struct IntervalRun {
  SimulationSummary summary;
  std::vector<Sample> samples;
};

class ShootingNlp {
 public:
  ShootingNlp(const Problem& problem,
              const OptimalControlProblem& ocp,
              const SimulationOptions& sim,
              const Eigen::VectorXd& params,
              const OptimizeOptions& options);

  int n() const { return static_cast<int>(x0_.size()); }
  /// The free variables (coefficients, free parameters and initial-state
  /// entries) come first in w: this many, before the nodes.
  int num_free() const { return nodes_at_; }
  int m() const { return static_cast<int>(g_l_.size()); }
  const Eigen::VectorXd& x0() const { return x0_; }
  const Eigen::VectorXd& x_l() const { return x_l_; }
  const Eigen::VectorXd& x_u() const { return x_u_; }
  const Eigen::VectorXd& g_l() const { return g_l_; }
  const Eigen::VectorXd& g_u() const { return g_u_; }
  /// The Jacobian's nonzero pattern (m x n).
  const std::vector<std::pair<int, int>>& pattern() const { return pattern_; }
  const std::vector<std::string>& variable_names() const { return w_names_; }
  const std::vector<std::string>& constraint_names() const { return g_names_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const Model& model() const { return model_; }
  const std::vector<ShootingTarget>& objective_targets() const { return obj_; }
  const std::vector<ShootingTarget>& constraint_targets() const { return con_; }

  /// f (the NLP's: negated for maximize) and g at w. false when a run
  /// fails (error() says why).
  bool Values(const Eigen::VectorXd& w, double* f, Eigen::VectorXd* g);
  /// grad f (n) and the dense Jacobian of g (m x n) at w.
  bool Gradients(const Eigen::VectorXd& w,
                 Eigen::VectorXd* grad_f,
                 Eigen::MatrixXd* jac);
  /// The user's objective terms at the last Values() point (unweighted).
  const Eigen::VectorXd& objective_values() const { return obj_values_; }
  const std::string& error() const { return error_; }

  /// The controlled model's parameters at w (np + coefficients).
  Eigen::VectorXd ModelParams(const Eigen::VectorXd& w) const;
  /// The start of the horizon at w.
  InitialState Start(const Eigen::VectorXd& w) const;
  /// The coefficients of control k at w.
  Eigen::VectorXd Coefficients(const Eigen::VectorXd& w, int k) const;
  /// Free parameter / initial-state values at w, by name.
  std::vector<std::pair<std::string, double>> FreeParameters(
      const Eigen::VectorXd& w) const;
  std::vector<std::pair<std::string, double>> FreeInitialState(
      const Eigen::VectorXd& w) const;
  /// Node times t_0 .. t_M.
  const std::vector<double>& nodes() const { return t_; }

  /// Runs made so far (counted by the const Run()).
  mutable long plain_runs = 0, forward_runs = 0, adjoint_runs = 0;

 private:
  void Layout(const Eigen::VectorXd& params);
  void Targets();
  void Pattern();
  void InitialNodes();
  ShootingTarget ParseTarget(const std::string& spec) const;
  // Sensitivity directions of interval i (names) and their columns in w.
  void Directions(int i,
                  std::vector<std::string>* names,
                  std::vector<int>* cols) const;
  SimulationOptions IntervalOptions(int i) const;
  // Whether the run options have an adjoint (docs/sensitivities.md: CVODES
  // on unstabilized and Baumgarte, IDAS also on GGL).
  bool AdjointServes() const;
  // Sample s of interval i, and whether path constraint c has a row there
  // (the sample inside its window [from, to]).
  double PathSampleTime(int i, int s) const;
  bool PathSampled(size_t c, double ts) const;
  InitialState IntervalStart(const Eigen::VectorXd& w, int i) const;
  // Runs interval i at w (plain: method none) with the functional `spec`
  // and the functionals `more` beside it (forward and plain runs). An
  // adjoint run gives the gradient alone (no samples): Values() at w first.
  IntervalRun Run(const Eigen::VectorXd& w,
                  int i,
                  SensMethod method,
                  const std::string& spec,
                  const std::vector<std::string>& more = {}) const;
  // The event functionals last located in interval i (LocalSpec), each
  // once; the first one is the run's `functional`, the others its
  // `more_functionals`.
  std::vector<std::string> EventSpecs(int i) const;
  bool RunAll(const Eigen::VectorXd& w);
  bool Locate();
  double TargetValue(const ShootingTarget& t) const;
  double RunningValue(int i, const ShootingTarget& t) const;
  void PathRows(int i,
                const IntervalRun& r,
                const Eigen::VectorXd& w,
                Eigen::VectorXd* g,
                Eigen::MatrixXd* jac,
                const std::vector<int>* cols) const;

  Problem problem_;
  OptimalControlProblem ocp_;
  SimulationOptions sim_;
  OptimizeOptions options_;
  Model model_;  // the controlled model, events passed
  int np0_ = 0;  // the problem's own parameters
  int nq_ = 0, nv_ = 0, ny_ = 0;
  Eigen::VectorXd base_params_;  // np0 + coefficients (defaults)
  std::vector<double> t_;        // M + 1 node times
  int M_ = 1;
  // Layout of w.
  std::vector<int> control_first_, control_size_;
  std::vector<int> free_param_index_;  // model parameter of each free one
  std::vector<SensParameter> free_x0_;
  int params_at_ = 0, x0_at_ = 0, nodes_at_ = 0;
  Eigen::MatrixXd x0_tangent_;  // d start / d p (np0 columns), free rows 0
  // Rows of g.
  int cont_rows_ = 0, point_at_ = 0, path_at_ = 0, rate_at_ = 0;
  std::vector<int> path_functional_;  // model functional per path entry
  // First path row of each interval (M_ + 1 entries, the last one past
  // the path rows).
  std::vector<int> path_row_start_;
  std::vector<std::pair<int, int>> rate_rows_;  // (column a, column b)
  std::vector<double> rate_h_;
  Eigen::VectorXd x0_, x_l_, x_u_, g_l_, g_u_;
  std::vector<std::string> w_names_, g_names_, warnings_;
  std::vector<std::pair<int, int>> pattern_;
  std::vector<ShootingTarget> obj_, con_;
  // The last evaluation.
  Eigen::VectorXd w_cached_;
  bool cached_ok_ = false;
  std::vector<IntervalRun> runs_;
  double f_cached_ = 0.0;
  Eigen::VectorXd g_cached_, obj_values_;
  Eigen::VectorXd w_grad_;
  Eigen::VectorXd grad_cached_;
  Eigen::MatrixXd jac_cached_;
  std::string error_;
};

}  // namespace daedalus::internal
