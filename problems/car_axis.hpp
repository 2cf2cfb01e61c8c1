// The car axis problem (Schneider, Rentrop: an index-3 DAE of a car axis on
// a bumpy road; Hairer and Wanner, Solving ODEs II, VII.1) as the "Test Set
// for IVP Solvers" defines it (Mazzia and Magherini, Univ. of Bari, release
// 2.4, problem "caraxis"). An axis of length L, its ends (xl, yl) and
// (xr, yr) each of mass eps^2 M / 2, hangs on two springs of unit stiffness
// and rest length L0: the left one from the left wheel at the origin, the
// right one from the right wheel at (xb, yb), which a bumpy road moves as
//
//   yb(t) = r sin(w t),  xb(t) = sqrt(L^2 - yb^2)
//
// (prescribed functions of time, not coordinates). The Test Set's ten
// unknowns are the four positions, their velocities (ul, vl, ur, vr) and two
// multipliers, with
//
//   x' = u,  k u' = f(t, x) + G(t, x)' lambda,  g(t, x) = 0,
//   k = M eps^2 / 2,
//   f = ((L0 - Ll) xl / Ll, (L0 - Ll) yl / Ll - k g,
//        (L0 - Lr) (xr - xb) / Lr, (L0 - Lr) (yr - yb) / Lr - k g),
//   Ll = |(xl, yl)|,  Lr = |(xr, yr) - (xb, yb)|,
//   g1 = xb xl + yb yl,  g2 = (xl - xr)^2 + (yl - yr)^2 - L^2.
//
// As a Daedalus model (coordinates xl, yl, xr, yr; nq = nv = 4):
//
//   T = k |v|^2 / 2,
//   V = (Ll - L0)^2 / 2 + (Lr - L0)^2 / 2 + k g (yl + yr)   (time-dependent
//       through xb, yb),
//   left_normal (moving, 1 row) = g1: the left end moves on the normal
//       through the left wheel to the line between the wheels,
//   axis_length (holonomic, 1 row) = g2.
//
// Lagrange's equations M v' + h = Q + J' lambda (docs/conventions.md) are
// then k v' = -dV/dx + J' lambda, and -dV/dx is the Test Set's f term by
// term, so they are its equations exactly, with the same multipliers
// (lambda1, lambda2). The small mass makes the springs fast (about
// 45 rad/s against the road's 10 rad/s).
//
// Initial state: the Test Set's consistent values (xl, yl, xr, yr) =
// (0, L0, L, L0), velocities (-L0/L, 0, -L0/L, 0), multipliers 0. Those
// velocities satisfy J v + Phi_t = 0 at t = 0 because r w = 1; the start
// here takes xl' = xr' = -r w L0 / L, the same at the defaults and
// consistent for any parameters (r < L is required: std::invalid_argument).
//
// Published reference at t = 3 (kCarAxisReference): the Test Set's,
// computed with GAMD in quadruple precision (release 2.4, given to 21
// digits; the earlier release's double-precision values, caraxis.f revision
// 1.2, agree with it to 2e-14 in the positions and 2e-10 in the
// multipliers).
#pragma once

#include <array>

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

/// The Test Set's reference solution at t = 3: positions [m], velocities
/// [m/s] and multipliers (the same sign in Daedalus).
struct CarAxisReference {
  std::array<double, 4> q, v;
  std::array<double, 2> lambda;
};
inline constexpr CarAxisReference kCarAxisReference{
    {0.493455784275402809122e-1, 0.496989460230171153861e+0,
     0.104174252488542151681e+1, 0.373911027265361256927e+0},
    {-0.770583684040972357970e-1, 0.744686658723778553466e-2,
     0.175568157537232222276e-1, 0.770341043779251976443e+0},
    {-0.473688659084893324729e-2, -0.110468033125734368808e-2}};

Problem CarAxisProblem();

}  // namespace daedalus::problems
