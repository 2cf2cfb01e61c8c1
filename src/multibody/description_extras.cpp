// The parts of a multibody description that the importers fill beyond the
// rigid bodies (include/daedalus/multibody.hpp): joint armature (a rotor
// inertia on one velocity), joint position limits and the shapes attached
// to bodies.
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "daedalus/multibody.hpp"

namespace daedalus::mb {

const char* ToString(GeometryType type) {
  switch (type) {
    case GeometryType::kSphere:
      return "sphere";
    case GeometryType::kCapsule:
      return "capsule";
    case GeometryType::kCylinder:
      return "cylinder";
    case GeometryType::kBox:
      return "box";
    case GeometryType::kEllipsoid:
      return "ellipsoid";
    case GeometryType::kPlane:
      return "plane";
    case GeometryType::kMesh:
      return "mesh";
  }
  return "sphere";
}

int GeometrySizeCount(GeometryType type) {
  switch (type) {
    case GeometryType::kSphere:
      return 1;
    case GeometryType::kCapsule:
    case GeometryType::kCylinder:
      return 2;
    default:
      return 3;
  }
}

void Multibody::AddJointArmature(JointIndex joint, PExpr armature, int k) {
  const int vel = Velocity(joint, k);
  if (armature.IsConstant() && !(armature.constant() >= 0.0))
    throw std::invalid_argument(
        "multibody: joint '" + tree_->joints[joint.value].name +
        "': armature " + std::to_string(armature.constant()) +
        " must be >= 0 (it is a rotor inertia added to M)");
  if (armature.IsZero()) return;
  tree_->armatures.push_back({joint.value, vel, std::move(armature)});
}

void Multibody::SetJointLimits(JointIndex joint, JointLimits limits) {
  if (joint.value < 0 || joint.value >= static_cast<int>(tree_->joints.size()))
    throw std::invalid_argument("multibody: not a joint of this system");
  const internal::MbJoint& j = tree_->joints[joint.value];
  const std::string where = "multibody: joint '" + j.name + "': limits: ";
  if (j.spec.type == JointType::kBall || j.spec.type == JointType::kWeld)
    throw std::invalid_argument(where + "a " +
                                std::string(ToString(j.spec.type)) +
                                " joint has no scalar coordinate to limit");
  const size_t n = j.spec.type == JointType::kFree
                       ? 3
                       : static_cast<size_t>(j.spec.num_coordinates());
  if (limits.lower.size() != n || limits.upper.size() != n)
    throw std::invalid_argument(
        where + "give one lower and one upper bound per scalar coordinate (" +
        std::to_string(n) + "), got " + std::to_string(limits.lower.size()) +
        " and " + std::to_string(limits.upper.size()));
  for (size_t k = 0; k < n; ++k) {
    const double lo = limits.lower[k], hi = limits.upper[k];
    if (std::isnan(lo) || std::isnan(hi) || !(lo <= hi))
      throw std::invalid_argument(
          where + "coordinate " + std::to_string(k) + ": lower " +
          std::to_string(lo) + " must not be above upper " +
          std::to_string(hi) + " (and neither may be NaN)");
    // Two limit contacts with opposite normals on one coordinate: a
    // rank-deficient pair of closed rows.
    if (lo == hi)
      throw std::invalid_argument(
          where + "coordinate " + std::to_string(k) +
          ": lower = upper = " + std::to_string(lo) +
          " locks it; use Joint::Weld() for a locked joint, or Prescribe "
          "for a coordinate held at a value");
  }
  if (!(limits.restitution >= 0.0 && limits.restitution <= 1.0))
    throw std::invalid_argument(where + "restitution " +
                                std::to_string(limits.restitution) +
                                " must lie in [0, 1]");
  for (auto& l : tree_->limits)
    if (l.joint == joint.value) {
      l.limits = std::move(limits);
      return;
    }
  tree_->limits.push_back({joint.value, std::move(limits)});
}

GeometryIndex Multibody::AddGeometry(BodyIndex body, Geometry geometry) {
  if (body.value < 0 || body.value >= static_cast<int>(tree_->bodies.size()))
    throw std::invalid_argument("multibody: geometry '" + geometry.name +
                                "' is on a body that is not in this system");
  const std::string where = "multibody: body '" +
                            tree_->bodies[body.value].name + "', geometry '" +
                            geometry.name + "': ";
  const int used = GeometrySizeCount(geometry.type);
  for (int k = 0; k < used; ++k) {
    const double s = geometry.size[k];
    // A plane's sides may be 0 (infinite), not its grid.
    const bool zero_ok = geometry.type == GeometryType::kPlane;
    if (!std::isfinite(s) || s < 0.0 || (s == 0.0 && !zero_ok))
      throw std::invalid_argument(
          where + "size[" + std::to_string(k) + "] = " + std::to_string(s) +
          " must be positive and finite for a " + ToString(geometry.type));
  }
  for (int k = used; k < 3; ++k) geometry.size[k] = 0.0;
  if (!geometry.position.allFinite())
    throw std::invalid_argument(where + "the position is not finite");
  const double n = geometry.quaternion.norm();
  if (!(std::abs(n - 1.0) < 1e-9))
    throw std::invalid_argument(where +
                                "the orientation is not a unit quaternion "
                                "(norm " +
                                std::to_string(n) + ")");
  geometry.quaternion /= n;
  for (int k = 0; k < 4; ++k)
    if (!(geometry.rgba[k] >= 0.0 && geometry.rgba[k] <= 1.0))
      throw std::invalid_argument(where + "rgba entries lie in [0, 1]");
  tree_->geometries.push_back({body.value, std::move(geometry)});
  return {static_cast<int>(tree_->geometries.size()) - 1};
}

}  // namespace daedalus::mb
