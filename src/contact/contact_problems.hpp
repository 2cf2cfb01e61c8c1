// The two one-step problems of the contact stage at one instant
// (docs/contact.md, "The LCPs"), on the candidate contacts C and the
// model's bilateral rows B (always closed):
//
//   W = M^-1 - M^-1 J_B' (J_B M^-1 J_B')^-1 J_B M^-1   (nv x nv)
//   A = J_C W J_C'                                      (the Delassus
//                                                         operator)
//
// impulse level (Newton):  u+ = u- + A P,  u+ + e u- >= 0, P >= 0,
//                          complementary; v+ = v- + W J_C' P;
// acceleration level:      Phi''_C = J_C a_free + b_C + A lambda >= 0,
//                          lambda >= 0, complementary, with
//                          a_free = W f - M^-1 J_B' (J_B M^-1 J_B')^-1 b_B.
#pragma once

#include <Eigen/Core>
#include <vector>

#include "contact/lcp.hpp"

namespace daedalus::internal {

/// The mechanics at one state with every row evaluated (open contacts
/// included): M (nv x nv), J (nc x nv), Phi, u = J v + Phi_t, b (nc),
/// f = B u - h (nv), E.
struct AllRows {
  Eigen::MatrixXd M, J;
  Eigen::VectorXd phi, u, b, f;
  double energy = 0.0;
};

/// W and the pieces the two problems share, for the candidate rows
/// `contacts` and the bilateral rows `bilateral` (model row indices).
class ContactOperator {
 public:
  ContactOperator(const AllRows& x,
                  const std::vector<int>& contacts,
                  const std::vector<int>& bilateral);
  const Eigen::MatrixXd& A() const { return A_; }  // |C| x |C|
  /// W J_C' (nv x |C|): v+ = v- + WJt P.
  const Eigen::MatrixXd& WJt() const { return WJt_; }
  /// The free normal accelerations J_C a_free + b_C (|C|).
  Eigen::VectorXd FreeAcceleration(const AllRows& x) const;

 private:
  std::vector<int> c_, b_;
  Eigen::MatrixXd Minv_;  // nv x nv
  Eigen::MatrixXd W_, WJt_, A_;
  Eigen::MatrixXd YB_;     // M^-1 J_B'
  Eigen::MatrixXd SBinv_;  // (J_B M^-1 J_B')^+
};

/// The rows of `extra` (model rows of J, in order) that are independent of
/// the rows `base` and of the extras kept before them: a body resting on
/// two sticking planar contacts has one tangential row too many (4 rows
/// on 3 velocities, its friction forces statically indeterminate), and
/// the dependent ones need no row (their velocity is held by the
/// others). Rank by column-pivoting QR, threshold 1e-10 of the largest
/// pivot (round-off of J is ~1e-16 of its scale).
std::vector<int> IndependentRows(const Eigen::MatrixXd& J,
                                 const std::vector<int>& base,
                                 const std::vector<int>& extra);

}  // namespace daedalus::internal
