// IPOPT (Waechter and Biegler, "On the implementation of an interior-point
// filter line-search algorithm for large-scale nonlinear programming",
// Math. Program. 106(1), 2006) behind NlpSolver: the module
// libdaedalus_ipopt.so, the only code that includes an IPOPT header.
// Debian's coinor-libipopt-dev (3.11) with MUMPS; the Hessian is IPOPT's
// limited-memory quasi-Newton approximation.
#include <IpIpoptApplication.hpp>
#include <IpTNLP.hpp>
#include <algorithm>
#include <cmath>
#include <exception>
#include <sstream>
#include <string>

#include "optimal_control/nlp_solver.hpp"

namespace daedalus::internal {
namespace {

using Ipopt::Index;
using Ipopt::Number;

class Tnlp : public Ipopt::TNLP {
 public:
  explicit Tnlp(const NlpFunctions& nlp) : nlp_(nlp) {}

  bool get_nlp_info(Index& n,
                    Index& m,
                    Index& nnz_jac_g,
                    Index& nnz_h_lag,
                    IndexStyleEnum& index_style) override {
    n = nlp_.n;
    m = nlp_.m;
    nnz_jac_g = static_cast<Index>(nlp_.jac_rows.size());
    nnz_h_lag = 0;
    index_style = C_STYLE;
    return true;
  }
  bool get_bounds_info(Index n,
                       Number* x_l,
                       Number* x_u,
                       Index m,
                       Number* g_l,
                       Number* g_u) override {
    for (Index i = 0; i < n; ++i) {
      x_l[i] = Finite(nlp_.x_l[i]);
      x_u[i] = Finite(nlp_.x_u[i]);
    }
    for (Index i = 0; i < m; ++i) {
      g_l[i] = Finite(nlp_.g_l[i]);
      g_u[i] = Finite(nlp_.g_u[i]);
    }
    return true;
  }
  bool get_starting_point(Index n,
                          bool init_x,
                          Number* x,
                          bool /*init_z*/,
                          Number* /*z_L*/,
                          Number* /*z_U*/,
                          Index /*m*/,
                          bool /*init_lambda*/,
                          Number* /*lambda*/) override {
    if (init_x)
      for (Index i = 0; i < n; ++i) x[i] = nlp_.x0[i];
    return true;
  }
  // Read only with nlp_scaling_method = user-scaling: each variable with
  // finite bounds scaled by 1 / max(|lower|, |upper|) (torques of a few
  // hundred N m beside angles, docs/optimal_control.md, "golfer_3d");
  // objective and constraints unscaled.
  bool get_scaling_parameters(Number& obj_scaling,
                              bool& use_x_scaling,
                              Index n,
                              Number* x_scaling,
                              bool& use_g_scaling,
                              Index /*m*/,
                              Number* /*g_scaling*/) override {
    obj_scaling = 1.0;
    use_x_scaling = true;
    for (Index i = 0; i < n; ++i) {
      const double big = std::max(std::abs(nlp_.x_l[i]), std::abs(nlp_.x_u[i]));
      x_scaling[i] = std::isfinite(big) && big > 0.0 ? 1.0 / big : 1.0;
    }
    use_g_scaling = false;
    return true;
  }
  bool eval_f(Index, const Number* x, bool, Number& f) override {
    return Guard([&] { return nlp_.f(x, &f); });
  }
  bool eval_grad_f(Index, const Number* x, bool, Number* grad) override {
    return Guard([&] { return nlp_.grad_f(x, grad); });
  }
  bool eval_g(Index, const Number* x, bool, Index, Number* g) override {
    return Guard([&] { return nlp_.g(x, g); });
  }
  bool eval_jac_g(Index,
                  const Number* x,
                  bool,
                  Index,
                  Index nele,
                  Index* rows,
                  Index* cols,
                  Number* values) override {
    if (values == nullptr) {
      for (Index k = 0; k < nele; ++k) {
        rows[k] = nlp_.jac_rows[static_cast<size_t>(k)];
        cols[k] = nlp_.jac_cols[static_cast<size_t>(k)];
      }
      return true;
    }
    return Guard([&] { return nlp_.jac_g(x, values); });
  }
  bool intermediate_callback(Ipopt::AlgorithmMode,
                             Index iter,
                             Number obj,
                             Number inf_pr,
                             Number inf_du,
                             Number mu,
                             Number,
                             Number,
                             Number,
                             Number alpha_pr,
                             Index,
                             const Ipopt::IpoptData*,
                             Ipopt::IpoptCalculatedQuantities*) override {
    iterations_ = iter;
    if (!nlp_.iteration) return true;
    return Guard([&] {
      return nlp_.iteration(iter, obj, inf_pr, inf_du, mu, alpha_pr);
    });
  }
  void finalize_solution(Ipopt::SolverReturn status,
                         Index n,
                         const Number* x,
                         const Number* z_L,
                         const Number* z_U,
                         Index m,
                         const Number* g,
                         const Number* lambda,
                         Number obj,
                         const Ipopt::IpoptData*,
                         Ipopt::IpoptCalculatedQuantities*) override {
    sol_.x = Eigen::Map<const Eigen::VectorXd>(x, n);
    sol_.z_l = Eigen::Map<const Eigen::VectorXd>(z_L, n);
    sol_.z_u = Eigen::Map<const Eigen::VectorXd>(z_U, n);
    sol_.g = Eigen::Map<const Eigen::VectorXd>(g, m);
    sol_.lambda = Eigen::Map<const Eigen::VectorXd>(lambda, m);
    sol_.f = obj;
    sol_.infeasible = status == Ipopt::LOCAL_INFEASIBILITY;
  }

  NlpSolution sol_;
  int iterations_ = 0;
  std::string error_;  // an exception from a callback

 private:
  // IPOPT's infinity (nlp_lower_bound_inf = -1e19 by default).
  static double Finite(double v) {
    if (v >= 1e19) return 1e19;
    if (v <= -1e19) return -1e19;
    return v;
  }
  // No exception may cross IPOPT: one stops the solve, said afterwards.
  template <class F>
  bool Guard(F f) {
    try {
      return f();
    } catch (const std::exception& e) {
      if (error_.empty()) error_ = e.what();
      return false;
    }
  }
  const NlpFunctions& nlp_;
};

const char* StatusName(Ipopt::ApplicationReturnStatus s) {
  switch (s) {
    case Ipopt::Solve_Succeeded:
      return "Solve_Succeeded";
    case Ipopt::Solved_To_Acceptable_Level:
      return "Solved_To_Acceptable_Level";
    case Ipopt::Infeasible_Problem_Detected:
      return "Infeasible_Problem_Detected";
    case Ipopt::Search_Direction_Becomes_Too_Small:
      return "Search_Direction_Becomes_Too_Small";
    case Ipopt::Diverging_Iterates:
      return "Diverging_Iterates";
    case Ipopt::User_Requested_Stop:
      return "User_Requested_Stop";
    case Ipopt::Feasible_Point_Found:
      return "Feasible_Point_Found";
    case Ipopt::Maximum_Iterations_Exceeded:
      return "Maximum_Iterations_Exceeded";
    case Ipopt::Restoration_Failed:
      return "Restoration_Failed";
    case Ipopt::Error_In_Step_Computation:
      return "Error_In_Step_Computation";
    case Ipopt::Maximum_CpuTime_Exceeded:
      return "Maximum_CpuTime_Exceeded";
    case Ipopt::Not_Enough_Degrees_Of_Freedom:
      return "Not_Enough_Degrees_Of_Freedom";
    case Ipopt::Invalid_Problem_Definition:
      return "Invalid_Problem_Definition";
    case Ipopt::Invalid_Option:
      return "Invalid_Option";
    case Ipopt::Invalid_Number_Detected:
      return "Invalid_Number_Detected";
    default:
      return "Ipopt_Internal_Error";
  }
}

class IpoptSolver : public NlpSolver {
 public:
  NlpSolution Solve(const NlpFunctions& nlp,
                    const NlpSolverOptions& o) override {
    Ipopt::SmartPtr<Ipopt::IpoptApplication> app =
        new Ipopt::IpoptApplication(o.print_level > 0);
    auto opts = app->Options();
    opts->SetIntegerValue("print_level", o.print_level);
    opts->SetStringValue("sb", "yes");
    opts->SetIntegerValue("max_iter", o.max_iterations);
    opts->SetNumericValue("tol", o.tolerance);
    opts->SetNumericValue("constr_viol_tol", o.constraint_tolerance);
    opts->SetStringValue("hessian_approximation", "limited-memory");
    opts->SetIntegerValue("limited_memory_max_history", o.lbfgs_memory);
    opts->SetStringValue("mu_strategy", "adaptive");
    // IPOPT relaxes the bounds by 1e-8 relative by default; a run refuses
    // a parameter outside its declared range (an open lower bound at 0,
    // say), so the iterates stay inside the bounds as given.
    opts->SetNumericValue("bound_relax_factor", 0.0);
    for (const std::string& kv : o.extra) {
      const size_t eq = kv.find('=');
      if (eq == std::string::npos)
        throw std::runtime_error("IPOPT option '" + kv + "' is not name=value");
      const std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
      bool set = false;
      char* end = nullptr;
      const long i = std::strtol(value.c_str(), &end, 10);
      if (!value.empty() && *end == '\0')
        set = opts->SetIntegerValue(name, static_cast<Index>(i), true, true);
      if (!set) {
        const double d = std::strtod(value.c_str(), &end);
        if (!value.empty() && *end == '\0')
          set = opts->SetNumericValue(name, d, true, true);
      }
      if (!set) set = opts->SetStringValue(name, value, true, true);
      if (!set)
        throw std::runtime_error("IPOPT does not take the option '" + kv + "'");
    }
    if (app->Initialize() != Ipopt::Solve_Succeeded)
      throw std::runtime_error("IPOPT could not initialize");
    Ipopt::SmartPtr<Tnlp> tnlp = new Tnlp(nlp);
    const Ipopt::ApplicationReturnStatus s = app->OptimizeTNLP(tnlp);
    NlpSolution out = tnlp->sol_;
    out.status = StatusName(s);
    if (!tnlp->error_.empty()) out.status += ": " + tnlp->error_;
    out.converged =
        s == Ipopt::Solve_Succeeded || s == Ipopt::Solved_To_Acceptable_Level;
    out.infeasible = out.infeasible || s == Ipopt::Infeasible_Problem_Detected;
    out.iterations = tnlp->iterations_;
    return out;
  }
};

}  // namespace
}  // namespace daedalus::internal

// The module's entry point: a solver, or null with `error` set (also for
// another interface version).
extern "C" __attribute__((visibility("default"))) daedalus::internal::NlpSolver*
daedalus_ipopt_solver(int abi, std::string* error) {
  if (abi != daedalus::internal::kNlpSolverAbi) {
    *error =
        "the module libdaedalus_ipopt.so belongs to another version of "
        "Daedalus; rebuild or reinstall Daedalus";
    return nullptr;
  }
  return new daedalus::internal::IpoptSolver();
}
