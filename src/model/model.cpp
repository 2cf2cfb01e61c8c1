#include "daedalus/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "model/affinity.hpp"
#include "model/invoke.hpp"
#include "model/names.hpp"

namespace daedalus {

const char* ToString(ConstraintKind kind) {
  switch (kind) {
    case ConstraintKind::kHolonomic:
      return "holonomic";
    case ConstraintKind::kMoving:
      return "moving";
    case ConstraintKind::kNonholonomic:
      return "nonholonomic";
  }
  return "?";
}

const char* ToString(EventDirection d) {
  switch (d) {
    case EventDirection::kAny:
      return "any";
    case EventDirection::kRising:
      return "rising";
    case EventDirection::kFalling:
      return "falling";
  }
  return "?";
}

EventDirection EventDirectionFromString(const std::string& s) {
  if (s == "any") return EventDirection::kAny;
  if (s == "rising") return EventDirection::kRising;
  if (s == "falling") return EventDirection::kFalling;
  throw std::invalid_argument("unknown event direction '" + s +
                              "'; valid: any, rising, falling");
}

// ---------------------------------------------------------------- Model

const std::string& Model::name() const { return data_->name; }
int Model::nq() const { return static_cast<int>(data_->coordinates.size()); }
int Model::nv() const { return static_cast<int>(data_->velocities.size()); }
int Model::nc() const { return data_->nc; }
int Model::num_constraints() const {
  return static_cast<int>(data_->constraints.size());
}
int Model::num_inputs() const { return static_cast<int>(data_->inputs.size()); }
int Model::num_parameters() const {
  return static_cast<int>(data_->parameter_names.size());
}
int Model::num_functionals() const {
  return static_cast<int>(data_->functionals.size());
}

int Model::FunctionalIndex(const std::string& name) const {
  std::string valid;
  for (size_t i = 0; i < data_->functionals.size(); ++i) {
    if (data_->functionals[i].name == name) return static_cast<int>(i);
    valid += (i ? ", " : "") + data_->functionals[i].name;
  }
  throw std::invalid_argument(
      "model '" + data_->name + "' declares no functional '" + name +
      "'; declared: " + (valid.empty() ? "(none)" : valid));
}

int Model::num_quadratures() const {
  return static_cast<int>(data_->quadratures.size());
}
const std::string& Model::quadrature_name(int i) const {
  return data_->quadratures.at(i).first;
}
const std::vector<std::string>& Model::coordinate_names() const {
  return data_->coordinates;
}
const std::vector<std::string>& Model::velocity_names() const {
  return data_->velocities;
}
const std::vector<internal::QuaternionBlock>& Model::quaternions() const {
  return data_->quaternions;
}
const std::vector<std::string>& Model::parameter_names() const {
  return data_->parameter_names;
}
const Eigen::VectorXd& Model::default_parameters() const {
  return data_->parameter_defaults;
}
int Model::ParameterIndex(const std::string& name) const {
  const auto& names = data_->parameter_names;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  std::ostringstream os;
  os << "model '" << data_->name << "': unknown parameter '" << name
     << "'; valid parameters are:";
  if (names.empty()) os << " (none)";
  for (const auto& n : names) os << " " << n;
  throw std::invalid_argument(os.str());
}
const std::vector<ParamRange>& Model::parameter_ranges() const {
  return data_->parameter_ranges;
}

std::string Model::ParameterRangeError(const Eigen::VectorXd& p) const {
  const auto& ranges = data_->parameter_ranges;
  for (size_t i = 0;
       i < ranges.size() && static_cast<Eigen::Index>(i) < p.size(); ++i) {
    if (!ranges[i].Contains(p[static_cast<Eigen::Index>(i)])) {
      std::ostringstream os;
      os.precision(17);
      os << "parameter '" << data_->parameter_names[i]
         << "' = " << p[static_cast<Eigen::Index>(i)]
         << " is outside its range: model '" << data_->name << "' declares it "
         << ranges[i].Describe();
      return os.str();
    }
  }
  return "";
}

std::string ParamRange::Describe() const {
  const bool lo = std::isfinite(lower), hi = std::isfinite(upper);
  std::ostringstream os;
  os.precision(17);
  if (!lo && !hi) return "any value";
  if (lo && !hi) {
    os << (lower_open ? "> " : ">= ") << lower;
  } else if (!lo && hi) {
    os << (upper_open ? "< " : "<= ") << upper;
  } else {
    os << "in " << (lower_open ? "(" : "[") << lower << ", " << upper
       << (upper_open ? ")" : "]");
  }
  return os.str();
}

const std::vector<internal::ConstraintDecl>& Model::constraints() const {
  return data_->constraints;
}
const std::vector<internal::InputChannel>& Model::inputs() const {
  return data_->inputs;
}
int Model::constraint_row(int i) const { return data_->constraint_rows.at(i); }
std::string Model::RowName(int r) const {
  for (int i = 0; i < num_constraints(); ++i) {
    const auto& c = data_->constraints[i];
    const int first = data_->constraint_rows[i];
    if (r >= first && r < first + c.rows) {
      if (c.rows == 1) return c.name;
      return c.name + "[" + std::to_string(r - first) + "]";
    }
  }
  return "row " + std::to_string(r);
}
bool Model::has_damping() const { return static_cast<bool>(data_->damping); }
bool Model::has_other_loads() const {
  return static_cast<bool>(data_->other_loads);
}
bool Model::has_moving_constraints() const {
  for (const auto& c : data_->constraints)
    if (c.kind == ConstraintKind::kMoving) return true;
  return false;
}
bool Model::has_nonholonomic_constraints() const {
  for (const auto& c : data_->constraints)
    if (c.kind == ConstraintKind::kNonholonomic) return true;
  return false;
}

// --------------------------------------------------------- ModelBuilder

ModelBuilder::ModelBuilder(std::string name)
    : data_(std::make_unique<internal::ModelData>()) {
  data_->name = std::move(name);
}

ModelBuilder& ModelBuilder::Coordinates(std::vector<std::string> names) {
  for (auto& n : names) {
    data_->velocity_of.push_back(static_cast<int>(data_->velocities.size()));
    data_->velocities.push_back(n);
    data_->coordinates.push_back(std::move(n));
  }
  return *this;
}

ModelBuilder& ModelBuilder::Quaternion(const std::string& name) {
  internal::QuaternionBlock b;
  b.name = name;
  b.q = static_cast<int>(data_->coordinates.size());
  b.v = static_cast<int>(data_->velocities.size());
  for (const char* c : {".w", ".x", ".y", ".z"}) {
    data_->coordinates.push_back(name + c);
    data_->velocity_of.push_back(-1);
  }
  for (const char* c : {".wx", ".wy", ".wz"})
    data_->velocities.push_back(name + c);
  data_->quaternions.push_back(std::move(b));
  return *this;
}

Param ModelBuilder::Parameter(const std::string& name,
                              double default_value,
                              ParamRange range) {
  if (!range.Contains(default_value)) {
    std::ostringstream os;
    os.precision(17);
    os << "model '" << data_->name << "': parameter '" << name
       << "' has default " << default_value << " outside its range "
       << range.Describe();
    throw std::invalid_argument(os.str());
  }
  for (const auto& n : data_->parameter_names) {
    if (n == name) {
      throw std::invalid_argument("model '" + data_->name + "': parameter '" +
                                  name + "' declared twice");
    }
  }
  data_->parameter_names.push_back(name);
  const Eigen::Index n = data_->parameter_defaults.size();
  data_->parameter_defaults.conservativeResize(n + 1);
  data_->parameter_defaults[n] = default_value;
  data_->parameter_ranges.push_back(range);
  if (!data_->parameter_time_support.empty())
    data_->parameter_time_support.emplace_back(
        -std::numeric_limits<double>::infinity(),
        std::numeric_limits<double>::infinity());
  return Param{n};
}

ModelBuilder& ModelBuilder::ParameterTimeSupport(Param p,
                                                 double from,
                                                 double to) {
  const auto np = static_cast<Eigen::Index>(data_->parameter_names.size());
  if (p.index < 0 || p.index >= np || !(from <= to))
    throw std::invalid_argument(
        "model '" + data_->name + "': ParameterTimeSupport(" +
        std::to_string(p.index) + ", " + std::to_string(from) + ", " +
        std::to_string(to) +
        "): needs a declared parameter and from <= to; declare the "
        "parameter first");
  if (data_->parameter_time_support.empty())
    data_->parameter_time_support.assign(
        static_cast<size_t>(np), {-std::numeric_limits<double>::infinity(),
                                  std::numeric_limits<double>::infinity()});
  data_->parameter_time_support[static_cast<size_t>(p.index)] = {from, to};
  return *this;
}

namespace {

// A second call of a builder function that takes one function (the kinetic
// energy, the damping matrix, ...) would silently drop the first one; a
// model that means both writes them as one function.
void RefuseSecond(bool already_set,
                  const std::string& model,
                  const char* what,
                  const char* how) {
  if (!already_set) return;
  throw std::invalid_argument("model '" + model + "': " + what +
                              " was already given; a second call would "
                              "replace the first. " +
                              how);
}

}  // namespace

void ModelBuilder::SetKinetic(internal::ScalarFn fn) {
  RefuseSecond(
      static_cast<bool>(data_->kinetic), data_->name,
      "the kinetic energy (KineticEnergy or MassMatrix)",
      "Write T as one function, or as a sum of KineticEnergyTerm calls.");
  data_->kinetic = std::move(fn);
}
void ModelBuilder::SetPotential(internal::ScalarFn fn) {
  RefuseSecond(
      static_cast<bool>(data_->potential), data_->name, "the potential energy",
      "Write V as one function, or as a sum of PotentialEnergyTerm calls.");
  data_->potential = std::move(fn);
}
void ModelBuilder::SetLagrangian(internal::ScalarFn fn) {
  RefuseSecond(static_cast<bool>(data_->lagrangian), data_->name,
               "the Lagrangian", "Write L as one function.");
  data_->lagrangian = std::move(fn);
}
void ModelBuilder::AddInput(const std::string& name,
                            internal::VectorFn column,
                            internal::ScalarFn value) {
  data_->inputs.push_back({name, std::move(column), std::move(value)});
}
void ModelBuilder::SetDamping(internal::MatrixFn fn) {
  RefuseSecond(static_cast<bool>(data_->damping), data_->name,
               "the damping matrix",
               "Return the sum D = D1 + D2 from one Damping function.");
  data_->damping = std::move(fn);
}
void ModelBuilder::SetOtherLoads(internal::VectorFn fn) {
  RefuseSecond(static_cast<bool>(data_->other_loads), data_->name,
               "the other-loads function Q_r",
               "Return the sum of the loads from one OtherLoads function.");
  data_->other_loads = std::move(fn);
}
void ModelBuilder::AddConstraint(const std::string& name,
                                 ConstraintKind kind,
                                 int rows,
                                 bool unilateral,
                                 internal::VectorFn fn,
                                 std::vector<int> coords) {
  data_->constraints.push_back(
      {name, kind, rows, unilateral, std::move(fn), std::move(coords)});
}
void ModelBuilder::AddKineticTerm(
    std::vector<int> coords,
    internal::ScalarFn fn,
    std::function<MatX<double>(const Eigen::VectorXd&)> constant_mass) {
  std::vector<int> given = coords;
  data_->kinetic_terms.push_back({std::move(coords), std::move(fn),
                                  std::move(constant_mass), std::move(given)});
}
void ModelBuilder::AddPotentialTerm(std::vector<int> coords,
                                    internal::ScalarFn fn) {
  data_->potential_terms.push_back({std::move(coords), std::move(fn)});
}

namespace {

// Sorts and checks a declared coordinate list (Touches).
void CheckTouches(const std::string& where,
                  const std::string& what,
                  int nq,
                  std::vector<int>* coords) {
  std::sort(coords->begin(), coords->end());
  for (size_t i = 0; i < coords->size(); ++i) {
    const int c = (*coords)[i];
    if (c < 0 || c >= nq)
      throw std::invalid_argument(where + what + " touches coordinate " +
                                  std::to_string(c) + ", the model has " +
                                  std::to_string(nq) + " (valid indices 0.." +
                                  std::to_string(nq - 1) + ")");
    if (i > 0 && (*coords)[i - 1] == c)
      throw std::invalid_argument(where + what + " lists coordinate " +
                                  std::to_string(c) + " twice in Touches");
  }
}

// The sum of energy terms as one function (for the dense path).
internal::ScalarFn SumOfTerms(std::vector<internal::EnergyTerm> terms) {
  auto shared = std::make_shared<const std::vector<internal::EnergyTerm>>(
      std::move(terms));
  internal::ScalarFn fn;
  fn.f0 = [shared](const Point<double>& x) {
    double s = 0.0;
    for (const auto& t : *shared) s += t.fn.f0(x);
    return s;
  };
  fn.f1 = [shared](const Point<D1>& x) {
    D1 s = 0.0;
    for (const auto& t : *shared) s += t.fn.f1(x);
    return s;
  };
  fn.f2 = [shared](const Point<D2>& x) {
    D2 s = 0.0;
    for (const auto& t : *shared) s += t.fn.f2(x);
    return s;
  };
  fn.f3 = [shared](const Point<D3>& x) {
    D3 s = 0.0;
    for (const auto& t : *shared) s += t.fn.f3(x);
    return s;
  };
  fn.m1 = [shared](const Point<M1>& x) {
    M1 s = 0.0;
    for (const auto& t : *shared) s += t.fn.m1(x);
    return s;
  };
  fn.m2 = [shared](const Point<M2>& x) {
    M2 s = 0.0;
    for (const auto& t : *shared) s += t.fn.m2(x);
    return s;
  };
  fn.tm1 = [shared](const Point<TM1>& x) {
    TM1 s = 0.0;
    for (const auto& t : *shared) s += t.fn.tm1(x);
    return s;
  };
  fn.tm2 = [shared](const Point<TM2>& x) {
    TM2 s = 0.0;
    for (const auto& t : *shared) s += t.fn.tm2(x);
    return s;
  };
  fn.fs = [shared](const Point<Sym>& x) {
    Sym s = 0.0;
    for (const auto& t : *shared) s += internal::Invoke(t.fn, x);
    return s;
  };
  return fn;
}

}  // namespace

void ModelBuilder::AddFunctional(const std::string& name,
                                 internal::ScalarFn running,
                                 internal::ScalarFn terminal) {
  for (const auto& f : data_->functionals) {
    if (f.name == name) {
      throw std::invalid_argument("model '" + data_->name + "': functional '" +
                                  name + "' declared twice");
    }
  }
  data_->functionals.push_back({name, std::move(running), std::move(terminal)});
}

void ModelBuilder::AddQuadrature(const std::string& name,
                                 internal::ScalarFn fn) {
  for (const auto& q : data_->quadratures) {
    if (q.first == name) {
      throw std::invalid_argument("model '" + data_->name + "': quadrature '" +
                                  name + "' declared twice");
    }
  }
  data_->quadratures.emplace_back(name, std::move(fn));
}

void ModelBuilder::AddEvent(const std::string& name,
                            internal::ScalarFn fn,
                            EventOptions options) {
  for (const auto& e : data_->events) {
    if (e.name == name) {
      throw std::invalid_argument("model '" + data_->name + "': event '" +
                                  name + "' declared twice");
    }
  }
  data_->events.push_back({name, std::move(fn), options, {}});
}

void ModelBuilder::AddReset(const std::string& event, internal::VectorFn fn) {
  data_->resets.emplace_back(event, std::move(fn));
}

ModelBuilder& ModelBuilder::Unilateral(const std::string& constraint,
                                       std::optional<ContactLaw> law) {
  data_->unilaterals.emplace_back(constraint, std::move(law));
  return *this;
}

ModelBuilder& ModelBuilder::FrictionCone(const std::string& name,
                                         const std::string& normal,
                                         const std::string& tangential,
                                         double mu) {
  internal::FrictionConeDecl c;
  c.name = name;
  c.normal = normal;
  c.tangential = tangential;
  c.mu = mu;
  data_->friction_cones.push_back(std::move(c));
  return *this;
}

ModelBuilder& ModelBuilder::InertialDynamics(internal::InertialFn fn) {
  fn.kinetic_terms = data_->kinetic_terms.size();
  fn.potential_terms = data_->potential_terms.size();
  data_->inertial_dynamics = std::move(fn);
  return *this;
}

namespace {

// Index of the constraint called `name`, or an error naming `who` and
// listing the declared constraints.
int FindConstraint(const internal::ModelData& d,
                   const std::string& name,
                   const std::string& who) {
  for (size_t i = 0; i < d.constraints.size(); ++i)
    if (d.constraints[i].name == name) return static_cast<int>(i);
  std::string valid;
  for (const auto& c : d.constraints) valid += " '" + c.name + "'";
  throw std::invalid_argument("model '" + d.name + "': " + who +
                              " names constraint '" + name +
                              "', which is not declared; declared "
                              "constraints:" +
                              (valid.empty() ? " (none)" : valid));
}

// Resolves Unilateral() names and friction cones against the constraints.
// Puts each reset map on its event, and gives every functional with a
// running term the quadrature "functional:<name>" that integrates it.
void ResolveEvents(internal::ModelData& d) {
  const std::string where = "model '" + d.name + "': ";
  for (auto& [name, fn] : d.resets) {
    internal::EventDecl* ev = nullptr;
    for (auto& e : d.events)
      if (e.name == name) ev = &e;
    if (ev == nullptr) {
      std::string valid;
      for (const auto& e : d.events)
        valid += (valid.empty() ? "" : ", ") + e.name;
      throw std::invalid_argument(
          where + "Reset() names the event '" + name +
          "', which is not declared; declared events: " +
          (valid.empty() ? "(none)" : valid));
    }
    if (ev->reset)
      throw std::invalid_argument(where + "event '" + name +
                                  "' has two reset maps; declare one");
    if (ev->options.stop)
      throw std::invalid_argument(
          where + "event '" + name +
          "' stops the run, so its reset map would never act; declare the "
          "event with EventOptions{.stop = false}");
    ev->reset = std::move(fn);
  }
  d.resets.clear();
  for (auto& f : d.functionals) {
    f.quadrature = -1;
    if (!f.running) continue;
    const std::string qname = "functional:" + f.name;
    for (const auto& q : d.quadratures)
      if (q.first == qname)
        throw std::invalid_argument(
            where + "a quadrature is named '" + qname +
            "', the name of functional '" + f.name +
            "''s running integral; rename the quadrature");
    f.quadrature = static_cast<int>(d.quadratures.size());
    d.quadratures.emplace_back(qname, f.running);
  }
}

// Coulomb friction on a contact (docs/friction.md): mu >= 0, a one-row
// normal, a nonholonomic tangential constraint of 1 or 2 rows that no
// other contact uses.
void CheckFriction(const internal::ModelData& d,
                   const std::string& n,
                   const ContactLaw& law) {
  const std::string who = "model '" + d.name + "': contact '" + n + "'";
  for (const std::string& prm :
       {law.mu_static_parameter, law.mu_kinetic_parameter})
    if (!prm.empty() &&
        std::find(d.parameter_names.begin(), d.parameter_names.end(), prm) ==
            d.parameter_names.end())
      throw std::invalid_argument(who + ": friction parameter '" + prm +
                                  "' is not a parameter of the model");
  if (law.friction.empty()) {
    if (law.mu_static != 0.0 || law.mu_kinetic >= 0.0 ||
        !law.mu_static_parameter.empty() || !law.mu_kinetic_parameter.empty())
      throw std::invalid_argument(
          who +
          ": a friction coefficient without ContactLaw::friction (name "
          "the constraint of its tangential velocities)");
    return;
  }
  if (!(law.mu_static >= 0.0) ||
      !(law.mu_kinetic >= 0.0 || law.mu_kinetic == -1.0))
    throw std::invalid_argument(
        who +
        ": friction coefficient mu_static = " + std::to_string(law.mu_static) +
        ", mu_kinetic = " + std::to_string(law.mu_kinetic) +
        " is negative or NaN; Coulomb's mu is >= 0 (mu_kinetic -1, the "
        "default, takes mu_static)");
  const auto& normal = d.constraints[FindConstraint(d, n, "Unilateral()")];
  if (normal.rows != 1)
    throw std::invalid_argument(who + " has " + std::to_string(normal.rows) +
                                " rows: a contact with friction has one "
                                "normal row (declare one constraint per "
                                "contact point)");
  const auto& t = d.constraints[FindConstraint(d, law.friction, "friction")];
  if (t.kind != ConstraintKind::kNonholonomic || (t.rows != 1 && t.rows != 2))
    throw std::invalid_argument(
        who + ": friction constraint '" + law.friction +
        "' must be Nonholonomic with 1 row (planar) or 2 rows (a 3D "
        "isotropic cone): its rows are the contact's tangential velocities");
  for (const auto& [other, ol] : d.unilaterals)
    if (other != n && ol && ol->friction == law.friction)
      throw std::invalid_argument(who + ": friction constraint '" +
                                  law.friction + "' is also contact '" + other +
                                  "''s");
}

void ResolveFeasibility(internal::ModelData& d) {
  const std::string where = "model '" + d.name + "': ";
  for (const auto& [n, law] : d.unilaterals) {
    auto& c = d.constraints[FindConstraint(d, n, "Unilateral()")];
    c.unilateral = true;
    if (!law) continue;
    // The impact law (include/daedalus/contact.hpp): e in [0, 1], or a
    // parameter whose range is checked at the run's start.
    const std::string who = "contact '" + n + "'";
    if (law->restitution_parameter.empty() &&
        !(law->restitution >= 0.0 && law->restitution <= 1.0)) {
      throw std::invalid_argument(
          where + who + ": restitution " + std::to_string(law->restitution) +
          " outside [0, 1] (Newton's coefficient: 0 plastic, 1 elastic)");
    }
    if (!law->restitution_parameter.empty() &&
        std::find(d.parameter_names.begin(), d.parameter_names.end(),
                  law->restitution_parameter) == d.parameter_names.end()) {
      throw std::invalid_argument(where + who + ": restitution parameter '" +
                                  law->restitution_parameter +
                                  "' is not a parameter of the model");
    }
    if (law->impact_law != ImpactLaw::kNewton &&
        law->impact_law != ImpactLaw::kPoisson) {
      throw std::invalid_argument(
          where + who + ": impact law " +
          std::to_string(static_cast<int>(law->impact_law)) +
          " is neither ImpactLaw::kNewton nor ImpactLaw::kPoisson");
    }
    CheckFriction(d, n, *law);
    c.law = law;
  }
  for (const auto& c : d.constraints) {
    if (c.unilateral && c.kind == ConstraintKind::kNonholonomic) {
      throw std::invalid_argument(
          where + "constraint '" + c.name +
          "' is nonholonomic and cannot be unilateral: a unilateral "
          "constraint is a gap Phi(q, t) >= 0 (declare it with Holonomic or "
          "Moving); to bound a velocity-level reaction use a FrictionCone");
    }
  }
  std::set<std::string> seen;
  for (auto& cone : d.friction_cones) {
    const std::string who = "friction cone '" + cone.name + "'";
    if (!seen.insert(cone.name).second)
      throw std::invalid_argument(where + who + " declared twice");
    if (!(std::isfinite(cone.mu) && cone.mu >= 0.0)) {
      throw std::invalid_argument(where + who + ": friction coefficient mu = " +
                                  std::to_string(cone.mu) +
                                  " must be finite and >= 0");
    }
    const int n = FindConstraint(d, cone.normal, who + " (normal)");
    const int t = FindConstraint(d, cone.tangential, who + " (tangential)");
    if (n == t) {
      throw std::invalid_argument(where + who +
                                  ": normal and tangential "
                                  "constraint are both '" +
                                  cone.normal +
                                  "'; name two different constraints");
    }
    const auto& nc = d.constraints[n];
    if (nc.rows != 1 || nc.kind == ConstraintKind::kNonholonomic) {
      throw std::invalid_argument(
          where + who + ": normal constraint '" + nc.name +
          "' must be one "
          "holonomic or moving row (a gap), got " +
          std::to_string(nc.rows) + " " + ToString(nc.kind) + " row(s)");
    }
    cone.normal_row = d.constraint_rows[n];
    cone.tangential_rows.clear();
    for (int r = 0; r < d.constraints[t].rows; ++r)
      cone.tangential_rows.push_back(d.constraint_rows[t] + r);
  }
}

}  // namespace

Model ModelBuilder::Build() && {
  if (!data_) throw std::logic_error("ModelBuilder::Build called twice");
  internal::ModelData& d = *data_;
  // Names first: every message below shows them.
  internal::CheckModelNames(d);
  const std::string where = "model '" + d.name + "': ";
  if (d.coordinates.empty()) {
    throw std::invalid_argument(
        where + "no coordinates declared; call Coordinates({...}) first");
  }
  std::set<std::string> seen;
  for (const auto& c : d.coordinates) {
    if (!seen.insert(c).second)
      throw std::invalid_argument(where + "coordinate '" + c +
                                  "' declared twice");
  }
  const int nq = static_cast<int>(d.coordinates.size());
  if (d.inertial_dynamics &&
      (d.kinetic_terms.size() != d.inertial_dynamics.kinetic_terms ||
       d.potential_terms.size() != d.inertial_dynamics.potential_terms ||
       d.kinetic_terms.empty() || d.potential || d.lagrangian)) {
    throw std::invalid_argument(
        where + "energy terms declared besides those of " +
        d.inertial_dynamics.what +
        ", which would leave them out of M and h; declare them before it "
        "or use the energy form of the dynamics");
  }
  if (!d.kinetic_terms.empty()) {
    if (d.kinetic || d.lagrangian)
      throw std::invalid_argument(
          where + "KineticEnergyTerm/BodyMassMatrix given together with " +
          "KineticEnergy, MassMatrix or Lagrangian; declare the kinetic " +
          "energy one way");
    for (size_t k = 0; k < d.kinetic_terms.size(); ++k)
      CheckTouches(where, "kinetic energy term " + std::to_string(k), nq,
                   &d.kinetic_terms[k].coords);
    d.kinetic = SumOfTerms(d.kinetic_terms);
  }
  if (!d.potential_terms.empty()) {
    if (d.potential)
      throw std::invalid_argument(
          where + "PotentialEnergyTerm given together with PotentialEnergy; " +
          "declare the potential one way");
    for (size_t k = 0; k < d.potential_terms.size(); ++k)
      CheckTouches(where, "potential energy term " + std::to_string(k), nq,
                   &d.potential_terms[k].coords);
    d.potential = SumOfTerms(d.potential_terms);
  }
  for (auto& c : d.constraints)
    CheckTouches(where, "constraint '" + c.name + "'", nq, &c.coords);
  const bool has_tv = static_cast<bool>(d.kinetic);
  const bool has_l = static_cast<bool>(d.lagrangian);
  if (has_tv == has_l) {
    throw std::invalid_argument(
        where + (has_l ? "both a Lagrangian and a kinetic energy given; "
                         "declare one"
                       : "no kinetic energy, mass matrix or Lagrangian "
                         "declared"));
  }
  if (has_l && d.potential) {
    throw std::invalid_argument(
        where +
        "a Lagrangian already contains the potential; do not also "
        "declare PotentialEnergy");
  }
  d.energy_is_lagrangian = has_l;
  seen.clear();
  for (const auto& in : d.inputs) {
    if (!seen.insert(in.name).second)
      throw std::invalid_argument(where + "input channel '" + in.name +
                                  "' declared twice");
  }
  seen.clear();
  d.constraint_rows.clear();
  d.nc = 0;
  for (const auto& c : d.constraints) {
    if (!seen.insert(c.name).second)
      throw std::invalid_argument(where + "constraint '" + c.name +
                                  "' declared twice");
    if (c.rows < 1)
      throw std::invalid_argument(where + "constraint '" + c.name +
                                  "' must have at least one row, got " +
                                  std::to_string(c.rows));
    d.constraint_rows.push_back(d.nc);
    d.nc += c.rows;
  }
  ResolveFeasibility(d);
  ResolveEvents(d);
  const std::string non_affine = internal::NonAffineConstraintAtRandomStates(d);
  if (!non_affine.empty()) throw std::invalid_argument(where + non_affine);
  Model m;
  m.data_ = std::shared_ptr<const internal::ModelData>(std::move(data_));
  return m;
}

}  // namespace daedalus
