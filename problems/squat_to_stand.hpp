// A planar, torque-driven human rising from a squat (issue 38: "a humanoid
// motion with joint limits and feet fixed"; the optimal control of it is in
// examples/optimal_control/squat_to_stand.json, docs/optimal_control.md).
//
// Sagittal plane, x forward, y up, the ankle at the origin. The feet are
// fixed to the ground (not modelled: they do not move), both legs move
// together (one shank and one thigh of twice a leg's mass), and the head,
// arms and trunk (HAT) are split at the lumbar joint L4-L5 into a pelvis
// and an upper body. Coordinates are the four joint angles, 0 upright,
// positive in flexion (at the ankle: dorsiflexion):
//   q_ankle   shank's tilt forward from the vertical,
//   q_knee    knee flexion (the thigh tilts back),
//   q_hip     hip flexion (the pelvis tilts forward relative to the thigh),
//   q_lumbar  lumbar flexion (the upper body forward relative to the pelvis).
// Absolute angles from the vertical (clockwise, toward +x):
//   th_shank = q_ankle, th_thigh = th_shank - q_knee,
//   th_pelvis = th_thigh + q_hip, th_upper = th_pelvis + q_lumbar,
// and a segment along th points along e(th) = (sin th, cos th).
//
// Anthropometry: Winter, Biomechanics and Motor Control of Human Movement,
// 4th ed. (2009), Table 4.1 (Dempster's data) for the masses, centre-of-
// mass positions and radii of gyration, and Figure 4.1 (Drillis and
// Contini) for the lengths as fractions of the height H: ankle 0.039 H,
// knee 0.285 H, hip (greater trochanter) 0.530 H, shoulder (glenohumeral)
// 0.818 H above the ground.
//   shank (leg, femoral condyles - medial malleolus): 0.0465 M per leg,
//     COM 0.433 of its length from the knee, radius of gyration 0.302;
//   thigh (greater trochanter - femoral condyles): 0.100 M per leg, COM
//     0.433 from the hip, radius of gyration 0.323;
//   HAT (greater trochanter - glenohumeral joint): 0.678 M, COM 0.626 of the
//     hip-shoulder distance above the hip, radius of gyration 0.496;
//   pelvis (L4-L5 - greater trochanter): 0.142 M, COM 0.105 of its length
//     from L4-L5. The table gives it no radius of gyration: it is a point
//     mass here.
// The upper body (above L4-L5) is the rest of the HAT, 0.536 M, with the
// COM and the moment of inertia that make pelvis and upper body together
// Winter's HAT exactly when q_lumbar = 0 (parallel-axis theorem). The
// table gives no height of L4-L5; it is taken at `lumbar_fraction` (default
// 1/4, an assumption) of the hip-shoulder distance above the hip.
//
// Inputs: one torque actuator per joint, "ankle", "knee", "hip", "lumbar",
// whose channel is the torque as a fraction of the joint's peak torque
// (tau_max_<joint>, kTauMax), as OpenSim's CoordinateActuator scales its
// control by an optimal force: joint torque tau_k = tau_max_k u_k [N m],
// positive in flexion, generalized force tau_max_k u_k e_k (the torque on
// the relative angle q_k). |u_k| <= 1 is the peak-torque bound and
// int sum u_k^2 dt the normalized effort. By default each channel holds the
// squat: it applies the static gravity torque dV/dq at the squat posture
// (HoldTorques), so the default run stays at rest in the squat (an unstable
// equilibrium). The optimal control replaces the channels by splines. Joint
// limits are the optimal control's path constraints on the functionals
// q_<joint> (docs/optimal_control.md, "squat_to_stand").
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstddef>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

namespace squat_detail {

// Winter (2009), Table 4.1 and Figure 4.1 (see above).
inline constexpr double kShankMass = 2 * 0.0465;  // both legs, of M
inline constexpr double kThighMass = 2 * 0.100;
inline constexpr double kHatMass = 0.678;
inline constexpr double kPelvisMass = 0.142;
inline constexpr double kShankLength = 0.285 - 0.039;  // of H
inline constexpr double kThighLength = 0.530 - 0.285;
inline constexpr double kTrunkLength = 0.818 - 0.530;  // hip to shoulder
inline constexpr double kShankCom = 1.0 - 0.433;       // from the ankle
inline constexpr double kThighCom = 1.0 - 0.433;       // from the knee
inline constexpr double kHatCom = 0.626;               // from the hip
inline constexpr double kPelvisCom = 1.0 - 0.105;      // from the hip
inline constexpr double kShankGyration = 0.302;
inline constexpr double kThighGyration = 0.323;
inline constexpr double kHatGyration = 0.496;

struct Params {
  Param mass, height, g, lumbar_fraction;
  std::array<Param, 4> squat;    // the squat's joint angles [rad]
  std::array<Param, 4> tau_max;  // peak joint torques [N m]
};

/// Peak joint torques [N m], both legs: the knee 2 x 3.2 N m/kg x 75 kg
/// (isometric knee extension of adult men at mid-range angles, 2.92-3.45
/// N m/kg per leg: Sarabon, Kozinc and Perman, Front. Physiol. 12:767941,
/// 2021); the hip taken equal to the knee, the ankle and the lumbar joint
/// 300 N m (assumptions: no source checked for them).
inline constexpr std::array<double, 4> kTauMax = {300.0, 480.0, 480.0, 300.0};

/// Segment properties for body mass M [kg] and height H [m]: masses m,
/// lengths L (joint to joint), COM distances c from the lower joint,
/// moments of inertia I about the COM. Index 0..3: shank, thigh, pelvis,
/// upper body (the pelvis's I is 0, its L the hip to L4-L5 distance).
template <class S>
struct Segments {
  std::array<S, 4> m, L, c, I;
};

template <class S>
Segments<S> Anthropometry(const S& M, const S& H, const S& lumbar_fraction) {
  Segments<S> s;
  s.m = {kShankMass * M, kThighMass * M, kPelvisMass * M,
         (kHatMass - kPelvisMass) * M};
  const S trunk = kTrunkLength * H;
  s.L = {kShankLength * H, kThighLength * H, lumbar_fraction * trunk, trunk};
  s.c[0] = kShankCom * s.L[0];
  s.c[1] = kThighCom * s.L[1];
  s.c[2] = kPelvisCom * s.L[2];
  // Upper body: HAT's COM and inertia less the pelvis's share, heights
  // above the hip along the trunk.
  const S m_hat = kHatMass * M;
  const S y_hat = kHatCom * trunk;
  const S y_upper = (m_hat * y_hat - s.m[2] * s.c[2]) / s.m[3];
  s.c[3] = y_upper - s.L[2];
  const S r_hat = kHatGyration * trunk;
  const S dp = s.c[2] - y_hat, du = y_upper - y_hat;
  s.I[0] = s.m[0] * (kShankGyration * s.L[0]) * (kShankGyration * s.L[0]);
  s.I[1] = s.m[1] * (kThighGyration * s.L[1]) * (kThighGyration * s.L[1]);
  s.I[2] = S(0.0);
  s.I[3] = m_hat * r_hat * r_hat - s.m[2] * dp * dp - s.m[3] * du * du;
  return s;
}

/// Absolute segment angles from the joint angles q (4 entries).
template <class S, class Q>
std::array<S, 4> AbsoluteAngles(const Q& q) {
  const S shank = q[0];
  const S thigh = shank - q[1];
  const S pelvis = thigh + q[2];
  return {shank, thigh, pelvis, S(pelvis + q[3])};
}

/// The segments' COM positions (x, y) [m] at joint angles q; `joint`, if
/// given, receives the lower joint of each segment (ankle, knee, hip,
/// L4-L5).
template <class S, class Q>
std::array<Eigen::Matrix<S, 2, 1>, 4> ComPositions(
    const Segments<S>& s,
    const Q& q,
    std::array<Eigen::Matrix<S, 2, 1>, 4>* joint = nullptr) {
  const std::array<S, 4> th = AbsoluteAngles<S>(q);
  std::array<Eigen::Matrix<S, 2, 1>, 4> com;
  S x = S(0.0), y = S(0.0);  // the segment's lower joint
  for (size_t i = 0; i < 4; ++i) {
    const S ex = sin(th[i]), ey = cos(th[i]);
    if (joint) (*joint)[i] = Eigen::Matrix<S, 2, 1>(x, y);
    com[i] = Eigen::Matrix<S, 2, 1>(x + s.c[i] * ex, y + s.c[i] * ey);
    x = x + s.L[i] * ex;
    y = y + s.L[i] * ey;
  }
  return com;
}

/// T = sum_i m_i |c_i'|^2 / 2 + I_i th_i'^2 / 2, with c_i' summed along
/// the chain: each segment below moves its top joint by L_j th_j' n(th_j),
/// n(th) = de/dth = (cos th, -sin th).
template <class X>
Scalar<X> KineticEnergy(const X& x, const Params& P) {
  using S = Scalar<X>;
  const Segments<S> s =
      Anthropometry(x.p[P.mass], x.p[P.height], x.p[P.lumbar_fraction]);
  const std::array<S, 4> th = AbsoluteAngles<S>(x.q);
  const std::array<S, 4> w = AbsoluteAngles<S>(x.v);  // the same linear map
  S vx = S(0.0), vy = S(0.0);  // the velocity of the segment's lower joint
  S T = S(0.0);
  for (size_t i = 0; i < 4; ++i) {
    const S nx = cos(th[i]), ny = -sin(th[i]);
    const S cx = vx + s.c[i] * w[i] * nx, cy = vy + s.c[i] * w[i] * ny;
    T += 0.5 * s.m[i] * (cx * cx + cy * cy) + 0.5 * s.I[i] * w[i] * w[i];
    vx = vx + s.L[i] * w[i] * nx;
    vy = vy + s.L[i] * w[i] * ny;
  }
  return T;
}

/// V = g sum_i m_i y_i (0 at the ankle's height).
template <class X>
Scalar<X> PotentialEnergy(const X& x, const Params& P) {
  using S = Scalar<X>;
  const Segments<S> s =
      Anthropometry(x.p[P.mass], x.p[P.height], x.p[P.lumbar_fraction]);
  const auto com = ComPositions(s, x.q);
  S V = S(0.0);
  for (size_t i = 0; i < 4; ++i) V += s.m[i] * com[i][1];
  return x.p[P.g] * V;
}

/// The gravity torques dV/dq at joint angles q, in closed form: the moment
/// about each joint of the weights of the segments above it,
///   dV/dq_ankle  = -g sum_{i>=0} m_i (x_i - x_ankle),
///   dV/dq_knee   = +g sum_{i>=1} m_i (x_i - x_knee)   (th decreases),
///   dV/dq_hip    = -g sum_{i>=2} m_i (x_i - x_hip),
///   dV/dq_lumbar = -g m_3 (x_3 - x_L4L5),
/// since d(y of a point at distance r along th)/dth = -(its x offset).
/// The torques that hold the posture at rest.
template <class S, class Q>
Eigen::Matrix<S, 4, 1> GravityTorques(const Segments<S>& s,
                                      const S& g,
                                      const Q& q) {
  std::array<Eigen::Matrix<S, 2, 1>, 4> joint;
  const auto com = ComPositions(s, q, &joint);
  Eigen::Matrix<S, 4, 1> tau;
  for (size_t k = 0; k < 4; ++k) {
    S moment = S(0.0);
    for (size_t i = k; i < 4; ++i) moment += s.m[i] * (com[i][0] - joint[k][0]);
    tau[Eigen::Index(k)] = (k == 1 ? 1.0 : -1.0) * g * moment;
  }
  return tau;
}

/// The torques holding the squat (the parameters' squat angles): the
/// channels' default values.
template <class S>
Eigen::Matrix<S, 4, 1> HoldTorques(const VecX<S>& p, const Params& P) {
  const Segments<S> s =
      Anthropometry(p[P.mass], p[P.height], p[P.lumbar_fraction]);
  Eigen::Matrix<S, 4, 1> q;
  for (int k = 0; k < 4; ++k) q[k] = p[P.squat[size_t(k)]];
  return GravityTorques(s, p[P.g], q);
}

}  // namespace squat_detail

/// The joints, in coordinate order; the input channels and the
/// functionals q_<joint>, v_<joint> carry these names.
inline constexpr std::array<const char*, 4> kSquatJoints = {"ankle", "knee",
                                                            "hip", "lumbar"};

Problem SquatToStandProblem();

}  // namespace daedalus::problems
