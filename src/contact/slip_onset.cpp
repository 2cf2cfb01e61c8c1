#include "contact/slip_onset.hpp"

#include <Eigen/Core>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "daedalus/kkt.hpp"

namespace daedalus::internal {

namespace {
constexpr int kOnsetIterations = 20;
constexpr double kOnsetAngle = 1e-12;
}  // namespace

void ConsistentOnsets(Mechanics* mech,
                      double t,
                      const Eigen::VectorXd& q,
                      const Eigen::VectorXd& v,
                      const std::vector<SlipOnset>& onsets,
                      const std::function<void()>& apply) {
  if (onsets.empty()) return;
  // J and b of every row (the mode's workspace zeroes the open ones' b).
  const std::vector<int> open = mech->open_rows();
  const std::vector<SlipRow> slip = mech->slip_rows();
  mech->SetOpenRows({});
  mech->SetSlipRows({});
  mech->Evaluate(t, q, v);
  const Eigen::MatrixXd J = mech->DenseJacobian();
  const Eigen::VectorXd b = mech->bias();
  mech->SetOpenRows(open);
  mech->SetSlipRows(slip);
  // Iteration kOnsetIterations only checks: a direction that its
  // acceleration still opposes there has no consistent onset found.
  std::vector<size_t> failed;
  for (int it = 0;; ++it) {
    mech->Evaluate(t, q, v);
    KktResult r;
    mech->SolveKkt(mech->bias(), &r);
    bool moved = false;
    for (size_t k = 0; k < onsets.size(); ++k) {
      const SlipOnset& s = onsets[k];
      Eigen::Vector2d a;
      for (int i = 0; i < 2; ++i)
        a[i] = J.row(s.rows[i]).dot(r.vdot) + b[s.rows[i]];
      if (!(a.norm() > 0.0)) continue;
      const Eigen::Vector2d d = a / a.norm();
      if (d.dot(*s.dir) >= 1.0 - kOnsetAngle) continue;
      if (it == kOnsetIterations) {
        if (d.dot(*s.dir) < 0.0) failed.push_back(k);
        continue;
      }
      *s.dir = d;
      moved = true;
    }
    if (!moved || it == kOnsetIterations) break;
    apply();
  }
  if (failed.empty()) return;
  std::ostringstream os;
  os << "at t = " << t << " no consistent slip onset was found for";
  for (size_t k : failed) os << " '" << onsets[k].name << "'";
  os << ": starting to slip from rest, its tangential acceleration points "
        "against the slip direction after "
     << kOnsetIterations
     << " iterations of the fixed point d <- a_t / |a_t| (docs/friction.md, "
        "\"Slip onset\"), so its friction would drive it; a corner beside "
        "sticking corners of the same body does this (\"Redundant slipping "
        "corners\"): model the contact's compliance or fewer contact points";
  throw std::runtime_error(os.str());
}

}  // namespace daedalus::internal
