// The impulse problem of an impact (docs/contact.md, "Impacts";
// docs/friction.md, "Impacts with friction"): over the m touching
// contacts and the tangential rows of those with Coulomb friction, with
// A the Delassus operator of [normal rows; tangential rows] (bilateral
// rows eliminated, contact_problems.hpp) and u- their velocities,
//
//   u+ = u- + A P,
//   normal (Newton):   xi_N = u_N+ + e u_N- >= 0, P_N >= 0, xi_N P_N = 0;
//   tangential:        |P_T| <= mu P_N; P_T = -mu P_N sign(u_T+) when
//                      u_T+ != 0 (the sliding impulse opposes the
//                      post-impact slip), any P_T in the cone when
//                      u_T+ = 0 (the sticking impulse, if admissible).
//
// For a planar contact (one tangential row) this is exactly an LCP
// (Glocker and Pfeiffer, "Multibody Dynamics with Unilateral Contacts",
// Wiley 1996, section 7.3; Stewart and Trinkle, IJNME 39, 1996; Anitescu
// and Potra, Nonlinear Dynamics 14, 1997), with the tangential impulse
// and velocity split into nonnegative parts:
//
//   P_T = P_L - mu P_N,          P_R = mu P_N - P_T = 2 mu P_N - P_L,
//   u_T+ = xi_R - xi_L,
//   (xi_N, xi_R, P_R) = A_lcp (P_N, P_L, xi_L) + q  ⊥  (P_N, P_L, xi_L) >= 0:
//   P_L > 0 only while u_T+ <= 0 (xi_R = 0), P_R > 0 only while u_T+ >= 0.
//
// Poisson's law (ContactLaw::impact_law = kPoisson) solves it in two
// phases: compression (the same problem with e = 0) gives P_c and u_c;
// expansion starts from u_c with the normal impulses e P_N,c applied and
// adds y >= 0 where they would leave a contact approaching:
//
//   P_N,e = e P_N,c + y,  u_N+ >= 0,  y u_N+ = 0,  |P_T,e| <= mu P_N,e,
//
// P = P_c + P_e. A Newton contact in an impact with a Poisson one keeps
// Newton's law in the expansion (xi_N = u_N+ + e u_N-). For one
// frictionless contact both laws give u+ = -e u-.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

#include "contact/lcp.hpp"

namespace daedalus::internal {

struct ImpulseProblem {
  /// (m + nt) x (m + nt): rows 0..m-1 the normals, m.. the tangential
  /// rows of the planar contacts with friction.
  Eigen::MatrixXd A;
  Eigen::VectorXd u;  ///< u- (m + nt)
  /// Per contact (m): the restitution applied (0 for a resting or Zeno
  /// contact), Poisson's law or Newton's, mu (0: frictionless), and the
  /// index of its tangential row in [m, m + nt) or -1.
  std::vector<double> e, mu;
  std::vector<bool> poisson;
  std::vector<int> tangent;
  /// Per contact with an isotropic 3D cone: the index of its second
  /// tangential row, else -1 (empty: no cone). With any cone the problem
  /// is solved on the cones (SolveImpulse).
  std::vector<int> tangent2;
};

struct ImpulseSolution {
  bool solved = false;
  Eigen::VectorXd P;       ///< the impulses (m + nt)
  Eigen::VectorXd u_plus;  ///< u- + A P
  /// The LCPs' sizes (summed over the phases) and worst residual; the
  /// failed phase's solution when not solved (its method, residual,
  /// tolerance).
  int lcp_size = 0;
  double residual = 0.0;
  LcpSolution last;
  /// The phases solved: "newton" or "poisson".
  std::string law;
};

/// Solves the impulse problem: exactly as an LCP without 3D cones (the
/// file comment); with a cone (tangent2) as the second-order cone
/// complementarity problem it is, by SolveConeImpulse.
ImpulseSolution SolveImpulse(const ImpulseProblem& p);

/// The impulse problem with isotropic 3D cones (Newton's law only): on
/// u = A P + q, q = u- with the normals shifted by e u_N-, each contact
/// takes off, sticks (u = 0, |P_T| <= mu P_N) or slides on the cone's
/// edge against its post-impact slip (|P_T| = mu P_N, P_T opposite
/// u_T+), the impact's form of the Moreau-Jean step's problem
/// (cone_solver.hpp; Acary and Brogliato 2008, section 12.4). Solved by
/// projected Gauss-Seidel with each contact's local problem exact, each
/// 50 sweeps followed by a semismooth Newton method on the Alart-Curnier
/// function from the iterate (AlartCurnierNewton in impulse.cpp), until
/// the natural-map residual of De Saxce's formulation (Siconos's fc3d
/// error: |P - proj_K(P - rho u^)| with u^_N = u_N + mu |u_T|, rho =
/// 1/A_NN, in velocity units) is below kConeImpulseResidual of the
/// velocity scale max |q|, or kConeImpulseSweeps sweeps; accepted at
/// kLcpTolerance (1e-10) of that scale, as the LCPs are. The problem is
/// not an LCP: it has no finite enumeration, and an unconverged solve is
/// reported (`solved` false, `last.method` says so) never used.
ImpulseSolution SolveConeImpulse(const ImpulseProblem& p);

/// The residual aimed at (1e-13, a few hundred times round-off: Newton
/// reaches it in a few steps near the solution), the sweeps allowed (5000
/// sweeps of 4 cone contacts take ~0.5 s), and the Newton steps per try.
inline constexpr double kConeImpulseResidual = 1e-13;
inline constexpr int kConeImpulseSweeps = 5000;
inline constexpr int kConeImpulseNewton = 50;

/// An impact with friction only dissipates: a kinetic energy change
/// `gain` above kImpactEnergyGain times the kinetic energy before it,
/// `t_minus`, throws naming the contacts (`contacts`, quoted names) and
/// the law. 1e-10: the small dense solves' round-off is ~1e-15 relative.
inline constexpr double kImpactEnergyGain = 1e-10;
void CheckDissipation(double t,
                      const std::string& contacts,
                      double gain,
                      double t_minus,
                      const std::string& law);

/// Throws: contacts `cones` (quoted names) with a 3D cone touch during an
/// impact together with contacts `poisson` restituting by Poisson's law
/// (the cone's impulse problem is solved with Newton's law only).
[[noreturn]] void RefusePoissonCone(double t,
                                    const std::string& cones,
                                    const std::string& poisson);

/// Accumulation (Zeno): when `record` (an impact whose rebound the run
/// resolves well, zeno.hpp), appends the impact time t to a contact's
/// history (the last 8 kept); when `slow` (it closed for good at t) with 3
/// or more kept, returns the accumulation point of their geometric tail,
/// else -1.
double AccumulationPoint(std::vector<double>* history,
                         double t,
                         bool record,
                         bool slow);

}  // namespace daedalus::internal
