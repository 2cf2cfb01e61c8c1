// Accumulation (Zeno) by the integrator's resolution (docs/contact.md,
// "Accumulation (Zeno)"). A contact that leaves an impact at normal speed
// u+ > 0 under a free-flight gap acceleration a < 0 (with it open) flies
// for 2 u+ / |a| and rises
//
//   h = u+^2 / (2 |a|)
//
// above the surface. Below the integrator's resolution of the gap, or in
// a flight shorter than the root finder can separate from the impact, the
// bounce is noise (its witness cannot tell it from zero): the contact
// closes for good. The gap's resolution is the local error tolerance of
// the coordinates that move it, through the contact's Jacobian,
//
//   delta_i = sum_j |J_ij| (atol + rtol |q_j|)
//
// (the error weights of CVODES and IDAS, Hindmarsh et al., ACM TOMS 31,
// 2005, section 2.1: a unit quaternion's error e turns it by about 2 e).
// Unlike a fixed speed, the criterion scales with the units, gravity and
// the tolerances: a bouncing ball in millimetres or in weak gravity rests
// where the run stops resolving it.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "contact/contact_problems.hpp"
#include "daedalus/model.hpp"
#include "daedalus/simulate.hpp"

namespace daedalus::internal {

/// A rebound counts as resolved when it rises more than this multiple of
/// the gap's resolution delta_i. 1: the bouncing ball at atol 1e-14 m then
/// rests within 1e-6 s of t_inf; its last resolved bounces, down to
/// 1e-14 m, still land within 1e-10 s of their closed form times
/// (docs/contact.md).
inline constexpr double kReboundResolution = 1.0;
/// An impact time enters the extrapolation of the accumulation point
/// (ContactReport::t_accumulation) when its rebound rises at least this
/// many times the resolution: the flights of bounces a few delta_i high
/// carry relative errors of about delta_i / h (the integrator's error on
/// the gap), which the extrapolation would inherit.
inline constexpr double kExtrapolationMargin = 1e3;
/// A contact that leaves an impact on a rebound rising less than this
/// many times the resolution restarts CVODES with a fine start
/// (ModeRestart::fine_start). After each restart CVODES rebuilds its
/// history from order 1, and its steps then carry errors near the
/// tolerance that along a free flight all lower the gap: about 1.5 delta_i
/// a flight, landing it delta_i / u+ early and slower, which the next
/// flights inherit and the accumulation multiplies by (1 + e) / (1 - e)
/// (measured on the bouncing ball, docs/contact.md). Their share of the
/// rest time goes as delta_i / u+ and so as the square root of the margin:
/// below 1e5 delta_i the fine start cuts it about tenfold, above it the
/// flights' share is a few 1e-8 s of the ball's and the fine start's extra
/// steps would be most of its cost.
inline constexpr double kFineStartMargin = 1e5;
/// Two roots closer in time than this times max(|t|, |t0|, |t_end|) are
/// not separated by SUNDIALS's root finder (its tolerance is 100 times the
/// unit round-off times |t| + |h|).
inline constexpr double kTimeResolution =
    100.0 * std::numeric_limits<double>::epsilon();

/// Per velocity j: the error tolerance atol + rtol |q_c| of the coordinate
/// c it moves (ModelData::velocity_of), 2 (atol + rtol) for the angular
/// velocity of a unit quaternion.
inline Eigen::VectorXd PositionTolerances(const std::vector<int>& velocity_of,
                                          int nv,
                                          const Eigen::VectorXd& q,
                                          double rtol,
                                          double atol) {
  Eigen::VectorXd w = Eigen::VectorXd::Constant(nv, 2.0 * (atol + rtol));
  for (size_t c = 0; c < velocity_of.size(); ++c) {
    const int j = velocity_of[c];
    if (j >= 0) w[j] = atol + rtol * std::abs(q[static_cast<Eigen::Index>(c)]);
  }
  return w;
}

/// The gap resolution of the contact on row `row` of J: sum_j |J_ij| w_j.
inline double GapResolution(const Eigen::MatrixXd& J,
                            int row,
                            const Eigen::VectorXd& w) {
  return J.row(row).cwiseAbs().dot(w);
}

/// How far below where it is a separating contact's gap witness is
/// re-armed after a root that switches nothing (a spurious or grazing
/// root, docs/contact.md): kRearmResolutions of its gap resolutions, at
/// most gap_tolerance. The root was a gap at round-off zero: on IDAS, a
/// released contact's gap right after the restart, met by first steps of
/// 1e-14 s that move it less than its rounding (the rocking block's
/// accumulation on GGL). Re-armed a full gap_tolerance (1e-9 m) below,
/// the next impact of that corner came 1e-9 m deep, its projection tilted
/// the block and left the new pivot a tangential speed of 5e-9 of the
/// impact's normal one; at ten resolutions (2e-12 m there) it is below the
/// impulse LCP's tolerance, and still far above the noise of the gap.
inline constexpr double kRearmResolutions = 10.0;
inline double RearmDepth(const AllRows& x,
                         int row,
                         const Model& model,
                         const SimulationOptions& o,
                         const Eigen::VectorXd& q,
                         double gap_tolerance) {
  const Eigen::VectorXd w = PositionTolerances(model.data().velocity_of,
                                               model.nv(), q, o.rtol, o.atol);
  const double d = kRearmResolutions * GapResolution(x.J, row, w);
  return d > 0.0 ? std::min(d, gap_tolerance) : gap_tolerance;
}

/// How well a rebound at normal speed u_plus under the free-flight gap
/// acceleration a is resolved: min(h / (kReboundResolution delta), T /
/// tau) for its height h and flight time T; <= 1 below the resolution.
/// A gap that does not accelerate back (a >= 0) never accumulates
/// (infinity).
inline double ReboundMargin(double u_plus, double a, double delta, double tau) {
  if (!(a < 0.0)) return std::numeric_limits<double>::infinity();
  if (!(u_plus > 0.0)) return 0.0;
  const double height = u_plus * u_plus / (2.0 * -a);
  const double flight = 2.0 * u_plus / -a;
  const double inf = std::numeric_limits<double>::infinity();
  const double d = kReboundResolution * delta;
  return std::min(d > 0.0 ? height / d : inf, tau > 0.0 ? flight / tau : inf);
}

/// True when the rebound would rise no higher than kReboundResolution
/// delta or land within the time resolution tau (ReboundMargin <= 1).
inline bool ReboundBelowResolution(double u_plus,
                                   double a,
                                   double delta,
                                   double tau) {
  return ReboundMargin(u_plus, a, delta, tau) <= 1.0;
}

/// Per contact row of `rows` (model rows at `after`, the state (t, q, v+)
/// after an impact, with normal velocities u_plus): the ReboundMargin of
/// those that leave the impact (u_plus > utol; 0 for the others), under the
/// free-flight acceleration of its gap with every contact of `rows` open
/// and the `bilateral` rows closed (contact_problems.hpp), at the run's
/// tolerances o.rtol and o.atol.
inline std::vector<double> ReboundMargins(const AllRows& after,
                                          const std::vector<int>& rows,
                                          const std::vector<int>& bilateral,
                                          const Eigen::VectorXd& u_plus,
                                          double utol,
                                          const Model& model,
                                          const SimulationOptions& o,
                                          double t,
                                          const Eigen::VectorXd& q) {
  std::vector<double> out(rows.size(), 0.0);
  std::vector<int> leave, crows;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!(u_plus[static_cast<Eigen::Index>(i)] > utol)) continue;
    leave.push_back(static_cast<int>(i));
    crows.push_back(rows[i]);
  }
  if (leave.empty()) return out;
  const Eigen::VectorXd w = PositionTolerances(model.data().velocity_of,
                                               model.nv(), q, o.rtol, o.atol);
  const double tau = kTimeResolution *
                     std::max({std::abs(t), std::abs(o.t0), std::abs(o.t_end)});
  const Eigen::VectorXd a =
      ContactOperator(after, crows, bilateral).FreeAcceleration(after);
  for (size_t j = 0; j < leave.size(); ++j) {
    const size_t i = static_cast<size_t>(leave[j]);
    const Eigen::Index jj = static_cast<Eigen::Index>(j);
    out[i] = ReboundMargin(u_plus[static_cast<Eigen::Index>(i)], a[jj],
                           GapResolution(after.J, crows[j], w), tau);
  }
  return out;
}

/// A normal velocity below the integrator's resolution of the normal
/// velocities (NormalVelocityResolution), this fraction of an explicit
/// ContactOptions::zeno_velocity, or kVelocityRoundOff of the problem's
/// velocity scale counts as zero when the contact stage decides which
/// touching contacts separate: the post-impact velocity of a contact with
/// e > 0 that is not closed by accumulation is at least e v_zeno and
/// resolved, of a closing one zero to round-off.
inline constexpr double kZenoVelocityFraction = 1e-3;
inline constexpr double kVelocityRoundOff =
    64 * std::numeric_limits<double>::epsilon();

/// The integrator's resolution of the normal velocities of the contact
/// rows: max_i sum_j |J_ij| (atol + rtol |v_j|). A normal velocity below
/// it is zero to the run's accuracy.
inline double NormalVelocityResolution(const Eigen::MatrixXd& J,
                                       const std::vector<int>& rows,
                                       const Eigen::VectorXd& v,
                                       double rtol,
                                       double atol) {
  if (rows.empty() || v.size() == 0) return 0.0;
  const Eigen::VectorXd w = (rtol * v.cwiseAbs()).array() + atol;
  double out = 0.0;
  for (int r : rows) out = std::max(out, J.row(r).cwiseAbs().dot(w));
  return out;
}

}  // namespace daedalus::internal
