// Kinematics of a multibody system (multibody.hpp): poses, velocities and
// Jacobians of frames, centre of mass, momenta and energies, at any scalar
// type the library evaluates with, so the same code serves the generated
// model functions and the author's own lambdas (quadratures, events,
// outputs). Notation as in multibody.hpp; docs/multibody.md.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "daedalus/multibody.hpp"

namespace daedalus::mb {

template <class S>
using Vec3 = Eigen::Matrix<S, 3, 1>;
template <class S>
using Mat3 = Eigen::Matrix<S, 3, 3>;

/// Pose of a frame F: R_WF (3 x 3) and p_WF (3); planar systems give a
/// rotation about z and z = 0.
template <class S>
struct FramePose {
  Mat3<S> R;
  Vec3<S> p;
};
/// Spatial velocity of a frame F: w_WF and v_WF (of F's origin), in W.
template <class S>
struct FrameVelocity {
  Vec3<S> w;
  Vec3<S> v;
};

namespace internal {

// Velocity accessors for the walks below: the model's v, a unit vector
// (a Jacobian column), or none (positions only).
template <class S>
struct VelOf {
  const VecX<S>* v;
  S operator()(int i) const { return (*v)[i]; }
};
template <class S>
struct UnitVel {
  int k;
  S operator()(int i) const { return S(i == k ? 1.0 : 0.0); }
};
template <class S>
struct NoVel {
  S operator()(int /*i*/) const { return S(0.0); }
};

/// Running state of a planar walk: angle th (and its cosine, sine),
/// position (px, py), angular velocity w, velocity (vx, vy).
template <class S>
struct PlanarState {
  S th = S(0.0), c = S(1.0), s = S(0.0);
  S px = S(0.0), py = S(0.0);
  S w = S(0.0), vx = S(0.0), vy = S(0.0);
  void Trig() {
    using std::cos;
    using std::sin;
    c = cos(th);
    s = sin(th);
  }
  // (dx, dy) = R (x, y) for parameter expressions, zeros left out.
  void Rotate(const S& x, bool x0, const S& y, bool y0, S* dx, S* dy) const {
    if (x0) {
      *dx = -(s * y);
      *dy = c * y;
    } else if (y0) {
      *dx = c * x;
      *dy = s * x;
    } else {
      *dx = c * x - s * y;
      *dy = s * x + c * y;
    }
  }
  // Moves the origin by (dx, dy) (world) fixed on the current frame.
  void Shift(const S& dx, const S& dy, bool with_v, double sign) {
    if (sign > 0) {
      px += dx;
      py += dy;
      if (with_v) {
        vx -= w * dy;
        vy += w * dx;
      }
    } else {
      px -= dx;
      py -= dy;
      if (with_v) {
        vx += w * dy;
        vy -= w * dx;
      }
    }
  }
};

template <class S>
struct SpatialState {
  Mat3<S> R = Mat3<S>::Identity();
  Vec3<S> p = Vec3<S>::Zero();
  Vec3<S> w = Vec3<S>::Zero();
  Vec3<S> v = Vec3<S>::Zero();
};

template <class S>
Vec3<S> Cross(const Vec3<S>& a, const Vec3<S>& b) {
  return Vec3<S>(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                 a[0] * b[1] - a[1] * b[0]);
}

template <class S>
Vec3<S> EvalVec(const PVec& r, const VecX<S>& p) {
  return Vec3<S>(r.x.Eval<S>(p), r.y.Eval<S>(p), r.z.Eval<S>(p));
}

// R_const * x for a constant matrix, skipping exact zeros.
template <class S>
Vec3<S> TimesConst(const Mat3<S>& r, const Eigen::Vector3d& a) {
  Vec3<S> out = Vec3<S>::Zero();
  for (int k = 0; k < 3; ++k) {
    if (a[k] == 0.0) continue;
    for (int i = 0; i < 3; ++i) out[i] += r(i, k) * a[k];
  }
  return out;
}
template <class S>
Mat3<S> TimesConst(const Mat3<S>& r, const Eigen::Matrix3d& c) {
  Mat3<S> out;
  for (int j = 0; j < 3; ++j) {
    const Eigen::Vector3d col = c.col(j);
    out.col(j) = TimesConst<S>(r, col);
  }
  return out;
}

/// Rotation by angle q about the unit axis a; exact elementary rotations
/// for coordinate axes.
template <class S>
Mat3<S> AxisRotation(const Eigen::Vector3d& a, const S& q) {
  using std::cos;
  using std::sin;
  const S c = cos(q), s = sin(q);
  Mat3<S> r;
  for (int k = 0; k < 3; ++k) {
    if (std::abs(a[k]) == 1.0 && a.squaredNorm() == 1.0) {
      const int i = (k + 1) % 3, j = (k + 2) % 3;
      const S sa = a[k] > 0 ? s : S(-s);
      r.setZero();
      r(k, k) = S(1.0);
      r(i, i) = c;
      r(j, j) = c;
      r(i, j) = -sa;
      r(j, i) = sa;
      return r;
    }
  }
  const S one_c = 1.0 - c;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r(i, j) = one_c * (a[i] * a[j]) + (i == j ? c : S(0.0));
  r(0, 1) -= s * a[2];
  r(1, 0) += s * a[2];
  r(0, 2) += s * a[1];
  r(2, 0) -= s * a[1];
  r(1, 2) -= s * a[0];
  r(2, 1) += s * a[0];
  return r;
}

/// Walks from the ground to frame `frame` in a planar system.
template <class S, class Vel>
PlanarState<S> WalkPlanar(const MbTree& t,
                          int frame,
                          const VecX<S>& q,
                          const Vel& vel,
                          bool with_v,
                          const VecX<S>& p) {
  PlanarState<S> st;
  auto offset = [&](const MbFrame& f, double sign) {
    if (sign < 0 && f.rotated) {
      st.th -= f.angle;
      st.Trig();
    }
    if (!f.position.IsZero()) {
      const bool x0 = f.position.x.IsZero(), y0 = f.position.y.IsZero();
      const S x = x0 ? S(0.0) : f.position.x.Eval<S>(p);
      const S y = y0 ? S(0.0) : f.position.y.Eval<S>(p);
      S dx, dy;
      st.Rotate(x, x0, y, y0, &dx, &dy);
      st.Shift(dx, dy, with_v, sign);
    }
    if (sign > 0 && f.rotated) {
      st.th += f.angle;
      st.Trig();
    }
  };
  for (int j : t.bodies[t.frames[frame].body].path) {
    const MbJoint& jt = t.joints[j];
    offset(t.frames[jt.parent_frame], 1.0);
    const int i = jt.first, iv = jt.vfirst;
    switch (jt.spec.type) {
      case JointType::kRevolute:
        if (jt.spec.absolute) {
          st.th = q[i];
          if (with_v) st.w = vel(iv);
        } else {
          st.th += q[i];
          if (with_v) st.w += vel(iv);
        }
        st.Trig();
        break;
      case JointType::kPrismatic: {
        const double ax = jt.spec.axis[0], ay = jt.spec.axis[1];
        S dx, dy;
        st.Rotate(S(ax), ax == 0.0, S(ay), ay == 0.0, &dx, &dy);
        st.Shift(dx * q[i], dy * q[i], with_v, 1.0);
        if (with_v) {
          st.vx += dx * vel(iv);
          st.vy += dy * vel(iv);
        }
        break;
      }
      case JointType::kPlanar: {
        S dx, dy;
        st.Rotate(q[i], false, q[i + 1], false, &dx, &dy);
        st.Shift(dx, dy, with_v, 1.0);
        if (with_v) {
          S ux, uy;
          st.Rotate(vel(iv), false, vel(iv + 1), false, &ux, &uy);
          st.vx += ux;
          st.vy += uy;
          st.w += vel(iv + 2);
        }
        st.th += q[i + 2];
        st.Trig();
        break;
      }
      case JointType::kUniversal:  // rejected for planar systems
      case JointType::kBall:
      case JointType::kFree:
      case JointType::kWeld:
        break;
    }
    offset(t.frames[jt.child_frame], -1.0);
  }
  offset(t.frames[frame], 1.0);
  return st;
}

/// The rotation of the quaternion q[i..i+3] divided by its norm: R(q /
/// |q|), written with 2 / |q|^2 so that it is a rotation also for the
/// integrator's slightly unnormalized copy (model functions receive unit
/// quaternions, where it equals RotationFromQuaternion; at unit norm the
/// chart's second-order paths change |q| only at fourth order, so M, h and
/// J are those of RotationFromQuaternion).
template <class S>
Mat3<S> QuaternionRotation(const VecX<S>& q, int i) {
  const S w = q[i], x = q[i + 1], y = q[i + 2], z = q[i + 3];
  const S s = 2.0 / (w * w + x * x + y * y + z * z);
  Mat3<S> r;
  r(0, 0) = 1.0 - s * (y * y + z * z);
  r(0, 1) = s * (x * y - w * z);
  r(0, 2) = s * (x * z + w * y);
  r(1, 0) = s * (x * y + w * z);
  r(1, 1) = 1.0 - s * (x * x + z * z);
  r(1, 2) = s * (y * z - w * x);
  r(2, 0) = s * (x * z - w * y);
  r(2, 1) = s * (y * z + w * x);
  r(2, 2) = 1.0 - s * (x * x + y * y);
  return r;
}

/// Walks from the ground to frame `frame` in a spatial system.
template <class S, class Vel>
SpatialState<S> WalkSpatial(const MbTree& t,
                            int frame,
                            const VecX<S>& q,
                            const Vel& vel,
                            bool with_v,
                            const VecX<S>& p) {
  SpatialState<S> st;
  auto shift = [&](const Vec3<S>& r, double sign) {
    if (sign > 0) {
      st.p += r;
      if (with_v) st.v += Cross<S>(st.w, r);
    } else {
      st.p -= r;
      if (with_v) st.v -= Cross<S>(st.w, r);
    }
  };
  auto offset = [&](const MbFrame& f, double sign) {
    if (sign < 0 && f.rotated)
      st.R = TimesConst<S>(st.R, Eigen::Matrix3d(f.rotation.transpose()));
    if (!f.position.IsZero()) {
      shift(Vec3<S>(st.R * EvalVec<S>(f.position, p)), sign);
    }
    if (sign > 0 && f.rotated) st.R = TimesConst<S>(st.R, f.rotation);
  };
  // R_FM of the quaternion q[i..i+3], the angular velocity v[iv..iv+2] of
  // M relative to F in M.
  auto Ball = [&](int i, int iv) {
    st.R = Mat3<S>(st.R * QuaternionRotation<S>(q, i));
    if (with_v) st.w += st.R * Vec3<S>(vel(iv), vel(iv + 1), vel(iv + 2));
  };
  for (int j : t.bodies[t.frames[frame].body].path) {
    const MbJoint& jt = t.joints[j];
    offset(t.frames[jt.parent_frame], 1.0);
    const int i = jt.first, iv = jt.vfirst;
    switch (jt.spec.type) {
      case JointType::kRevolute: {
        const Vec3<S> a = TimesConst<S>(st.R, jt.spec.axis);
        st.R = Mat3<S>(st.R * AxisRotation<S>(jt.spec.axis, q[i]));
        if (with_v) st.w += a * vel(iv);
        break;
      }
      case JointType::kPrismatic: {
        const Vec3<S> d = TimesConst<S>(st.R, jt.spec.axis);
        shift(Vec3<S>(d * q[i]), 1.0);
        if (with_v) st.v += d * vel(iv);
        break;
      }
      case JointType::kPlanar: {
        const Vec3<S> r = st.R.col(0) * q[i] + st.R.col(1) * q[i + 1];
        shift(r, 1.0);
        if (with_v) {
          st.v += st.R.col(0) * vel(iv) + st.R.col(1) * vel(iv + 1);
          st.w += st.R.col(2) * vel(iv + 2);
        }
        st.R =
            Mat3<S>(st.R * AxisRotation<S>(Eigen::Vector3d::UnitZ(), q[i + 2]));
        break;
      }
      case JointType::kUniversal: {
        const Vec3<S> a1 = TimesConst<S>(st.R, jt.spec.axis);
        st.R = Mat3<S>(st.R * AxisRotation<S>(jt.spec.axis, q[i]));
        const Vec3<S> a2 = TimesConst<S>(st.R, jt.spec.axis2);
        st.R = Mat3<S>(st.R * AxisRotation<S>(jt.spec.axis2, q[i + 1]));
        if (with_v) st.w += a1 * vel(iv) + a2 * vel(iv + 1);
        break;
      }
      case JointType::kFree: {
        // p_FM = (x, y, z) in F, its velocity the coordinates' derivatives.
        shift(Vec3<S>(st.R * Vec3<S>(q[i], q[i + 1], q[i + 2])), 1.0);
        if (with_v) st.v += st.R * Vec3<S>(vel(iv), vel(iv + 1), vel(iv + 2));
        Ball(i + 3, iv + 3);
        break;
      }
      case JointType::kBall:
        Ball(i, iv);
        break;
      case JointType::kWeld:
        break;
    }
    offset(t.frames[jt.child_frame], -1.0);
  }
  offset(t.frames[frame], 1.0);
  return st;
}

/// Pose and velocity of a frame in the uniform 3-D form.
template <class S, class Vel>
void Walk(const MbTree& t,
          int frame,
          const VecX<S>& q,
          const Vel& vel,
          bool with_v,
          const VecX<S>& p,
          FramePose<S>* pose,
          FrameVelocity<S>* fv) {
  if (t.dim == Dimension::kPlanar) {
    const PlanarState<S> st = WalkPlanar<S>(t, frame, q, vel, with_v, p);
    if (pose) {
      pose->R << st.c, -st.s, S(0.0), st.s, st.c, S(0.0), S(0.0), S(0.0),
          S(1.0);
      pose->p = Vec3<S>(st.px, st.py, S(0.0));
    }
    if (fv) {
      fv->w = Vec3<S>(S(0.0), S(0.0), st.w);
      fv->v = Vec3<S>(st.vx, st.vy, S(0.0));
    }
    return;
  }
  const SpatialState<S> st = WalkSpatial<S>(t, frame, q, vel, with_v, p);
  if (pose) {
    pose->R = st.R;
    pose->p = st.p;
  }
  if (fv) {
    fv->w = st.w;
    fv->v = st.v;
  }
}

/// Kinetic energy of body b: m |v_C|^2 / 2 + w_B' I_C w_B / 2.
template <class S>
S BodyKinetic(const MbTree& t,
              int b,
              const VecX<S>& q,
              const VecX<S>& v,
              const VecX<S>& p) {
  const BodySpec& sp = t.bodies[b].spec;
  const int frame = t.bodies[b].frame;
  const VelOf<S> vel{&v};
  S kin = S(0.0);
  if (t.dim == Dimension::kPlanar) {
    PlanarState<S> st = WalkPlanar<S>(t, frame, q, vel, true, p);
    if (!sp.mass.IsZero()) {
      if (!sp.com.IsZero()) {
        const bool x0 = sp.com.x.IsZero(), y0 = sp.com.y.IsZero();
        S dx, dy;
        st.Rotate(x0 ? S(0.0) : sp.com.x.Eval<S>(p), x0,
                  y0 ? S(0.0) : sp.com.y.Eval<S>(p), y0, &dx, &dy);
        st.Shift(dx, dy, true, 1.0);
      }
      kin = 0.5 * sp.mass.Eval<S>(p) * (st.vx * st.vx + st.vy * st.vy);
    }
    if (!sp.izz.IsZero()) kin += 0.5 * sp.izz.Eval<S>(p) * (st.w * st.w);
    return kin;
  }
  const SpatialState<S> st = WalkSpatial<S>(t, frame, q, vel, true, p);
  if (!sp.mass.IsZero()) {
    Vec3<S> vc = st.v;
    if (!sp.com.IsZero())
      vc += Cross<S>(st.w, Vec3<S>(st.R * EvalVec<S>(sp.com, p)));
    kin = 0.5 * sp.mass.Eval<S>(p) * vc.squaredNorm();
  }
  const Vec3<S> wb = st.R.transpose() * st.w;
  const PExpr* in[3][3] = {{&sp.ixx, &sp.ixy, &sp.ixz},
                           {&sp.ixy, &sp.iyy, &sp.iyz},
                           {&sp.ixz, &sp.iyz, &sp.izz}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (!in[i][j]->IsZero())
        kin += 0.5 * in[i][j]->Eval<S>(p) * wb[i] * wb[j];
  return kin;
}

/// Position p_WC of body b's centre of mass.
template <class S>
Vec3<S> BodyCom(const MbTree& t, int b, const VecX<S>& q, const VecX<S>& p) {
  const BodySpec& sp = t.bodies[b].spec;
  FramePose<S> pose;
  Walk<S>(t, t.bodies[b].frame, q, NoVel<S>{}, false, p, &pose, nullptr);
  if (sp.com.IsZero()) return pose.p;
  return pose.p + pose.R * EvalVec<S>(sp.com, p);
}

/// Gravity potential of body b: -m g_W . p_WC.
template <class S>
S BodyGravity(const MbTree& t, int b, const VecX<S>& q, const VecX<S>& p) {
  const BodySpec& sp = t.bodies[b].spec;
  if (t.dim == Dimension::kPlanar) {
    PlanarState<S> st =
        WalkPlanar<S>(t, t.bodies[b].frame, q, NoVel<S>{}, false, p);
    if (!sp.com.IsZero()) {
      const bool x0 = sp.com.x.IsZero(), y0 = sp.com.y.IsZero();
      S dx, dy;
      st.Rotate(x0 ? S(0.0) : sp.com.x.Eval<S>(p), x0,
                y0 ? S(0.0) : sp.com.y.Eval<S>(p), y0, &dx, &dy);
      st.Shift(dx, dy, false, 1.0);
    }
    S gp = S(0.0);
    if (!t.gravity.x.IsZero()) gp += t.gravity.x.Eval<S>(p) * st.px;
    if (!t.gravity.y.IsZero()) gp += t.gravity.y.Eval<S>(p) * st.py;
    return -(sp.mass.Eval<S>(p) * gp);
  }
  const Vec3<S> c = BodyCom<S>(t, b, q, p);
  const PExpr* g[3] = {&t.gravity.x, &t.gravity.y, &t.gravity.z};
  S gp = S(0.0);
  for (int k = 0; k < 3; ++k)
    if (!g[k]->IsZero()) gp += g[k]->Eval<S>(p) * c[k];
  return -(sp.mass.Eval<S>(p) * gp);
}

/// Position of a frame's origin (the walk without velocities).
template <class S>
Vec3<S> FramePosition(const MbTree& t,
                      int frame,
                      const VecX<S>& q,
                      const VecX<S>& p) {
  if (t.dim == Dimension::kPlanar) {
    const PlanarState<S> st = WalkPlanar<S>(t, frame, q, NoVel<S>{}, false, p);
    return Vec3<S>(st.px, st.py, S(0.0));
  }
  return WalkSpatial<S>(t, frame, q, NoVel<S>{}, false, p).p;
}

}  // namespace internal

/// The kinematics of a frozen multibody system (Multibody::AddTo). Cheap
/// to copy. All functions take the model's q (nq), v (nv) and parameters p
/// (np) at one scalar type S; overloads take a model function's Point.
/// Planar systems give 3-D results with zero out-of-plane components.
class Kinematics {
 public:
  Kinematics() = default;
  explicit Kinematics(std::shared_ptr<const internal::MbTree> tree)
      : tree_(std::move(tree)) {}

  Dimension dimension() const { return tree_->dim; }
  int nq() const { return tree_->nq; }
  int nv() const { return tree_->nv; }
  const std::vector<std::string>& coordinate_names() const {
    return tree_->coordinate_names;
  }
  const std::vector<std::string>& velocity_names() const {
    return tree_->velocity_names;
  }
  /// The neutral configuration (nq): every scalar coordinate 0, every
  /// quaternion the identity (w = 1), so that each joint's M coincides
  /// with its F (a start state for q).
  Eigen::VectorXd Neutral() const {
    Eigen::VectorXd q = Eigen::VectorXd::Zero(tree_->nq);
    for (const auto& quaternion : tree_->quaternions) q[quaternion.first] = 1.0;
    return q;
  }
  /// A frame or body by name. @throws std::invalid_argument listing the
  /// names when there is none.
  FrameIndex Frame(const std::string& name) const;
  BodyIndex Body(const std::string& name) const;
  int num_bodies() const { return static_cast<int>(tree_->bodies.size()); }
  const internal::MbTree& tree() const { return *tree_; }

  /// Forward kinematics of frame f: R_WF and p_WF.
  template <class S>
  FramePose<S> Pose(FrameIndex f, const VecX<S>& q, const VecX<S>& p) const;
  /// w_WF and v_WF of frame f at velocities v.
  template <class S>
  FrameVelocity<S> Velocity(FrameIndex f,
                            const VecX<S>& q,
                            const VecX<S>& v,
                            const VecX<S>& p) const;
  /// Frame Jacobian (6 x nv): rows 0-2 map v to w_WF, rows 3-5 to v_WF
  /// (columns of a quaternion's velocities: the body-frame angular
  /// velocities, so w_WF = J_w v also there).
  template <class S>
  MatX<S> Jacobian(FrameIndex f, const VecX<S>& q, const VecX<S>& p) const;
  /// Total mass of the moving bodies.
  template <class S>
  S TotalMass(const VecX<S>& p) const;
  /// Centre of mass of the moving bodies, p_WC. @pre total mass > 0.
  template <class S>
  Vec3<S> CenterOfMass(const VecX<S>& q, const VecX<S>& p) const;
  /// Total linear momentum sum_b m_b v_WCb [kg m/s].
  template <class S>
  Vec3<S> LinearMomentum(const VecX<S>& q,
                         const VecX<S>& v,
                         const VecX<S>& p) const;
  /// Total angular momentum about W's origin, sum_b (p_WCb x m_b v_WCb +
  /// R I_Cb R' w_b) [kg m^2/s]; planar systems: only z is nonzero.
  template <class S>
  Vec3<S> AngularMomentum(const VecX<S>& q,
                          const VecX<S>& v,
                          const VecX<S>& p) const;
  /// Kinetic energy T (the sum of the model's per-body terms).
  template <class S>
  S KineticEnergy(const VecX<S>& q, const VecX<S>& v, const VecX<S>& p) const;

  // Overloads taking a model function's Point x.
  template <class X>
  auto Pose(FrameIndex f, const X& x) const {
    return Pose<Scalar<X>>(f, x.q, x.p);
  }
  template <class X>
  auto CenterOfMass(const X& x) const {
    return CenterOfMass<Scalar<X>>(x.q, x.p);
  }
  template <class X>
  auto LinearMomentum(const X& x) const {
    return LinearMomentum<Scalar<X>>(x.q, x.v, x.p);
  }
  template <class X>
  auto AngularMomentum(const X& x) const {
    return AngularMomentum<Scalar<X>>(x.q, x.v, x.p);
  }
  template <class X>
  auto KineticEnergy(const X& x) const {
    return KineticEnergy<Scalar<X>>(x.q, x.v, x.p);
  }

 private:
  // Centre-of-mass position and velocity of body b, and (optionally) its
  // spin angular momentum R I_C R' w about C.
  template <class S>
  void ComMotion(int b,
                 const VecX<S>& q,
                 const VecX<S>& v,
                 const VecX<S>& p,
                 Vec3<S>* pc,
                 Vec3<S>* vc,
                 Vec3<S>* spin) const;
  std::shared_ptr<const internal::MbTree> tree_;
};

// The member templates, defined out of the class so that they are not
// inline: a file that calls them on a scalar the library instantiates
// (below) links the library's copy instead of compiling the walks again.
template <class S>
FramePose<S> Kinematics::Pose(FrameIndex f,
                              const VecX<S>& q,
                              const VecX<S>& p) const {
  FramePose<S> pose;
  internal::Walk<S>(*tree_, f.value, q, internal::NoVel<S>{}, false, p, &pose,
                    nullptr);
  return pose;
}

template <class S>
FrameVelocity<S> Kinematics::Velocity(FrameIndex f,
                                      const VecX<S>& q,
                                      const VecX<S>& v,
                                      const VecX<S>& p) const {
  FrameVelocity<S> fv;
  internal::Walk<S>(*tree_, f.value, q, internal::VelOf<S>{&v}, true, p,
                    nullptr, &fv);
  return fv;
}

template <class S>
MatX<S> Kinematics::Jacobian(FrameIndex f,
                             const VecX<S>& q,
                             const VecX<S>& p) const {
  MatX<S> jac = MatX<S>::Zero(6, tree_->nv);
  for (int k : tree_->bodies[tree_->frames[f.value].body].vels) {
    FrameVelocity<S> fv;
    internal::Walk<S>(*tree_, f.value, q, internal::UnitVel<S>{k}, true, p,
                      nullptr, &fv);
    jac.col(k) << fv.w, fv.v;
  }
  return jac;
}

template <class S>
S Kinematics::TotalMass(const VecX<S>& p) const {
  S m = S(0.0);
  for (size_t b = 1; b < tree_->bodies.size(); ++b)
    m += tree_->bodies[b].spec.mass.template Eval<S>(p);
  return m;
}

template <class S>
Vec3<S> Kinematics::CenterOfMass(const VecX<S>& q, const VecX<S>& p) const {
  Vec3<S> sum = Vec3<S>::Zero();
  for (size_t b = 1; b < tree_->bodies.size(); ++b) {
    const int bi = static_cast<int>(b);
    sum += tree_->bodies[b].spec.mass.template Eval<S>(p) *
           internal::BodyCom<S>(*tree_, bi, q, p);
  }
  return sum / TotalMass<S>(p);
}

template <class S>
Vec3<S> Kinematics::LinearMomentum(const VecX<S>& q,
                                   const VecX<S>& v,
                                   const VecX<S>& p) const {
  Vec3<S> sum = Vec3<S>::Zero();
  for (size_t b = 1; b < tree_->bodies.size(); ++b) {
    Vec3<S> pc, vc;
    ComMotion<S>(static_cast<int>(b), q, v, p, &pc, &vc, nullptr);
    sum += tree_->bodies[b].spec.mass.template Eval<S>(p) * vc;
  }
  return sum;
}

template <class S>
Vec3<S> Kinematics::AngularMomentum(const VecX<S>& q,
                                    const VecX<S>& v,
                                    const VecX<S>& p) const {
  Vec3<S> sum = Vec3<S>::Zero();
  for (size_t b = 1; b < tree_->bodies.size(); ++b) {
    const BodySpec& sp = tree_->bodies[b].spec;
    Vec3<S> pc, vc, spin;
    ComMotion<S>(static_cast<int>(b), q, v, p, &pc, &vc, &spin);
    sum += sp.mass.template Eval<S>(p) * internal::Cross<S>(pc, vc) + spin;
  }
  return sum;
}

template <class S>
S Kinematics::KineticEnergy(const VecX<S>& q,
                            const VecX<S>& v,
                            const VecX<S>& p) const {
  S sum = S(0.0);
  for (size_t b = 1; b < tree_->bodies.size(); ++b)
    sum += internal::BodyKinetic<S>(*tree_, static_cast<int>(b), q, v, p);
  return sum;
}

// Centre-of-mass position and velocity of body b, and (optionally) its
// spin angular momentum R I_C R' w about C.
template <class S>
void Kinematics::ComMotion(int b,
                           const VecX<S>& q,
                           const VecX<S>& v,
                           const VecX<S>& p,
                           Vec3<S>* pc,
                           Vec3<S>* vc,
                           Vec3<S>* spin) const {
  const BodySpec& sp = tree_->bodies[b].spec;
  FramePose<S> pose;
  FrameVelocity<S> fv;
  internal::Walk<S>(*tree_, tree_->bodies[b].frame, q, internal::VelOf<S>{&v},
                    true, p, &pose, &fv);
  const Vec3<S> r = pose.R * internal::EvalVec<S>(sp.com, p);
  *pc = pose.p + r;
  *vc = fv.v + internal::Cross<S>(fv.w, r);
  if (spin) {
    Mat3<S> inertia;
    inertia << sp.ixx.Eval<S>(p), sp.ixy.Eval<S>(p), sp.ixz.Eval<S>(p),
        sp.ixy.Eval<S>(p), sp.iyy.Eval<S>(p), sp.iyz.Eval<S>(p),
        sp.ixz.Eval<S>(p), sp.iyz.Eval<S>(p), sp.izz.Eval<S>(p);
    *spin = pose.R * (inertia * (pose.R.transpose() * fv.w));
  }
}

// Compiled once in src/multibody/kinematics_instances.cpp for every scalar
// the library evaluates model functions with (the energies' and
// constraints' types), so that a problem file that calls them in its own
// functions (a quadrature, a functional, an output) does not instantiate
// the walks again: that alone made slider_crank_mb.cpp, whose quadrature
// and functional are the kinetic energy, compile 1.2x longer than the
// hand-written slider_crank.cpp (bench/mb_build_cost.py).
#define DAEDALUS_KINEMATICS_INSTANCES(EXTERN, S)                               \
  EXTERN template FramePose<S> Kinematics::Pose<S>(FrameIndex, const VecX<S>&, \
                                                   const VecX<S>&) const;      \
  EXTERN template FrameVelocity<S> Kinematics::Velocity<S>(                    \
      FrameIndex, const VecX<S>&, const VecX<S>&, const VecX<S>&) const;       \
  EXTERN template MatX<S> Kinematics::Jacobian<S>(FrameIndex, const VecX<S>&,  \
                                                  const VecX<S>&) const;       \
  EXTERN template S Kinematics::TotalMass<S>(const VecX<S>&) const;            \
  EXTERN template Vec3<S> Kinematics::CenterOfMass<S>(const VecX<S>&,          \
                                                      const VecX<S>&) const;   \
  EXTERN template Vec3<S> Kinematics::LinearMomentum<S>(                       \
      const VecX<S>&, const VecX<S>&, const VecX<S>&) const;                   \
  EXTERN template Vec3<S> Kinematics::AngularMomentum<S>(                      \
      const VecX<S>&, const VecX<S>&, const VecX<S>&) const;                   \
  EXTERN template S Kinematics::KineticEnergy<S>(                              \
      const VecX<S>&, const VecX<S>&, const VecX<S>&) const;
#define DAEDALUS_KINEMATICS_ALL_INSTANCES(EXTERN) \
  DAEDALUS_KINEMATICS_INSTANCES(EXTERN, double)   \
  DAEDALUS_KINEMATICS_INSTANCES(EXTERN, D1)       \
  DAEDALUS_KINEMATICS_INSTANCES(EXTERN, D2)       \
  DAEDALUS_KINEMATICS_INSTANCES(EXTERN, D3)       \
  DAEDALUS_KINEMATICS_INSTANCES(EXTERN, M1)       \
  DAEDALUS_KINEMATICS_INSTANCES(EXTERN, M2)       \
  DAEDALUS_KINEMATICS_INSTANCES(EXTERN, TM1)      \
  DAEDALUS_KINEMATICS_INSTANCES(EXTERN, TM2)      \
  DAEDALUS_KINEMATICS_INSTANCES(EXTERN, Sym)
DAEDALUS_KINEMATICS_ALL_INSTANCES(extern)

}  // namespace daedalus::mb
