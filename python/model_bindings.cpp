// Models written in Python: a ModelBuilder fed with tapes (tape.hpp), whose
// functions evaluate the tapes at every scalar type, and the Problem that
// the catalogue and Python models share.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "daedalus/run.hpp"
#include "tape.hpp"

namespace py = pybind11;

namespace daedalus::python {
namespace {

// Tapes as Python holds them; a model's functions keep them read-only.
using TapePtr = std::shared_ptr<Tape>;
using ConstTape = std::shared_ptr<const Tape>;

// A scalar-valued model function that runs `t` (one output).
auto ScalarOf(ConstTape t) {
  return [t](const auto& x) {
    using S = Scalar<decltype(x)>;
    S r;
    t->Evaluate(x, &r);
    return r;
  };
}

// A vector-valued one (t->num_outputs() rows).
auto VectorOf(ConstTape t) {
  return [t](const auto& x) {
    using S = Scalar<decltype(x)>;
    VecX<S> r(t->num_outputs());
    t->Evaluate(x, r.data());
    return r;
  };
}

// An n x n matrix, the outputs in column-major order.
auto MatrixOf(ConstTape t, int n) {
  return [t, n](const auto& x) {
    using S = Scalar<decltype(x)>;
    MatX<S> r(n, n);
    t->Evaluate(x, r.data());
    return r;
  };
}

void Require(const TapePtr& t, int outputs, const std::string& what) {
  if (!t) throw std::invalid_argument(what + ": no function");
  if (t->num_outputs() != outputs)
    throw std::invalid_argument(what + ": " + std::to_string(t->num_outputs()) +
                                " values, expected " + std::to_string(outputs));
}

// ModelBuilder for the Python layer: one call per declaration, functions
// as tapes of a Recording of this model's sizes.
class Builder {
 public:
  explicit Builder(const std::string& name)
      : b_(std::make_unique<ModelBuilder>(name)) {}

  void Coordinates(std::vector<std::string> names) {
    nq_ = static_cast<int>(names.size());
    B().Coordinates(std::move(names));
  }
  int Parameter(const std::string& name,
                double value,
                double lower,
                double upper,
                bool lower_open,
                bool upper_open) {
    ParamRange r{lower, upper, lower_open, upper_open};
    return static_cast<int>(B().Parameter(name, value, r).index);
  }
  void Kinetic(const TapePtr& t) {
    Require(t, 1, "kinetic_energy");
    B().KineticEnergy(ScalarOf(t));
  }
  void Potential(const TapePtr& t) {
    Require(t, 1, "potential_energy");
    B().PotentialEnergy(ScalarOf(t));
  }
  void Lagrangian(const TapePtr& t) {
    Require(t, 1, "lagrangian");
    B().Lagrangian(ScalarOf(t));
  }
  void Constraint(const std::string& kind,
                  const std::string& name,
                  const TapePtr& t,
                  bool unilateral) {
    if (!t || t->num_outputs() < 1)
      throw std::invalid_argument("constraint '" + name + "': no rows");
    const int rows = t->num_outputs();
    if (kind == "holonomic") {
      B().Holonomic(name, VectorOf(t), rows, unilateral);
    } else if (kind == "moving") {
      B().Moving(name, VectorOf(t), rows, unilateral);
    } else if (kind == "nonholonomic") {
      B().Nonholonomic(name, VectorOf(t), rows);
    } else {
      throw std::invalid_argument("unknown constraint kind '" + kind + "'");
    }
  }
  void Damping(const TapePtr& t) {
    Require(t, nq_ * nq_, "damping");
    B().Damping(MatrixOf(t, nq_));
  }
  void OtherLoads(const TapePtr& t) {
    Require(t, nq_, "other_loads");
    B().OtherLoads(VectorOf(t));
  }
  void Input(const std::string& name,
             const TapePtr& column,
             const TapePtr& value) {
    Require(column, nq_, "input '" + name + "' column");
    Require(value, 1, "input '" + name + "' value");
    B().Input(name, VectorOf(column), ScalarOf(value));
  }
  void Quadrature(const std::string& name, const TapePtr& t) {
    Require(t, 1, "quadrature '" + name + "'");
    B().Quadrature(name, ScalarOf(t));
  }
  void Event(const std::string& name, const TapePtr& t) {
    Require(t, 1, "event '" + name + "'");
    B().Event(name, ScalarOf(t));
  }
  void Functional(const std::string& name,
                  const TapePtr& running,
                  const TapePtr& terminal) {
    if (running) Require(running, 1, "functional '" + name + "' running");
    if (terminal) Require(terminal, 1, "functional '" + name + "' terminal");
    if (running && terminal) {
      B().Functional(name, ScalarOf(running), ScalarOf(terminal));
    } else if (running) {
      B().RunningFunctional(name, ScalarOf(running));
    } else if (terminal) {
      B().TerminalFunctional(name, ScalarOf(terminal));
    } else {
      throw std::invalid_argument("functional '" + name +
                                  "': neither a running nor a terminal term");
    }
  }
  void FrictionCone(const std::string& name,
                    const std::string& normal,
                    const std::string& tangential,
                    double mu) {
    B().FrictionCone(name, normal, tangential, mu);
  }
  Model Build() {
    ModelBuilder& b = B();
    Model m = std::move(b).Build();
    b_.reset();
    return m;
  }

 private:
  ModelBuilder& B() {
    if (!b_) throw std::logic_error("the model was already built");
    return *b_;
  }
  std::unique_ptr<ModelBuilder> b_;
  int nq_ = 0;
};

Eigen::VectorXd SizedVector(const Eigen::VectorXd& x,
                            int n,
                            const std::string& what) {
  if (x.size() != n)
    throw std::invalid_argument(what + " has " + std::to_string(x.size()) +
                                " entries, expected " + std::to_string(n));
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      throw std::invalid_argument(what + "[" + std::to_string(i) +
                                  "] is not finite");
  return x;
}

// A sequence of n finite numbers from Python.
Eigen::VectorXd ToVector(py::handle h, int n, const std::string& what) {
  auto a = py::array_t<double, py::array::forcecast>::ensure(h);
  if (!a || a.ndim() != 1)
    throw std::invalid_argument(what + " must be a sequence of " +
                                std::to_string(n) + " numbers");
  Eigen::VectorXd x(a.shape(0));
  for (py::ssize_t i = 0; i < a.shape(0); ++i) x[i] = a.at(i);
  return SizedVector(x, n, what);
}

// The Problem of a Python model: the initial state is fixed vectors, or a
// Python function of the parameters (called with the GIL, outside the
// integration: before a run, and by the central differences of
// InitialStateTangent for sensitivities).
Problem MakeProblem(const Model& model,
                    const std::string& description,
                    const py::object& initial,
                    const std::optional<Eigen::VectorXd>& q0,
                    const std::optional<Eigen::VectorXd>& v0) {
  Problem p;
  p.model = model;
  p.description = description;
  const int n = model.nq();
  if (!initial.is_none()) {
    if (!PyCallable_Check(initial.ptr()))
      throw py::type_error("initial must be a function of the parameters");
    auto f = std::make_shared<py::object>(initial);
    p.initial = [f, n](const Eigen::VectorXd& params) {
      py::gil_scoped_acquire gil;
      py::object r = (*f)(params);
      if (!(py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) ||
          py::len(r) != 2)
        throw std::invalid_argument(
            "initial(p) must return a tuple (q0, v0), not " +
            std::string(py::str(r.get_type().attr("__name__"))));
      py::sequence qv = r.cast<py::sequence>();
      InitialState s;
      s.q = ToVector(qv[0], n, "initial q0");
      s.v = ToVector(qv[1], n, "initial v0");
      return s;
    };
  } else {
    InitialState s;
    s.q = SizedVector(q0.value_or(Eigen::VectorXd::Zero(n)), n, "q0");
    s.v = SizedVector(v0.value_or(Eigen::VectorXd::Zero(n)), n, "v0");
    p.initial = [s](const Eigen::VectorXd&) { return s; };
  }
  return p;
}

}  // namespace

void BindModel(py::module_& m) {
  py::class_<Model>(m, "_Model")
      .def_property_readonly("name", &Model::name)
      .def_property_readonly("nq", &Model::nq)
      .def_property_readonly("nc", &Model::nc)
      .def_property_readonly("coordinate_names", &Model::coordinate_names)
      .def_property_readonly("parameter_names", &Model::parameter_names)
      .def_property_readonly("default_parameters", &Model::default_parameters);

  py::class_<Builder>(m, "_Builder")
      .def(py::init<const std::string&>())
      .def("coordinates", &Builder::Coordinates)
      .def("parameter", &Builder::Parameter)
      .def("kinetic", &Builder::Kinetic)
      .def("potential", &Builder::Potential)
      .def("lagrangian", &Builder::Lagrangian)
      .def("constraint", &Builder::Constraint)
      .def("damping", &Builder::Damping)
      .def("other_loads", &Builder::OtherLoads)
      .def("input", &Builder::Input)
      .def("quadrature", &Builder::Quadrature)
      .def("event", &Builder::Event)
      .def("functional", &Builder::Functional, py::arg("name"),
           py::arg("running").none(true), py::arg("terminal").none(true))
      .def("friction_cone", &Builder::FrictionCone)
      .def("build", &Builder::Build);

  py::class_<Problem>(m, "Problem", R"(A model with its initial state and
default run options: a catalogue problem (daedalus.problem) or a model
written in Python (daedalus.ModelBuilder.build).)")
      .def_property_readonly("name",
                             [](const Problem& p) { return p.model.name(); })
      .def_property_readonly("description",
                             [](const Problem& p) { return p.description; })
      .def_property_readonly(
          "coordinates",
          [](const Problem& p) { return p.model.coordinate_names(); })
      .def_property_readonly(
          "parameters",
          [](const Problem& p) {
            py::dict d;
            const Model& mo = p.model;
            for (int i = 0; i < mo.num_parameters(); ++i)
              d[py::str(mo.parameter_names()[i])] = mo.default_parameters()[i];
            return d;
          },
          "The parameters and their default values.")
      .def_property_readonly("nq",
                             [](const Problem& p) { return p.model.nq(); })
      .def_property_readonly("nc",
                             [](const Problem& p) { return p.model.nc(); })
      .def_property_readonly("constraint_rows",
                             [](const Problem& p) {
                               std::vector<std::string> rows;
                               for (int r = 0; r < p.model.nc(); ++r)
                                 rows.push_back(p.model.RowName(r));
                               return rows;
                             })
      .def(
          "initial_state",
          [](const Problem& p, const std::optional<Eigen::VectorXd>& params) {
            const Eigen::VectorXd x =
                params
                    ? SizedVector(*params, p.model.num_parameters(), "params")
                    : p.model.default_parameters();
            const InitialState s = p.initial(x);
            return py::make_tuple(s.q, s.v);
          },
          py::arg("params") = py::none(),
          "(q0, v0) for the parameters (default: their defaults), before "
          "the consistent projection of a run.")
      .def("__repr__", [](const Problem& p) {
        return "<daedalus.Problem '" + p.model.name() + "'>";
      });

  m.def("_make_problem", &MakeProblem, py::arg("model"), py::arg("description"),
        py::arg("initial").none(true), py::arg("q0").none(true),
        py::arg("v0").none(true));
}

}  // namespace daedalus::python
