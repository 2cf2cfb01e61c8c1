#include "contact/slip_onset.hpp"

#include <Eigen/Core>
#include <functional>
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
  for (int it = 0; it < kOnsetIterations; ++it) {
    mech->Evaluate(t, q, v);
    KktResult r;
    mech->SolveKkt(mech->bias(), &r);
    bool moved = false;
    for (const SlipOnset& s : onsets) {
      Eigen::Vector2d a;
      for (int i = 0; i < 2; ++i)
        a[i] = J.row(s.rows[i]).dot(r.vdot) + b[s.rows[i]];
      if (!(a.norm() > 0.0)) continue;
      const Eigen::Vector2d d = a / a.norm();
      if (d.dot(*s.dir) >= 1.0 - kOnsetAngle) continue;
      *s.dir = d;
      moved = true;
    }
    if (!moved) break;
    apply();
  }
}

}  // namespace daedalus::internal
