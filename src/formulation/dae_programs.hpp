// Compiled programs of the DAE forms (eval/compiled_model.hpp): the
// residual, its exact Jacobian dF/dy + cj dF/dyp, the quadrature
// integrands and, for forward sensitivities, their tangents, each one
// straight-line program built from the symbolic model by the same
// equations (equations.hpp) as the numeric path.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <utility>
#include <vector>

#include "daedalus/simulate.hpp"
#include "eval/compiled_model.hpp"
#include "formulation/equations.hpp"

namespace daedalus::internal {

/// The DAE unknowns y and y' (n = L.size() each) as the symbols the DAE
/// programs are recorded on: q, v and the model's vdot from `sm`; lambda,
/// mu, qdot, lambda' and mu' as named inputs. Every program over the DAE's
/// [t | y | yp | ...] inputs names them so.
void DaeUnknownSyms(SymbolicModel& sm,
                    const DaeLayout& L,
                    VecX<Sym>* Y,
                    VecX<Sym>* YP);

/// Programs over the inputs [t | y | yp | p | cj] (the tangent programs
/// over [t | y | yp | p | cj | dy | dyp | dp]).
struct DaePrograms {
  ExprProgram res, jac, quad;
  bool has_quad = false;
  ExprProgram sens, qsens;
  bool has_sens = false, has_qsens = false;
  int n = 0, np = 0;
  /// (row, column) of each Jacobian output: its structural nonzeros,
  /// column by column.
  std::vector<std::pair<int, int>> jac_entries;
  std::vector<double> in, s_res, s_jac, s_quad, jac_values;
  std::vector<double> sin, s_sens, s_qsens;

  /// Builds the programs of the layout's form under `options` (forward
  /// sensitivity programs when options ask for exact forward
  /// sensitivities). @throws std::length_error when the residual's graph
  /// outgrows ExprGraph::kMaxNodes.
  static std::unique_ptr<DaePrograms> Build(const CompiledModel& cm,
                                            const Model& model,
                                            const DaeLayout& L,
                                            const QuadLayout& Q,
                                            const SimulationOptions& options);

  // Each returns false (the caller then takes the dual-number path, which
  // names the function at fault) when an output is not finite.
  // (Residual and Quadratures inline: they run at every IDAS residual.)
  bool Residual(double t,
                const double* y,
                const double* yp,
                const Eigen::VectorXd& p,
                double* out) {
    Fill(t, y, yp, p, 0.0);
    res.Run(in.data(), out, s_res.data());
    return AllFinite(out, n);
  }
  bool Jacobian(double t,
                double cj,
                const double* y,
                const double* yp,
                const Eigen::VectorXd& p);
  bool Quadratures(double t,
                   const double* y,
                   const Eigen::VectorXd& p,
                   double* out) {
    Fill(t, y, y, p, 0.0);
    quad.Run(in.data(), out, s_quad.data());
    return AllFinite(out, quad.num_outputs());
  }
  bool SensResidual(double t,
                    const double* y,
                    const double* yp,
                    const Eigen::VectorXd& p,
                    const double* dy,
                    const double* dyp,
                    const Eigen::VectorXd& dp,
                    double* out);
  bool QuadSens(double t,
                const double* y,
                const Eigen::VectorXd& p,
                const double* dy,
                const Eigen::VectorXd& dp,
                double* out);

 private:
  // True when no x[i] is inf or nan (one pass, no branch per entry).
  static bool AllFinite(const double* x, int m) {
    double z = 0.0;
    for (int i = 0; i < m; ++i) z += x[i] * 0.0;
    return z == 0.0;
  }
  // Writes [t | y | yp | p | cj] to `to` (`in` unless given).
  void Fill(double t,
            const double* y,
            const double* yp,
            const Eigen::VectorXd& p,
            double cj,
            double* to = nullptr) {
    if (!to) to = in.data();
    to[0] = t;
    std::copy_n(y, n, to + 1);
    std::copy_n(yp, n, to + 1 + n);
    std::copy_n(p.data(), np, to + 1 + 2 * n);
    to[1 + 2 * n + np] = cj;
  }
  // The inputs of the sensitivity programs; dyp may be null (zero).
  void FillTangent(double t,
                   const double* y,
                   const double* yp,
                   const Eigen::VectorXd& p,
                   const double* dy,
                   const double* dyp,
                   const Eigen::VectorXd& dp);
};

}  // namespace daedalus::internal
