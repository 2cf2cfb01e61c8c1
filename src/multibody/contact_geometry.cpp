// Contact between the shapes of a multibody description (multibody.hpp,
// Multibody::AddContact; docs/contact.md, "Contact geometry"). Each contact
// point becomes a unilateral gap constraint, its exact signed distance as a
// generic function of q (so J, the acceleration bias, the compiled kernels
// and the sensitivities come from the library's differentiation like any
// constraint's), with the point's ContactLaw; with friction, also the
// contact point's tangential velocity as a Nonholonomic constraint, which
// the law names (docs/friction.md).
#include "multibody/contact_geometry.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/names.hpp"

namespace daedalus::mb {

// Named, so that the folder's unity build (one translation unit) keeps
// these helpers apart from compile.cpp's.
namespace contact_geom {

using internal::MbContact;
using internal::MbTree;

template <class S>
S Dot3(const Vec3<S>& a, const Vec3<S>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

Eigen::Matrix3d GeometryRotation(const Geometry& g) {
  const Eigen::Quaterniond r(g.quaternion[0], g.quaternion[1], g.quaternion[2],
                             g.quaternion[3]);
  return r.normalized().toRotationMatrix();
}

std::string Shape(const MbTree& t, int gi) {
  const internal::MbGeometry& g = t.geometries[static_cast<size_t>(gi)];
  return std::string(ToString(g.geometry.type)) + " '" + g.geometry.name +
         "' (body '" + t.bodies[static_cast<size_t>(g.body)].name + "')";
}

constexpr const char* kSupportedPairs =
    "supported pairs: sphere-plane, box-plane (one contact per corner), "
    "sphere-sphere, and a frame's origin against a plane "
    "(AddContact(name, frame, plane))";

bool HasFriction(const ContactLaw& law) {
  return law.mu_static > 0.0 || law.mu_kinetic > 0.0 ||
         !law.mu_static_parameter.empty() || !law.mu_kinetic_parameter.empty();
}

// The contact point of contact c: its gap, the normal n (from B towards A),
// the point halfway between the surfaces, the tangents (orthonormal, with
// n), and the two frames' poses (and velocities, with_v).
template <class S>
struct Located {
  S gap = S(0.0);
  Vec3<S> n, point, t1, t2;
  FramePose<S> a, b;
  FrameVelocity<S> va, vb;
};

template <class S, class Vel>
Located<S> Locate(const MbTree& t,
                  const MbContact& c,
                  const VecX<S>& q,
                  const Vel& vel,
                  bool with_v,
                  const VecX<S>& p) {
  using std::sqrt;
  Located<S> L;
  internal::Walk<S>(t, c.frame_a, q, vel, with_v, p, &L.a, &L.va);
  internal::Walk<S>(t, c.frame_b, q, vel, with_v, p, &L.b, &L.vb);
  const Vec3<S> ca = L.a.p + internal::TimesConst<S>(L.a.R, c.offset_a);
  const Vec3<S> cb = L.b.p + internal::TimesConst<S>(L.b.R, c.offset_b);
  if (c.plane) {
    L.n = internal::TimesConst<S>(L.b.R, c.normal_b);
    const Vec3<S> d = ca - cb;
    L.gap = Dot3<S>(L.n, d) - S(c.radius_a);
    L.point = ca - Vec3<S>(L.n * S(c.radius_a));
    L.t1 = internal::TimesConst<S>(L.b.R, c.tangent1_b);
    L.t2 = internal::TimesConst<S>(L.b.R, c.tangent2_b);
    return L;
  }
  // Sphere against sphere: n along the line of centres.
  const Vec3<S> d = ca - cb;
  const S l = sqrt(Dot3<S>(d, d));
  L.n = Vec3<S>(d / l);
  L.gap = l - S(c.radius_a + c.radius_b);
  L.point = cb + Vec3<S>(L.n * (S(c.radius_b) + S(0.5) * L.gap));
  // t1 = e_z x n / |e_z x n| (in a planar system n lies in the plane and
  // t1 is n turned by +90 degrees), t2 = n x t1.
  const S h = sqrt(L.n[0] * L.n[0] + L.n[1] * L.n[1]);
  L.t1 = Vec3<S>(-L.n[1] / h, L.n[0] / h, S(0.0));
  L.t2 = internal::Cross<S>(L.n, L.t1);
  return L;
}

// The velocity of the material point at `point` of the frame with pose
// `pose` and velocity `fv`.
template <class S>
Vec3<S> PointVelocity(const FramePose<S>& pose,
                      const FrameVelocity<S>& fv,
                      const Vec3<S>& point) {
  return fv.v + internal::Cross<S>(fv.w, Vec3<S>(point - pose.p));
}

std::vector<int> Union(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> u;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(u));
  return u;
}

}  // namespace contact_geom

using contact_geom::HasFriction;
using contact_geom::kSupportedPairs;
using contact_geom::Shape;

GeometryIndex Multibody::FindGeometry(const std::string& name) const {
  int found = -1, count = 0;
  std::string names;
  for (size_t i = 0; i < tree_->geometries.size(); ++i) {
    const std::string& n = tree_->geometries[i].geometry.name;
    names += (i ? ", " : "") + n;
    if (n == name) {
      found = static_cast<int>(i);
      ++count;
    }
  }
  if (count == 1) return {found};
  throw std::invalid_argument(
      "multibody: " +
      (count == 0 ? "no geometry is named '" + name + "'"
                  : std::to_string(count) + " geometries are named '" + name +
                        "'; use the GeometryIndex AddGeometry returned") +
      " (geometries: " + (names.empty() ? "none" : names) + ")");
}

GeometryIndex Multibody::AddGroundPlane(const std::string& name,
                                        double height) {
  if (!std::isfinite(height))
    throw std::invalid_argument("multibody: ground plane '" + name +
                                "': the height is not finite");
  Geometry g;
  g.name = name;
  g.type = GeometryType::kPlane;
  g.collision = true;
  g.position = tree_->dim == Dimension::kSpatial
                   ? Eigen::Vector3d(0.0, 0.0, height)
                   : Eigen::Vector3d(0.0, height, 0.0);
  return AddGeometry(ground(), g);
}

std::vector<std::string> Multibody::AddContact(const std::string& name,
                                               GeometryIndex a,
                                               GeometryIndex b,
                                               const ContactLaw& law) {
  const internal::MbTree& t = *tree_;
  const int ng = static_cast<int>(t.geometries.size());
  if (a.value < 0 || a.value >= ng || b.value < 0 || b.value >= ng)
    throw std::invalid_argument("multibody: contact '" + name +
                                "' names a geometry that is not in this "
                                "system");
  int ia = a.value, ib = b.value;
  const auto type = [&](int i) {
    return t.geometries[static_cast<size_t>(i)].geometry.type;
  };
  // Normalized order: the plane (or the second sphere) is side B.
  if (type(ia) == GeometryType::kPlane) std::swap(ia, ib);
  const GeometryType ta = type(ia), tb = type(ib);
  const bool supported =
      (tb == GeometryType::kPlane &&
       (ta == GeometryType::kSphere || ta == GeometryType::kBox)) ||
      (ta == GeometryType::kSphere && tb == GeometryType::kSphere);
  if (!supported)
    throw std::invalid_argument("multibody: contact '" + name + "' between " +
                                Shape(t, ia) + " and " + Shape(t, ib) +
                                " is not supported; " + kSupportedPairs);
  const internal::MbGeometry& ga = t.geometries[static_cast<size_t>(ia)];
  const internal::MbGeometry& gb = t.geometries[static_cast<size_t>(ib)];
  const Eigen::Matrix3d ra = contact_geom::GeometryRotation(ga.geometry);
  const Eigen::Matrix3d rb = contact_geom::GeometryRotation(gb.geometry);
  internal::MbContact c;
  c.frame_a = t.bodies[static_cast<size_t>(ga.body)].frame;
  c.frame_b = t.bodies[static_cast<size_t>(gb.body)].frame;
  c.offset_b = gb.geometry.position;
  const bool planar = t.dim == Dimension::kPlanar;
  if (planar) {
    for (int k : {ia, ib}) {
      const Eigen::Vector4d& qr =
          t.geometries[static_cast<size_t>(k)].geometry.quaternion;
      if (std::abs(qr[1]) > 1e-12 || std::abs(qr[2]) > 1e-12)
        throw std::invalid_argument(
            "multibody: contact '" + name + "': " + Shape(t, k) +
            " is turned out of the plane; in a planar system a shape may "
            "only turn about z");
    }
    c.offset_b[2] = 0.0;
  }
  if (tb == GeometryType::kPlane) {
    c.plane = true;
    c.normal_b = rb.col(planar ? 1 : 2);
    c.tangent1_b = rb.col(0);
    c.tangent2_b = planar ? Eigen::Vector3d(Eigen::Vector3d::UnitZ())
                          : Eigen::Vector3d(rb.col(1));
  } else {
    c.plane = false;
    c.radius_b = gb.geometry.size[0];
  }
  std::vector<std::pair<std::string, Eigen::Vector3d>> points;
  if (ta == GeometryType::kSphere) {
    c.radius_a = ga.geometry.size[0];
    points.emplace_back(name, Eigen::Vector3d::Zero());
  } else {  // box corners, (sx hx, sy hy, sz hz) in the box's frame
    const Eigen::Vector3d h = ga.geometry.size;
    for (int k = 0; k < (planar ? 4 : 8); ++k) {
      const double sx = (k & 1) ? -1.0 : 1.0, sy = (k & 2) ? -1.0 : 1.0;
      const double sz = (k & 4) ? -1.0 : 1.0;
      std::string corner =
          name + ":" + (sx > 0 ? "+x" : "-x") + (sy > 0 ? "+y" : "-y");
      if (!planar) corner += sz > 0 ? "+z" : "-z";
      points.emplace_back(corner, Eigen::Vector3d(sx * h[0], sy * h[1],
                                                  planar ? 0.0 : sz * h[2]));
    }
  }
  // The points in the body frame: p_BG + R_BG p_G.
  for (auto& pt : points) {
    pt.second = ga.geometry.position + ra * pt.second;
    if (planar) pt.second[2] = 0.0;
  }
  return AddContactPoints(name, c, points, law, Shape(t, ia), Shape(t, ib),
                          ga.body, gb.body);
}

std::vector<std::string> Multibody::AddContact(const std::string& name,
                                               FrameIndex point,
                                               GeometryIndex plane,
                                               const ContactLaw& law) {
  const internal::MbTree& t = *tree_;
  const int f =
      CheckFrame(point, ("contact '" + name + "': the point").c_str());
  if (plane.value < 0 || plane.value >= static_cast<int>(t.geometries.size()))
    throw std::invalid_argument("multibody: contact '" + name +
                                "' names a geometry that is not in this "
                                "system");
  const internal::MbGeometry& g =
      t.geometries[static_cast<size_t>(plane.value)];
  const std::string point_shape =
      "the origin of frame '" + t.frames[static_cast<size_t>(f)].name + "'";
  if (g.geometry.type != GeometryType::kPlane)
    throw std::invalid_argument("multibody: contact '" + name + "' between " +
                                point_shape + " and " + Shape(t, plane.value) +
                                " is not supported; " + kSupportedPairs);
  const bool planar = t.dim == Dimension::kPlanar;
  if (planar && (std::abs(g.geometry.quaternion[1]) > 1e-12 ||
                 std::abs(g.geometry.quaternion[2]) > 1e-12))
    throw std::invalid_argument("multibody: contact '" + name +
                                "': " + Shape(t, plane.value) +
                                " is turned out of the plane; in a planar "
                                "system a shape may only turn about z");
  const Eigen::Matrix3d rb = contact_geom::GeometryRotation(g.geometry);
  internal::MbContact c;
  c.frame_a = f;
  c.frame_b = t.bodies[static_cast<size_t>(g.body)].frame;
  c.offset_b = g.geometry.position;
  if (planar) c.offset_b[2] = 0.0;
  c.normal_b = rb.col(planar ? 1 : 2);
  c.tangent1_b = rb.col(0);
  c.tangent2_b = planar ? Eigen::Vector3d(Eigen::Vector3d::UnitZ())
                        : Eigen::Vector3d(rb.col(1));
  return AddContactPoints(name, c, {{name, Eigen::Vector3d::Zero()}}, law,
                          point_shape, Shape(t, plane.value),
                          t.frames[static_cast<size_t>(f)].body, g.body);
}

std::vector<std::string> Multibody::AddContactPoints(
    const std::string& name,
    internal::MbContact c,
    const std::vector<std::pair<std::string, Eigen::Vector3d>>& points,
    const ContactLaw& law,
    const std::string& shape_a,
    const std::string& shape_b,
    int body_a,
    int body_b) {
  const std::string who = "multibody: contact '" + name + "' between " +
                          shape_a + " and " + shape_b + ": ";
  daedalus::internal::CheckName(name, "contact", "multibody");
  if (body_a == body_b)
    throw std::invalid_argument(who + "both shapes are on one body");
  if (!law.friction.empty() || !law.joint.empty())
    throw std::invalid_argument(
        who +
        "leave ContactLaw::friction and ::joint empty (AddContact "
        "declares the friction constraint itself when mu > 0)");
  if (law.restitution_parameter.empty() &&
      !(law.restitution >= 0.0 && law.restitution <= 1.0))
    throw std::invalid_argument(who + "restitution " +
                                std::to_string(law.restitution) +
                                " outside [0, 1] (Newton's coefficient: 0 "
                                "plastic, 1 elastic)");
  if (!(law.mu_static >= 0.0 && std::isfinite(law.mu_static)) ||
      !((law.mu_kinetic >= 0.0 && std::isfinite(law.mu_kinetic)) ||
        law.mu_kinetic == -1.0))
    throw std::invalid_argument(
        who +
        "friction coefficient mu_static = " + std::to_string(law.mu_static) +
        ", mu_kinetic = " + std::to_string(law.mu_kinetic) +
        " is negative or not finite; Coulomb's mu is >= 0 (mu_kinetic -1, "
        "the default, takes mu_static)");
  std::vector<std::string> names;
  for (const auto& [row, local] : points) {
    for (const internal::MbContact& other : tree_->contacts)
      if (other.name == row)
        throw std::invalid_argument("multibody: contact '" + row +
                                    "' declared twice");
    internal::MbContact k = c;
    k.name = row;
    k.law = law;
    if (HasFriction(law)) {
      k.friction = row + ":slip";
      k.law.friction = k.friction;
    }
    k.offset_a = local;
    names.push_back(row);
    tree_->contacts.push_back(std::move(k));
  }
  return names;
}

std::vector<std::string> Multibody::AddGroundContacts(
    GeometryIndex plane,
    const ContactLaw& law,
    std::vector<std::string>* skipped) {
  const internal::MbTree& t = *tree_;
  if (plane.value < 0 || plane.value >= static_cast<int>(t.geometries.size()) ||
      t.geometries[static_cast<size_t>(plane.value)].geometry.type !=
          GeometryType::kPlane)
    throw std::invalid_argument(
        "multibody: AddGroundContacts needs a plane geometry of this system "
        "(AddGroundPlane)");
  const internal::MbGeometry& pg =
      t.geometries[static_cast<size_t>(plane.value)];
  std::vector<std::string> names;
  for (size_t i = 0; i < t.geometries.size(); ++i) {
    const internal::MbGeometry& g = t.geometries[i];
    if (!g.geometry.collision || g.body == pg.body ||
        t.bodies[static_cast<size_t>(g.body)].coords.empty())
      continue;  // not a collision shape, or one that does not move
    if (g.geometry.type != GeometryType::kSphere &&
        g.geometry.type != GeometryType::kBox) {
      if (skipped) skipped->push_back(Shape(t, static_cast<int>(i)));
      continue;
    }
    std::string name = g.geometry.name + ":" + pg.geometry.name;
    for (int k = 2; std::any_of(tree_->contacts.begin(), tree_->contacts.end(),
                                [&](const internal::MbContact& c) {
                                  return c.name.rfind(name, 0) == 0;
                                });
         ++k)
      name = g.geometry.name + "#" + std::to_string(k) + ":" + pg.geometry.name;
    const std::vector<std::string> added =
        AddContact(name, GeometryIndex{static_cast<int>(i)}, plane, law);
    names.insert(names.end(), added.begin(), added.end());
  }
  return names;
}

namespace internal {

void DeclareGeometryContacts(const std::shared_ptr<const MbTree>& tree,
                             ModelBuilder* builder) {
  using contact_geom::Dot3;
  using contact_geom::Locate;
  using contact_geom::Located;
  using contact_geom::PointVelocity;
  const MbTree& t = *tree;
  for (size_t i = 0; i < t.contacts.size(); ++i) {
    const MbContact& c = t.contacts[i];
    const int e = static_cast<int>(i);
    const std::vector<int>& ca =
        t.bodies[static_cast<size_t>(
                     t.frames[static_cast<size_t>(c.frame_a)].body)]
            .coords;
    const std::vector<int>& cb =
        t.bodies[static_cast<size_t>(
                     t.frames[static_cast<size_t>(c.frame_b)].body)]
            .coords;
    const std::vector<int> coords = contact_geom::Union(ca, cb);
    if (coords.empty())
      throw std::invalid_argument("multibody: contact '" + c.name +
                                  "': neither shape's body moves (both are "
                                  "fixed to the ground)");
    builder->Holonomic(c.name, Touches{coords}, [tree, e](const auto& x) {
      using S = Scalar<decltype(x)>;
      const MbContact& k = tree->contacts[static_cast<size_t>(e)];
      return Locate<S>(*tree, k, x.q, NoVel<S>{}, false, x.p).gap;
    });
    if (!c.friction.empty()) {
      const int rows = t.dim == Dimension::kPlanar ? 1 : 2;
      builder->Nonholonomic(
          c.friction,
          [tree, e, rows](const auto& x) {
            using S = Scalar<decltype(x)>;
            const MbContact& k = tree->contacts[static_cast<size_t>(e)];
            const Located<S> L =
                Locate<S>(*tree, k, x.q, VelOf<S>{&x.v}, true, x.p);
            // The relative velocity of the two bodies' material points at
            // the contact point, along the tangents.
            const Vec3<S> u = PointVelocity<S>(L.a, L.va, L.point) -
                              PointVelocity<S>(L.b, L.vb, L.point);
            VecX<S> out(rows);
            out[0] = Dot3<S>(L.t1, u);
            if (rows == 2) out[1] = Dot3<S>(L.t2, u);
            return out;
          },
          rows);
    }
    builder->Unilateral(c.name, c.law);
  }
}

}  // namespace internal

}  // namespace daedalus::mb
