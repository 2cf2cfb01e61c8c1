// The impact map's linearization (docs/contact.md, "Sensitivities"):
// the impact on its active set a (the contacts with P_a > 0), with the
// bilateral rows B closed,
//
//   M dv - J_a' P_a - J_B' mu = 0,  J_a dv = -(1 + e_a) u_a-,  J_B dv = 0,
//
// smooth in (t, q, v-, p) for a fixed active set, differentiated along
// each of q, v-, p and t (exact directional derivatives, dual numbers)
// and solved for (d dv, dP_a, d mu) with the same matrix. Frictionless
// Newton impacts only (a Poisson impact with one active contact is the
// same map); the contact stage refuses the others.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "eval/function_derivatives.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

struct ImpactLinearization {
  bool happened = false;
  Eigen::VectorXd dv;           // nv: v+ - v- (before the restart's projection)
  std::vector<int> rows;        // the active contacts' model rows
  std::vector<double> impulse;  // P_a
  std::vector<double> e;        // e_a as applied (0: resting or Zeno)
  std::vector<int> e_param;     // e_a's model parameter, or -1
  /// Why the map is not linearized (a frictional impact, a Poisson
  /// impact with several active contacts), or empty.
  std::string refused;
};

/// The contact stage's last switch that restarted the run, for its
/// linearization (contact_stage.cpp).
struct SwitchLinearization {
  bool valid = false;
  double t = 0.0;
  Eigen::VectorXd q, v;          // before it
  std::vector<int> witnesses;    // the contacts whose witness fired
  bool witness_closed = false;   // a multiplier (release), not a gap
  std::vector<int> open_before;  // the mode before it (open rows)
  ImpactLinearization impact;
  size_t record = 0;  // its EventRecord
};

/// Adds the impact map at (t, q, v-) to the state map d (value and
/// derivatives of (q, v), nq + nv rows, the identity before the impact).
/// Leaves the Mechanics evaluated with every row closed.
void AddImpactMap(Mechanics* mech,
                  double t,
                  const Eigen::VectorXd& q,
                  const Eigen::VectorXd& v,
                  const ImpactLinearization& im,
                  const std::vector<int>& bilateral,
                  VectorJacobian* d);

}  // namespace daedalus::internal
