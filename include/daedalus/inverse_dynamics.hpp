// Inverse dynamics with constraints (issue 16; seed 003's holding load):
// given a motion q(t), the inputs u and the multipliers lambda that produce
// it,
//
//   M(q) vdot + h(t, q, v) = B(q) u + J(q, t)' lambda     (docs/conventions.md)
//
// at every sample, the per-channel powers, and the part of M vdot + h that
// neither the inputs nor the reactions can supply (under-actuation).
//
// Solution at one sample (docs/inverse_dynamics.md): with r = M vdot + h, an
// orthonormal basis N (nv x (nv - rank J)) of the null space of J, and the
// input weights W = diag(w_k),
//
//   u      = W^-1/2 pinv(N' B W^-1/2) N' r     (the weighted minimum-norm
//            least-squares inputs of the motion's free directions: the
//            reactions take whatever the constraints can hold),
//   lambda = pinv(J') (r - B u)                (minimum-norm reactions when
//            constraints are redundant),
//   rho    = r - B u - J' lambda               (the unexplained generalized
//            force, N N' (r - B u); zero when the motion is achievable).
//
// Sizes: nq coordinates, nv velocities (nq = nv unless the model has
// quaternions: then each has 4 coordinates and 3 velocities, its angular
// velocity in the rotated frame), nc constraint rows, nu input channels.
#pragma once

#include <Eigen/Core>
#include <atomic>
#include <string>
#include <vector>

#include "daedalus/dual.hpp"
#include "daedalus/model.hpp"

namespace daedalus {

/// A motion at n sample times t_0 < t_1 < ... < t_{n-1}.
struct MotionSamples {
  std::vector<double> t;  ///< n sample times [s], strictly increasing
  Eigen::MatrixXd q;      ///< n x nq coordinates, one row per sample
  /// n x nv velocities, or empty: then differentiated from q.
  Eigen::MatrixXd v;
  /// n x nv accelerations, or empty: then differentiated from v (from q
  /// when v is empty too).
  Eigen::MatrixXd vdot;
  /// Where the samples come from, for messages ("motion.csv"); may be
  /// empty.
  std::string source;
  /// n: the file line of each sample, for messages; empty: messages say
  /// "sample i" (0-based).
  std::vector<int> lines;
};

/// Reads a motion from a CSV file with a header line: a column `t` and one
/// column per coordinate of `model`, named as the coordinates (the CSV a
/// run writes qualifies: its other columns are ignored); when every
/// `v_<velocity>` column is present the velocities are read too (the
/// velocity names: the coordinates', a quaternion's three `<name>.wx|wy|wz`,
/// as a run writes them).
/// @throws std::invalid_argument naming the file and, as the case may be,
/// the missing columns, the line and column of a cell that is not a finite
/// number, a row with too few cells, or some but not all velocity columns.
MotionSamples ReadMotionCsv(const std::string& path, const Model& model);

/// Samples a motion given as a function of time: `q_of_t` is a generic
/// lambda of a scalar `t` returning VecX<decltype(t)> (nq rows). It is
/// evaluated with second-order dual numbers, so v and vdot are exact.
template <class F>
MotionSamples SampleMotion(F q_of_t, const std::vector<double>& times) {
  MotionSamples m;
  m.t = times;
  const Eigen::Index n = static_cast<Eigen::Index>(times.size());
  for (Eigen::Index i = 0; i < n; ++i) {
    // t + e1 + e2: value, first derivative in .v.d (= .d.v), second in .d.d.
    const D2 t(D1(times[static_cast<size_t>(i)], 1.0), D1(1.0, 0.0));
    const VecX<D2> q = q_of_t(t);
    if (i == 0) {
      m.q.resize(n, q.size());
      m.v.resize(n, q.size());
      m.vdot.resize(n, q.size());
    }
    for (Eigen::Index j = 0; j < q.size(); ++j) {
      m.q(i, j) = q[j].v.v;
      m.v(i, j) = q[j].v.d;
      m.vdot(i, j) = q[j].d.d;
    }
  }
  m.source = "a function of time";
  return m;
}

/// The k-th derivative (k = 1 or 2) at every sample time of each column of
/// `x` (n x m, sampled at `t`), from the polynomial of degree `degree`
/// fitted by least squares to `window` consecutive samples around it
/// (centred where the samples allow, one-sided at the ends; window =
/// degree + 1 interpolates). For samples of a smooth function with spacing
/// at most h, the error of the first derivative is O(h^degree) and that of
/// the second O(h^(degree - 1)), O(h^degree) at the centre of a symmetric
/// stencil with even degree (uniform spacing, away from the ends).
/// @pre t strictly increasing, window >= degree + 1 and <= n, degree >= k.
Eigen::MatrixXd DifferentiateSamples(const std::vector<double>& t,
                                     const Eigen::MatrixXd& x,
                                     int k,
                                     int degree,
                                     int window);

struct InverseDynamicsOptions {
  /// Local polynomial differentiation of the samples (DifferentiateSamples):
  /// degree 4 on 5 samples gives accelerations with O(h^4) error from
  /// velocity samples.
  int degree = 4;
  /// Samples per local fit; 0 means degree + 1 (interpolation). A larger
  /// window smooths noisy (measured) samples at the price of a larger
  /// error constant.
  int window = 0;
  /// Weights w_k > 0 of the input channels (nu; empty means all 1): when
  /// several inputs produce the motion, the one minimizing sum_k w_k u_k^2.
  Eigen::VectorXd input_weights;
  /// Relative rank threshold for J and for the projected input map N' B:
  /// singular values below it times the largest count as zero. 1e-6 is
  /// the KKT solver's threshold for J (kkt.hpp, KktOptions::rank_tolerance),
  /// so that a constraint set the forward run calls redundant is redundant
  /// here too.
  double rank_tolerance = 1e-6;
  /// A motion whose constraint residual (|Phi|, |J v + Phi_t| or
  /// |J vdot + b|, max over samples and rows) exceeds this gets a warning:
  /// its inverse dynamics is that of a motion the model cannot follow.
  /// Only the levels the motion gives are judged: a differentiated level
  /// carries the fits' truncation error, not the motion's (the residuals
  /// are still reported).
  double constraint_warning = 1e-6;
  /// Cooperative stop, as SimulationOptions::stop: read before every
  /// sample; once non-zero the result ends there with `stop_code` set.
  const std::atomic<int>* stop = nullptr;
};

/// The inverse dynamics at one sample.
struct InverseDynamicsSample {
  double t = 0.0;
  Eigen::VectorXd q, v, vdot;        ///< nq, nv, nv: the motion
  Eigen::VectorXd u;                 ///< nu: inputs
  Eigen::VectorXd lambda;            ///< nc: multipliers
  Eigen::VectorXd input_power;       ///< nu: u_k (B_k' v) [W]
  Eigen::VectorXd constraint_power;  ///< nc: lambda_i (J_i v) [W]
  /// nv: M vdot + h - B u - J' lambda, the unexplained generalized force.
  Eigen::VectorXd residual;
  double residual_norm = 0.0;  ///< its 2-norm
  /// Rank of J and of N' B here.
  int rank_J = 0, rank_inputs = 0;
  /// The motion's constraint residuals, max over rows: |Phi| (holonomic
  /// and moving rows), |J v + Phi_t|, |J vdot + b|.
  double constraint_position = 0.0, constraint_velocity = 0.0,
         constraint_acceleration = 0.0;
};

struct InverseDynamicsResult {
  /// False when an evaluation failed; `error` says at which sample and
  /// why, `samples` holds those before it.
  bool ok = true;
  std::string error;
  /// The value of InverseDynamicsOptions::stop that ended the computation
  /// (ok is then false, `error` says after which sample), or 0.
  int stop_code = 0;
  std::vector<InverseDynamicsSample> samples;
  /// "given", "differentiated positions" or "differentiated velocities".
  std::string velocities_from, accelerations_from;
  /// Whether at some sample: rank(N' B) < nv - rank J (a free direction of
  /// the motion no input drives: the residual may be non-zero), rank(N' B)
  /// < nu (inputs redundant: the minimum-norm ones are reported), rank J
  /// < nc (redundant constraints: minimum-norm multipliers).
  bool under_actuated = false, over_actuated = false,
       redundant_constraints = false;
  /// "fully actuated", "under-actuated", "over-actuated" or "under- and
  /// over-actuated".
  std::string actuation() const;
  /// Degrees of freedom of the motion, nv - rank J (the smallest seen).
  int dof = 0;
  double residual_max = 0.0;    ///< max over samples of residual_norm
  double t_residual_max = 0.0;  ///< where it occurs
  Eigen::VectorXd residual_max_per_coordinate;  ///< nv: max |residual_j|
  Eigen::VectorXd input_max_abs;                ///< nu
  /// Trapezoidal integrals of the powers over the samples [J] (second
  /// order in the sample spacing).
  Eigen::VectorXd input_work;       ///< nu
  Eigen::VectorXd constraint_work;  ///< nc
  double constraint_position_max = 0.0, constraint_velocity_max = 0.0,
         constraint_acceleration_max = 0.0;
  std::vector<std::string> warnings;
  /// What was done to the motion before its inverse dynamics (a
  /// quaternion's sign made continuous, ...): not a fault.
  std::vector<std::string> notes;
};

/// The checks InverseDynamics makes before its first sample (below, the
/// @throws), alone: a caller can refuse a motion before it starts work.
/// @throws std::invalid_argument as InverseDynamics.
void CheckInverseDynamicsInput(const Model& model,
                               const Eigen::VectorXd& params,
                               const MotionSamples& motion,
                               const InverseDynamicsOptions& options);

/// The inputs and multipliers that produce `motion` (see the file comment)
/// with parameters `params` (np). Velocities and accelerations the motion
/// does not give are differentiated (options.degree, options.window).
/// @throws std::invalid_argument for a motion that cannot be used: sizes
/// that do not match the model, times not strictly increasing (naming the
/// two samples), fewer samples than a local fit needs, a non-finite value,
/// input weights that are not positive or of the wrong count, bad degree
/// or window. A failure to evaluate the model at a sample is reported in
/// the result (ok = false), not thrown.
InverseDynamicsResult InverseDynamics(
    const Model& model,
    const Eigen::VectorXd& params,
    const MotionSamples& motion,
    const InverseDynamicsOptions& options = InverseDynamicsOptions());

}  // namespace daedalus
