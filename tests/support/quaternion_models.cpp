#include "support/quaternion_models.hpp"

#include <type_traits>
#include <utility>

#include "daedalus/quaternion.hpp"

namespace daedalus::testing {

Eigen::Matrix3d AsymmetricInertia() {
  Eigen::Matrix3d i;
  i << 2.0, 0.1, -0.2, 0.1, 3.0, 0.3, -0.2, 0.3, 4.0;
  return i;
}

Eigen::Vector3d TopCentreOfMass() { return Eigen::Vector3d(0.1, -0.2, 0.7); }

Model PivotTop(const Eigen::Matrix3d& inertia,
               const Eigen::Vector3d& com,
               double g) {
  ModelBuilder b("pivot_top");
  b.Quaternion("R");
  b.KineticEnergy([inertia](const auto& x) {
    using S = typename std::decay_t<decltype(x)>::Scalar;
    const Vec3<S> w = AngularVelocityAt(x.v, 0);
    return S(0.5 * w.dot(inertia.cast<S>() * w));
  });
  b.PotentialEnergy([com, g](const auto& x) {
    using S = typename std::decay_t<decltype(x)>::Scalar;
    const Vec3<S> c = RotationAt(x.q, 0) * com.cast<S>();
    return S(kQuatMass * g * c.z());
  });
  return std::move(b).Build();
}

Model PinnedFreeBody(const Eigen::Matrix3d& inertia_com,
                     const Eigen::Vector3d& pin,
                     bool touches) {
  ModelBuilder b(touches ? "pinned_body_touches" : "pinned_body");
  b.Coordinates({"x", "y", "z"});
  b.Quaternion("R");
  auto translation = [](const auto& x) {
    return 0.5 * kQuatMass *
           (x.v[0] * x.v[0] + x.v[1] * x.v[1] + x.v[2] * x.v[2]);
  };
  auto rotation = [inertia_com](const auto& x) {
    using S = typename std::decay_t<decltype(x)>::Scalar;
    const Vec3<S> w = AngularVelocityAt(x.v, 3);
    return S(0.5 * w.dot(inertia_com.cast<S>() * w));
  };
  auto height = [](const auto& x) { return kQuatMass * kQuatGravity * x.q[2]; };
  auto pin_fn = [pin](const auto& x) {
    using S = typename std::decay_t<decltype(x)>::Scalar;
    const Vec3<S> p =
        Vec3<S>(x.q[0], x.q[1], x.q[2]) + RotationAt(x.q, 3) * pin.cast<S>();
    VecX<S> r(3);
    r << p.x(), p.y(), p.z();
    return r;
  };
  if (touches) {
    b.KineticEnergyTerm(Touches{{0, 1, 2}}, translation);
    b.KineticEnergyTerm(Touches{{3, 4, 5, 6}}, rotation);
    b.PotentialEnergyTerm(Touches{{2}}, height);
    b.Holonomic("pin", Touches{{0, 1, 2, 3, 4, 5, 6}}, pin_fn, 3);
  } else {
    b.KineticEnergy(
        [=](const auto& x) { return translation(x) + rotation(x); });
    b.PotentialEnergy(height);
    b.Holonomic("pin", pin_fn, 3);
  }
  return std::move(b).Build();
}

Eigen::Vector4d RandomQuaternion(std::mt19937* rng, double scale) {
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::Vector4d q(n(*rng), n(*rng), n(*rng), n(*rng));
  return scale * q / q.norm();
}

}  // namespace daedalus::testing
