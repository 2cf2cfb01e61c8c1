#include "support/quaternion_models.hpp"

#include <Eigen/Geometry>
#include <cmath>
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

// ---- the sensitivity tests' tops

// The heavy (Lagrange) top with its tip fixed at the origin, the orientation
// a unit quaternion R = (w, x, y, z) and the velocity the body angular
// velocity (nq = 4, nv = 3, nc = 0):
//   T = (I1 (w1^2 + w2^2) + I3 w3^2) / 2   (inertia about the tip),
//   V = mgl (R e3)_z = mgl (1 - 2 (x^2 + y^2)).
// Gravity couples the parameters into every row of the state.
Model QuaternionTop(const TopExtension& extend) {
  ModelBuilder b("quaternion_top");
  b.Quaternion("R");
  const Param i1 = b.Parameter("I1", 1.2, ParamRange::Positive());
  const Param i3 = b.Parameter("I3", 0.5, ParamRange::Positive());
  const Param mgl = b.Parameter("mgl", 2.0);
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * (x.p[i1] * (x.v[0] * x.v[0] + x.v[1] * x.v[1]) +
                  x.p[i3] * x.v[2] * x.v[2]);
  });
  b.PotentialEnergy([=](const auto& x) {
    return x.p[mgl] * (1.0 - 2.0 * (x.q[1] * x.q[1] + x.q[2] * x.q[2]));
  });
  if (extend) extend(&b, mgl);
  return std::move(b).Build();
}

// The start: tilted by 0.4 rad about the body x axis, spinning fast about
// its axis with a small transverse rate (nutation and precession both).
InitialState TopStart() {
  InitialState s;
  s.q = Eigen::Vector4d(std::cos(0.2), std::sin(0.2), 0.0, 0.0);
  s.v = Eigen::Vector3d(0.3, 0.0, 8.0);
  return s;
}

// The same top as a free body whose tip is held at the origin by a
// three-row holonomic constraint: coordinates the centre of mass c (3) and
// R (4), velocities c' (3) and the body angular velocity (3); nq = 7,
// nv = 6, nc = 3.
//   T = m |c'|^2 / 2 + (I1c (w1^2 + w2^2) + I3c w3^2) / 2,  V = m g c_z,
//   Phi = c - l R e3 = 0,   J = Phi_q N(q) (nc x nv).
// l moves the start (the caller's c0 = l R0 e3 and c0' = R0 (w0 x l e3)),
// so its sensitivities need the initial tangent d x0 / d l.
Model ConstrainedTop(const TopExtension& extend) {
  ModelBuilder b("constrained_top");
  b.Coordinates({"cx", "cy", "cz"});
  b.Quaternion("R");
  const Param m = b.Parameter("m", 1.5, ParamRange::Positive());
  const Param l = b.Parameter("l", 0.4, ParamRange::Positive());
  const Param i1 = b.Parameter("I1c", 0.3, ParamRange::Positive());
  const Param i3 = b.Parameter("I3c", 0.5, ParamRange::Positive());
  b.KineticEnergy([=](const auto& x) {
    return 0.5 * x.p[m] *
               (x.v[0] * x.v[0] + x.v[1] * x.v[1] + x.v[2] * x.v[2]) +
           0.5 * (x.p[i1] * (x.v[3] * x.v[3] + x.v[4] * x.v[4]) +
                  x.p[i3] * x.v[5] * x.v[5]);
  });
  b.PotentialEnergy(
      [=](const auto& x) { return x.p[m] * kQuatGravity * x.q[2]; });
  b.Holonomic(
      "tip",
      [=](const auto& x) {
        VecX<Scalar<decltype(x)>> r(3);
        const auto &w = x.q[3], &a = x.q[4], &bb = x.q[5], &c = x.q[6];
        // R e3 = (2 (a c + w b), 2 (b c - w a), 1 - 2 (a^2 + b^2))
        r[0] = x.q[0] - x.p[l] * 2.0 * (a * c + w * bb);
        r[1] = x.q[1] - x.p[l] * 2.0 * (bb * c - w * a);
        r[2] = x.q[2] - x.p[l] * (1.0 - 2.0 * (a * a + bb * bb));
        return r;
      },
      3);
  if (extend) extend(&b, m);
  return std::move(b).Build();
}

// The consistent start of the constrained top for length l, and its
// derivative d x0 / d l ((nq + nv) x 1).
InitialState ConstrainedStart(double l, Eigen::VectorXd* dx0_dl) {
  const InitialState top = TopStart();
  const Eigen::Quaterniond R(top.q[0], top.q[1], top.q[2], top.q[3]);
  const Eigen::Vector3d w = top.v;
  const Eigen::Vector3d axis = R * Eigen::Vector3d::UnitZ();
  const Eigen::Vector3d rate = R * w.cross(Eigen::Vector3d::UnitZ());
  InitialState s;
  s.q.resize(7);
  s.q << l * axis, top.q;
  s.v.resize(6);
  s.v << l * rate, w;
  if (dx0_dl) {
    dx0_dl->setZero(13);
    dx0_dl->segment<3>(0) = axis;
    dx0_dl->segment<3>(7) = rate;
  }
  return s;
}

}  // namespace daedalus::testing
