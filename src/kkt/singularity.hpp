// What a singular mass matrix or a rank-deficient constraint Jacobian
// means, in the words of the model: the parts of the messages that the
// dense KKT solve and the projections share (docs/writing_a_problem.md,
// "Error messages").
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "daedalus/model.hpp"

namespace daedalus::internal {

/// " (smallest eigenvalue e, largest E, threshold tol relative); the null
/// direction involves coordinates: a b. Check the kinetic energy: ..."
std::string SingularMassDetail(const Model& model,
                               const Eigen::MatrixXd& M,
                               double tol);

/// Why J has rank below its row count. Rows whose gradient vanishes
/// (2-norm at most `tol` times max(1, the largest row's norm); the 1
/// keeps a Jacobian that is tiny as a whole, the pendulum started at
/// (1e-200, 0), from looking regular) are a singular configuration of
/// that constraint; rows that are combinations of the others are
/// redundant, contradictory, or parallel at a singular configuration.
/// `rows[i]` is the model row of J's row i (all rows in order if empty).
std::string RankDeficiencyDetail(const Model& model,
                                 const Eigen::MatrixXd& J,
                                 const std::vector<int>& rows,
                                 double tol);

}  // namespace daedalus::internal
