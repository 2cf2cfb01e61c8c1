// TreeDynamics: the multibody tree (multibody.hpp) as links of one degree
// of freedom (revolute, prismatic) or three (ball) for the recursive
// algorithms of multibody_dynamics.hpp.
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/multibody_dynamics.hpp"

namespace daedalus::mb {

namespace internal {

FixedPose Compose(const FixedPose& ab, const FixedPose& bc) {
  FixedPose ac;
  ac.R = ab.R * bc.R;
  ac.p = ab.p;
  for (const PTerm& t : bc.p) ac.p.push_back({ab.R * t.c, t.r});
  return ac;
}

FixedPose Invert(const Eigen::Matrix3d& r_ba, const PVec& p_ba) {
  FixedPose out;
  out.R = r_ba.transpose();
  if (!p_ba.IsZero()) out.p.push_back({-r_ba.transpose(), p_ba});
  return out;
}

}  // namespace internal

namespace {

using internal::FixedPose;
using internal::LinkKind;
using internal::RbLink;

// The pose of a frame (marker) F in its body's frame B.
FixedPose FrameInBody(const internal::MbFrame& f) {
  FixedPose pose;
  pose.R = f.rotation;
  if (!f.position.IsZero())
    pose.p.push_back({Eigen::Matrix3d::Identity(), f.position});
  return pose;
}

bool Inert(const BodySpec& sp) {
  return sp.mass.IsZero() && sp.ixx.IsZero() && sp.iyy.IsZero() &&
         sp.izz.IsZero() && sp.ixy.IsZero() && sp.ixz.IsZero() &&
         sp.iyz.IsZero();
}

// A planar absolute-angle joint: its relative angle is q_i - th_WF(q)
// with th_WF, the angle of its parent frame F in the world, an affine
// function of the coordinates (the walk of multibody_kinematics.hpp's
// WalkPlanar: frame angles add, relative revolute and planar joints add
// their angle, an absolute joint sets it).
void Absolute(const internal::MbTree& t,
              const internal::MbJoint& j,
              RbLink* link) {
  std::map<int, double> coef;
  double offset = 0.0;
  for (int p : t.bodies[j.parent_body].path) {
    const internal::MbJoint& jt = t.joints[p];
    offset += t.frames[jt.parent_frame].angle;
    if (jt.spec.type == JointType::kRevolute) {
      if (jt.spec.absolute) {
        coef.clear();
        offset = 0.0;
      }
      coef[jt.first] += 1.0;
    } else if (jt.spec.type == JointType::kPlanar) {
      coef[jt.first + 2] += 1.0;
    }
    offset -= t.frames[jt.child_frame].angle;
  }
  offset += t.frames[j.parent_frame].angle;
  link->absolute = true;
  link->offset = offset;
  for (const auto& [k, c] : coef)
    if (c != 0.0) link->minus.emplace_back(k, c);
}

// A link that moves in the world's x-y plane when its parent does: its
// joint frame rotated about z only and not offset along z, a revolute
// axis along z or a prismatic axis in the plane.
bool PlanarLink(const RbLink& l) {
  const Eigen::Matrix3d& r = l.pre.R;
  if (r(2, 0) != 0.0 || r(2, 1) != 0.0 || r(0, 2) != 0.0 || r(1, 2) != 0.0 ||
      r(2, 2) != 1.0)
    return false;
  for (const internal::PTerm& t : l.pre.p) {
    const PExpr* r[3] = {&t.r.x, &t.r.y, &t.r.z};
    for (int k = 0; k < 3; ++k)
      if (t.c(2, k) != 0.0 && !r[k]->IsZero()) return false;
  }
  switch (l.kind) {
    case LinkKind::kRevolute:
      return l.axis[0] == 0.0 && l.axis[1] == 0.0 && std::abs(l.axis[2]) == 1.0;
    case LinkKind::kPrismatic:
      return l.axis[2] == 0.0;
    case LinkKind::kBall:
      return false;
  }
  return false;
}

}  // namespace

TreeDynamics::TreeDynamics(const Kinematics& kinematics) {
  const internal::MbTree& t = kinematics.tree();
  auto links = std::make_shared<std::vector<RbLink>>();
  links->reserve(static_cast<size_t>(t.nv));
  // anchor[b]: the link whose frame body b moves with (-1: the ground) and
  // the pose of b's frame B in that link's frame L.
  std::vector<int> anchor(t.bodies.size(), -1);
  std::vector<FixedPose> in_anchor(t.bodies.size());
  for (const internal::MbJoint& j : t.joints) {
    // The joint's parent frame F in the parent's link frame.
    const FixedPose f_in_link = internal::Compose(
        in_anchor[j.parent_body], FrameInBody(t.frames[j.parent_frame]));
    int parent = anchor[j.parent_body];
    FixedPose m_in_link = f_in_link;  // M in the last link (weld: in anchor)
    // Link k of the joint (its velocity vfirst + k, position first + k).
    auto add = [&](int k, LinkKind kind, const Eigen::Vector3d& axis,
                   const FixedPose& pre) {
      RbLink l;
      l.parent = parent;
      l.kind = kind;
      l.qi = j.first + k;
      l.vi = j.vfirst + k;
      l.axis = axis;
      l.pre = pre;
      l.name = kind == LinkKind::kBall ? j.name : t.coordinate_names[l.qi];
      parent = static_cast<int>(links->size());
      links->push_back(std::move(l));
      m_in_link = FixedPose();
    };
    const FixedPose same;
    const Eigen::Vector3d ex = Eigen::Vector3d::UnitX();
    const Eigen::Vector3d ey = Eigen::Vector3d::UnitY();
    const Eigen::Vector3d ez = Eigen::Vector3d::UnitZ();
    switch (j.spec.type) {
      case JointType::kRevolute:
        add(0, LinkKind::kRevolute, j.spec.axis, f_in_link);
        if (j.spec.absolute) Absolute(t, j, &links->back());
        break;
      case JointType::kPrismatic:
        add(0, LinkKind::kPrismatic, j.spec.axis, f_in_link);
        break;
      case JointType::kPlanar:  // p_FM = (x, y, 0), R_FM = Rz(th)
        add(0, LinkKind::kPrismatic, ex, f_in_link);
        add(1, LinkKind::kPrismatic, ey, same);
        add(2, LinkKind::kRevolute, ez, same);
        break;
      case JointType::kUniversal:  // R_FM = Rot(a1, q1) Rot(a2, q2)
        add(0, LinkKind::kRevolute, j.spec.axis, f_in_link);
        add(1, LinkKind::kRevolute, j.spec.axis2, same);
        break;
      case JointType::kWeld:
        break;
      case JointType::kBall:  // R_FM of the quaternion, v = w_FM in M
        add(0, LinkKind::kBall, ex, f_in_link);
        break;
      case JointType::kFree:
        // p_FM = (x, y, z) in F with v = p_FM' in F: three prismatic links
        // along F's axes (massless intermediate frames with F's
        // orientation), each S = [0; e_k] constant; then the quaternion as
        // a ball link, v = w_FM in M. (As one six-degree-of-freedom link in
        // M, S would be [0 1; R_FM' 0] with the apparent derivative
        // c_J = [0; -w x R_FM' p'].)
        add(0, LinkKind::kPrismatic, ex, f_in_link);
        add(1, LinkKind::kPrismatic, ey, same);
        add(2, LinkKind::kPrismatic, ez, same);
        add(3, LinkKind::kBall, ex, same);
        break;
    }
    // The child body's frame B in the link: M in the link, then B in M.
    const internal::MbFrame& m = t.frames[j.child_frame];
    anchor[j.child_body] = parent;
    in_anchor[j.child_body] =
        internal::Compose(m_in_link, internal::Invert(m.rotation, m.position));
  }
  for (size_t b = 1; b < t.bodies.size(); ++b) {
    if (t.bodies[b].joint < 0)
      throw std::invalid_argument("recursive dynamics: body '" +
                                  t.bodies[b].name + "' has no joint");
    if (anchor[b] < 0 || Inert(t.bodies[b].spec)) continue;
    (*links)[anchor[b]].masses.push_back(
        {t.bodies[b].spec, in_anchor[b], t.bodies[b].name});
  }
  for (const RbLink& l : *links) absolute_ = absolute_ || l.absolute;
  planar_ = !links->empty();
  for (const RbLink& l : *links) planar_ = planar_ && PlanarLink(l);
  chain_ = planar_ ? 2 : 0;
  for (size_t i = 0; i < links->size() && chain_ > 0; ++i) {
    const RbLink& l = (*links)[i];
    const int k = static_cast<int>(i);
    if (l.kind != LinkKind::kRevolute || l.parent != k - 1 || l.qi != k ||
        l.vi != k)
      chain_ = 0;
    else if (l.axis[2] != 1.0 || l.pre.R != Eigen::Matrix3d::Identity())
      chain_ = 1;
  }
  nq_ = t.nq;
  nv_ = t.nv;
  links_ = std::move(links);
  gravity_ = t.gravity;
}

double TreeDynamics::GravityPotential(const VecX<double>& q_in,
                                      TreeData<double>* d) const {
  Check(nq_, static_cast<int>(q_in.size()), "q", d->ready);
  const auto& links = *links_;
  Transforms<double>(Relative<double>(q_in, true, &d->qr), d);
  // R_WL = R_WP R_PL (R_PL = E'), p_WL = p_WP + R_WP p_PL; -g = a_0's
  // linear part; V = sum_i (-g) . (m_i p_WL + R_WL h_i).
  const size_t n = links.size();
  std::vector<Eigen::Matrix3d> rot(n);
  std::vector<Eigen::Vector3d> pos(n);
  const Eigen::Vector3d minus_g = d->a0.tail<3>();
  double v = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const int par = links[i].parent;
    const internal::Xform<double>& x = d->X[i];
    if (par < 0) {
      rot[i] = x.E.transpose();
      pos[i] = x.r;
    } else {
      rot[i] = rot[par] * x.E.transpose();
      pos[i] = pos[par] + rot[par] * x.r;
    }
    const internal::RbInertia<double>& in = d->I[i];
    v += minus_g.dot(in.m * pos[i] + rot[i] * in.h);
  }
  return v;
}

void TreeDynamics::NotPositive(const RbLink& l, double d) const {
  if (l.kind == internal::LinkKind::kBall)
    throw std::runtime_error(
        "recursive dynamics: the articulated inertia of the three "
        "rotations of joint '" +
        l.name + "' (its quaternion) is not positive definite (determinant " +
        std::to_string(d) +
        "): the bodies outboard of it have no rotational inertia about its "
        "centre; give them inertia");
  throw std::runtime_error(
      "recursive dynamics: the articulated inertia along coordinate '" +
      l.name + "' is " + std::to_string(d) +
      " (not positive): the bodies outboard of its joint have no mass "
      "or inertia that it can move; give them mass");
}

void TreeDynamics::Check(int expected,
                         int size,
                         const char* what,
                         bool ready) const {
  if (!ready)
    throw std::logic_error(
        "recursive dynamics: SetParameters was not called on this TreeData");
  if (size != expected)
    throw std::invalid_argument("recursive dynamics: " + std::string(what) +
                                " has " + std::to_string(size) +
                                " entries, the tree needs " +
                                std::to_string(expected));
}

}  // namespace daedalus::mb
