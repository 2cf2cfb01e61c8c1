// Andrews' squeezing mechanism, the seven-body mechanism of Schiehlen's
// benchmark (Manning 1981; Hairer and Wanner, Solving ODEs II, VII.7), as
// the "Test Set for IVP Solvers" defines it (Mazzia and Magherini, Univ. of
// Bari, release 2.4, problem "andrews"). Planar, seven angles
//
//   q = (beta, theta, gamma, phi, delta, omega, epsilon)
//
// (the Test Set's y1..y7; beta the driven crank, theta relative to it,
// gamma the body hinged at B, phi and delta the chain to A, omega and
// epsilon the second chain to A), six holonomic rows closing the three
// loops, one degree of freedom. The Test Set writes the equations as
//
//   M(q) q'' = f(q, q') - G(q)' lambda_ts,   g(q) = 0,  G = dg/dq,
//
// with M its 7 x 7 mass matrix (entries 1-2, 3, 4-5 and 6-7 coupled; three
// of them depend on theta, phi and omega), f = the Coriolis and centrifugal
// terms of those entries, the driving torque mom on beta and the spring's
// generalized force on gamma. Here the same equations come from
//
//   T = v' M(q) v / 2, v = dq/dt (written entry by entry),
//   V = c0 (l - l0)^2 / 2, l = |D(gamma) - C|, D = B + (sd cos gamma +
//       sc sin gamma, sd sin gamma - sc cos gamma), C = (xc, yc),
//   Q_r = (mom, 0, 0, 0, 0, 0, 0),
//   loop_b (2 rows) = (g1, g2), loop_a1 (2) = (g3, g4), loop_a2 (2) = (g5, g6),
//
// Lagrange's equations of T reproduce the Test Set's velocity terms f1, f2,
// f4..f7 exactly (checked term by term: e.g. M11 and M12 depend on theta,
// giving f1 = mom - m2 da rr theta' (theta' + 2 beta') sin theta), and
// -dV/dgamma is its f3. Daedalus writes M v' + h = Q + J' lambda
// (docs/conventions.md), so its multipliers are minus the Test Set's:
// lambda = -y22..y27.
//
// Parameters: the Test Set's 42, under its names (masses m1..m7 [kg],
// inertias i1..i7 [kg m^2], fixed points xa, ya, xb, yb, xc, yc [m], lengths
// [m], the spring's c0 = 4530 N/m and l0 = 0.07785 m, the torque
// mom = 0.033 N m). Initial state: the Test Set's consistent values at
// t = 0 (positions to 30 digits, at rest; its initial accelerations
// 14222.44 and -10666.83 rad/s^2 for beta and theta follow). They are
// consistent for the default parameters only: with another geometry the
// start is projected onto the loops and the correction reported.
//
// Published reference at t = 0.03 s (kAndrewsReference below): the Test
// Set's andsoln, computed with PSIDE at rtol = atol = 1e-14 on a Cray C90
// (andrews.f, revision 1.2 of 2006-10-02).
#pragma once

#include <array>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// The Test Set's reference solution at t = 0.03 s: positions [rad],
/// velocities [rad/s] and Daedalus's multipliers [N], which are minus the
/// Test Set's y22..y27 (docs/conventions.md).
struct AndrewsReference {
  std::array<double, 7> q, v;
  std::array<double, 6> lambda;
};
inline constexpr AndrewsReference kAndrewsReference{
    {0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
     -0.5347301163226948e+0, 0.5244099658805304e+0, 0.5347301163226948e+0,
     0.1048080741042263e+1},
    {0.1139920302151208e+4, -0.1424379294994111e+4, 0.1103291221937134e+2,
     0.1929337464421385e+2, 0.5735699284790808e+0, -0.1929337464421385e+2,
     0.3231791658026955e+0},
    {-0.1991753333731910e+3, 0.2975531228015052e+2, -0.2306654119098399e+2,
     -0.3145271365475927e+2, -0.2264249232082739e+2, -0.1161740700019673e+2}};

Problem AndrewsSqueezerProblem();

}  // namespace daedalus::problems
