// The check that a nonholonomic constraint A(q, t) v + a(q, t) is affine in
// v, as ConstraintKind::kNonholonomic requires (docs/conventions.md). The
// formulations differentiate it once in v and take the result as A: a term
// like v_x^2 would be linearized at every evaluation and the run would be
// silently wrong.
#pragma once

#include <Eigen/Core>
#include <string>

#include "daedalus/model.hpp"

namespace daedalus::internal {

/// Probes every nonholonomic constraint of `d` at (q, t, p): for pairs of
/// velocities v1, v2 (a fixed pseudo-random sequence), compares the value
/// at the midpoint with the mean of the values at v1 and v2, which are
/// equal for an affine function. Returns "" when every probe agrees or
/// could not be evaluated (a throw or a non-finite value at that state:
/// the probe is skipped), else the message naming the constraint, its row
/// and the numbers.
std::string NonAffineConstraint(const ModelData& d,
                                const Eigen::VectorXd& q,
                                double t,
                                const Eigen::VectorXd& p);

/// The same at a few pseudo-random states q in [-1, 1]^nq, t in [0, 1]
/// and the default parameters: the check made when a model is built.
std::string NonAffineConstraintAtRandomStates(const ModelData& d);

}  // namespace daedalus::internal
