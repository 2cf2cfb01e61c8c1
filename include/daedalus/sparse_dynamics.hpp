// Sparse evaluation of a model's equations of motion (docs/performance.md).
//
// The same stages as dynamics.hpp (position: Phi, J, Phi_t; velocity: J v +
// Phi_t and the bias b; dynamics: M, h, energy), with J (nc x nv) and M
// (nv x nv) held as Eigen sparse matrices whose patterns are fixed when the
// workspace is built, from the sparsity the model declares:
//   - a constraint given with Touches{coords} has Jacobian entries in those
//     columns only, and its derivatives are seeded along those coordinates
//     only, kSweepWidth directions per multi-direction (M1) sweep: a
//     revolute joint between two planar bodies costs two first-order sweeps
//     for Phi, its six Jacobian columns and Phi_t, whatever the size of the
//     model;
//   - a kinetic energy given as KineticEnergyTerm/BodyMassMatrix terms gives
//     M one (possibly overlapping) block per term; PotentialEnergyTerm terms
//     are differentiated along their own coordinates.
// Anything the model does not declare is treated as touching every
// coordinate, so every model runs here (dense blocks where undeclared).
//
// At the first evaluation the workspace checks the declaration: it
// evaluates each constraint and term once with random tangents on every
// coordinate it did not declare, and throws std::invalid_argument naming the
// constraint and the coordinate if any of them carries a derivative. The
// check costs one evaluation per function (O(nq) in all).
#pragma once

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <string>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/model.hpp"

namespace daedalus {

/// Column-major sparse matrix with int indices (what SuiteSparse takes).
using SparseMatrixD = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

/// Mutable scratch of the sparse path for one Model (cf. Workspace).
class SparseWorkspace {
 public:
  using Scalar = double;
  explicit SparseWorkspace(const Model& model);

  const Model& model() const { return model_; }
  Stage stage() const { return stage_; }

  // ---- inputs
  double t = 0.0;
  Eigen::VectorXd q;  // nq
  Eigen::VectorXd v;  // nv
  Eigen::VectorXd p;  // np

  // ---- stage 1: position kinematics
  Eigen::VectorXd phi;    // nc
  SparseMatrixD J;        // nc x nv, fixed pattern
  Eigen::VectorXd phi_t;  // nc

  // ---- stage 2: velocity kinematics
  Eigen::VectorXd vel_residual;  // nc: J v + Phi_t
  Eigen::VectorXd bias;          // nc: J vdot + b = 0

  // ---- stage 3: dynamics
  SparseMatrixD M;           // nv x nv, both triangles, fixed pattern
  Eigen::VectorXd h;         // nv: M vdot + h = B u + J' lambda
  Eigen::VectorXd inertial;  // nv: L_vq v + L_vt - L_q
  Eigen::VectorXd Bu;        // nv
  Eigen::MatrixXd B;         // nv x nu input columns
  Eigen::VectorXd u;         // nu
  Eigen::VectorXd Dv;        // nv
  Eigen::VectorXd Qr;        // nv
  Eigen::VectorXd momentum;  // nv
  double lagrangian = 0.0, energy = 0.0, kinetic = 0.0, potential = 0.0;
  double L_t = 0.0;

  void SetState(double time,
                const Eigen::Ref<const Eigen::VectorXd>& q_in,
                const Eigen::Ref<const Eigen::VectorXd>& v_in);
  void SetParameters(const Eigen::Ref<const Eigen::VectorXd>& params);
  void MarkStage(Stage s) { stage_ = s; }
  void Require(Stage s, const char* who) const;

  /// Coordinates of constraint i (its Touches, or all coordinates).
  const std::vector<int>& constraint_coords(int i) const {
    return ccoords_[static_cast<size_t>(i)];
  }
  /// True once the declared sparsity has been checked.
  bool sparsity_checked() const { return checked_; }

  // ---- internal (used by the evaluation stages)
  struct Term {
    std::vector<int> coords;
    const internal::ScalarFn* fn = nullptr;
    double sign = 1.0;           // +1 kinetic (velocity part), -1 potential
    bool velocity_part = false;  // contributes to M and momenta
    std::vector<int> m_slot;     // k x k slots into M's values (kinetic)
    const internal::EnergyTerm* decl = nullptr;  // kinetic term declaration
    std::vector<double> mconst;  // k x k: ConstantBodyMass block, sorted
  };
  std::vector<std::vector<int>> ccoords_;  // per constraint
  std::vector<std::vector<int>> j_slot_;   // per constraint: rows x k
  std::vector<Term> terms_;
  VecX<D1> q1, v1, p1, out1;
  VecX<D2> q2, v2, p2, out2;
  VecX<M1> qm1, vm1, pm1, outm1;
  VecX<double> out0;
  MatX<double> mat0;
  Eigen::VectorXd lq_;  // nv scratch: L_q
  bool checked_ = false;
  // The dual copies of q and v carry zero tangents between evaluations
  // (each sweep clears what it seeds), so SetState updates their values
  // only; a stage that did not finish (an exception from a user function)
  // may leave seeds behind, and the next SetState then rebuilds them.
  bool tangents_clean_ = true;

 private:
  Model model_;
  Stage stage_ = Stage::kNone;
};

/// Stage 1 (Phi, J, Phi_t); checks the declared sparsity at the first call.
/// @throws std::invalid_argument for a function that depends on an
/// undeclared coordinate; std::runtime_error for a non-finite value.
void EvaluateSparsePosition(SparseWorkspace* ws);
/// Stage 2 (J v + Phi_t, b).
void EvaluateSparseVelocity(SparseWorkspace* ws);
/// Stage 3 (M, h, forces, energy).
void EvaluateSparseDynamics(SparseWorkspace* ws);
/// All three stages.
void EvaluateSparseAll(SparseWorkspace* ws);

/// Checks the declared sparsity of every constraint and energy term at the
/// workspace state (see the file comment); the first stage calls it once.
/// @throws std::invalid_argument naming the function and the coordinate.
void CheckDeclaredSparsity(SparseWorkspace* ws);

/// Describes the state for messages (first coordinates only for big models).
std::string DescribeState(const SparseWorkspace& ws);

}  // namespace daedalus
