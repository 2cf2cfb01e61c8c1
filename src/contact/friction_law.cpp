// Coulomb friction laws as a run applies them (friction_stage.hpp).
#include <sstream>
#include <stdexcept>

#include "contact/friction_stage.hpp"

namespace daedalus::internal {

FrictionLaw ResolveFriction(const Model& m,
                            const std::string& contact,
                            const ContactLaw& law,
                            const Eigen::VectorXd& p) {
  FrictionLaw f;
  if (!law.mu_static_parameter.empty())
    f.mu_static_param = m.ParameterIndex(law.mu_static_parameter);
  if (!law.mu_kinetic_parameter.empty())
    f.mu_kinetic_param = m.ParameterIndex(law.mu_kinetic_parameter);
  f.mu_static = f.mu_static_param < 0 ? law.mu_static : p[f.mu_static_param];
  f.mu_kinetic =
      f.mu_kinetic_param < 0 ? law.mu_kinetic : p[f.mu_kinetic_param];
  if (f.mu_kinetic < 0.0 && f.mu_kinetic_param < 0) {
    f.mu_kinetic = f.mu_static;
    f.mu_kinetic_param = f.mu_static_param;
  }
  if (!(f.mu_static >= 0.0) || !(f.mu_kinetic >= 0.0)) {
    std::ostringstream os;
    os << "contact '" << contact
       << "': friction coefficient mu_static = " << f.mu_static
       << ", mu_kinetic = " << f.mu_kinetic << " (parameters '"
       << law.mu_static_parameter << "', '" << law.mu_kinetic_parameter
       << "') is negative or NaN; Coulomb's mu is >= 0";
    throw std::invalid_argument(os.str());
  }
  const ModelData& d = m.data();
  for (int cj = 0; cj < m.num_constraints(); ++cj) {
    const ConstraintDecl& t = d.constraints[static_cast<size_t>(cj)];
    if (t.name != law.friction) continue;
    f.constraint = cj;
    for (int r = 0; r < t.rows; ++r) f.rows.push_back(m.constraint_row(cj) + r);
  }
  return f;
}

bool IsFrictionRows(const ModelData& d, const std::string& name) {
  for (const ConstraintDecl& c : d.constraints)
    if (c.unilateral && c.law && c.law->friction == name) return true;
  return false;
}

}  // namespace daedalus::internal
