// The DAE forms on IDAS (docs/formulations.md): GGL stabilized index 2,
// direct index 3, and the index-1 forms (unstabilized, Baumgarte) with the
// multipliers as algebraic unknowns. What the IDAS adapter needs: the
// layout of y, the consistent start, the residual and its exact Jacobian
// (compiled programs on the dense path when the model allows, tangents
// otherwise), the sensitivity residuals, the energy-balance integrands, the
// root functions and the sample state; all through a Mechanics.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daedalus/simulate.hpp"
#include "formulation/dae_programs.hpp"
#include "formulation/mechanics.hpp"
#include "formulation/sens_programs.hpp"

namespace daedalus::internal {

class RootSet;

class DaeForm {
 public:
  /// Builds the compiled programs when the mechanics has a compiled model;
  /// `evaluator` (may be null) is amended when the residual stays on dual
  /// numbers or runs interpreted.
  DaeForm(Mechanics* mech,
          const SimulationOptions& options,
          std::string* evaluator);

  Mechanics& mech() { return *mech_; }
  const DaeLayout& layout() const { return L_; }
  const QuadLayout& quad_layout() const { return Q_; }
  int size() const { return L_.size(); }
  /// y's first differential() components are differential (q, v), the
  /// rest algebraic (multipliers).
  int differential() const { return L_.nq + L_.nv; }
  /// True for the quadratures whose integrands carry the multipliers
  /// (constraint power, its ideal side, the GGL correction power): the
  /// multipliers are outside the error test (their local errors are
  /// O(atol / h) in an index-2 form), and holding their integrals to atol
  /// forces the step down without bound.
  bool QuadratureOutsideErrorTest(int k) const;
  /// Whether compiled programs serve the residual (tests).
  bool compiled() const { return prog_ != nullptr; }
  bool compiled_tangent() const { return prog_ && prog_->has_sens; }

  void set_dq_parameters(const Eigen::VectorXd* p) { dq_params_ = p; }

  /// Consistent (y0, yp0) from (q, v) on the manifold: lambda0 and vdot0
  /// from the KKT system, mu0 = 0, q' = v. Leaves the mechanics evaluated
  /// there with `r0` its KKT solution.
  void ConsistentStart(double t0,
                       const Eigen::VectorXd& q,
                       const Eigen::VectorXd& v,
                       Eigen::Ref<Eigen::VectorXd> y0,
                       Eigen::Ref<Eigen::VectorXd> yp0,
                       KktResult* r0);
  /// How the Newton convergence test of GGL and index 3 weighs algebraic
  /// unknown j (docs/formulations.md, "Scaling of the algebraic
  /// unknowns"): by the change it makes to q or v within one step of size
  /// h, h^power * scale * (the largest error weight of q or of v), where
  /// scale is the largest entry of M^-1 J_i' (a multiplier acting on
  /// v), or of G_k' (a GGL multiplier mu acting on q). Set by
  /// ConsistentStart; empty for the index-1 forms, and when
  /// --multiplier-atol is given (the expert's fixed tolerance).
  struct AlgebraicWeight {
    double scale = 1.0;
    int power = 1;
    bool on_q = false;
  };
  const std::vector<AlgebraicWeight>& algebraic_weights() const {
    return algebraic_weights_;
  }
  /// Initial sensitivities (y, yp) along one parameter at the consistent
  /// start (mechanics evaluated there, r0 its KKT solution).
  void InitialSensitivity(const KktResult& r0,
                          const SensParameter& sp,
                          const Eigen::MatrixXd& initial_tangent,
                          Eigen::Ref<Eigen::VectorXd> s,
                          Eigen::Ref<Eigen::VectorXd> sp_dot);
  /// The sensitivities (y, yp) of a consistent start from its
  /// linearization `s0` (Mechanics::LinearizeStart or LinearizeRestart,
  /// at the state the mechanics holds).
  void FillSensitivity(const internal::InitialSensitivity& s0,
                       Eigen::Ref<Eigen::VectorXd> s,
                       Eigen::Ref<Eigen::VectorXd> sp_dot);

  // Residual and Quadratures run once per IDAS residual evaluation: their
  // compiled fast path is inline (bench/slider_crank_overhead.py counts
  // the instructions around the program).
  void Residual(double t, const double* y, const double* yp, double* res) {
    if (!prog_ || !prog_->Residual(t, y, yp, CurrentParameters(), res))
      ResidualByWorkspace(t, y, yp, res);
    // Open contacts (Mechanics::SetOpenRows, docs/contact.md): their
    // constraint rows are lambda_i = 0, and on GGL a holonomic one's
    // position row mu_k = 0 (OpenRows).
    for (int r : mech_->open_rows())
      for (int i : OpenRows(r)) res[i] = y[i];
    // Slipping friction rows (docs/friction.md, "On IDAS"): lambda_t +
    // mu sigma lambda_n = 0 in place of the row's equation, as in the KKT
    // system; the row keeps its J, so the dynamics rows carry the
    // kinetic friction force J_t' lambda_t.
    for (const SlipRow& s : mech_->slip_rows())
      res[L_.il() + s.row] += s.mu * s.sigma * y[L_.il() + s.normal];
  }
  /// The residual rows an open contact row r replaces by its own unknown
  /// (docs/contact.md, "Where it runs"): lambda_r's row il() + r, and on
  /// GGL, when r is holonomic, the row im() + k of its mu_k (hrows[k] ==
  /// r), whose equation Phi_r = 0 is no constraint of the mode either (the
  /// evaluator zeroes an open row's Phi and J: the row would be empty). One
  /// entry (index 3 and the index-1 forms) or two.
  struct OpenResidualRows {
    int rows[2] = {-1, -1};
    int count = 0;
    const int* begin() const { return rows; }
    const int* end() const { return rows + count; }
  };
  OpenResidualRows OpenRows(int r) const {
    OpenResidualRows o;
    o.rows[o.count++] = L_.il() + r;
    if (static_cast<std::size_t>(r) < mu_row_.size() &&
        mu_row_[static_cast<std::size_t>(r)] >= 0)
      o.rows[o.count++] = mu_row_[static_cast<std::size_t>(r)];
    return o;
  }
  /// dF/dy + cj dF/dyp into a dense column-major n x n array.
  void DenseJacobian(
      double t, double cj, const double* y, const double* yp, double* a);
  /// Structurally nonzero rows of each Jacobian column (the KLU pattern).
  const std::vector<std::vector<int>>& Pattern();
  /// The Jacobian's values in Pattern() order (column by column).
  void SparseJacobian(
      double t, double cj, const double* y, const double* yp, double* values);

  /// The tangent of F along (dy, dyp) and the parameter direction dp.
  void SensResidual(double t,
                    const double* y,
                    const double* yp,
                    const double* dy,
                    const double* dyp,
                    const Eigen::VectorXd& dp,
                    double* out);
  /// Integrands of quad_layout() at (t, y).
  void Quadratures(double t, const double* y, double* out) {
    if (prog_ && prog_->has_quad &&
        prog_->Quadratures(t, y, CurrentParameters(), out))
      return;
    QuadraturesByWorkspace(t, y, out);
  }
  /// Their tangent along (dy, dp).
  void QuadSens(double t,
                const double* y,
                const double* dy,
                const Eigen::VectorXd& dp,
                double* out);
  /// The tangent of the model's own quadratures (quad_layout().user()
  /// on) along (dy, dp), the other (energy-balance) entries zero: what the
  /// forward sensitivities report. The user integrands g(t, q, v, p) read
  /// no multiplier, so on the compiled path this is one gradient program
  /// per quadrature and state and a dot product per direction, where
  /// QuadSens needs Baumgarte's ideal-multiplier tangent (a KKT
  /// linearization) per state.
  void UserQuadSens(double t,
                    const double* y,
                    const double* dy,
                    const Eigen::VectorXd& dp,
                    double* out);

  /// Evaluates at (t, y) and solves for the reported multipliers: the
  /// ideal constraint reactions at (q, v) (IDAS's own interpolated lambda
  /// is not error-controlled).
  const KktResult& SampleState(double t, const double* y);
  void Roots(double t, const double* y, const RootSet& roots, double* g);

 private:
  void SetAlgebraicWeights();
  std::vector<AlgebraicWeight> algebraic_weights_;

  const Eigen::VectorXd& CurrentParameters() const {
    return dq_params_ ? *dq_params_ : *params_;
  }
  // Seeds the tangent workspace at (t, q, v) with (dq, dv) from dy and dp.
  TangentWorkspace& SeedAndEvaluate(double t,
                                    const double* y,
                                    const double* dy,
                                    const Eigen::VectorXd& dp);
  // The residual and the integrands on the mechanics' workspace, when no
  // compiled program serves them (or one returned a non-finite value).
  void ResidualByWorkspace(double t,
                           const double* y,
                           const double* yp,
                           double* res);
  void QuadraturesByWorkspace(double t, const double* y, double* out);
  // Tangent of F along (dy, dyp) with the tangent workspace seeded
  // consistently with dy.
  void AssembleTangent(const TangentWorkspace& tws,
                       const double* y,
                       const double* yp,
                       const double* dy,
                       const double* dyp,
                       double* out);
  // Exact dF/dy + cj dF/dyp by tangents, into jac_.
  void TangentJacobian(double t, double cj, const double* y, const double* yp);
  // Baumgarte's integrand tangents on the compiled path (the integrands
  // read the ideal multipliers, a KKT solve): false when not built or an
  // entry is not finite. Per state, one linearization of the ideal KKT
  // solution and one integrand Jacobian (cached for the parameters of the
  // same call); per direction, dense products.
  bool BaumgarteQuadSens(double t,
                         const double* y,
                         const double* dy,
                         const Eigen::VectorXd& dp,
                         double* out);
  // reported_ is the ideal KKT solution at (t, q, v, p) of the last
  // NoteReported.
  void NoteReported(double t, const double* y);
  bool reported_valid_ = false;
  double reported_t_ = 0.0;
  Eigen::VectorXd reported_y_, reported_p_;
  std::unique_ptr<KktLinearization> qs_kkt_;
  std::unique_ptr<BaumgarteIntegrandJacobian> qs_integrands_;
  bool qs_valid_ = false;
  double qs_t_ = 0.0;
  Eigen::VectorXd qs_y_, qs_p_, qs_z_;
  Eigen::MatrixXd qs_dlambda_, qs_jac_;  // -(K^-1 Z)'s multiplier rows
  // UserQuadSens: d g_k / d(q, v) (rows of uq_gy_) and d g_k / dp (of
  // uq_gp_) at (uq_t_, uq_y_, uq_p_), one FunctionalGradient per user
  // quadrature (empty when not compiled).
  std::vector<std::unique_ptr<FunctionalGradient>> uq_grad_;
  bool uq_valid_ = false;
  double uq_t_ = 0.0;
  Eigen::VectorXd uq_y_, uq_p_, uq_row_y_, uq_row_p_;
  Eigen::MatrixXd uq_gy_, uq_gp_;

  Mechanics* mech_;
  SimulationOptions opt_;
  DaeLayout L_;
  QuadLayout Q_;
  KktResult reported_;
  const Eigen::VectorXd* dq_params_ = nullptr;
  // The mechanics' parameter vector (a stable reference: its size is the
  // model's), read without a virtual call on every residual.
  const Eigen::VectorXd* params_ = nullptr;
  std::unique_ptr<DaePrograms> prog_;
  std::vector<std::vector<int>> pattern_;
  // Event-driven contact (docs/contact.md): the constraint rows a mode can
  // open, whose residual is then lambda_i = 0 (and mu_k = 0 on GGL,
  // OpenRows). The KLU pattern holds the diagonal of each such residual
  // row (AddContactDiagonals); open_slots_[i] lists the pattern slots
  // (value index, column) of residual row i (filled for those rows only),
  // and prog_slot_ the slot of each compiled Jacobian entry once diagonals
  // were added (empty: the compiled entries are the pattern).
  std::vector<int> contact_rows_;
  // The (tangential, normal) constraint rows of each planar friction law
  // (ContactLaw::friction): a slipping tangential row's residual reads its
  // normal's multiplier, an entry the pattern holds for the run.
  std::vector<std::pair<int, int>> friction_pairs_;
  std::vector<std::vector<std::pair<int, int>>> open_slots_;
  std::vector<int> prog_slot_;
  std::size_t pattern_nnz_ = 0;
  void AddContactDiagonals();
  // GGL: the residual row im() + k of each constraint row hrows[k], -1
  // for the others (empty for the other forms, and without contacts):
  // OpenRows.
  std::vector<int> mu_row_;
  Eigen::MatrixXd jac_;
  VecX<D1> Y1_, YP1_, F1_;
  Eigen::VectorXd zero_dp_;
};

/// What the IDAS callbacks compute at one point (for tests): the residual
/// F(t, y, yp), the Jacobian dF/dy + cj dF/dyp (dense) and the quadrature
/// integrands, by the compiled programs when `options.compiled` and the
/// model allow (then `compiled`), else by the dual-number path.
struct IdasProbe {
  bool compiled = false;
  Eigen::VectorXd residual;
  Eigen::MatrixXd jacobian;
  Eigen::VectorXd quadratures;
};
IdasProbe ProbeIdas(const Model& model,
                    const SimulationOptions& options,
                    const Eigen::VectorXd& params,
                    double t,
                    const Eigen::VectorXd& y,
                    const Eigen::VectorXd& yp,
                    double cj);

/// The tangents of the residual and of the quadrature integrands along
/// (dy, dyp) and the parameter direction dp (np): what the forward
/// sensitivity callbacks compute, by the compiled programs when
/// `options` asks for exact forward sensitivities and the model allows
/// (then `compiled`), else by the dual-number path. For tests.
struct IdasTangentProbe {
  bool compiled = false;
  Eigen::VectorXd residual;
  Eigen::VectorXd quadratures;
  /// DaeForm::UserQuadSens: the model's own quadratures' tangent (the
  /// energy-balance entries zero), what the IDAS forward run integrates.
  Eigen::VectorXd user_quadratures;
};
IdasTangentProbe ProbeIdasTangent(const Model& model,
                                  const SimulationOptions& options,
                                  const Eigen::VectorXd& params,
                                  double t,
                                  const Eigen::VectorXd& y,
                                  const Eigen::VectorXd& yp,
                                  const Eigen::VectorXd& dy,
                                  const Eigen::VectorXd& dyp,
                                  const Eigen::VectorXd& dp);

/// Builds the IDAS programs of `model` under `options` (as a run would),
/// so that a ProgramCollector records them.
void PrepareIdasPrograms(const Model& model,
                         const SimulationOptions& options,
                         const Eigen::VectorXd& params);

}  // namespace daedalus::internal
