#include "contact/frictional_release.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

namespace daedalus::internal {

namespace {

// An effective normal inverse inertia below this fraction of the
// frictionless one counts as nonpositive (Painleve).
constexpr double kPainleve = 1e-12;
// A normal's Delassus coefficient with the other closed rows eliminated
// below this fraction of its own (J_n M^-1 J_n') counts as zero: the row
// depends on the others (the rank threshold of IndependentRows, 1e-10 of
// J's scale, squared in J M^-1 J').
constexpr double kRedundant = 1e-12;

}  // namespace

AllRows EvaluateAllRows(Mechanics* mech,
                        double t,
                        const Eigen::VectorXd& q,
                        const Eigen::VectorXd& v) {
  const std::vector<int> open = mech->open_rows();
  const std::vector<SlipRow> slip = mech->slip_rows();
  mech->SetOpenRows({});
  mech->SetSlipRows({});
  mech->Evaluate(t, q, v);
  AllRows x;
  x.M = mech->DenseMass();
  x.J = mech->DenseJacobian();
  x.b = mech->bias();
  x.f = mech->AppliedForce();
  mech->SetOpenRows(open);
  mech->SetSlipRows(slip);
  return x;
}

FrictionalRelease DecideFrictionalRelease(const AllRows& x,
                                          const std::vector<int>& closed,
                                          const std::vector<int>& bilateral,
                                          const std::vector<SlipCoupling>& slip,
                                          const std::vector<int>& prefer_open) {
  FrictionalRelease out;
  if (closed.empty()) return out;
  // The operator over the normals and, after them, the slipping rows.
  std::vector<int> rows = closed;
  for (const SlipCoupling& s : slip)
    rows.insert(rows.end(), s.t.begin(), s.t.end());
  const ContactOperator op(x, rows, bilateral);
  const Eigen::Index n = static_cast<Eigen::Index>(closed.size());
  Eigen::MatrixXd A = op.A().topLeftCorner(n, n);
  Eigen::Index col = n;
  for (const SlipCoupling& s : slip) {
    const auto it = std::find(closed.begin(), closed.end(), s.normal);
    const Eigen::Index j = it - closed.begin();
    for (size_t i = 0; i < s.t.size(); ++i, ++col) {
      if (it == closed.end()) continue;
      A.col(j) -= s.mu * s.dir[static_cast<Eigen::Index>(i)] *
                  op.A().block(0, col, n, 1);
    }
  }
  const Eigen::VectorXd q = op.FreeAcceleration(x).head(n);
  std::vector<bool> prefer;
  for (int r : closed)
    prefer.push_back(std::find(prefer_open.begin(), prefer_open.end(), r) !=
                     prefer_open.end());
  out.lcp = SolveLcp(A, q, prefer);
  if (!out.lcp.solved) return out;
  for (Eigen::Index i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (out.lcp.z[i] <= out.lcp.tolerance &&
        (out.lcp.w[i] > out.lcp.tolerance || prefer[k]))
      out.open.push_back(closed[k]);
  }
  return out;
}

std::vector<int> UnloadedNormals(const Eigen::VectorXd& lambda,
                                 const std::vector<int>& normals) {
  constexpr double kUnloaded = 1e-9;
  double scale = 0.0;
  for (int r : normals) scale = std::max(scale, std::abs(lambda[r]));
  std::vector<int> out;
  for (int r : normals)
    if (lambda[r] <= kUnloaded * scale) out.push_back(r);
  return out;
}

// Painleve (docs/friction.md): slipping, the contact's normal
// acceleration is Phi''_n = a_free + (A_nn - mu_k sigma . A_nt) lambda_n
// (A the Delassus operator of its normal and tangential rows with the
// other closed rows eliminated). A nonpositive coefficient leaves no
// consistent normal force (a_free < 0) or two (a_free >= 0).
void CheckSlipPainleve(Mechanics* mech,
                       double t,
                       const Eigen::VectorXd& q,
                       const Eigen::VectorXd& v,
                       const SlipCoupling& c,
                       const std::string& name) {
  const std::vector<int> open = mech->open_rows();
  const AllRows x = EvaluateAllRows(mech, t, q, v);
  std::vector<int> rows{c.normal};
  rows.insert(rows.end(), c.t.begin(), c.t.end());
  std::vector<int> closed;
  for (int r = 0; r < mech->nc(); ++r)
    if (std::find(open.begin(), open.end(), r) == open.end() &&
        std::find(rows.begin(), rows.end(), r) == rows.end())
      closed.push_back(r);
  const ContactOperator op(x, rows, closed);
  // A normal dependent on the other closed rows (a sole corner beside
  // others on one body) has no Delassus coefficient of its own (A_nn = 0
  // to round-off): its force is statically indeterminate, not Painleve
  // (the KKT solve takes the minimum-norm forces).
  const ContactOperator alone(x, rows, {});
  if (op.A()(0, 0) <= kRedundant * alone.A()(0, 0)) return;
  double a_eff = op.A()(0, 0);
  for (size_t i = 0; i < c.t.size(); ++i) {
    const Eigen::Index j = static_cast<Eigen::Index>(i);
    a_eff -= c.mu * c.dir[j] * op.A()(0, j + 1);
  }
  if (a_eff > kPainleve * op.A()(0, 0)) return;
  const double a_free = op.FreeAcceleration(x)[0];
  std::ostringstream os;
  os << "contact '" << name << "' slipping with mu_kinetic = " << c.mu
     << " at t = " << t << " is a Painleve configuration: its normal "
     << "acceleration is a_free + a_eff lambda_n with a_eff = " << a_eff
     << " <= 0 (friction turns the normal force against itself) and "
     << "a_free = " << a_free << ": "
     << (a_free < 0.0 ? "inconsistent, no normal force keeps it closed and it "
                        "cannot open"
                      : "indeterminate, both lambda_n = 0 and lambda_n = " +
                            std::to_string(-a_free / a_eff) + " are consistent")
     << "; Coulomb's rigid-contact law has no solution here (lower mu, "
        "or model the contact's compliance; docs/friction.md)";
  throw std::runtime_error(os.str());
}

}  // namespace daedalus::internal
