// The stick test over statically indeterminate contact forces
// (docs/friction.md, "Redundant sticking contacts"), for the friction
// stage.
//
// A foot flat on the ground on four sticking corners has 12 contact rows
// on the 6 velocities of its sole: the KKT solve gives one split of the
// forces among the corners (the friction stage keeps only independent
// tangential rows, so the dropped ones carry none), and any
// lambda + N z with J_R' N = 0 (R the sticking contacts' rows) acts on the
// bodies the same. Each corner's cone read on that one split can fail
// while another split holds every corner inside its cone: the foot
// sticks. The test is therefore
//
//   s* = max over z of  min_i ( mu_i l_n,i - |l_t,i| ),   l = lambda + N z,
//        subject to     l_n,i >= 0 for every sticking normal,
//
// a second-order cone program in the dim(N) unknowns z; the contacts stick
// when s* >= 0, and at s* < 0 the contact to slip is one outside its cone
// at the maximizing split. Solved by a barrier method on the
// self-concordant barrier -log(u^2 - |w|^2) of each cone (Nesterov and
// Nemirovski 1994; Boyd and Vandenberghe 2004, sec. 11.6): Newton with
// backtracking per barrier weight, the weight divided by 10 until the
// duality gap (barrier parameter times weight) is below 1e-13 of the
// force scale.
#pragma once

#include <Eigen/Core>
#include <vector>

namespace daedalus::internal {

/// A sticking contact's cone: its normal row, tangential rows (1 or 2),
/// static coefficient.
struct StickCone {
  int normal = -1;
  std::vector<int> t;
  double mu = 0.0;
};

class StickSplit {
 public:
  /// The null space of J_R' over the cones' rows R, from J (nc x nv, every
  /// row evaluated: the dropped tangential rows included). Rank by SVD,
  /// threshold 1e-10 of the largest singular value (J's round-off is ~1e-16
  /// of its scale; the threshold is IndependentRows's). Within a stick mode
  /// the contact points do not move, so for contacts on one rigid body
  /// (a sole's corners) N stays exact while the mode lasts.
  void Prepare(const Eigen::MatrixXd& J, std::vector<StickCone> cones);
  void Clear() {
    cones_.clear();
    rows_.clear();
    N_.resize(0, 0);
  }
  /// Whether some split moves force between cones.
  bool active() const { return N_.cols() > 0; }

  struct Result {
    Eigen::VectorXd lambda;  // lambda + N z* (the other rows unchanged)
    double margin = 0.0;     // s*: min over the cones at lambda
    int newton = 0;          // Newton steps taken
  };
  /// The split of `lambda` (nc) that maximizes the smallest cone margin.
  Result Best(const Eigen::VectorXd& lambda) const;

  /// The smallest margin mu l_n - |l_t| over the cones at `lambda`.
  double MinMargin(const Eigen::VectorXd& lambda) const;

 private:
  std::vector<StickCone> cones_;
  std::vector<int> rows_;  // R, in the order of N's rows
  Eigen::MatrixXd N_;      // |R| x dim, orthonormal columns
  std::vector<int> at_;    // model row -> index in rows_, or -1
};

}  // namespace daedalus::internal
