#include "contact/impulse.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace daedalus::internal {

namespace {

// One phase: from the velocities u0, with the normal impulses B (m)
// applied and the normal targets qN (m: xi_N = u_N + qN - u0_N, that is
// u0_N plus the restitution term), the LCP of the file comment in z = (y
// (m), P_L (nf), xi_L (nf)), P_N = B + y. Without friction and B = 0 it is
// the frictionless LCP (A_NN, qN) exactly, to the bit. Returns the phase's
// impulse (m + nt) in *P.
LcpSolution Phase(const ImpulseProblem& p,
                  const Eigen::VectorXd& u0,
                  const Eigen::VectorXd& B,
                  const Eigen::VectorXd& qN,
                  Eigen::VectorXd* P) {
  const Eigen::Index m = static_cast<Eigen::Index>(p.e.size());
  const Eigen::Index n = p.A.rows();
  // The frictional contacts j -> contact c(j), tangential row t(j).
  std::vector<Eigen::Index> c, t;
  for (Eigen::Index i = 0; i < m; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (p.tangent[k] < 0 || !(p.mu[k] > 0.0)) continue;
    c.push_back(i);
    t.push_back(p.tangent[k]);
  }
  const Eigen::Index nf = static_cast<Eigen::Index>(c.size());
  // Mu S (nf x m) and the blocks of A that the tangential rows touch.
  Eigen::MatrixXd MuS = Eigen::MatrixXd::Zero(nf, m);
  Eigen::MatrixXd ANT(m, nf), ATN(nf, m), ATT(nf, nf);
  Eigen::VectorXd u0T(nf);
  for (Eigen::Index j = 0; j < nf; ++j) {
    const size_t sj = static_cast<size_t>(j);
    MuS(j, c[sj]) = p.mu[static_cast<size_t>(c[sj])];
    u0T[j] = u0[t[sj]];
    for (Eigen::Index i = 0; i < m; ++i) {
      ANT(i, j) = p.A(i, t[sj]);
      ATN(j, i) = p.A(t[sj], i);
    }
    for (Eigen::Index k = 0; k < nf; ++k)
      ATT(j, k) = p.A(t[sj], t[static_cast<size_t>(k)]);
  }
  const Eigen::MatrixXd ANN = p.A.topLeftCorner(m, m);
  const Eigen::MatrixXd GN = ANN - ANT * MuS, GT = ATN - ATT * MuS;
  const Eigen::Index nz = m + 2 * nf;
  Eigen::MatrixXd L = Eigen::MatrixXd::Zero(nz, nz);
  L.block(0, 0, m, m) = GN;
  L.block(0, m, m, nf) = ANT;
  L.block(m, 0, nf, m) = GT;
  L.block(m, m, nf, nf) = ATT;
  L.block(m, m + nf, nf, nf).setIdentity();
  L.block(m + nf, 0, nf, m) = 2.0 * MuS;
  L.block(m + nf, m, nf, nf) = -Eigen::MatrixXd::Identity(nf, nf);
  Eigen::VectorXd q(nz);
  q.head(m) = qN + GN * B;
  q.segment(m, nf) = u0T + GT * B;
  q.tail(nf) = 2.0 * MuS * B;
  const LcpSolution s = SolveLcp(L, q);
  P->setZero(n);
  if (!s.solved) return s;
  const Eigen::VectorXd PN = B + s.z.head(m);
  P->head(m) = PN;
  const Eigen::VectorXd PT = s.z.segment(m, nf) - MuS * PN;
  for (Eigen::Index j = 0; j < nf; ++j) (*P)[t[static_cast<size_t>(j)]] = PT[j];
  return s;
}

}  // namespace

ImpulseSolution SolveImpulse(const ImpulseProblem& p) {
  ImpulseSolution out;
  const Eigen::Index m = static_cast<Eigen::Index>(p.e.size());
  const Eigen::Index n = p.A.rows();
  out.P = Eigen::VectorXd::Zero(n);
  out.u_plus = p.u;
  const bool poisson =
      std::any_of(p.poisson.begin(), p.poisson.end(), [](bool b) { return b; });
  Eigen::VectorXd e(m);
  for (Eigen::Index i = 0; i < m; ++i) e[i] = p.e[static_cast<size_t>(i)];
  const Eigen::VectorXd uN = p.u.head(m);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(m);
  auto book = [&](const LcpSolution& s) {
    out.lcp_size += static_cast<int>(s.z.size());
    out.residual = std::max(out.residual, s.residual);
    out.last = s;
    return s.solved;
  };
  if (!poisson) {
    out.law = "newton";
    Eigen::VectorXd P;
    // (1 + e) u-, as Newton's law reads (and as the frictionless LCP
    // always formed it).
    const Eigen::VectorXd qN = (1.0 + e.array()).matrix().cwiseProduct(uN);
    if (!book(Phase(p, p.u, zero, qN, &P))) return out;
    out.P = P;
  } else {
    out.law = "poisson";
    Eigen::VectorXd Pc, Pe;
    if (!book(Phase(p, p.u, zero, uN, &Pc))) return out;
    const Eigen::VectorXd uc = p.u + p.A * Pc;
    Eigen::VectorXd B = zero, r = zero;
    for (Eigen::Index i = 0; i < m; ++i) {
      if (p.poisson[static_cast<size_t>(i)])
        B[i] = e[i] * Pc[i];
      else
        r[i] = e[i] * uN[i];
    }
    if (!book(Phase(p, uc, B, uc.head(m) + r, &Pe))) return out;
    out.P = Pc + Pe;
  }
  out.u_plus = p.u + p.A * out.P;
  out.solved = true;
  return out;
}

void CheckDissipation(double t,
                      const std::string& contacts,
                      double gain,
                      double t_minus,
                      const std::string& law) {
  if (!(gain > kImpactEnergyGain * t_minus)) return;
  std::ostringstream os;
  os << "the impact with Coulomb friction at t = " << t << " on" << contacts
     << " would gain kinetic energy " << gain << " J (of " << t_minus
     << " J before it): " << law
     << "'s restitution law with friction is not energetically consistent "
        "in this configuration (Kane's paradox); lower the restitution or "
        "use ContactLaw::impact_law = ImpactLaw::"
     << (law == "poisson" ? "kNewton" : "kPoisson") << " (docs/friction.md)";
  throw std::runtime_error(os.str());
}

void RefuseCone(double t, const std::string& name) {
  std::ostringstream os;
  os << "contact '" << name << "' with a 3D friction cone touches during an "
     << "impact at t = " << t
     << ": impacts with friction are solved on planar contacts (one "
        "tangential row) only; the isotropic cone's impulse problem is not "
        "implemented (docs/friction.md): model the contact planar, or set "
        "its mu_kinetic to 0 (a frictionless impact)";
  throw std::runtime_error(os.str());
}

double AccumulationPoint(std::vector<double>* history,
                         double t,
                         bool record,
                         bool slow) {
  std::vector<double>& h = *history;
  if (record) h.push_back(t);
  if (h.size() > 8) h.erase(h.begin());
  if (!slow || h.size() < 3) return -1.0;
  // The geometric tail of the impact intervals, with the ratio r averaged
  // over the intervals kept (each interval's time carries the root
  // location's error, relatively largest on the short last ones).
  const size_t last = h.size() - 1;
  const double first = h[1] - h[0], d = h[last] - h[last - 1];
  const double r =
      first > 0.0 && d > 0.0
          ? std::pow(d / first, 1.0 / static_cast<double>(last - 1))
          : -1.0;
  if (r > 0.0 && r < 1.0) return h[last] + d * r / (1.0 - r);
  return -1.0;
}

}  // namespace daedalus::internal
