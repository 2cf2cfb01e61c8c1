// The woodpecker toy of Glocker and Pfeiffer (docs/problems.md,
// "woodpecker_toy"): a sleeve (mass m_M, inertia J_M) with a hole
// slightly wider than the pole it slides down, and a bird (m_S, J_S)
// hinged to it through a torsional spring c_phi. Its descent is a limit
// cycle of stick, slip, impacts of the beak on the pole and jams of the
// sleeve, all by Coulomb friction with impacts (C. Glocker, "Dynamik von
// Starrkoerpersystemen mit Reibung und Stoessen", VDI 1995; F. Pfeiffer
// and C. Glocker, "Multibody Dynamics with Unilateral Contacts", Wiley
// 1996, section 9.2; the parameters as in Siconos's and cardillo's
// examples). Glocker's model linearized for small angles: coordinates
// (y, phi_M, phi_S) (the sleeve's height, the sleeve's and the bird's
// angles), a constant mass matrix
//
//   M = [[m_S + m_M, m_S l_M,          m_S l_G          ],
//        [m_S l_M,   J_M + m_S l_M^2,  m_S l_M l_G      ],
//        [m_S l_G,   m_S l_M l_G,      J_S + m_S l_G^2  ]],
//
//   V = (m_S + m_M) g y + m_S g (l_M phi_M + l_G phi_S)
//       + c_phi (phi_M - phi_S)^2 / 2,
//
// and three contacts on the pole, each with friction mu = 0.3 on its
// tangential (vertical) velocity:
//
//   beak   l_M + l_G - l_S - r_0 - h_S phi_S >= 0, e = 0.5,
//          slip y' + l_M phi_M' + (l_G - l_S) phi_S';
//   sleeve_lower  r_M - r_0 + h_M phi_M >= 0, e = 0, slip y' + r_M phi_M';
//   sleeve_upper  r_M - r_0 - h_M phi_M >= 0, e = 0, slip y' + r_M phi_M'.
//
// The run starts on (near) the limit cycle (cardillo's initial state,
// with phi_M set so that the lower sleeve contact touches exactly);
// its period is about 0.146 s (Glocker 1995).
#pragma once

#include "daedalus/model.hpp"
#include "daedalus/run.hpp"

namespace daedalus::problems {

Problem WoodpeckerToyProblem();

}  // namespace daedalus::problems
