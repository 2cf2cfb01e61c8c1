// Sparse Newton preconditioner for CVODES BDF on the sparse path.
//
// The index-1 ODE y = (q, v), y' = (v, a(q, v)) with a from the KKT solve has
// a dense Jacobian in maximal coordinates, but the Newton system
// (I - gamma df/dy) (xq, xv) = (rq, rv) is equivalent to the sparse
// augmented system (xq = rq + gamma xv, mu = gamma dlambda)
//
//   [ M - gamma D - gamma^2 K   -J' ] [ xv ]   [ M rv + gamma K rq ]
//   [ J + gamma H + gamma^2 G    0  ] [ mu ] = [ J rv - gamma G rq ]
//
// with, at fixed (a, lambda), K = d/dq (B u - h - M a + J' lambda),
// D = d/dv of the same, G = d/dq (J a + b_s), H = d/dv (J a + b_s) (b_s the
// stabilized bias). K, D, G, H are sparse with the declared structure and
// (On a model with quaternions, nq != nv: q and its residual rq are taken
// in the chart of eval/chart.hpp, K and G are derivatives along chart
// directions, and xq = rq + gamma N(q) xv, which leaves the component of
// rq along a quaternion, a change of its norm, as it is.)
// are computed by finite differences of the sparse evaluation with a
// column coloring (columns that share no constraint or energy term are
// perturbed together). The augmented matrix is factored by KLU (symbolic
// analysis once). CVODES uses it as the preconditioner of SPGMR.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <vector>

#include "daedalus/sparse_dynamics.hpp"
#include "formulation/mechanics.hpp"
#include "kkt/sparse_backend.hpp"

namespace daedalus::internal {

class SparseNewtonPreconditioner final : public NewtonPreconditioner {
 public:
  /// `bias` writes the stabilized bias b_s (nc) at the workspace state (all
  /// stages evaluated).
  SparseNewtonPreconditioner(
      SparseWorkspace* ws,
      std::function<void(const SparseWorkspace&, Eigen::VectorXd*)> bias);

  /// K, D, G, H at (t, q, v) with that state's accelerations a (nv) and
  /// multipliers lambda (nc). Leaves ws at a perturbed state.
  void Update(double t,
              const Eigen::VectorXd& q,
              const Eigen::VectorXd& v,
              const Eigen::VectorXd& a,
              const Eigen::VectorXd& lambda) override;
  /// Factors the augmented Newton matrix for `gamma`; false if singular.
  bool Factor(double gamma) override;
  /// Rows of J known to be dependent (redundant constraints): the Newton
  /// system is taken on the other rows (the dependent ones get mu = 0).
  void SetDependentRows(const std::vector<int>& rows) override;
  /// z = P^-1 r for r = (rq, rv) (nq + nv).
  void Solve(const Eigen::Ref<const Eigen::VectorXd>& r,
             Eigen::Ref<Eigen::VectorXd> z) override;

  int num_colors() const { return num_colors_; }

 private:
  void Residuals(const Eigen::VectorXd& a,
                 const Eigen::VectorXd& lambda,
                 Eigen::VectorXd* R,
                 Eigen::VectorXd* Rc);

  SparseWorkspace* ws_;
  std::function<void(const SparseWorkspace&, Eigen::VectorXd*)> bias_;
  int nq_ = 0, nv_ = 0, nc_ = 0, num_colors_ = 0;
  Eigen::VectorXd q_;  // the setup state's q (models with quaternions)
  Eigen::VectorXd rxi_, dxi_;
  std::vector<int> color_;                  // per coordinate
  std::vector<std::vector<int>> r_rows_;    // per column: rows of R it moves
  std::vector<std::vector<int>> r_slots_;   // ... their slots in P11
  std::vector<std::vector<int>> rc_rows_;   // per column: constraint rows
  std::vector<std::vector<int>> rc_slots_;  // ... their slots in J
  SparseMatrixD P11_;                       // pattern of M u K u D
  std::vector<int> m_to_p11_;               // slot of each M value in P11
  SparseMatrixD K_, D_, G_, H_;             // values in P11 / J patterns
  SparseMatrixD M_, J_;                     // at the setup state
  SparseMatrixD A_;                         // augmented Newton matrix
  std::vector<int> a_src_;                  // >= 0: P11 slot; < 0: J value
  std::vector<int> a_kind_;  // 0: P11, 1: -J', 2: P21, 3: (2,2) diagonal
  Klu klu_;
  std::vector<char> dependent_;  // per constraint row
  bool analysed_ = false;
  double gamma_ = 0.0;
  Eigen::VectorXd R0_, Rc0_, R1_, Rc1_, rhs_, sol_, b_;
};

}  // namespace daedalus::internal
