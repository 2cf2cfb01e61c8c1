// Recursive dynamics of a multibody tree (multibody.hpp): inverse dynamics
// by the recursive Newton-Euler algorithm (RNEA), the mass matrix by the
// composite-rigid-body algorithm (CRBA) and forward dynamics by the
// articulated-body algorithm (ABA), after Featherstone, Rigid Body Dynamics
// Algorithms (Springer 2008), chapters 5-7 (Tables 5.1, 6.2, 7.1).
//
// Spatial vectors are Featherstone's 6-vectors with the angular part first:
// a motion [w; v] (angular velocity, velocity of the frame's origin) and a
// force [n; f] (moment about the frame's origin, force), both expressed in
// the frame of the link they belong to. Every algorithm is a template on
// the scalar type, so the library's dual numbers see through it: exact
// derivatives with respect to q, v and the parameters.
//
// The tree's joints become links of one or three degrees of freedom: a
// revolute or prismatic link per scalar coordinate (a planar joint is a
// prismatic x, a prismatic y and a revolute z link; a universal joint two
// revolute links), a ball link per quaternion, and a free joint three
// prismatic links along its parent frame's axes followed by a ball link
// (so that its translational velocities are p_FM' in F, the convention of
// docs/multibody.md, "Ball and free joints"); welded bodies add their
// inertia to the link they are welded to.
//
// The dynamics are those of the bodies and gravity only:
//   InverseDynamics(q, v, vdot) = M(q) vdot + c(q, v) + g(q),
// with c the Coriolis and centrifugal terms and g the gravity forces
// (dV_gravity/dq, along the velocity directions for a quaternion); the
// model's h adds spring forces, D v and -Q_r (dynamics.hpp).
#pragma once

#include <Eigen/Core>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "daedalus/multibody.hpp"

namespace daedalus::mb {

template <class S>
using Vec6 = Eigen::Matrix<S, 6, 1>;
template <class S>
using Mat6 = Eigen::Matrix<S, 6, 6>;

namespace internal {

/// A position fixed on a body given by parameter expressions: the sum of
/// C_k r_k over its terms (C_k a constant 3 x 3 matrix).
struct PTerm {
  Eigen::Matrix3d c;
  PVec r;
};
/// Pose of a frame B in a frame A that does not depend on q: R_AB and
/// p_AB = sum of terms.
struct FixedPose {
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  std::vector<PTerm> p;
};
/// The pose of C in A from the pose of B in A and of C in B.
FixedPose Compose(const FixedPose& ab, const FixedPose& bc);
/// The pose of B in A for a frame A given by its pose in B.
FixedPose Invert(const Eigen::Matrix3d& r_ba, const PVec& p_ba);

template <class S>
Vec3<S> EvalPosition(const FixedPose& pose, const VecX<S>& p) {
  Vec3<S> out = Vec3<S>::Zero();
  for (const PTerm& t : pose.p) {
    const Vec3<S> r = EvalVec<S>(t.r, p);
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 3; ++k)
        if (t.c(i, k) != 0.0) out[i] += t.c(i, k) * r[k];
  }
  return out;
}

/// The motion of a link's frame L in its joint frame J: a rotation about
/// or a translation along a unit axis of J (one velocity), or the rotation
/// of a quaternion (four positions, three velocities: the angular velocity
/// of L relative to J expressed in L, motion subspace S = [1; 0]).
enum class LinkKind { kRevolute, kPrismatic, kBall };

/// One link of the tree: its parent link, its joint frame J fixed in the
/// parent link's frame, the joint and the bodies it carries. The link
/// frame L is J moved by the joint.
struct RbLink {
  int parent = -1;  // link index; -1: the ground
  LinkKind kind = LinkKind::kRevolute;
  int qi = 0, vi = 0;  // its first position (q) and velocity (v) index
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();
  FixedPose pre;  // J in the parent link's frame (or in W)
  struct Mass {
    BodySpec spec;
    FixedPose pose;  // the body frame B in L
    std::string body;
  };
  std::vector<Mass> masses;
  std::string name;  // the coordinate's (ball: the joint's) name
  int dof() const { return kind == LinkKind::kBall ? 3 : 1; }
  // An absolute-angle revolute joint (planar systems): its relative angle
  // is q_i - offset - sum_k c_k q_k, the coordinates k < i and
  // coefficients c_k of the parent frame's angle in the world.
  bool absolute = false;
  double offset = 0.0;
  std::vector<std::pair<int, double>> minus;
};

/// Rigid-body spatial inertia about a frame's origin: mass m, first
/// moment h = m c, rotational inertia I about the origin (all in the frame).
template <class S>
struct RbInertia {
  S m = S(0.0);
  Vec3<S> h = Vec3<S>::Zero();
  Mat3<S> I = Mat3<S>::Zero();

  /// I * [w; v] = [I w + h x v; m v - h x w].
  Vec6<S> Apply(const Vec6<S>& x) const {
    const Vec3<S> w = x.template head<3>(), v = x.template tail<3>();
    Vec6<S> f;
    f.template head<3>() = I * w + Cross<S>(h, v);
    f.template tail<3>() = m * v - Cross<S>(h, w);
    return f;
  }
  Mat6<S> Matrix() const {
    Mat6<S> out;
    Mat3<S> hx;
    hx << S(0.0), -h[2], h[1], h[2], S(0.0), -h[0], -h[1], h[0], S(0.0);
    out.template topLeftCorner<3, 3>() = I;
    out.template topRightCorner<3, 3>() = hx;
    out.template bottomLeftCorner<3, 3>() = -hx;
    out.template bottomRightCorner<3, 3>() = m * Mat3<S>::Identity();
    return out;
  }
};

/// A Plücker transform from a parent frame P to a child frame L, given by
/// E = R_PL' and r = p_PL (in P).
template <class S>
struct Xform {
  Mat3<S> E;
  Vec3<S> r;

  /// A motion vector in P expressed in L: [E w; E (v - r x w)].
  Vec6<S> Motion(const Vec6<S>& m) const {
    const Vec3<S> w = m.template head<3>(), v = m.template tail<3>();
    Vec6<S> out;
    out.template head<3>() = E * w;
    out.template tail<3>() = E * (v - Cross<S>(r, w));
    return out;
  }
  /// A force in L expressed in P (X' f): [E' n + r x E' f; E' f].
  Vec6<S> ForceToParent(const Vec6<S>& f) const {
    const Vec3<S> n = E.transpose() * f.template head<3>();
    const Vec3<S> fp = E.transpose() * f.template tail<3>();
    Vec6<S> out;
    out.template head<3>() = n + Cross<S>(r, fp);
    out.template tail<3>() = fp;
    return out;
  }
  /// A rigid-body inertia in L expressed in P (X' I X), without division
  /// by the mass (massless links are common).
  RbInertia<S> InertiaToParent(const RbInertia<S>& in) const {
    RbInertia<S> out;
    out.m = in.m;
    const Vec3<S> ha = E.transpose() * in.h;
    out.h = ha + in.m * r;
    out.I = E.transpose() * in.I * E;
    const S hr = ha.dot(r), rr = r.dot(r);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        out.I(i, j) -= ha[i] * r[j] + r[i] * ha[j] + in.m * r[i] * r[j];
      }
      out.I(i, i) += 2.0 * hr + in.m * rr;
    }
    return out;
  }
  /// The 6 x 6 motion transform [E 0; -E rx E].
  Mat6<S> Matrix() const {
    Mat3<S> rx;
    rx << S(0.0), -r[2], r[1], r[2], S(0.0), -r[0], -r[1], r[0], S(0.0);
    Mat6<S> x = Mat6<S>::Zero();
    x.template topLeftCorner<3, 3>() = E;
    x.template bottomRightCorner<3, 3>() = E;
    x.template bottomLeftCorner<3, 3>() = -(E * rx);
    return x;
  }
};

/// Spatial cross products: motion x motion and motion x* force.
template <class S>
Vec6<S> CrossMotion(const Vec6<S>& a, const Vec6<S>& b) {
  const Vec3<S> w = a.template head<3>(), v = a.template tail<3>();
  Vec6<S> out;
  out.template head<3>() = Cross<S>(w, b.template head<3>());
  out.template tail<3>() =
      Cross<S>(w, b.template tail<3>()) + Cross<S>(v, b.template head<3>());
  return out;
}
template <class S>
Vec6<S> CrossForce(const Vec6<S>& a, const Vec6<S>& f) {
  const Vec3<S> w = a.template head<3>(), v = a.template tail<3>();
  Vec6<S> out;
  out.template head<3>() =
      Cross<S>(w, f.template head<3>()) + Cross<S>(v, f.template tail<3>());
  out.template tail<3>() = Cross<S>(w, f.template tail<3>());
  return out;
}

/// S_i x_i for link l: its motion subspace times its velocities (or
/// accelerations) in x; s is a one-degree-of-freedom link's S.
template <class S>
Vec6<S> SubspaceTimes(const RbLink& l, const Vec6<S>& s, const VecX<S>& x) {
  if (l.kind != LinkKind::kBall) return s * x[l.vi];
  Vec6<S> out;
  out << x[l.vi], x[l.vi + 1], x[l.vi + 2], S(0.0), S(0.0), S(0.0);
  return out;
}

/// The lower Cholesky factor l of a symmetric 3 x 3 matrix a = l l';
/// false when a pivot is not positive (a is not positive definite).
template <class S>
bool Cholesky3(const Mat3<S>& a, Mat3<S>* l) {
  using std::sqrt;
  l->setZero();
  for (int j = 0; j < 3; ++j) {
    S dj = a(j, j);
    for (int k = 0; k < j; ++k) dj -= (*l)(j, k) * (*l)(j, k);
    if (!(Value(dj) > 0.0)) return false;
    (*l)(j, j) = sqrt(dj);
    for (int i = j + 1; i < 3; ++i) {
      S e = a(i, j);
      for (int k = 0; k < j; ++k) e -= (*l)(i, k) * (*l)(j, k);
      (*l)(i, j) = e / (*l)(j, j);
    }
  }
  return true;
}
/// (l l')^-1 b for the factor of Cholesky3 (two triangular solves).
template <class S>
Vec3<S> CholeskySolve3(const Mat3<S>& l, Vec3<S> b) {
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < i; ++k) b[i] -= l(i, k) * b[k];
    b[i] /= l(i, i);
  }
  for (int i = 2; i >= 0; --i) {
    for (int k = i + 1; k < 3; ++k) b[i] -= l(k, i) * b[k];
    b[i] /= l(i, i);
  }
  return b;
}

}  // namespace internal

/// Scratch of the recursive algorithms for one scalar type: one entry per
/// link, sized by TreeDynamics::MakeData and reused between calls (no
/// allocation per call besides the returned vector or matrix).
template <class S>
struct TreeData {
  // Set by TreeDynamics::SetParameters:
  std::vector<Vec3<S>> p_pre;             // p_PJ: J's origin in the parent
  std::vector<internal::RbInertia<S>> I;  // link inertias (in L)
  Vec6<S> a0 = Vec6<S>::Zero();           // [0; -g]: the ground's acceleration
  bool ready = false;
  int chain = 0;  // MakeData: 1 unbranched revolute chain, 2 pre.R = 1, +z
  bool want_kinetic = true;  // false: `kinetic` may be left NaN
  // Per call:
  std::vector<internal::Xform<S>> X;       // parent -> link transforms
  std::vector<Vec6<S>> Sj;                 // motion subspaces (in L; 1 dof)
  std::vector<Vec6<S>> v, a, f, c, U, pA;  // velocities, accelerations,
                                           // forces, ABA terms
  std::vector<internal::RbInertia<S>> Ic;  // composite inertias (CRBA)
  std::vector<Mat6<S>> IA;                 // articulated inertias (ABA)
  std::vector<S> D, u;                     // ABA's D_i and u_i (1 dof)
  // ABA on ball links: U_i = IA_i S_i (6 x 3), the Cholesky factor of
  // D_i = S_i' U_i and u_i (3).
  std::vector<Eigen::Matrix<S, 6, 3>> U3;
  std::vector<Mat3<S>> L3;
  std::vector<Vec3<S>> u3;
  VecX<S> qr, vr, ar;  // relative coordinates (absolute-angle joints)
  // The planar ABA (planar trees): motions (w_z, v_x, v_y), forces (n_z,
  // f_x, f_y), 3 x 3 articulated inertias, the link rotation's cosine and
  // sine and the translation of its origin in the parent.
  std::vector<Vec3<S>> pv, pc, pa, pp, pU, pr, pw;
  std::vector<S> pb, pcos, psin;
  std::vector<Mat3<S>> pI;
  /// The kinetic energy sum v_i' I_i v_i / 2 of the last ForwardDynamics.
  S kinetic = S(0.0);
};

/// The recursive algorithms of a frozen multibody tree. Cheap to copy.
/// Sizes: positions q (nq), velocities v, vdot and forces tau (nv),
/// parameters p (np); nq = nv + the number of ball and free joints, each
/// quaternion q[i..i+3] taken divided by its norm (as the kinematics do).
class TreeDynamics {
 public:
  TreeDynamics() = default;
  /// Absolute-angle revolute joints (planar systems) are described by the
  /// constant map from the model's coordinates to relative joint angles.
  /// @throws std::invalid_argument for a body without a joint.
  explicit TreeDynamics(const Kinematics& kinematics);

  int nq() const { return nq_; }
  int nv() const { return nv_; }
  const std::vector<internal::RbLink>& links() const { return *links_; }
  /// True when every link is a revolute joint about the world's z axis or
  /// a prismatic joint along the x-y plane, and no joint frame is offset
  /// along z: ForwardDynamics on double and D1 then runs the planar ABA
  /// (3-vectors, Featherstone 2008 section 2.15), about ten times cheaper.
  bool planar() const { return planar_; }

  template <class S>
  TreeData<S> MakeData() const {
    const size_t n = links_->size();
    TreeData<S> d;
    d.p_pre.resize(n);
    d.I.resize(n);
    d.X.resize(n);
    d.Sj.resize(n);
    for (auto* vec : {&d.v, &d.a, &d.f, &d.c, &d.U, &d.pA}) vec->resize(n);
    d.Ic.resize(n);
    d.IA.resize(n);
    d.D.resize(n);
    d.u.resize(n);
    d.U3.resize(n);
    d.L3.resize(n);
    d.u3.resize(n);
    for (auto* vec : {&d.pv, &d.pc, &d.pa, &d.pp, &d.pU, &d.pr, &d.pw})
      vec->resize(n);
    d.pb.resize(n);
    d.pI.resize(n);
    d.pcos.resize(n);
    d.psin.resize(n);
    d.chain = chain_;
    d.qr.resize(nq_);
    d.vr.resize(nv_);
    d.ar.resize(nv_);
    return d;
  }

  /// Evaluates the parameter-dependent parts (link inertias, joint frame
  /// offsets, gravity) at p (np) into `data`. The algorithms below that
  /// take a TreeData use the parameters last set; they cost O(nv) (CRBA:
  /// O(nv depth)).
  template <class S>
  void SetParameters(const VecX<S>& p, TreeData<S>* data) const;

  /// RNEA: tau = M(q) vdot + c(q, v) + g(q) (nv).
  template <class S>
  VecX<S> InverseDynamics(const VecX<S>& q,
                          const VecX<S>& v,
                          const VecX<S>& vdot,
                          TreeData<S>* data) const;
  /// CRBA: the mass matrix M(q) (nv x nv).
  template <class S>
  MatX<S> MassMatrix(const VecX<S>& q, TreeData<S>* data) const;
  /// ABA: vdot solving M(q) vdot = tau - c(q, v) - g(q) (nv); also sets
  /// data->kinetic, the kinetic energy at (q, v). O(nv).
  /// @throws std::runtime_error when an articulated inertia is not
  /// positive along its joint (a massless end of the tree), naming it.
  template <class S>
  VecX<S> ForwardDynamics(const VecX<S>& q,
                          const VecX<S>& v,
                          const VecX<S>& tau,
                          TreeData<S>* data) const;

  /// The potential energy of gravity, sum_i -m_i g . c_i over the links'
  /// centres of mass, from the links' world poses composed outward: O(nv).
  /// Values only (src/multibody/recursive.cpp).
  double GravityPotential(const VecX<double>& q, TreeData<double>* data) const;

  // Convenience forms that allocate their own scratch.
  template <class S>
  VecX<S> InverseDynamics(const VecX<S>& q,
                          const VecX<S>& v,
                          const VecX<S>& vdot,
                          const VecX<S>& p) const {
    TreeData<S> d = MakeData<S>();
    SetParameters<S>(p, &d);
    return InverseDynamics<S>(q, v, vdot, &d);
  }
  template <class S>
  MatX<S> MassMatrix(const VecX<S>& q, const VecX<S>& p) const {
    TreeData<S> d = MakeData<S>();
    SetParameters<S>(p, &d);
    return MassMatrix<S>(q, &d);
  }
  template <class S>
  VecX<S> ForwardDynamics(const VecX<S>& q,
                          const VecX<S>& v,
                          const VecX<S>& tau,
                          const VecX<S>& p) const {
    TreeData<S> d = MakeData<S>();
    SetParameters<S>(p, &d);
    return ForwardDynamics<S>(q, v, tau, &d);
  }

 private:
  // Joint transforms X_i(q_i) and motion subspaces S_i into data.
  template <class S>
  void Transforms(const VecX<S>& q, TreeData<S>* d) const;
  void Check(int expected, int size, const char* what, bool ready) const;
  [[noreturn]] void NotPositive(const internal::RbLink& l, double d) const;
  // Absolute-angle joints: the relative coordinates x_rel = T x (and q_rel
  // = T q - offset) into out; x itself without absolute joints. (Absolute
  // joints exist in planar systems only, where nq = nv and link i is
  // coordinate i.)
  template <class S>
  const VecX<S>& Relative(const VecX<S>& x, bool position, VecX<S>* out) const;
  // tau = T' tau_rel in place, and the inverse maps of ABA.
  template <class S>
  void TransposeApply(VecX<S>* tau) const;
  template <class S>
  void TransposeSolve(VecX<S>* tau) const;
  template <class S>
  void Solve(VecX<S>* x) const;
  // The planar ABA (src/multibody/planar_aba.cpp), on relative joint
  // coordinates; double and D1 only.
  template <class S>
  void ForwardPlanar(const VecX<S>& q,
                     const VecX<S>& v,
                     const VecX<S>& tau,
                     TreeData<S>* d,
                     VecX<S>* qdd) const;
  bool absolute_ = false;  // some link is an absolute-angle joint
  bool planar_ = false;    // see planar()
  int chain_ = 0;          // TreeData::chain (planar_aba_revolute.cpp)
  int nq_ = 0, nv_ = 0;

  std::shared_ptr<const std::vector<internal::RbLink>> links_;
  PVec gravity_;
};

// ---- implementation (Featherstone 2008; numbers of the tables cited)

template <class S>
void TreeDynamics::SetParameters(const VecX<S>& p, TreeData<S>* d) const {
  const auto& links = *links_;
  for (size_t i = 0; i < links.size(); ++i) {
    const internal::RbLink& l = links[i];
    d->p_pre[i] = internal::EvalPosition<S>(l.pre, p);
    // Each body B carried by L: c_L = R_LB c_B + p_LB and I_C in L =
    // R_LB I_C R_LB'; about L's origin I_O = I_C + m (|c|^2 1 - c c').
    internal::RbInertia<S> in;
    for (const auto& ms : l.masses) {
      const BodySpec& sp = ms.spec;
      const Eigen::Matrix3d& rl = ms.pose.R;
      Vec3<S> c = internal::EvalPosition<S>(ms.pose, p);
      if (!sp.com.IsZero()) {
        const Vec3<S> cb = internal::EvalVec<S>(sp.com, p);
        for (int r = 0; r < 3; ++r)
          for (int k = 0; k < 3; ++k)
            if (rl(r, k) != 0.0) c[r] += rl(r, k) * cb[k];
      }
      Mat3<S> ib;
      ib << sp.ixx.Eval<S>(p), sp.ixy.Eval<S>(p), sp.ixz.Eval<S>(p),
          sp.ixy.Eval<S>(p), sp.iyy.Eval<S>(p), sp.iyz.Eval<S>(p),
          sp.ixz.Eval<S>(p), sp.iyz.Eval<S>(p), sp.izz.Eval<S>(p);
      const Mat3<S> ic = internal::TimesConst<S>(
          Mat3<S>(internal::TimesConst<S>(ib, Eigen::Matrix3d(rl.transpose()))
                      .transpose()),
          Eigen::Matrix3d(rl.transpose()));
      const S m = sp.mass.Eval<S>(p);
      in.m += m;
      in.h += m * c;
      in.I += ic;
      const S cc = c.dot(c);
      for (int r = 0; r < 3; ++r) {
        for (int k = 0; k < 3; ++k) in.I(r, k) -= m * c[r] * c[k];
        in.I(r, r) += m * cc;
      }
    }
    d->I[i] = in;
  }
  // Gravity as a fictitious acceleration of the ground (Featherstone
  // section 5.3): a_0 = [0; -g].
  d->a0.setZero();
  d->a0.template tail<3>() = -internal::EvalVec<S>(gravity_, p);
  d->ready = true;
}

template <class S>
void TreeDynamics::Transforms(const VecX<S>& q, TreeData<S>* d) const {
  const auto& links = *links_;
  for (size_t i = 0; i < links.size(); ++i) {
    const internal::RbLink& l = links[i];
    // Pose of L in the parent P: R_PL = R_PJ R_JL, p_PL = p_PJ + R_PJ p_JL.
    internal::Xform<S>& x = d->X[i];
    const Eigen::Matrix3d& r_pj = l.pre.R;
    x.r = d->p_pre[i];
    switch (l.kind) {
      case internal::LinkKind::kRevolute: {
        const Mat3<S> r_jl = internal::AxisRotation<S>(l.axis, q[l.qi]);
        // E = R_PL' = R_JL' R_PJ'.
        x.E = internal::TimesConst<S>(Mat3<S>(r_jl.transpose()),
                                      Eigen::Matrix3d(r_pj.transpose()));
        d->Sj[i] << S(l.axis[0]), S(l.axis[1]), S(l.axis[2]), S(0.0), S(0.0),
            S(0.0);
        break;
      }
      case internal::LinkKind::kPrismatic: {
        x.E = r_pj.transpose().cast<S>();
        const Eigen::Vector3d a_p = r_pj * l.axis;
        for (int r = 0; r < 3; ++r)
          if (a_p[r] != 0.0) x.r[r] += a_p[r] * q[l.qi];
        d->Sj[i] << S(0.0), S(0.0), S(0.0), S(l.axis[0]), S(l.axis[1]),
            S(l.axis[2]);
        break;
      }
      case internal::LinkKind::kBall: {
        // R_JL of the quaternion divided by its norm; S = [1; 0] (3 columns,
        // constant in L, so no S-dot term: Featherstone section 4.4).
        const Mat3<S> r_jl = internal::QuaternionRotation<S>(q, l.qi);
        x.E = internal::TimesConst<S>(Mat3<S>(r_jl.transpose()),
                                      Eigen::Matrix3d(r_pj.transpose()));
        break;
      }
    }
  }
}

// The map of absolute-angle joints: x_rel = T x with T = I - C, C holding
// the coefficients c_ik (k < i) of the parent frames' angles; T is
// constant, so velocities and accelerations map alike.
template <class S>
const VecX<S>& TreeDynamics::Relative(const VecX<S>& x,
                                      bool position,
                                      VecX<S>* out) const {
  if (!absolute_) return x;
  *out = x;
  const auto& links = *links_;
  for (size_t i = 0; i < links.size(); ++i) {
    if (!links[i].absolute) continue;
    const auto r = static_cast<Eigen::Index>(i);
    if (position) (*out)[r] -= links[i].offset;
    for (const auto& [k, c] : links[i].minus) (*out)[r] -= c * x[k];
  }
  return *out;
}
template <class S>
void TreeDynamics::TransposeApply(VecX<S>* tau) const {
  // T' tau_rel = tau_rel - C' tau_rel (tau_rel read before it changes: the
  // rows k written are below the rows i read, so go upwards in i).
  if (!absolute_) return;
  const auto& links = *links_;
  for (size_t i = 0; i < links.size(); ++i)
    for (const auto& [k, c] : links[i].minus)
      (*tau)[k] -= c * (*tau)[static_cast<Eigen::Index>(i)];
}
template <class S>
void TreeDynamics::TransposeSolve(VecX<S>* x) const {
  // (I - C') x = tau: x_k = tau_k + sum_{i > k} c_ik x_i, downwards in i.
  if (!absolute_) return;
  const auto& links = *links_;
  for (size_t i = links.size(); i-- > 0;)
    for (const auto& [k, c] : links[i].minus)
      (*x)[k] += c * (*x)[static_cast<Eigen::Index>(i)];
}
template <class S>
void TreeDynamics::Solve(VecX<S>* x) const {
  // (I - C) x = x_rel: x_i = x_rel_i + sum_{k < i} c_ik x_k, upwards.
  if (!absolute_) return;
  const auto& links = *links_;
  for (size_t i = 0; i < links.size(); ++i)
    for (const auto& [k, c] : links[i].minus)
      (*x)[static_cast<Eigen::Index>(i)] += c * (*x)[k];
}

template <class S>
VecX<S> TreeDynamics::InverseDynamics(const VecX<S>& q_in,
                                      const VecX<S>& v_in,
                                      const VecX<S>& vdot_in,
                                      TreeData<S>* d) const {
  const int n = static_cast<int>(links_->size());
  Check(nq_, static_cast<int>(q_in.size()), "q", d->ready);
  Check(nv_, static_cast<int>(v_in.size()), "v", d->ready);
  Check(nv_, static_cast<int>(vdot_in.size()), "vdot", d->ready);
  const auto& links = *links_;
  const VecX<S>& q = Relative<S>(q_in, true, &d->qr);
  const VecX<S>& v = Relative<S>(v_in, false, &d->vr);
  const VecX<S>& vdot = Relative<S>(vdot_in, false, &d->ar);
  Transforms<S>(q, d);
  // Outward pass (Table 5.1): v_i = X_i v_p + S_i qd_i,
  // a_i = X_i a_p + S_i qdd_i + v_i x S_i qd_i,
  // f_i = I_i a_i + v_i x* I_i v_i.
  for (int i = 0; i < n; ++i) {
    const internal::RbLink& l = links[i];
    const int par = l.parent;
    const Vec6<S> vj = internal::SubspaceTimes<S>(l, d->Sj[i], v);
    const Vec6<S> aj = internal::SubspaceTimes<S>(l, d->Sj[i], vdot);
    if (par < 0) {
      d->v[i] = vj;
      d->a[i] = d->X[i].Motion(d->a0) + aj;
    } else {
      d->v[i] = d->X[i].Motion(d->v[par]) + vj;
      d->a[i] = d->X[i].Motion(d->a[par]) + aj +
                internal::CrossMotion<S>(d->v[i], vj);
    }
    d->f[i] = d->I[i].Apply(d->a[i]) +
              internal::CrossForce<S>(d->v[i], d->I[i].Apply(d->v[i]));
  }
  // Inward pass: tau_i = S_i' f_i, f_p += X_i' f_i.
  VecX<S> tau(nv_);
  for (int i = n - 1; i >= 0; --i) {
    const internal::RbLink& l = links[i];
    if (l.kind == internal::LinkKind::kBall)
      tau.template segment<3>(l.vi) = d->f[i].template head<3>();
    else
      tau[l.vi] = d->Sj[i].dot(d->f[i]);
    if (l.parent >= 0) d->f[l.parent] += d->X[i].ForceToParent(d->f[i]);
  }
  TransposeApply<S>(&tau);
  return tau;
}

template <class S>
MatX<S> TreeDynamics::MassMatrix(const VecX<S>& q_in, TreeData<S>* d) const {
  const int n = static_cast<int>(links_->size());
  Check(nq_, static_cast<int>(q_in.size()), "q", d->ready);
  const auto& links = *links_;
  Transforms<S>(Relative<S>(q_in, true, &d->qr), d);
  // Composite inertias (Table 6.2): Ic_p += X_i' Ic_i X_i, inward.
  for (int i = 0; i < n; ++i) d->Ic[i] = d->I[i];
  for (int i = n - 1; i >= 0; --i) {
    const int par = links[i].parent;
    if (par < 0) continue;
    const internal::RbInertia<S> up = d->X[i].InertiaToParent(d->Ic[i]);
    d->Ic[par].m += up.m;
    d->Ic[par].h += up.h;
    d->Ic[par].I += up.I;
  }
  // Column k of S_i: S_i of a one-dof link, the unit angular e_k of a
  // ball; S_j' F row by row alike.
  auto column = [&](int i, int k) {
    if (links[i].kind != internal::LinkKind::kBall) return d->Sj[i];
    Vec6<S> e = Vec6<S>::Zero();
    e[k] = S(1.0);
    return e;
  };
  auto project = [&](int j, int k, const Vec6<S>& f) {
    return links[j].kind == internal::LinkKind::kBall ? f[k]
                                                      : S(d->Sj[j].dot(f));
  };
  // M_ii = S_i' Ic_i S_i; walking up, F = X_j' F and M_ij = S_j' F.
  MatX<S> m(nv_, nv_);
  m.setZero();
  for (int i = 0; i < n; ++i) {
    const internal::RbLink& li = links[i];
    for (int k = 0; k < li.dof(); ++k) {
      const int r = li.vi + k;
      Vec6<S> f = d->Ic[i].Apply(column(i, k));
      for (int k2 = 0; k2 < li.dof(); ++k2)
        m(r, li.vi + k2) = project(i, k2, f);
      int j = i;
      while (links[j].parent >= 0) {
        f = d->X[j].ForceToParent(f);
        j = links[j].parent;
        for (int k2 = 0; k2 < links[j].dof(); ++k2) {
          const int c = links[j].vi + k2;
          m(r, c) = project(j, k2, f);
          m(c, r) = m(r, c);
        }
      }
    }
  }
  if (absolute_) {
    // M = T' M_rel T, T = I - C (rows of the absolute-angle joints).
    MatX<S> t = MatX<S>::Identity(n, n);
    for (int i = 0; i < n; ++i)
      for (const auto& [k, c] : links[i].minus) t(i, k) -= c;
    return t.transpose() * m * t;
  }
  return m;
}

template <class S>
VecX<S> TreeDynamics::ForwardDynamics(const VecX<S>& q_in,
                                      const VecX<S>& v_in,
                                      const VecX<S>& tau_in,
                                      TreeData<S>* d) const {
  const int n = static_cast<int>(links_->size());
  Check(nq_, static_cast<int>(q_in.size()), "q", d->ready);
  Check(nv_, static_cast<int>(v_in.size()), "v", d->ready);
  Check(nv_, static_cast<int>(tau_in.size()), "tau", d->ready);
  using internal::LinkKind;
  const auto& links = *links_;
  const VecX<S>& q = Relative<S>(q_in, true, &d->qr);
  const VecX<S>& v = Relative<S>(v_in, false, &d->vr);
  // The relative joints' forces: tau = T' tau_rel.
  const VecX<S>* tau_p = &tau_in;
  if (absolute_) {
    d->ar = tau_in;
    TransposeSolve<S>(&d->ar);
    tau_p = &d->ar;
  }
  const VecX<S>& tau = *tau_p;
  if constexpr (std::is_same_v<S, double> || std::is_same_v<S, D1>) {
    if (planar_) {
      VecX<S> qdd(nv_);
      ForwardPlanar<S>(q, v, tau, d, &qdd);
      Solve<S>(&qdd);  // vdot = T^-1 vdot_rel
      return qdd;
    }
  }
  Transforms<S>(q, d);
  d->kinetic = S(0.0);
  // Pass 1 (Table 7.1): velocities, bias accelerations c_i = v_i x S_i qd_i
  // (every S_i is constant in L: c_J = 0), IA_i = I_i,
  // pA_i = v_i x* I_i v_i.
  for (int i = 0; i < n; ++i) {
    const int par = links[i].parent;
    const Vec6<S> vj = internal::SubspaceTimes<S>(links[i], d->Sj[i], v);
    d->v[i] = par < 0 ? vj : Vec6<S>(d->X[i].Motion(d->v[par]) + vj);
    d->c[i] = internal::CrossMotion<S>(d->v[i], vj);
    d->IA[i] = d->I[i].Matrix();
    const Vec6<S> iv = d->I[i].Apply(d->v[i]);
    d->kinetic += 0.5 * d->v[i].dot(iv);
    d->pA[i] = internal::CrossForce<S>(d->v[i], iv);
  }
  // Pass 2, inward: U_i = IA_i S_i, D_i = S_i' U_i, u_i = tau_i - S_i' pA_i;
  // the parent gets X' (IA_i - U_i D_i^-1 U_i') X and
  // X' (pA_i + Ia c_i + U_i D_i^-1 u_i). A ball's S_i = [1; 0] makes U_i
  // the first three columns of IA_i and D_i its top-left 3 x 3 block,
  // factored by Cholesky (positive definite for a body with inertia).
  for (int i = n - 1; i >= 0; --i) {
    const internal::RbLink& l = links[i];
    const int par = l.parent;
    Mat6<S> ia;
    Vec6<S> pa;
    if (l.kind == LinkKind::kBall) {
      auto& u3 = d->U3[i];
      u3 = d->IA[i].template leftCols<3>();
      const Mat3<S> dd = u3.template topRows<3>();
      if (!internal::Cholesky3<S>(dd, &d->L3[i]))
        NotPositive(
            l, Value(dd(0, 0) * (dd(1, 1) * dd(2, 2) - dd(1, 2) * dd(2, 1)) -
                     dd(0, 1) * (dd(1, 0) * dd(2, 2) - dd(1, 2) * dd(2, 0)) +
                     dd(0, 2) * (dd(1, 0) * dd(2, 1) - dd(1, 1) * dd(2, 0))));
      d->u3[i] = tau.template segment<3>(l.vi) - d->pA[i].template head<3>();
      if (par < 0) continue;
      // W = D^-1 U' (3 x 6), column by column.
      Eigen::Matrix<S, 3, 6> w;
      for (int r = 0; r < 6; ++r)
        w.col(r) = internal::CholeskySolve3<S>(d->L3[i],
                                               Vec3<S>(u3.row(r).transpose()));
      ia = d->IA[i] - u3 * w;
      pa = d->pA[i] + ia * d->c[i] +
           u3 * internal::CholeskySolve3<S>(d->L3[i], d->u3[i]);
    } else {
      d->U[i] = d->IA[i] * d->Sj[i];
      d->D[i] = d->Sj[i].dot(d->U[i]);
      d->u[i] = tau[l.vi] - d->Sj[i].dot(d->pA[i]);
      if (!(Value(d->D[i]) > 0.0)) NotPositive(l, Value(d->D[i]));
      if (par < 0) continue;
      ia = d->IA[i] - d->U[i] * d->U[i].transpose() / d->D[i];
      pa = d->pA[i] + ia * d->c[i] + d->U[i] * (d->u[i] / d->D[i]);
    }
    const Mat6<S> x = d->X[i].Matrix();
    d->IA[par] += x.transpose() * ia * x;
    d->pA[par] += d->X[i].ForceToParent(pa);
  }
  // Pass 3, outward: a'_i = X_i a_p + c_i, qdd_i = D_i^-1 (u_i - U_i' a'_i),
  // a_i = a'_i + S_i qdd_i.
  VecX<S> qdd(nv_);
  for (int i = 0; i < n; ++i) {
    const internal::RbLink& l = links[i];
    const int par = l.parent;
    const Vec6<S> ap = d->X[i].Motion(par < 0 ? d->a0 : d->a[par]) + d->c[i];
    if (l.kind == LinkKind::kBall) {
      const Vec3<S> b = d->u3[i] - Vec3<S>(d->U3[i].transpose() * ap);
      const Vec3<S> wd = internal::CholeskySolve3<S>(d->L3[i], b);
      qdd.template segment<3>(l.vi) = wd;
      d->a[i] = ap;
      d->a[i].template head<3>() += wd;
    } else {
      qdd[l.vi] = (d->u[i] - d->U[i].dot(ap)) / d->D[i];
      d->a[i] = ap + d->Sj[i] * qdd[l.vi];
    }
  }
  Solve<S>(&qdd);  // vdot = T^-1 vdot_rel
  return qdd;
}

// The algorithms on the two scalars the library evaluates with are
// compiled once, in src/multibody/tree_dynamics.cpp; a file that calls them
// on double or D1 links those instead of instantiating them again (each
// took seconds per file, most at -O0 under the sanitizers). Other scalars
// instantiate from the definitions above as usual.
#define DAEDALUS_TREE_DYNAMICS_INSTANCES(EXTERN, S)                        \
  EXTERN template void TreeDynamics::SetParameters<S>(const VecX<S>&,      \
                                                      TreeData<S>*) const; \
  EXTERN template VecX<S> TreeDynamics::InverseDynamics<S>(                \
      const VecX<S>&, const VecX<S>&, const VecX<S>&, TreeData<S>*) const; \
  EXTERN template MatX<S> TreeDynamics::MassMatrix<S>(const VecX<S>&,      \
                                                      TreeData<S>*) const; \
  EXTERN template VecX<S> TreeDynamics::ForwardDynamics<S>(                \
      const VecX<S>&, const VecX<S>&, const VecX<S>&, TreeData<S>*) const;
DAEDALUS_TREE_DYNAMICS_INSTANCES(extern, double)
DAEDALUS_TREE_DYNAMICS_INSTANCES(extern, D1)

}  // namespace daedalus::mb
