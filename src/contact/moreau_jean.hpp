// Moreau-Jean time stepping (--integrator moreau-jean; docs/moreau_jean.md):
// the theta-method at velocity level with the contacts as impulses, after
// Moreau ("Unilateral contact and dry friction in finite freedom dynamics",
// CISM 302, 1988), Jean (Comput. Methods Appl. Mech. Engrg. 177, 1999) and
// Acary and Brogliato ("Numerical Methods for Nonsmooth Dynamical Systems",
// Springer 2008, chapter 10), Siconos's MoreauJeanOSI. Each fixed step h
// from (t, q, v-):
//
//   M(q) (v+ - v-) = h f(t, q, v-) + J' P
//   q+ = q + h (theta v+ + (1 - theta) v-)
//
// with P the impulses of the step's active rows: every bilateral row
// (J_i v+ + Phi_t,i = 0), and every contact whose gap predicted at the
// end of the step, Phi_i + h u_i-, is <= 0 (Newton's law u_n+ + e u_n- >= 0
// complementary to P_n >= 0; Coulomb's cone on its tangential rows when it
// declares friction), solved by cone_solver.hpp with W = J M^-1 J' built
// from M's Cholesky factor (no inverse). The contact stage of this scheme:
// the integrator dispatch (integrate/simulate.cpp) reaches it by one call.
#pragma once

#include "daedalus/simulate.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// Integrates with Moreau-Jean from x0 and fills `sum` (its identity from
/// StartSummary); a failure during the run (a stalled cone solve, a
/// singular M) ends it with the samples so far and the reason in
/// sum->error. @throws std::invalid_argument for a restitution or a
/// friction coefficient out of range.
void IntegrateMoreauJean(Mechanics* mech,
                         const InitialState& x0,
                         const SimulationOptions& options,
                         Observer* observer,
                         SimulationSummary* sum);

}  // namespace daedalus::internal
