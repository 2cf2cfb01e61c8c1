// Compiled first-derivative matrices for the sensitivity paths
// (docs/sensitivities.md, "Cost"): instead of one dual-number tangent
// evaluation of the whole model per direction, one straight-line program
// per state gives every structurally nonzero entry of a Jacobian, and each
// direction (a parameter, an adjoint vector) is then a small dense
// product. Built from the symbolic model (eval/compiled_model.hpp) by the
// same equations (equations.hpp) as the numeric path, so they are exact.
//
//   KktLinearization  R(q, v, p; a, lambda) = [M a + h - B u - J' lambda;
//                     J a + bias], the KKT system of the index-1 forms at a
//                     fixed solution (a, lambda): dR/d(q, v, p) and the KKT
//                     matrix K = dR/d(a, lambda) = [M -J'; J 0], factored.
//                     The tangent of the KKT solution along a direction d
//                     of (q, v, p) is -K^-1 (dR/d(q, v, p)) d.
//   Baumgarte's quadrature integrands as functions of (q, v, p) and of the
//                     ideal and applied multipliers, and their Jacobian.
//   FunctionalGradient  d g / d(q, v, p) of a running functional.
//   DaeParameterJacobian  dF/dp of a DAE form's residual.
//
// Each Make returns nullptr when the model has no compiled evaluator, has
// quaternions (their chart is left to the tangent path), or a function
// cannot be recorded; the caller then keeps the dual-number path.
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>
#include <memory>
#include <vector>

#include "daedalus/simulate.hpp"
#include "eval/compiled_model.hpp"
#include "formulation/equations.hpp"

namespace daedalus::internal {

/// A program that writes the structural nonzeros of a Jacobian, and their
/// placement in a dense matrix. Built once per model and kind and shared by
/// the runs (CompiledModel::Cached).
struct JacobianProgram {
  ExprProgram program;
  std::vector<int> rows, cols;  // of each output
  int m = 0, ncols = 0;

  /// The Jacobian of the nodes `f` with respect to the inputs numbered
  /// `wrt` (one column each); the program reads the inputs `inputs`.
  void Build(ExprGraph& g,
             const std::vector<int>& inputs,
             const std::vector<int>& f,
             const std::vector<int>& wrt);
};

/// One run's evaluator of a shared JacobianProgram.
class JacobianRun {
 public:
  explicit JacobianRun(std::shared_ptr<const JacobianProgram> p);
  /// The program's inputs, to be filled before Run.
  double* in() { return in_.data(); }
  /// Writes the Jacobian into `out` (m x ncols, resized, zero outside the
  /// pattern); false when an entry is not finite.
  bool Run(Eigen::MatrixXd* out);

 private:
  std::shared_ptr<const JacobianProgram> p_;
  std::vector<double> in_, scratch_, values_;
};

class KktLinearization {
 public:
  /// `form` sets the constraint right-hand side: the Baumgarte terms for
  /// kBaumgarte, the model's own bias b otherwise.
  static std::unique_ptr<KktLinearization> Make(const CompiledModel* cm,
                                                const Model& model,
                                                const ConstraintRows& rows,
                                                const SimulationOptions& o,
                                                Formulation form);

  /// At (t, q, v, p) and the KKT solution (a, lambda): Z() and the factored
  /// K. False when an entry is not finite (nothing is usable then). Without
  /// `with_p`, a program without the parameters' columns runs and Z() has
  /// only dR/d(q, v) (the adjoint's f_y, its f_p taken by KktVjp).
  bool Linearize(double t,
                 const double* q,
                 const double* v,
                 const Eigen::VectorXd& p,
                 const Eigen::VectorXd& a,
                 const Eigen::VectorXd& lambda,
                 bool with_p = true);
  /// dR/d(q, v, p): (nv + nc) x (nq + nv + np) (nq + nv columns after a
  /// Linearize without p).
  const Eigen::MatrixXd& Z() const { return Z_; }
  /// K = [M -J'; J 0], LU-factored (on first use per state).
  const Eigen::PartialPivLU<Eigen::MatrixXd>& K();
  /// K' X = B (a factorization of K' made on first use per state).
  Eigen::MatrixXd SolveTransposed(const Eigen::MatrixXd& B);

 private:
  int nq_ = 0, nv_ = 0, nc_ = 0, np_ = 0;
  std::unique_ptr<JacobianRun> jac_;    // columns (q, v, p, a, lambda)
  std::unique_ptr<JacobianRun> jac_y_;  // columns (q, v, a, lambda)
  Eigen::MatrixXd all_, Z_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_, lut_;
  bool lu_valid_ = false, lut_valid_ = false;
};

/// The adjoint's side of the same KKT linearization: vector-Jacobian
/// products w' dR/d(q, v, p) by one program made by reverse mode on the
/// residual's graph (ExprGraph::Gradient), whose size is a small multiple
/// of the residual's whatever the number of parameters, where
/// KktLinearization's program writes every column of dR/dp. With
/// w = K^-T [mu_v; 0] the acceleration rows give mu_v' [a_y a_p] =
/// -w' dR/d(q, v, p): the adjoint's right-hand side and quadrature in one
/// product, no n + np column solve.
class KktVjp {
 public:
  /// With `running` (a running functional g of the model), Product gives
  /// w' dR/d(q, v, p) - dg/d(q, v, p), from the same sweep: the adjoint's
  /// quadrature integrand without a run of g's gradient program. With
  /// `params_only`, only the p entries (np): a smaller program (the
  /// adjoints that reach only q and v are not formed).
  static std::unique_ptr<KktVjp> Make(const CompiledModel* cm,
                                      const Model& model,
                                      const ConstraintRows& rows,
                                      const SimulationOptions& o,
                                      Formulation form,
                                      const ScalarFn* running = nullptr,
                                      bool params_only = false);
  /// At (t, q, v, p) and the KKT solution (a, lambda): K. False when an
  /// entry is not finite.
  bool Prepare(double t,
               const double* q,
               const double* v,
               const Eigen::VectorXd& p,
               const Eigen::VectorXd& a,
               const Eigen::VectorXd& lambda);
  /// K' x = b at the prepared state (K' factored on first use).
  Eigen::VectorXd SolveTransposed(const Eigen::VectorXd& b);
  /// out = w' dR/d(q, v, p) (nq + nv + np; np with params_only) at the
  /// prepared state, for w (nv + nc). False when an entry is not finite.
  bool Product(const Eigen::VectorXd& w, Eigen::VectorXd* out);
  /// The number of R's rows, nv + nc (w's size).
  int rows() const { return nv_ + nc_; }
  /// Whether Product subtracts a running functional's gradient.
  bool with_running() const { return with_running_; }

 private:
  int nq_ = 0, nv_ = 0, nc_ = 0, np_ = 0;
  std::unique_ptr<JacobianRun> k_;  // dR/d(a, lambda) = K
  std::shared_ptr<const ExprProgram> vjp_;
  std::vector<double> in_, scratch_;
  Eigen::MatrixXd K_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lut_;
  bool lut_valid_ = false;
  bool with_running_ = false, params_only_ = false;
};

/// The adjoint's shortcuts on or off for the whole process: the products
/// of KktVjp and the skip of f_p columns off a parameter's declared time
/// support (ModelBuilder::ParameterTimeSupport). Off, the adjoints form
/// every column of f_p as before them (tests and bench/ compare the two).
void SetAdjointShortcuts(bool enabled);
bool AdjointShortcutsEnabled();

/// Baumgarte's energy-balance integrands (QuadLayout) with the reported
/// (ideal) multipliers and the stabilization power (applied - ideal)' J v,
/// as functions of (q, v, p, lambda_ideal, lambda_applied).
class BaumgarteIntegrandJacobian {
 public:
  static std::unique_ptr<BaumgarteIntegrandJacobian> Make(
      const CompiledModel* cm, const Model& model);
  /// The Jacobian (size(QuadLayout) x (nq + nv + np + 2 nc)) at the point.
  bool Run(double t,
           const double* q,
           const double* v,
           const Eigen::VectorXd& p,
           const Eigen::VectorXd& lambda_ideal,
           const double* lambda_applied,
           Eigen::MatrixXd* out);

 private:
  int nq_ = 0, nv_ = 0, nc_ = 0, np_ = 0;
  std::unique_ptr<JacobianRun> jac_;
};

/// The gradient of a running functional g(t, q, v, p) in (q, v, p).
class FunctionalGradient {
 public:
  static std::unique_ptr<FunctionalGradient> Make(const CompiledModel* cm,
                                                  const Model& model,
                                                  const ScalarFn& g);
  /// gy = dg/d(q, v) (nq + nv), gp = dg/dp (np).
  bool Run(double t,
           const double* q,
           const double* v,
           const Eigen::VectorXd& p,
           Eigen::VectorXd* gy,
           Eigen::VectorXd* gp);

 private:
  int nq_ = 0, nv_ = 0, np_ = 0;
  std::unique_ptr<JacobianRun> jac_;
  Eigen::MatrixXd row_;
};

/// dF/dp (n x np) of the residual of the DAE form `L` (DaeForm).
class DaeParameterJacobian {
 public:
  static std::unique_ptr<DaeParameterJacobian> Make(const CompiledModel* cm,
                                                    const Model& model,
                                                    const DaeLayout& L);
  bool Run(double t,
           const double* y,
           const double* yp,
           const Eigen::VectorXd& p,
           Eigen::MatrixXd* Fp);

 private:
  int n_ = 0, np_ = 0;
  std::unique_ptr<JacobianRun> jac_;
};

}  // namespace daedalus::internal
