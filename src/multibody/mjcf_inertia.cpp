// Orientations and inertias as MuJoCo 2.2.2 computes them
// (mjcf_internal.hpp; MuJoCo's src/user/user_util.cc mjuu_z2quat,
// user_objects.cc mjCAlternative::Set, mjCGeom::GetVolume, SetInertia and
// mjCBody::GeomFrame), written from their documented conventions. One
// difference: a body's inertia from several geoms is kept as the exact
// tensor about the centre of mass, where MuJoCo stores principal moments
// and axes found by a Jacobi iteration.
#include <cmath>
#include <stdexcept>

#include "mjcf_internal.hpp"

namespace daedalus::mjcf::internal {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kMinVal = 1e-15;  // MuJoCo's mjMINVAL

}  // namespace

Eigen::Quaterniond ZToVector(const Eigen::Vector3d& vec) {
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ().cross(vec);
  const double s = axis.norm();
  if (s < 1e-10) {
    axis = Eigen::Vector3d::UnitX();
  } else {
    axis /= s;
  }
  const double angle = std::atan2(s, vec[2]);
  return Eigen::Quaterniond(std::cos(angle / 2), axis[0] * std::sin(angle / 2),
                            axis[1] * std::sin(angle / 2),
                            axis[2] * std::sin(angle / 2));
}

Eigen::Quaterniond EulerRotation(const Eigen::Vector3d& angles,
                                 const std::string& seq) {
  Eigen::Quaterniond q = Eigen::Quaterniond::Identity();
  for (int i = 0; i < 3; ++i) {
    const char c = seq[static_cast<size_t>(i)];
    const double h = angles[i] / 2;
    Eigen::Quaterniond r(std::cos(h), 0.0, 0.0, 0.0);
    const char axis = static_cast<char>(c | 0x20);  // lower case
    if (axis == 'x') r.x() = std::sin(h);
    if (axis == 'y') r.y() = std::sin(h);
    if (axis == 'z') r.z() = std::sin(h);
    // Lower case: about the moving (rotated) axes, post-multiplied; upper
    // case: about the fixed axes, pre-multiplied.
    q = (c >= 'a') ? q * r : r * q;
  }
  return q.normalized();
}

double GeomVolume(const Geom& g) {
  const Eigen::Vector3d& s = g.size;
  switch (g.type) {
    case mb::GeometryType::kSphere:
      return 4.0 * kPi * s[0] * s[0] * s[0] / 3.0;
    case mb::GeometryType::kCapsule:
      return kPi * (s[0] * s[0] * 2.0 * s[1] + 4.0 * s[0] * s[0] * s[0] / 3.0);
    case mb::GeometryType::kCylinder:
      return kPi * s[0] * s[0] * 2.0 * s[1];
    case mb::GeometryType::kEllipsoid:
      return 4.0 * kPi * s[0] * s[1] * s[2] / 3.0;
    case mb::GeometryType::kBox:
      return 8.0 * s[0] * s[1] * s[2];
    default:
      return 0.0;
  }
}

Eigen::Vector3d GeomDiagonalInertia(const Geom& g, double m) {
  const Eigen::Vector3d& s = g.size;
  switch (g.type) {
    case mb::GeometryType::kSphere:
      return Eigen::Vector3d::Constant(2.0 * m * s[0] * s[0] / 5.0);
    case mb::GeometryType::kCapsule: {
      // A cylinder of height h = 2 s[1] and two hemispheres of radius r,
      // the mass shared by volume; each hemisphere's inertia about the
      // capsule's centre by the displacement of its own centre of mass
      // (MuJoCo's formula).
      const double r = s[0], h = 2.0 * s[1];
      const double ms = m * 4.0 * r / (4.0 * r + 3.0 * h);
      const double mc = m - ms;
      const double side = mc * (3.0 * r * r + h * h) / 12.0 +
                          2.0 * ms * r * r / 5.0 +
                          ms * h * (3.0 * r + 2.0 * h) / 8.0;
      return Eigen::Vector3d(side, side,
                             mc * r * r / 2.0 + 2.0 * ms * r * r / 5.0);
    }
    case mb::GeometryType::kCylinder: {
      const double r = s[0], h = 2.0 * s[1];
      const double side = m * (3.0 * r * r + h * h) / 12.0;
      return Eigen::Vector3d(side, side, m * r * r / 2.0);
    }
    case mb::GeometryType::kEllipsoid:
      return Eigen::Vector3d(m * (s[1] * s[1] + s[2] * s[2]) / 5.0,
                             m * (s[0] * s[0] + s[2] * s[2]) / 5.0,
                             m * (s[0] * s[0] + s[1] * s[1]) / 5.0);
    case mb::GeometryType::kBox:
      return Eigen::Vector3d(m * (s[1] * s[1] + s[2] * s[2]) / 3.0,
                             m * (s[0] * s[0] + s[2] * s[2]) / 3.0,
                             m * (s[0] * s[0] + s[1] * s[1]) / 3.0);
    default:
      return Eigen::Vector3d::Zero();
  }
}

std::optional<Inertial> InertiaFromGeoms(const Body& body,
                                         const Compiler& compiler,
                                         Notes* /*notes*/) {
  struct Part {
    double m;
    Eigen::Vector3d p;
    Eigen::Matrix3d i;  // about the geom's centre, in B
  };
  std::vector<Part> parts;
  for (const Geom& g : body.geoms) {
    if (g.group < compiler.group_lo || g.group > compiler.group_hi) continue;
    if ((g.type == mb::GeometryType::kMesh || g.hfield) && g.mass != 0.0)
      throw std::invalid_argument(
          g.at.At() + "the inertia of a " +
          std::string(g.hfield ? "height field" : "mesh") +
          " geom needs its file, which is not read; give the body an "
          "<inertial>, or the geom mass='0' (or a group outside the "
          "compiler's inertiagrouprange)");
    // MuJoCo: an explicit mass sets the density; mass 0 contributes
    // nothing; otherwise density times volume.
    const double volume = GeomVolume(g);
    double m = 0.0;
    if (g.mass > 0.0) {
      m = volume > kMinVal ? g.mass : 0.0;
    } else if (g.mass < 0.0) {
      m = g.density * volume;
    }
    const Eigen::Matrix3d r = g.quat.toRotationMatrix();
    parts.push_back(
        {m, g.pos, r * GeomDiagonalInertia(g, m).asDiagonal() * r.transpose()});
  }
  if (parts.empty()) return std::nullopt;
  Inertial in;
  in.at = body.at;
  if (parts.size() == 1) {
    in.mass = parts[0].m;
    in.pos = parts[0].p;
    in.inertia = parts[0].i;
    return in;
  }
  Eigen::Vector3d moment = Eigen::Vector3d::Zero();
  for (const Part& p : parts) {
    in.mass += p.m;
    moment += p.m * p.p;
  }
  if (in.mass < kMinVal)
    throw std::invalid_argument(
        body.at.At() +
        "its geoms have no mass, so the centre of mass is undefined (MuJoCo "
        "refuses it too); give the body an <inertial> or the geoms a mass "
        "or density");
  in.pos = moment / in.mass;
  in.inertia.setZero();
  for (const Part& p : parts) {
    const Eigen::Vector3d d = p.p - in.pos;
    in.inertia += p.i + p.m * (d.squaredNorm() * Eigen::Matrix3d::Identity() -
                               d * d.transpose());
  }
  return in;
}

}  // namespace daedalus::mjcf::internal
