// What the sparse evaluator's workspace refuses (issue 40): a model whose
// workspace would not fit in memory, estimated before it is built, and a
// constant mass block that is not a finite matrix of the declared size.
//
// The memory: a SparseWorkspace stores its mass matrix's pattern
// entry by entry: every kinetic-energy term contributes k x k entries for
// the k velocities it touches, so a chain of n bodies in the energy form
// (body i touching the i joints above it) needs about n^3 / 3 of them:
// 12 GB for 1000 links, which ended in std::bad_alloc. Such a model is
// refused with the estimate and the alternative instead.
#pragma once

#include <Eigen/Core>
#include <string>

#include "daedalus/model.hpp"

namespace daedalus::internal {

struct SparseMemoryEstimate {
  double entries = 0.0;  ///< pattern entries of M (and J)
  double bytes = 0.0;    ///< the memory they take while the workspace is built
  int terms = 0;         ///< kinetic-energy terms
  int widest = 0;        ///< velocities of the widest term
};

/// The estimate for `model`, from the declared terms alone (O(terms)).
SparseMemoryEstimate EstimateSparseWorkspace(const Model& model);

/// The memory this process may still take: the smaller of the system's
/// available memory (/proc/meminfo MemAvailable) and the address-space
/// and data limits (ulimit -v, -d); infinity when none is known.
double AvailableMemoryBytes();

/// The refusal for an estimate above half of `available` bytes, or "".
std::string SparseMemoryRefusal(const Model& model,
                                const SparseMemoryEstimate& e,
                                double available);

/// @throws std::invalid_argument SparseMemoryRefusal(model,
/// EstimateSparseWorkspace(model), AvailableMemoryBytes()) when not empty.
void CheckSparseWorkspaceMemory(const Model& model);

/// The dense evaluator's cost for a model whose M and h come from its
/// kinetic-energy terms (the energy form, no InertialDynamics): one
/// evaluation takes about nv second-order sweeps of the summed energy,
/// each evaluating every term that has no constant mass once per
/// coordinate it touches: nv * sum(k) units. Measured: about 1 us per
/// unit (a 50-link URDF chain: 64 000 units, 60 ms per evaluation); a
/// 1000-link chain: 5e8 units, minutes per evaluation, and a run needs
/// thousands. Joint limits (contacts) put such a model on the dense path
/// (issue 36), past the sparse evaluator's memory refusal.
double DenseEnergySweepUnits(const Model& model);

/// @throws std::invalid_argument with the estimate and the alternative
/// (--dynamics recursive) when DenseEnergySweepUnits
/// exceeds kDenseEnergyMaxUnits (about 20 s per evaluation).
void CheckDenseEnergyCost(const Model& model);
inline constexpr double kDenseEnergyMaxUnits = 2e7;
inline constexpr double kDenseEnergySecondsPerUnit = 1e-6;

/// The dense KKT solve's floating-point operations per evaluation of the
/// dynamics (kkt.hpp, range space): the Cholesky factor of M (nv^3 / 3),
/// M^-1 J' (nv^2 nc), J M^-1 J' (nv nc^2) and its factor (nc^3 / 3).
/// Measured with Eigen on this project's machines: 5.7 GFlop/s (nv = 2700,
/// nc = 2000: 3.5e10 operations, 6.1 s).
double DenseKktFlops(const Model& model);

/// For a model with constraints (nc > 0; without, there is no KKT system):
/// @throws std::invalid_argument with the estimate and the alternatives
/// when DenseKktFlops exceeds kDenseKktMaxFlops (about 2 s per evaluation,
/// and a run takes hundreds to thousands): 100 MJCF humanoids with their
/// 2000 joint limits, put on the dense evaluator by the limits, ran for
/// hours without a word (fuzz_edges.py --surface mjcf, seed 46, run 446).
/// `joint_limits` and `contacts` choose the alternatives named.
void CheckDenseKktCost(const Model& model, bool joint_limits, bool contacts);
inline constexpr double kDenseKktMaxFlops = 1e10;

/// A ConstantBodyMass block `m` evaluated at the parameters `p` for a term
/// over k velocities. @throws std::invalid_argument when it is not k x k,
/// or not finite (a parameter so large that a mass or inertia overflows:
/// chain --param length=1e308 said "block is 3 x 3 ..., expected 3 x 3").
void CheckConstantMassBlock(const Model& model,
                            const Eigen::MatrixXd& m,
                            Eigen::Index k,
                            const Eigen::VectorXd& p);

}  // namespace daedalus::internal
