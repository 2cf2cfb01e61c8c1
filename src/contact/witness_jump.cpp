#include "contact/witness_jump.hpp"

namespace daedalus::internal {

VectorJacobian IdentityStateMap(const Eigen::VectorXd& y,
                                int nq,
                                int nv,
                                int np) {
  const int n = nq + nv;
  VectorJacobian d;
  d.value = y;
  const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(n, n);
  d.dq = I.leftCols(nq);
  d.dv = I.rightCols(nv);
  d.dp = Eigen::MatrixXd::Zero(n, np);
  d.dt = Eigen::VectorXd::Zero(n);
  return d;
}

WitnessGradient DifferentiateWitness(int nq,
                                     int nv,
                                     int np,
                                     const WitnessTangent& dg) {
  const Eigen::VectorXd zq = Eigen::VectorXd::Zero(nq);
  const Eigen::VectorXd zv = Eigen::VectorXd::Zero(nv);
  const Eigen::VectorXd zp = Eigen::VectorXd::Zero(np);
  WitnessGradient g;
  g.gy.resize(nq + nv);
  g.gp.resize(np);
  for (int j = 0; j < nq; ++j)
    g.gy[j] = dg(Eigen::VectorXd::Unit(nq, j), zv, zp, 0.0);
  for (int j = 0; j < nv; ++j)
    g.gy[nq + j] = dg(zq, Eigen::VectorXd::Unit(nv, j), zp, 0.0);
  for (int j = 0; j < np; ++j)
    g.gp[j] = dg(zq, zv, Eigen::VectorXd::Unit(np, j), 0.0);
  g.gt = dg(zq, zv, zp, 1.0);
  return g;
}

void SaltationAfterSwitch(Mechanics* mech,
                          const FlowPoint& plus,
                          EventJump* jump) {
  const int nq = mech->nq(), nv = mech->nv();
  mech->Evaluate(plus.t, plus.y.head(nq), plus.y.tail(nv));
  KktResult r_plus;
  mech->SolveKkt(mech->bias(), &r_plus);
  jump->Saltation(mech, r_plus, plus);
}

Eigen::MatrixXd SensitivitiesAcross(const EventJump* jump,
                                    const Eigen::MatrixXd& s_minus,
                                    const std::vector<Eigen::VectorXd>& dirs,
                                    Eigen::VectorXd* tau,
                                    EventRecord* record) {
  const Eigen::Index ns = s_minus.cols();
  tau->setZero(ns);
  if (jump == nullptr) return s_minus;
  Eigen::MatrixXd out(s_minus.rows(), ns);
  for (Eigen::Index i = 0; i < ns; ++i) {
    const Eigen::VectorXd& dp = dirs[static_cast<size_t>(i)];
    (*tau)[i] = jump->Tau(s_minus.col(i), dp);
    out.col(i) = jump->After(s_minus.col(i), dp);
  }
  if (record != nullptr) {
    record->dt_dp = *tau;
    record->rate = jump->rate();
  }
  return out;
}

}  // namespace daedalus::internal
