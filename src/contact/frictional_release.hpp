// The release decision with friction (docs/friction.md, "Releases with
// sticking contacts"), for the friction stage.
//
// The contact stage decides which touching contacts stay closed by its
// acceleration LCP, frictionless: the friction rows are in none of its
// problems. A sticking contact's tangential rows are bilateral velocity
// constraints, and they change the normal forces: a sole on four sticking
// corners under a forward push needs pulling heels (their normal force
// negative in every split of the redundant forces), where sliding freely
// it would not. Given the friction modes, the closed contacts' normal
// accelerations and forces are complementary,
//
//   Phi''_n = q + A_eff lambda_n >= 0,  lambda_n >= 0,  Phi''_n lambda_n = 0,
//
// with the sticking tangential rows among the bilateral rows of W
// (contact_problems.hpp) and each slipping contact's kinetic friction
// lambda_t = -mu_k d lambda_n folded into its normal's column: A_eff =
// A_nn - A_nt mu_k d (not symmetric). The contacts with lambda_n = 0 and
// Phi''_n > 0 at its solution must open.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "contact/contact_problems.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// A slipping contact: its normal row, tangential rows (1 or 2), mu_k and
/// slip direction d (the friction force is -mu_k lambda_n d).
struct SlipCoupling {
  int normal = -1;
  std::vector<int> t;
  double mu = 0.0;
  Eigen::Vector2d dir = Eigen::Vector2d::Zero();
};

/// M, J, b and f with every row evaluated at (t, q, v) (phi, u and the
/// energy left empty); `mech` keeps its mode, not evaluated.
AllRows EvaluateAllRows(Mechanics* mech,
                        double t,
                        const Eigen::VectorXd& q,
                        const Eigen::VectorXd& v);

struct FrictionalRelease {
  std::vector<int> open;  ///< the rows of `closed` that must open
  LcpSolution lcp;
};

/// The closed contacts' normal rows `closed` (frictionless ones included),
/// the rows held as bilateral `bilateral` (the model's own rows and the
/// sticking contacts' tangential rows), the slipping contacts `slip`
/// (their normals among `closed`), every row evaluated in x. When the LCP
/// has no solution to its tolerance, `open` is empty (`lcp.solved`
/// false): the contact stage's frictionless decision stands, and the
/// friction stage's own checks (Painleve, the slip onset) judge the mode.
/// The rows `prefer_open` (normals among `closed`) open on a tie too
/// (lambda_n and Phi'' both zero to the LCP's tolerance): a sticking
/// contact whose normal force has reached zero (UnloadedNormals) separates
/// at third order, as a contact stage release does, rather than fail its
/// cone (0 <= 0 with a tangential force) and slip with no normal force.
FrictionalRelease DecideFrictionalRelease(
    const AllRows& x,
    const std::vector<int>& closed,
    const std::vector<int>& bilateral,
    const std::vector<SlipCoupling>& slip,
    const std::vector<int>& prefer_open = {});

/// The rows of `normals` whose force in `lambda` is at most kUnloaded =
/// 1e-9 of the largest of them (a normal force that reached zero at a
/// witness's root carries the root's location error: 4e-12 N of 650 N on
/// a golfer's toes).
std::vector<int> UnloadedNormals(const Eigen::VectorXd& lambda,
                                 const std::vector<int>& normals);

/// Painleve (docs/friction.md) for the slipping contact `c` (named `name`)
/// in the mode `mech` holds: slipping, its normal acceleration is
/// a_free + a_eff lambda_n, a_eff = A_nn - mu_k d . A_nt (A the Delassus
/// operator of its rows with the other closed rows eliminated). A
/// nonpositive a_eff leaves no consistent normal force (a_free < 0) or two.
/// @throws std::runtime_error naming the contact and mu for one.
void CheckSlipPainleve(Mechanics* mech,
                       double t,
                       const Eigen::VectorXd& q,
                       const Eigen::VectorXd& v,
                       const SlipCoupling& c,
                       const std::string& name);

}  // namespace daedalus::internal
