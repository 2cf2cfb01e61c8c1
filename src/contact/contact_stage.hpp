// The contact stage (docs/contact.md): the active set of a run's
// unilateral contacts and what changes it. Each unilateral row is a
// contact, open (no constraint row; its gap Phi_i >= 0 watched) or closed
// (a row with lambda_i >= 0 watched). Its witnesses are root functions
// (the gap of an open contact reaching 0 while it approaches, the
// multiplier of a closed one reaching 0); at a root the stage
//
//   1. gathers the contacts that touch (closed, or gap within
//      ContactOptions::gap_tolerance),
//   2. when one approaches, solves the impact as an impulse LCP over all
//      of them (Newton's law u+ + e u- >= 0, P >= 0, complementary, or
//      Poisson's in two phases; with the Coulomb cone of the planar
//      contacts with friction: impulse.hpp, contact_problems.hpp),
//   3. decides which of those that do not separate stay closed by the
//      acceleration LCP (Phi'' >= 0, lambda >= 0, complementary),
//   4. sets the Mechanics' open rows, projects the restart onto the new
//      mode and hands the adapter the restart (events/mode_switch.hpp).
//
// It records every switch (ContactEvent) and, at every sample, the
// feasibility certificate of the mode (gaps of open contacts, multipliers
// of closed ones).
#pragma once

#include <memory>
#include <vector>

#include "daedalus/simulate.hpp"
#include "events/mode_switch.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// The contact stage of a run, or nullptr when the run does not treat its
/// unilateral rows as event-driven contacts (ContactOptions::mode).
/// @throws std::invalid_argument for a restitution parameter outside
/// [0, 1].
/// A contact switch into the report (its counts, the rest time) and the
/// run's event list; `closed` the contacts' modes after it.
void BookContactEvent(const ContactEvent& ev,
                      const std::vector<bool>& closed,
                      SimulationSummary* sum);

std::unique_ptr<ModeSwitcher> MakeContactStage(Mechanics* mech,
                                               const SimulationOptions& options,
                                               SimulationSummary* sum);

}  // namespace daedalus::internal
