#include "contact/impact_map.hpp"

#include <Eigen/QR>

namespace daedalus::internal {

void AddImpactMap(Mechanics* mech,
                  double t,
                  const Eigen::VectorXd& q,
                  const Eigen::VectorXd& v,
                  const ImpactLinearization& im,
                  const std::vector<int>& bilateral,
                  VectorJacobian* d) {
  const int nq = mech->nq(), nv = mech->nv();
  const int np = mech->model().num_parameters();
  const Eigen::VectorXd zq = Eigen::VectorXd::Zero(nq);
  const Eigen::VectorXd zv = Eigen::VectorXd::Zero(nv);
  const Eigen::VectorXd zp = Eigen::VectorXd::Zero(np);
  auto unit = [](int n, int i) { return Eigen::VectorXd::Unit(n, i); };
  mech->SetOpenRows({});
  mech->Evaluate(t, q, v);
  const Eigen::MatrixXd M = mech->DenseMass();
  const Eigen::MatrixXd J = mech->DenseJacobian();
  const Eigen::VectorXd u = mech->vel_residual();
  const Eigen::Index na = static_cast<Eigen::Index>(im.rows.size());
  const Eigen::Index nb = static_cast<Eigen::Index>(bilateral.size());
  Eigen::MatrixXd Ja(na, nv), Jb(nb, nv);
  for (Eigen::Index a = 0; a < na; ++a)
    Ja.row(a) = J.row(im.rows[static_cast<size_t>(a)]);
  for (Eigen::Index b = 0; b < nb; ++b)
    Jb.row(b) = J.row(bilateral[static_cast<size_t>(b)]);
  const Eigen::VectorXd P =
      Eigen::Map<const Eigen::VectorXd>(im.impulse.data(), na);
  // The bilateral impulses mu: J_B' mu = M dv - J_a' P.
  Eigen::VectorXd mu = Eigen::VectorXd::Zero(nb);
  if (nb > 0)
    mu = Jb.transpose().completeOrthogonalDecomposition().solve(
        M * im.dv - Ja.transpose() * P);
  const Eigen::Index nk = nv + na + nb;
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(nk, nk);
  K.topLeftCorner(nv, nv) = M;
  K.block(0, nv, nv, na) = -Ja.transpose();
  K.block(0, nv + na, nv, nb) = -Jb.transpose();
  K.block(nv, 0, na, nv) = Ja;
  K.block(nv + na, 0, nb, nv) = Jb;
  const Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> kf(K);
  // The tangent of dv along (dq, dv-, dp, dt): the active-set
  // equations differentiated, the unknowns' tangents solved for.
  auto ddv = [&](const Eigen::VectorXd& dq, const Eigen::VectorXd& dvm,
                 const Eigen::VectorXd& dp, double dt) {
    const TangentWorkspace& tws = mech->Tangent(dq, dvm, dp, {}, dt);
    Eigen::VectorXd rhs(nk);
    for (int i = 0; i < nv; ++i) {
      double acc = 0.0;
      for (int j = 0; j < nv; ++j) acc += tws.M(i, j).d * im.dv[j];
      for (Eigen::Index a = 0; a < na; ++a)
        acc -= tws.J(im.rows[static_cast<size_t>(a)], i).d * P[a];
      for (Eigen::Index b = 0; b < nb; ++b)
        acc -= tws.J(bilateral[static_cast<size_t>(b)], i).d * mu[b];
      rhs[i] = -acc;
    }
    for (Eigen::Index a = 0; a < na; ++a) {
      const size_t ia = static_cast<size_t>(a);
      const int ra = im.rows[ia];
      double acc = (1.0 + im.e[ia]) * tws.vel_residual[ra].d;
      for (int j = 0; j < nv; ++j) acc += tws.J(ra, j).d * im.dv[j];
      if (im.e_param[ia] >= 0) acc += dp[im.e_param[ia]] * u[ra];
      rhs[nv + a] = -acc;
    }
    for (Eigen::Index b = 0; b < nb; ++b) {
      const int rb = bilateral[static_cast<size_t>(b)];
      double acc = 0.0;
      for (int j = 0; j < nv; ++j) acc += tws.J(rb, j).d * im.dv[j];
      rhs[nv + na + b] = -acc;
    }
    return Eigen::VectorXd(kf.solve(rhs).head(nv));
  };
  d->value.tail(nv) += im.dv;
  for (int j = 0; j < nq; ++j)
    d->dq.col(j).tail(nv) += ddv(unit(nq, j), zv, zp, 0.0);
  for (int j = 0; j < nv; ++j)
    d->dv.col(j).tail(nv) += ddv(zq, unit(nv, j), zp, 0.0);
  for (int j = 0; j < np; ++j)
    d->dp.col(j).tail(nv) = ddv(zq, zv, unit(np, j), 0.0);
  d->dt.tail(nv) = ddv(zq, zv, zp, 1.0);
}

}  // namespace daedalus::internal
