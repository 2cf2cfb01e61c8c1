// Planar chain of N uniform rigid links in maximal (body) coordinates.
//
// Body i has coordinates (x_i, y_i, theta_i): the position of its centre
// and its angle from the hanging vertical, so that the link points along
// d_i = (sin theta_i, -cos theta_i). Links have length l = L/N, mass m =
// m_tot/N and inertia I = m l^2 / 12 about the centre (total length L = 1 m and
// total mass m_tot = 1 kg whatever N). Joints are revolute, two rows each:
//   pivot:    x_0 - l/2 sin theta_0 = 0,  y_0 + l/2 cos theta_0 = 0
//   joint_i:  (x_{i-1} + l/2 sin theta_{i-1}) - (x_i - l/2 sin theta_i) = 0
//             (y_{i-1} - l/2 cos theta_{i-1}) - (y_i + l/2 cos theta_i) = 0
// T = sum_i (m (vx_i^2 + vy_i^2) + I omega_i^2) / 2,  V = sum_i m g y_i.
// Each joint declares the six (or three) coordinates it touches and each
// body its 3 x 3 mass block, so M is block diagonal and J has at most six
// entries per row: the structure the sparse KKT path exploits
// (docs/performance.md). Released at rest as a straight chain at 0.3 rad
// from the hanging vertical.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// Release angle of the straight chain from the hanging vertical [rad].
inline constexpr double kChainReleaseAngle = 0.3;

/// base + i, appended (GCC 12 reports a false -Wrestrict for "x" + string).
inline std::string IndexedName(const char* base, int i) {
  std::string s = base;
  s += std::to_string(i);
  return s;
}

Problem ChainProblem(int n);

/// Tip (free end of the last link) of the maximal-coordinate chain.
inline Eigen::Vector2d ChainTip(const Eigen::VectorXd& q, double length = 1.0) {
  const Eigen::Index n = q.size() / 3;
  const double h = 0.5 * length / static_cast<double>(n);
  const double x = q[3 * n - 3], y = q[3 * n - 2], th = q[3 * n - 1];
  return {x + h * std::sin(th), y - h * std::cos(th)};
}

}  // namespace daedalus::problems
