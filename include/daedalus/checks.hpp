// Structural checks of a model at a state (seed 000): M symmetric positive
// definite, Mdot - 2C skew for the Christoffel factor C, and the energy-rate
// identity  Edot = v'(B u - D v + Q_r) + constraint power - L_t.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "daedalus/dynamics.hpp"
#include "daedalus/kkt.hpp"

namespace daedalus {

/// dM[k] = dM/dq_k (nv x nv each), exact by AD. Requires a kinetic energy
/// quadratic in v (terms linear in v are removed; they do not enter M).
std::vector<Eigen::MatrixXd> MassMatrixDerivatives(Workspace* ws);

/// Christoffel factor C_ij = sum_k Gamma_ijk v_k with
/// Gamma_ijk = (d_k M_ij + d_j M_ik - d_i M_jk) / 2 (seed 000), nv x nv.
Eigen::MatrixXd ChristoffelMatrix(Workspace* ws);

struct StructuralReport {
  double symmetry_error = 0.0;     ///< max |M - M'|
  double min_eigenvalue = 0.0;     ///< smallest eigenvalue of M
  double skew_error = 0.0;         ///< max |S + S'|, S = Mdot - 2C
  double skew_scale = 0.0;         ///< max |Mdot| + max |C| (for relative use)
  double energy_rate = 0.0;        ///< dE/dt along the solution, by AD
  double power_sum = 0.0;          ///< v'Q + constraint power - L_t
  double energy_rate_error = 0.0;  ///< |energy_rate - power_sum|
  bool ok(double tol) const;
};

/// Runs all checks at the state in `ws` (stages are re-evaluated). The KKT
/// solve uses `kkt` options; the time derivative of E is taken by AD along
/// (qdot = v, vdot from the KKT solve, tdot = 1), independently of h.
StructuralReport CheckStructure(Workspace* ws,
                                const KktOptions& kkt = KktOptions());

}  // namespace daedalus
