// The articulated-body algorithm of a planar tree (TreeDynamics::planar())
// on planar spatial vectors, Featherstone, Rigid Body Dynamics Algorithms
// (Springer 2008), section 2.15 and Table 7.1: a motion is (w_z, v_x, v_y)
// (angular velocity about z, velocity of the frame's origin), a force
// (n_z, f_x, f_y) (moment about the origin, force), both in the link's
// frame; inertias are 3 x 3. Out-of-plane forces (gravity along z, the
// reactions that keep the bodies in the plane) do no work on the in-plane
// coordinates, so the planar equations are exactly those of the 6D ABA.
#include "multibody/planar_aba.hpp"

#include <cmath>

#include "daedalus/multibody_dynamics.hpp"

namespace daedalus::mb {

namespace {

// Cross products of planar vectors (the 6D ones with w = w_z e_z, v in
// the plane, n = n_z e_z, f in the plane, keeping the in-plane parts).
template <class S>
Vec3<S> CrossMotion3(const Vec3<S>& a, const Vec3<S>& b) {
  // [0; w_a e_z x v_b + v_a x w_b e_z]
  return Vec3<S>(S(0.0), -a[0] * b[2] + b[0] * a[2], a[0] * b[1] - b[0] * a[1]);
}
template <class S>
Vec3<S> CrossForce3(const Vec3<S>& a, const Vec3<S>& f) {
  // [v_a x f; w_a e_z x f]
  return Vec3<S>(a[1] * f[2] - a[2] * f[1], -a[0] * f[2], a[0] * f[1]);
}

}  // namespace

template <class S>
void TreeDynamics::ForwardPlanar(const VecX<S>& q,
                                 const VecX<S>& v,
                                 const VecX<S>& tau,
                                 TreeData<S>* d,
                                 VecX<S>* qdd) const {
  using std::cos;
  using std::sin;
  const auto& links = *links_;
  const int n = static_cast<int>(links.size());
  // Revolute joints only: the specialized recurrences.
  if (internal::RevolutePlanarAbaInUse()) {
    const int r = internal::ForwardPlanarRevolute<S>(links, q, v, tau, d, qdd);
    if (r == -1) return;
    if (r >= 0) NotPositive(links[r], Value(d->D[r]));
  }
  // X_i (parent -> link) of a rotation (cos, sin) = R_PL and an origin r:
  // X m = [w; E (v + w e_z x r)], E = R_PL'.
  auto motion = [&](int i, const Vec3<S>& m) {
    const S c = d->pcos[i], s = d->psin[i];
    const Vec3<S>& r = d->pr[i];
    const S x = m[1] - m[0] * r[1], y = m[2] + m[0] * r[0];
    return Vec3<S>(m[0], c * x + s * y, -s * x + c * y);
  };
  // X_i' f: [n + r x f_P; f_P], f_P = E' f.
  auto force_to_parent = [&](int i, const Vec3<S>& f) {
    const S c = d->pcos[i], s = d->psin[i];
    const Vec3<S>& r = d->pr[i];
    const S fx = c * f[1] - s * f[2], fy = s * f[1] + c * f[2];
    return Vec3<S>(f[0] + r[0] * fy - r[1] * fx, fx, fy);
  };
  const Vec3<S> a0(S(0.0), d->a0[3], d->a0[4]);
  d->kinetic = S(0.0);
  // Pass 1: transforms, velocities, bias accelerations and forces; the
  // link inertias [I_zz, -h_y, h_x; -h_y, m, 0; h_x, 0, m] about the origin.
  for (int i = 0; i < n; ++i) {
    const internal::RbLink& l = links[i];
    const Eigen::Matrix3d& rp = l.pre.R;
    const Vec3<S>& pp = d->p_pre[i];
    Vec3<S>& sj = d->pp[i];  // S_i
    d->pr[i] = Vec3<S>(pp[0], pp[1], S(0.0));
    if (l.kind == internal::LinkKind::kRevolute) {
      const double sign = l.axis[2];
      const S cq = cos(q[l.qi]), sq = sign * sin(q[l.qi]);
      d->pcos[i] = rp(0, 0) * cq + rp(0, 1) * sq;
      d->psin[i] = rp(1, 0) * cq + rp(1, 1) * sq;
      sj = Vec3<S>(S(sign), S(0.0), S(0.0));
    } else {  // prismatic, along an axis of the plane
      d->pcos[i] = S(rp(0, 0));
      d->psin[i] = S(rp(1, 0));
      const double ax = rp(0, 0) * l.axis[0] + rp(0, 1) * l.axis[1];
      const double ay = rp(1, 0) * l.axis[0] + rp(1, 1) * l.axis[1];
      d->pr[i][0] += ax * q[l.qi];
      d->pr[i][1] += ay * q[l.qi];
      sj = Vec3<S>(S(0.0), S(l.axis[0]), S(l.axis[1]));
    }
    const internal::RbInertia<S>& in = d->I[i];
    Mat3<S>& ia = d->pI[i];
    ia << in.I(2, 2), -in.h[1], in.h[0], -in.h[1], in.m, S(0.0), in.h[0],
        S(0.0), in.m;
    const Vec3<S> vj = sj * v[l.vi];
    d->pv[i] = l.parent < 0 ? vj : Vec3<S>(motion(i, d->pv[l.parent]) + vj);
    d->pc[i] = CrossMotion3<S>(d->pv[i], vj);
    const Vec3<S> iv = ia * d->pv[i];
    d->kinetic += 0.5 * d->pv[i].dot(iv);
    d->pa[i] = CrossForce3<S>(d->pv[i], iv);
  }
  // Pass 2, inward: U = IA S, D = S'U, u = tau - S'pA; the parent gets
  // X'(IA - U U'/D) X and X'(pA + Ia c + U u/D).
  for (int i = n - 1; i >= 0; --i) {
    const internal::RbLink& l = links[i];
    const Vec3<S>& sj = d->pp[i];
    d->pU[i] = d->pI[i] * sj;
    d->D[i] = sj.dot(d->pU[i]);
    d->u[i] = tau[l.vi] - sj.dot(d->pa[i]);
    if (!(Value(d->D[i]) > 0.0)) NotPositive(l, Value(d->D[i]));
    // From here D holds 1/D: one division per link on the inward and
    // outward chains, which are latency-bound.
    d->D[i] = 1.0 / d->D[i];
    // X = [1 0 0; a c s; b -s c] with (a, b) = E (e_z x r).
    const S c = d->pcos[i], s = d->psin[i];
    const Vec3<S>& r = d->pr[i];
    const S xa = -c * r[1] + s * r[0], xb = s * r[1] + c * r[0];
    // For pass 3: qdd = (u - U'(X a_p + c)) / D = b - w' a_p with
    // b = (u - U'c) / D and w = X'U / D, so that the outward chain carries
    // one dot product per link instead of a transform, a dot product and
    // a product (into pb and pw; U and u are not needed past here).
    const Vec3<S> uu = d->pU[i];
    d->pb[i] = (d->u[i] - uu.dot(d->pc[i])) * d->D[i];
    d->pw[i] = Vec3<S>(uu[0] + uu[1] * xa + uu[2] * xb, uu[1] * c - uu[2] * s,
                       uu[1] * s + uu[2] * c) *
               d->D[i];
    const int par = l.parent;
    if (par < 0) continue;
    Vec3<S> pa;
    if (l.kind == internal::LinkKind::kRevolute) {
      // S = +-e_1: IA - U U'/D has a zero first row and column, leaving
      // the 2 x 2 block k (the articulated inertia a point mass would
      // have); with the rows b1 = (a, c, s), b2 = (b, -s, c) of X,
      // X' Ia X = b1' (k00 b1 + k01 b2) + b2' (k01 b1 + k11 b2).
      const Mat3<S>& m = d->pI[i];
      const S inv = d->D[i];
      const S w1 = m(1, 0) * inv, w2 = m(2, 0) * inv;
      const S k00 = m(1, 1) - m(1, 0) * w1;
      const S k01 = m(1, 2) - m(1, 0) * w2;
      const S k11 = m(2, 2) - m(2, 0) * w2;
      const Vec3<S>& cc = d->pc[i];
      pa = d->pa[i] + d->pU[i] * (d->u[i] * inv);
      pa[1] += k00 * cc[1] + k01 * cc[2];
      pa[2] += k01 * cc[1] + k11 * cc[2];
      const Vec3<S> b1(xa, c, s), b2(xb, -s, c);
      const Vec3<S> r1 = k00 * b1 + k01 * b2, r2 = k01 * b1 + k11 * b2;
      Mat3<S>& ip = d->pI[par];
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) ip(a, b) += b1[a] * r1[b] + b2[a] * r2[b];
    } else {
      const Mat3<S> ia = d->pI[i] - d->pU[i] * (d->pU[i].transpose() * d->D[i]);
      pa = d->pa[i] + ia * d->pc[i] + d->pU[i] * (d->u[i] * d->D[i]);
      Mat3<S> x;
      x << S(1.0), S(0.0), S(0.0), xa, c, s, xb, -s, c;
      d->pI[par].noalias() += x.transpose() * (ia * x);
    }
    d->pa[par] += force_to_parent(i, pa);
  }
  // Pass 3, outward: a' = X a_p + c, qdd = (u - U'a')/D, a = a' + S qdd.
  for (int i = 0; i < n; ++i) {
    const internal::RbLink& l = links[i];
    const int par = l.parent;
    const Vec3<S>& apar = par < 0 ? a0 : d->pv[par];
    const Vec3<S> ap = motion(i, apar) + d->pc[i];
    const S acc = d->pb[i] - d->pw[i].dot(apar);
    (*qdd)[l.vi] = acc;
    // pv[i] is no longer needed as a velocity: it holds a_i from here.
    d->pv[i] = ap + d->pp[i] * acc;
  }
}

template void TreeDynamics::ForwardPlanar<double>(const VecX<double>&,
                                                  const VecX<double>&,
                                                  const VecX<double>&,
                                                  TreeData<double>*,
                                                  VecX<double>*) const;
template void TreeDynamics::ForwardPlanar<D1>(const VecX<D1>&,
                                              const VecX<D1>&,
                                              const VecX<D1>&,
                                              TreeData<D1>*,
                                              VecX<D1>*) const;

}  // namespace daedalus::mb
