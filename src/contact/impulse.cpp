#include "contact/impulse.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "contact/cone_solver.hpp"

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

// The projection onto the cone |x_t| <= mu x_n (x normal first).
Eigen::VectorXd ProjectOnCone(const Eigen::VectorXd& x, double mu) {
  const double xn = x[0], nt = x.tail(x.size() - 1).norm();
  if (nt <= mu * xn) return x;
  Eigen::VectorXd out = Eigen::VectorXd::Zero(x.size());
  if (mu * nt <= -xn) return out;
  const double a = (xn + mu * nt) / (1.0 + mu * mu);
  out[0] = a;
  out.tail(x.size() - 1) = x.tail(x.size() - 1) * (mu * a / nt);
  return out;
}

// The natural-map residual of the cone problem at P (ImpulseProblem's
// SolveConeImpulse comment), in velocity units: per block, A_NN |P -
// proj_K(P - u^ / A_NN)|, its largest.
double ConeResidual(const ConeProblem& p, const Eigen::VectorXd& P) {
  const Eigen::VectorXd u = p.W * P + p.q;
  double r = 0.0;
  for (const ConeBlock& b : p.blocks) {
    const double w = p.W(b.start, b.start);
    if (!(w > 0.0)) continue;  // no impulse moves the row
    Eigen::VectorXd uh = u.segment(b.start, b.size);
    const Eigen::VectorXd Pb = P.segment(b.start, b.size);
    if (b.size == 1) {
      const double x = std::max(Pb[0] - uh[0] / w, 0.0);
      r = std::max(r, w * std::abs(Pb[0] - x));
      continue;
    }
    uh[0] += b.mu_kinetic * uh.tail(b.size - 1).norm();
    const Eigen::VectorXd d = Pb - ProjectOnCone(Pb - uh / w, b.mu_kinetic);
    r = std::max(r, w * d.cwiseAbs().maxCoeff());
  }
  return r;
}

// The Alart-Curnier function of the cone problem at P and a generalized
// Jacobian of it (Alart and Curnier, "A mixed formulation for frictional
// contact problems prone to Newton like solution methods", CMAME 92,
// 1991; Siconos's fc3d "NSN-AC"): per contact, rho = 1 / W_NN,
//
//   F_N = P_N - max(0, P_N - rho u_N),
//   F_T = P_T - proj_D(P_T - rho u_T),  D the disc of radius
//         mu max(0, P_N - rho u_N),
//
// zero exactly where Coulomb's law and Newton's hold (u = W P + q).
void AlartCurnier(const ConeProblem& p,
                  const Eigen::VectorXd& P,
                  Eigen::VectorXd* F,
                  Eigen::MatrixXd* G) {
  const Eigen::Index nu = P.size();
  const Eigen::VectorXd u = p.W * P + p.q;
  F->resize(nu);
  G->setZero(nu, nu);
  for (const ConeBlock& b : p.blocks) {
    const int i = b.start, k = b.size;
    const double w = p.W(i, i);
    if (!(w > 0.0)) {  // no impulse moves the row: P_N = 0
      F->segment(i, k) = P.segment(i, k);
      G->block(i, i, k, k).setIdentity();
      continue;
    }
    const double rho = 1.0 / w;
    const double xn = P[i] - rho * u[i];
    // dxn / dP = e_N - rho W_N.
    Eigen::RowVectorXd dxn = -rho * p.W.row(i);
    dxn[i] += 1.0;
    if (xn > 0.0) {
      (*F)[i] = rho * u[i];
      G->row(i) = rho * p.W.row(i);
    } else {
      (*F)[i] = P[i];
      (*G)(i, i) = 1.0;
    }
    if (k == 1) continue;
    const int t = i + 1, kt = k - 1;
    const double radius = b.mu_kinetic * std::max(xn, 0.0);
    const Eigen::VectorXd x = P.segment(t, kt) - rho * u.segment(t, kt);
    Eigen::MatrixXd dx = -rho * p.W.middleRows(t, kt);
    dx.middleCols(t, kt) += Eigen::MatrixXd::Identity(kt, kt);
    const double nx = x.norm();
    G->block(t, t, kt, kt).setIdentity();
    if (nx <= radius) {  // inside: F_T = rho u_T
      F->segment(t, kt) = P.segment(t, kt) - x;
      G->middleRows(t, kt) -= dx;
      continue;
    }
    const Eigen::VectorXd xh = x / nx;
    F->segment(t, kt) = P.segment(t, kt) - radius * xh;
    // d(R x / |x|) = R / |x| (I - xh xh') dx + xh dR.
    const Eigen::MatrixXd proj =
        (Eigen::MatrixXd::Identity(kt, kt) - xh * xh.transpose()) *
        (radius / nx);
    G->middleRows(t, kt) -= proj * dx;
    if (xn > 0.0) G->middleRows(t, kt) -= b.mu_kinetic * xh * dxn;
  }
}

// A semismooth Newton method on the Alart-Curnier function from P, with
// minimum-norm least-squares steps (complete orthogonal decomposition:
// redundant normals, a box's four corners on the ground, make the
// Jacobian singular) and a backtracking line search on |F|^2 / 2 (the
// least-squares step descends it wherever F is not orthogonal to the
// Jacobian's range). Projected Gauss-Seidel converges linearly and
// stalls on such problems (a tilted box's corners at mu = 0.8: 3.5e-4
// after 2500 sweeps); from its iterate Newton converges in a few steps.
// Returns the iterate of the smallest natural residual (ConeResidual).
Eigen::VectorXd AlartCurnierNewton(const ConeProblem& p,
                                   double scale,
                                   const Eigen::VectorXd& P0,
                                   int max_iter) {
  Eigen::VectorXd P = P0, F, Ft;
  Eigen::MatrixXd G, Gt;
  Eigen::VectorXd best = P0;
  double best_r = ConeResidual(p, P0);
  AlartCurnier(p, P, &F, &G);
  for (int it = 0; it < max_iter && best_r > kConeImpulseResidual * scale;
       ++it) {
    const Eigen::VectorXd step = G.completeOrthogonalDecomposition().solve(-F);
    if (!step.allFinite()) break;
    const double f0 = 0.5 * F.squaredNorm();
    double a = 1.0;
    bool moved = false;
    for (int ls = 0; ls < 30; ++ls, a *= 0.5) {
      const Eigen::VectorXd trial = P + a * step;
      AlartCurnier(p, trial, &Ft, &Gt);
      if (0.5 * Ft.squaredNorm() <= (1.0 - 1e-4 * a) * f0) {
        P = trial;
        F = Ft;
        G = Gt;
        moved = true;
        break;
      }
    }
    if (!moved) break;
    const double r = ConeResidual(p, P);
    if (r < best_r) {
      best_r = r;
      best = P;
    }
  }
  return best;
}

}  // namespace

ImpulseSolution SolveConeImpulse(const ImpulseProblem& p) {
  ImpulseSolution out;
  out.law = "newton";
  const Eigen::Index m = static_cast<Eigen::Index>(p.e.size());
  const Eigen::Index n = p.A.rows();
  out.P = Eigen::VectorXd::Zero(n);
  out.u_plus = p.u;
  // Each contact's rows contiguous: its normal, then its tangential rows.
  std::vector<Eigen::Index> order;
  ConeProblem cp;
  for (Eigen::Index i = 0; i < m; ++i) {
    const size_t k = static_cast<size_t>(i);
    ConeBlock b;
    b.contact = true;
    b.start = static_cast<int>(order.size());
    order.push_back(i);
    if (p.tangent[k] >= 0 && p.mu[k] > 0.0) {
      order.push_back(p.tangent[k]);
      if (k < p.tangent2.size() && p.tangent2[k] >= 0)
        order.push_back(p.tangent2[k]);
      b.mu_static = b.mu_kinetic = p.mu[k];
    }
    b.size = static_cast<int>(order.size()) - b.start;
    cp.blocks.push_back(b);
  }
  const Eigen::Index nu = static_cast<Eigen::Index>(order.size());
  cp.W.resize(nu, nu);
  cp.q.resize(nu);
  for (Eigen::Index a = 0; a < nu; ++a) {
    const Eigen::Index ra = order[static_cast<size_t>(a)];
    for (Eigen::Index b = 0; b < nu; ++b)
      cp.W(a, b) = p.A(ra, order[static_cast<size_t>(b)]);
    // Newton's law: xi_N = u_N+ + e u_N- = (A P)_N + (1 + e) u_N-.
    cp.q[a] = ra < m ? (1.0 + p.e[static_cast<size_t>(ra)]) * p.u[ra] : p.u[ra];
  }
  const double scale =
      std::max(cp.q.cwiseAbs().maxCoeff(), std::numeric_limits<double>::min());
  // Sweeps in rounds of 50, the residual measured after each and the
  // semismooth Newton method tried from it (AlartCurnierNewton).
  constexpr int kRound = 50;
  Eigen::VectorXd P = Eigen::VectorXd::Zero(nu);
  int sweeps = 0;
  double residual = ConeResidual(cp, P) / scale;
  while (residual > kConeImpulseResidual && sweeps < kConeImpulseSweeps) {
    const ConeSolution s = SolveCone(cp, P, scale, 0.0, kRound);
    sweeps += s.iterations;
    if (!s.P.allFinite()) break;
    P = s.P;
    residual = ConeResidual(cp, P) / scale;
    if (residual <= kConeImpulseResidual) break;
    const Eigen::VectorXd polished =
        AlartCurnierNewton(cp, scale, P, kConeImpulseNewton);
    const double rp = ConeResidual(cp, polished) / scale;
    if (rp < residual) {
      P = polished;
      residual = rp;
    }
    if (s.iterations < kRound) break;  // a fixed point: no sweep changes P
  }
  LcpSolution& last = out.last;
  last.tolerance = kLcpTolerance * scale;
  last.residual = residual * scale;
  last.systems = sweeps;
  last.solved = residual <= kLcpTolerance;
  last.method = "projected Gauss-Seidel on the friction cones, " +
                std::to_string(sweeps) + " sweeps";
  last.z = P;
  out.lcp_size = static_cast<int>(nu);
  out.residual = last.residual;
  if (!last.solved) return out;
  for (Eigen::Index a = 0; a < nu; ++a)
    out.P[order[static_cast<size_t>(a)]] = P[a];
  out.u_plus = p.u + p.A * out.P;
  out.solved = true;
  return out;
}

ImpulseSolution SolveImpulse(const ImpulseProblem& p) {
  if (std::any_of(p.tangent2.begin(), p.tangent2.end(),
                  [](int r) { return r >= 0; })) {
    // The caller refuses Poisson's law here (RefusePoissonCone).
    return SolveConeImpulse(p);
  }
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

void RefusePoissonCone(double t,
                       const std::string& cones,
                       const std::string& poisson) {
  std::ostringstream os;
  os << "the impact at t = " << t << " of contacts with a 3D friction cone ("
     << cones.substr(1) << ") and contacts restituting by Poisson's law ("
     << poisson.substr(1)
     << "): the impulse problem on 3D cones is solved with Newton's law "
        "only; give these contacts ContactLaw::impact_law = "
        "ImpactLaw::kNewton, or model the friction planar (docs/friction.md)";
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
