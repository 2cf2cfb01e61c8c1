// The NLP solver behind one interface: a nonlinear program as callbacks,
// and a solver for it. The IPOPT implementation lives in the module
// libdaedalus_ipopt.so (optimal_control/ipopt_module.cpp), loaded on first
// use (model/dynamic_module.hpp), so that neither the library nor a
// problem executable links IPOPT and its MUMPS/BLAS stack.
//
//   min f(x)  s.t.  x_l <= x <= x_u,  g_l <= g(x) <= g_u
#pragma once

#include <Eigen/Core>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace daedalus::internal {

/// The NLP. Callbacks return false when they cannot evaluate at x (the
/// solver then shortens its step).
struct NlpFunctions {
  int n = 0, m = 0;
  Eigen::VectorXd x0, x_l, x_u, g_l, g_u;  // n, n, n, m, m
  /// The constraint Jacobian's nonzeros (row, column), in the order the
  /// jac_g callback writes their values.
  std::vector<int> jac_rows, jac_cols;
  std::function<bool(const double* x, double* f)> f;
  std::function<bool(const double* x, double* grad)> grad_f;  // n
  std::function<bool(const double* x, double* g)> g;          // m
  std::function<bool(const double* x, double* values)> jac_g;
  /// After each iteration: iteration, objective, inf_pr, inf_du, mu,
  /// alpha_pr. false stops the solve.
  std::function<bool(int, double, double, double, double, double)> iteration;
};

struct NlpSolverOptions {
  int max_iterations = 200;
  double tolerance = 1e-8;
  double constraint_tolerance = 1e-8;
  int lbfgs_memory = 20;
  int print_level = 0;
  /// "name=value" pairs passed on.
  std::vector<std::string> extra;
};

struct NlpSolution {
  /// Converged (to tolerance or to the acceptable level).
  bool converged = false;
  /// The solver's status name ("Solve_Succeeded", ...).
  std::string status;
  /// The solver ended on a point it declares locally infeasible.
  bool infeasible = false;
  int iterations = 0;
  Eigen::VectorXd x, lambda, z_l, z_u, g;
  double f = 0.0;
};

class NlpSolver {
 public:
  virtual ~NlpSolver() = default;
  /// @throws std::runtime_error when the solver cannot start (options).
  virtual NlpSolution Solve(const NlpFunctions& nlp,
                            const NlpSolverOptions& options) = 0;
};

/// Bumped with every change above: the module refuses another version.
inline constexpr int kNlpSolverAbi = 1;

/// IPOPT from its module; throws std::runtime_error saying why it cannot be
/// loaded (and how to install it) when it cannot.
std::unique_ptr<NlpSolver> LoadIpopt();

}  // namespace daedalus::internal
