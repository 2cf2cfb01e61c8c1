// The model with spline-driven input channels (ModelWithControls).
//
// Every function of the original model is re-declared through the public
// ModelBuilder as a generic lambda forwarding to the stored type-erased
// function (as analysis/model_rewrite.cpp does for its rewrites), so that
// the controlled model is a Model like any other: its coefficients are
// parameters appended after the model's own, and the sensitivities and
// adjoints differentiate with respect to them exactly.
//
// The spline is written twice with the same values: for the recording
// scalar (Sym) without a branch on t (so a traceable model stays compiled:
// sym.hpp), piecewise linear as one knot-table node of the graph and cubic
// as sums of ramps (x)_+ = (x + |x|)/2, and for doubles and dual numbers
// on the knot interval that holds t (O(1) per evaluation).
#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "daedalus/optimal_control.hpp"
#include "model/invoke.hpp"
#include "optimal_control/control_spline.hpp"

namespace daedalus {

namespace {

using internal::MatrixFn;
using internal::ScalarFn;
using internal::VectorFn;

auto OcScalar(const ScalarFn& fn) {
  return [fn](const auto& x) { return internal::Invoke(fn, x); };
}
auto OcVector(const VectorFn& fn) {
  return [fn](const auto& x) {
    using S = Scalar<decltype(x)>;
    VecX<S> out;
    internal::Invoke(fn, x, out);
    return out;
  };
}

// Coordinates and quaternion blocks in the original order.
void OcCopyCoordinates(const Model& model, ModelBuilder* b) {
  const auto& d = model.data();
  size_t next_block = 0;
  for (int j = 0; j < model.nq(); ++j) {
    if (d.velocity_of[j] >= 0) {
      b->Coordinates({d.coordinates[j]});
    } else if (next_block < d.quaternions.size() &&
               d.quaternions[next_block].q == j) {
      b->Quaternion(d.quaternions[next_block++].name);
    }
  }
}

void OcCopyEnergies(const Model& model, ModelBuilder* b) {
  const auto& d = model.data();
  if (d.energy_is_lagrangian) {
    b->Lagrangian(OcScalar(d.lagrangian));
  } else if (d.kinetic_terms.empty()) {
    b->KineticEnergy(OcScalar(d.kinetic));
  } else {
    for (const auto& term : d.kinetic_terms) {
      if (term.constant_mass) {
        const auto mass = term.constant_mass;
        b->ConstantBodyMass(
            Touches{term.given_order},
            [mass](const Eigen::VectorXd& p) { return MatX<double>(mass(p)); });
      } else {
        b->KineticEnergyTerm(Touches{term.coords}, OcScalar(term.fn));
      }
    }
  }
  if (d.potential_terms.empty()) {
    if (d.potential && !d.energy_is_lagrangian)
      b->PotentialEnergy(OcScalar(d.potential));
  } else {
    for (const auto& term : d.potential_terms)
      b->PotentialEnergyTerm(Touches{term.coords}, OcScalar(term.fn));
  }
  if (d.inertial_dynamics) b->InertialDynamics(d.inertial_dynamics);
}

void OcCopyConstraints(const Model& model, ModelBuilder* b) {
  for (const auto& c : model.constraints()) {
    auto f = OcVector(c.fn);
    const bool touches = !c.coords.empty();
    switch (c.kind) {
      case ConstraintKind::kHolonomic:
        if (touches)
          b->Holonomic(c.name, Touches{c.coords}, f, c.rows, c.unilateral);
        else
          b->Holonomic(c.name, f, c.rows, c.unilateral);
        break;
      case ConstraintKind::kMoving:
        if (touches)
          b->Moving(c.name, Touches{c.coords}, f, c.rows, c.unilateral);
        else
          b->Moving(c.name, f, c.rows, c.unilateral);
        break;
      case ConstraintKind::kNonholonomic:
        if (touches)
          b->Nonholonomic(c.name, Touches{c.coords}, f, c.rows);
        else
          b->Nonholonomic(c.name, f, c.rows);
        break;
    }
  }
  for (const auto& fc : model.data().friction_cones)
    b->FrictionCone(fc.name, fc.normal, fc.tangential, fc.mu);
  // Contact laws (docs/contact.md) with their constraints.
  for (const auto& c : model.constraints())
    if (c.law) b->Unilateral(c.name, c.law);
}

// Quadratures (but the functionals' own, which Build() makes again),
// events, resets and functionals.
void OcCopyEventsAndFunctionals(const Model& model,
                                bool pass_events,
                                ModelBuilder* b) {
  const auto& d = model.data();
  std::vector<bool> functional_quadrature(d.quadratures.size(), false);
  for (const auto& f : d.functionals)
    if (f.quadrature >= 0) functional_quadrature[f.quadrature] = true;
  for (size_t k = 0; k < d.quadratures.size(); ++k)
    if (!functional_quadrature[k])
      b->Quadrature(d.quadratures[k].first, OcScalar(d.quadratures[k].second));
  for (const auto& ev : d.events) {
    EventOptions o = ev.options;
    if (pass_events) o.stop = false;
    b->Event(ev.name, OcScalar(ev.fn), o);
    if (ev.reset) b->Reset(ev.name, OcVector(ev.reset));
  }
  for (const auto& f : d.functionals) {
    if (f.running && f.terminal)
      b->Functional(f.name, OcScalar(f.running), OcScalar(f.terminal));
    else if (f.running)
      b->RunningFunctional(f.name, OcScalar(f.running));
    else
      b->TerminalFunctional(f.name, OcScalar(f.terminal));
  }
}

}  // namespace

const char* ToString(ControlBasis b) {
  return b == ControlBasis::kPiecewiseLinear ? "piecewise-linear"
                                             : "cubic-bspline";
}

ControlBasis ControlBasisFromString(const std::string& s) {
  if (s == "piecewise-linear" || s == "linear")
    return ControlBasis::kPiecewiseLinear;
  if (s == "cubic-bspline" || s == "bspline")
    return ControlBasis::kCubicBSpline;
  throw std::invalid_argument("unknown control basis '" + s +
                              "'; valid: piecewise-linear, cubic-bspline");
}

std::string ControlParameterName(const std::string& input, int j) {
  return input + ".c" + std::to_string(j);
}

Eigen::VectorXd EvaluateControl(const ControlChannel& channel,
                                const Eigen::VectorXd& c,
                                const Eigen::VectorXd& t) {
  const internal::ControlSpline spline(channel);
  if (c.size() != spline.size())
    throw std::invalid_argument("EvaluateControl('" + channel.input +
                                "'): " + std::to_string(c.size()) +
                                " coefficients for " +
                                std::to_string(spline.size()) + " knots");
  Eigen::VectorXd u(t.size());
  for (Eigen::Index i = 0; i < t.size(); ++i) {
    u[i] = spline.Value(
        t[i], [&](int j) { return c[j]; }, [](double x) { return x; });
  }
  return u;
}

Model ModelWithControls(const Model& model,
                        const std::vector<ControlChannel>& controls,
                        bool pass_events) {
  const auto& d = model.data();
  // Which channel each input has, and the checks of the grids.
  std::vector<int> control_of(d.inputs.size(), -1);
  for (size_t k = 0; k < controls.size(); ++k) {
    const int ch = [&] {
      for (size_t i = 0; i < d.inputs.size(); ++i)
        if (d.inputs[i].name == controls[k].input) return static_cast<int>(i);
      std::ostringstream os;
      os << "control " << k << ": model '" << model.name()
         << "' has no input channel '" << controls[k].input
         << "'; its channels are:";
      if (d.inputs.empty()) os << " (none)";
      for (const auto& in : d.inputs) os << " " << in.name;
      throw std::invalid_argument(os.str());
    }();
    if (control_of[ch] >= 0)
      throw std::invalid_argument("input channel '" + controls[k].input +
                                  "' has two controls; give it one");
    control_of[ch] = static_cast<int>(k);
  }

  ModelBuilder b(model.name());
  OcCopyCoordinates(model, &b);
  for (int i = 0; i < model.num_parameters(); ++i)
    b.Parameter(model.parameter_names()[i], model.default_parameters()[i],
                model.parameter_ranges()[i]);
  // The coefficients, channel by channel.
  std::vector<std::shared_ptr<const internal::ControlSpline>> splines;
  std::vector<int> first(controls.size(), 0);
  for (size_t k = 0; k < controls.size(); ++k) {
    auto s = std::make_shared<const internal::ControlSpline>(controls[k]);
    for (int j = 0; j < s->size(); ++j) {
      const double c0 = controls[k].initial.size() == s->size()
                            ? controls[k].initial[j]
                            : 0.0;
      const Param p =
          b.Parameter(ControlParameterName(controls[k].input, j), c0);
      if (j == 0) first[k] = static_cast<int>(p.index);
      // The adjoint skips the coefficient's f_p column off its span.
      const auto [from, to] = s->Support(j);
      b.ParameterTimeSupport(p, from, to);
    }
    splines.push_back(std::move(s));
  }
  OcCopyEnergies(model, &b);
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    const auto& in = d.inputs[i];
    const int k = control_of[i];
    if (k < 0) {
      b.Input(in.name, OcVector(in.column), OcScalar(in.value));
      continue;
    }
    const auto spline = splines[k];
    const int p0 = first[k];
    const ScalarFn own = in.value;
    const bool add = controls[k].add_to_model;
    auto u = [spline, p0, own, add](const auto& x) {
      using S = Scalar<decltype(x)>;
      S value = spline->Evaluate(x.t, [&](int j) { return x.p[p0 + j]; });
      if (add) value += internal::Invoke(own, x);
      return value;
    };
    b.Input(in.name, OcVector(in.column), u);
    b.RunningFunctional("effort:" + in.name, [u](const auto& x) {
      const auto value = u(x);
      return value * value;
    });
  }
  if (d.damping) {
    const MatrixFn fn = d.damping;
    b.Damping([fn](const auto& x) {
      using S = Scalar<decltype(x)>;
      MatX<S> out;
      internal::Invoke(fn, x, out);
      return out;
    });
  }
  if (d.other_loads) b.OtherLoads(OcVector(d.other_loads));
  OcCopyConstraints(model, &b);
  OcCopyEventsAndFunctionals(model, pass_events, &b);
  return std::move(b).Build();
}

}  // namespace daedalus
