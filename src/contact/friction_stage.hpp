// Coulomb friction on event-driven contacts (docs/friction.md): a stage
// around the contact stage (contact_stage.hpp) that gives each closed
// contact with a ContactLaw::friction its tangential mode,
//
//   stick: the tangential rows (a Nonholonomic constraint, 1 row planar, 2
//          rows for a 3D isotropic cone) are closed, bilateral velocity
//          constraints, admissible while |lambda_t| <= mu_s lambda_n;
//   slip:  the tangential rows are open but keep their J row, and the KKT
//          solve replaces their equation by lambda_t = -mu_k sigma
//          lambda_n (Workspace::slip; kkt.cpp, LU on the nonsymmetric
//          system), so that J_t' lambda_t is the kinetic friction force
//          and lambda_t J_t v its (negative) power;
//
// with one witness per contact, falling through zero: mu_s lambda_n -
// |lambda_t| while it sticks (stick -> slip), sigma . v_t while it slips
// (the slip stops: stick if mu_s lambda_n holds it, else it slips on,
// reversed). A slipping contact whose normal force its friction would
// make pull (Painleve) ends the run naming the contact and mu. The
// contact stage decides impacts and the normal modes (frictionless: the
// friction rows are in none of its LCPs); this stage then decides the
// friction modes of the closed contacts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "daedalus/simulate.hpp"
#include "events/mode_switch.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// Whether the constraint `name` is the tangential constraint of a
/// contact with friction (ContactLaw::friction).
bool IsFrictionRows(const ModelData& d, const std::string& name);

/// A contact's Coulomb friction as a run applies it: its tangential
/// constraint and rows, mu_static and mu_kinetic (a negative mu_kinetic
/// takes mu_static; parameters read from p).
struct FrictionLaw {
  int constraint = -1;
  std::vector<int> rows;
  double mu_static = 0.0, mu_kinetic = 0.0;
  /// The parameters they are read from, or -1 (a constant).
  int mu_static_param = -1, mu_kinetic_param = -1;
};
/// @throws std::invalid_argument naming the contact for a negative or NaN
/// coefficient.
FrictionLaw ResolveFriction(const Model& m,
                            const std::string& contact,
                            const ContactLaw& law,
                            const Eigen::VectorXd& p);

/// The friction stage around the run's contact stage `contact`.
std::unique_ptr<ModeSwitcher> MakeFrictionStage(
    Mechanics* mech,
    const SimulationOptions& options,
    SimulationSummary* sum,
    std::unique_ptr<ModeSwitcher> contact);

}  // namespace daedalus::internal
