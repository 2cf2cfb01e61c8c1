#include "eval/chart.hpp"

#include <algorithm>
#include <cmath>

namespace daedalus::internal {

namespace {

// a (x) (0, w) / 2 (4-vectors a, out; 3-vector w).
void QuaternionRate(const Eigen::VectorXd& a,
                    const Eigen::VectorXd& w,
                    Eigen::VectorXd& out) {
  out[0] = -(a[1] * w[0] + a[2] * w[1] + a[3] * w[2]) * 0.5;
  out[1] = (a[0] * w[0] + (a[2] * w[2] - a[3] * w[1])) * 0.5;
  out[2] = (a[0] * w[1] + (a[3] * w[0] - a[1] * w[2])) * 0.5;
  out[3] = (a[0] * w[2] + (a[1] * w[1] - a[2] * w[0])) * 0.5;
}

}  // namespace

void Retract(const ModelData& d,
             const Eigen::Ref<const Eigen::VectorXd>& dxi,
             Eigen::Ref<Eigen::VectorXd> q) {
  const Eigen::Index nq = q.size();
  for (Eigen::Index j = 0; j < nq; ++j) {
    const int k = d.velocity_of[j];
    if (k >= 0) q[j] += dxi[k];
  }
  for (const QuaternionBlock& b : d.quaternions) {
    Eigen::Vector4d a = q.segment<4>(b.q);
    a /= a.norm();
    const Eigen::Vector3d w = dxi.segment<3>(b.v);
    const double angle = w.norm();
    // exp(w / 2) = (cos(|w|/2), sin(|w|/2) w / |w|); sin(x/2)/x by its
    // series below 1e-4 (error below 1e-17).
    const double c = std::cos(0.5 * angle);
    const double s = angle < 1e-4 ? 0.5 - angle * angle / 48.0
                                  : std::sin(0.5 * angle) / angle;
    const double e0 = c, e1 = s * w[0], e2 = s * w[1], e3 = s * w[2];
    q[b.q] = a[0] * e0 - (a[1] * e1 + a[2] * e2 + a[3] * e3);
    q[b.q + 1] = a[0] * e1 + a[1] * e0 + (a[2] * e3 - a[3] * e2);
    q[b.q + 2] = a[0] * e2 + a[2] * e0 + (a[3] * e1 - a[1] * e3);
    q[b.q + 3] = a[0] * e3 + a[3] * e0 + (a[1] * e2 - a[2] * e1);
  }
}

void CoordinateRatesJacobian(const ModelData& d,
                             const Eigen::Ref<const Eigen::VectorXd>& q,
                             const Eigen::Ref<const Eigen::VectorXd>& v,
                             Eigen::Ref<Eigen::MatrixXd> fq,
                             Eigen::Ref<Eigen::MatrixXd> fv) {
  const Eigen::Index nq = q.size();
  for (Eigen::Index j = 0; j < nq; ++j) {
    const int k = d.velocity_of[j];
    if (k >= 0) fv(j, k) = 1.0;
  }
  // q' = a (x) (0, w) / 2 is linear in a (columns: e_j (x) (0, w) / 2) and
  // in w (columns: a (x) (0, e_k) / 2).
  for (const QuaternionBlock& b : d.quaternions) {
    Eigen::VectorXd e = Eigen::VectorXd::Zero(4), out(4);
    const Eigen::VectorXd w = v.segment<3>(b.v);
    for (int j = 0; j < 4; ++j) {
      e.setZero();
      e[j] = 1.0;
      QuaternionRate(e, w, out);
      fq.block(b.q, b.q + j, 4, 1) = out;
    }
    const Eigen::VectorXd a = q.segment<4>(b.q);
    for (int k = 0; k < 3; ++k) {
      Eigen::VectorXd ek = Eigen::VectorXd::Zero(3);
      ek[k] = 1.0;
      QuaternionRate(a, ek, out);
      fv.block(b.q, b.v + k, 4, 1) = out;
    }
  }
}

void CoordinateRatesTangent(const ModelData& d,
                            const Eigen::Ref<const Eigen::VectorXd>& q,
                            const Eigen::Ref<const Eigen::VectorXd>& v,
                            const Eigen::Ref<const Eigen::VectorXd>& dq,
                            const Eigen::Ref<const Eigen::VectorXd>& dv,
                            Eigen::Ref<Eigen::VectorXd> out) {
  const Eigen::Index nq = q.size();
  for (Eigen::Index j = 0; j < nq; ++j) {
    const int k = d.velocity_of[j];
    if (k >= 0) out[j] = dv[k];
  }
  Eigen::VectorXd a(4), w(3), r1(4), r2(4);
  for (const QuaternionBlock& b : d.quaternions) {
    a = dq.segment<4>(b.q);
    w = v.segment<3>(b.v);
    QuaternionRate(a, w, r1);
    a = q.segment<4>(b.q);
    w = dv.segment<3>(b.v);
    QuaternionRate(a, w, r2);
    out.segment<4>(b.q) = r1 + r2;
  }
}

void ProjectQuaternionTangent(const ModelData& d,
                              const Eigen::Ref<const Eigen::VectorXd>& q,
                              Eigen::Ref<Eigen::VectorXd> dq) {
  for (const QuaternionBlock& b : d.quaternions) {
    const Eigen::Vector4d a = q.segment<4>(b.q);
    const double n2 = a.squaredNorm();
    if (n2 > 0.0) dq.segment<4>(b.q) -= a * (a.dot(dq.segment<4>(b.q)) / n2);
  }
}

double NormalizeQuaternions(const ModelData& d, Eigen::Ref<Eigen::VectorXd> q) {
  double worst = 0.0;
  for (const QuaternionBlock& b : d.quaternions) {
    const double n = q.segment<4>(b.q).norm();
    worst = std::max(worst, std::abs(n - 1.0));
    if (n > 0.0) q.segment<4>(b.q) /= n;
  }
  return worst;
}

double QuaternionNormDrift(const ModelData& d,
                           const Eigen::Ref<const Eigen::VectorXd>& q) {
  double worst = 0.0;
  for (const QuaternionBlock& b : d.quaternions)
    worst = std::max(worst, std::abs(q.segment<4>(b.q).norm() - 1.0));
  return worst;
}

}  // namespace daedalus::internal
