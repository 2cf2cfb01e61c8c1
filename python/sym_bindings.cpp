// Symbolic scalars for models written in Python: every operation on a Sym
// records a node into its recording's graph (tape.hpp) through the same
// Sym operations a C++ model records with, so that constant folding and
// shared nodes are the same.
#include <pybind11/stl.h>

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "tape.hpp"

namespace py = pybind11;

namespace daedalus::python {
namespace {

using internal::TraceScope;

template <class F>
SymValue Unary(const SymValue& a, F f) {
  TraceScope scope(&a.rec->graph());
  return {a.rec, f(Sym::FromNode(a.node)).node()};
}

template <class F>
SymValue Binary(const SymValue& a, const SymValue& b, F f) {
  if (a.rec != b.rec)
    throw std::invalid_argument(
        "daedalus.Sym: the two operands belong to different model "
        "recordings; a symbol can only be combined with symbols of the "
        "model it was given by");
  TraceScope scope(&a.rec->graph());
  return {a.rec, f(Sym::FromNode(a.node), Sym::FromNode(b.node)).node()};
}

SymValue Lift(const SymValue& like, double c) {
  TraceScope scope(&like.rec->graph());
  return {like.rec, Sym(c).node()};
}

bool IsConstant(const SymValue& a) { return a.rec->graph().IsConstant(a.node); }

double ValueOf(const SymValue& a) {
  TraceScope scope(&a.rec->graph());
  return Value(Sym::FromNode(a.node));
}

std::string Repr(const SymValue& a) {
  std::ostringstream s;
  const internal::ExprGraph& g = a.rec->graph();
  const internal::ExprNode& n = g.node(a.node);
  if (n.op == internal::Op::kConst) {
    s.precision(17);
    s << "Sym(" << n.value << ")";
  } else if (n.op == internal::Op::kInput) {
    const int k = static_cast<int>(n.value), nq = a.rec->nq();
    s << "Sym(";
    if (k == 0) {
      s << "t";
    } else if (k <= nq) {
      s << "q[" << k - 1 << "]";
    } else if (k <= 2 * nq) {
      s << "v[" << k - 1 - nq << "]";
    } else {
      s << "p[" << k - 1 - 2 * nq << "]";
    }
    s << ")";
  } else {
    s << "Sym(" << internal::ToString(n.op) << ", node " << a.node << ")";
  }
  return s.str();
}

// Adds `name` and its reflected form for Sym (op) Sym and Sym (op) number.
template <class F>
void BindArithmetic(py::class_<SymValue>& c,
                    const char* name,
                    const char* rname,
                    F f) {
  c.def(
      name,
      [f](const SymValue& a, const SymValue& b) { return Binary(a, b, f); },
      py::is_operator());
  c.def(
      name,
      [f](const SymValue& a, double b) { return Binary(a, Lift(a, b), f); },
      py::is_operator());
  c.def(
      rname,
      [f](const SymValue& a, double b) { return Binary(Lift(a, b), a, f); },
      py::is_operator());
}

template <class F>
void BindComparison(py::class_<SymValue>& c, const char* name, F f) {
  c.def(
      name,
      [f](const SymValue& a, const SymValue& b) {
        if (a.rec != b.rec) throw NotTraceable("comparison across recordings");
        TraceScope scope(&a.rec->graph());
        return f(Sym::FromNode(a.node), Sym::FromNode(b.node));
      },
      py::is_operator());
  c.def(
      name,
      [f](const SymValue& a, double b) {
        TraceScope scope(&a.rec->graph());
        return f(Sym::FromNode(a.node), Sym(b));
      },
      py::is_operator());
}

}  // namespace

void BindSym(py::module_& m) {
  py::register_exception<NotTraceable>(m, "NotTraceableError", PyExc_TypeError);

  py::class_<Recording, std::shared_ptr<Recording>>(m, "_Recording")
      .def(py::init<int, int>(), py::arg("nq"), py::arg("np"))
      .def_property_readonly("nq", &Recording::nq)
      .def_property_readonly("np", &Recording::np)
      .def_property_readonly(
          "size", [](const Recording& r) { return r.graph().size(); })
      // Input k as a symbol (0: t, then q, v, p).
      .def("input",
           [](const std::shared_ptr<Recording>& r, int k) {
             if (k < 0 || k >= 1 + 2 * r->nq() + r->np())
               throw std::out_of_range("input number out of range");
             return SymValue{r, r->InputNode(k)};
           })
      .def("constant",
           [](const std::shared_ptr<Recording>& r, double c) {
             TraceScope scope(&r->graph());
             return SymValue{r, Sym(c).node()};
           })
      // The tape of some outputs (symbols of this recording).
      .def("tape", [](const std::shared_ptr<Recording>& r,
                      const std::vector<SymValue>& outputs) {
        std::vector<int> nodes;
        for (const SymValue& s : outputs) {
          if (s.rec != r)
            throw std::invalid_argument(
                "a returned symbol belongs to another model's recording");
          nodes.push_back(s.node);
        }
        return std::make_shared<Tape>(*r, nodes);
      });

  py::class_<Tape, std::shared_ptr<Tape>>(m, "_Tape")
      .def_property_readonly("num_outputs", &Tape::num_outputs)
      .def_property_readonly("size", &Tape::size);

  py::class_<SymValue> sym(m, "Sym", R"(A symbolic scalar of a Python model.

Arithmetic (+ - * / **, unary -, abs) and the functions of the daedalus
module (sin, cos, ..., atan2) on Sym values record an expression; the model
is then evaluated as compiled programs, never by calling Python. Comparing
two values that depend on the state or the parameters, or converting one
to float, raises NotTraceableError.)");
  BindArithmetic(sym, "__add__", "__radd__",
                 [](const Sym& a, const Sym& b) { return a + b; });
  BindArithmetic(sym, "__sub__", "__rsub__",
                 [](const Sym& a, const Sym& b) { return a - b; });
  BindArithmetic(sym, "__mul__", "__rmul__",
                 [](const Sym& a, const Sym& b) { return a * b; });
  BindArithmetic(sym, "__truediv__", "__rtruediv__",
                 [](const Sym& a, const Sym& b) { return a / b; });
  sym.def(
      "__pow__",
      [](const SymValue& a, const SymValue& b) {
        return Binary(a, b,
                      [](const Sym& x, const Sym& y) { return pow(x, y); });
      },
      py::is_operator());
  sym.def(
      "__pow__",
      [](const SymValue& a, double b) {
        return Unary(a, [b](const Sym& x) { return pow(x, b); });
      },
      py::is_operator());
  sym.def(
      "__rpow__",
      [](const SymValue& a, double b) {
        return Binary(Lift(a, b), a,
                      [](const Sym& x, const Sym& y) { return pow(x, y); });
      },
      py::is_operator());
  sym.def("__neg__", [](const SymValue& a) {
    return Unary(a, [](const Sym& x) { return -x; });
  });
  sym.def("__pos__", [](const SymValue& a) { return a; });
  sym.def("__abs__", [](const SymValue& a) {
    return Unary(a, [](const Sym& x) { return abs(x); });
  });
  BindComparison(sym, "__lt__",
                 [](const Sym& a, const Sym& b) { return a < b; });
  BindComparison(sym, "__le__",
                 [](const Sym& a, const Sym& b) { return a <= b; });
  BindComparison(sym, "__gt__",
                 [](const Sym& a, const Sym& b) { return a > b; });
  BindComparison(sym, "__ge__",
                 [](const Sym& a, const Sym& b) { return a >= b; });
  BindComparison(sym, "__eq__",
                 [](const Sym& a, const Sym& b) { return a == b; });
  BindComparison(sym, "__ne__",
                 [](const Sym& a, const Sym& b) { return a != b; });
  sym.def("__bool__", [](const SymValue& a) { return ValueOf(a) != 0.0; });
  sym.def("__float__", &ValueOf);
  sym.def("__repr__", &Repr);
  sym.def_property_readonly("is_constant", &IsConstant);
  // Elementary functions, also as methods so that numpy's object arrays
  // (np.sin(array_of_sym)) record them.
  struct Fn {
    const char* name;
    Sym (*f)(const Sym&);
  };
  const Fn fns[] = {
      {"sin", [](const Sym& x) { return sin(x); }},
      {"cos", [](const Sym& x) { return cos(x); }},
      {"tan", [](const Sym& x) { return tan(x); }},
      {"exp", [](const Sym& x) { return exp(x); }},
      {"log", [](const Sym& x) { return log(x); }},
      {"sqrt", [](const Sym& x) { return sqrt(x); }},
      {"sinh", [](const Sym& x) { return sinh(x); }},
      {"cosh", [](const Sym& x) { return cosh(x); }},
      {"tanh", [](const Sym& x) { return tanh(x); }},
      {"arcsin", [](const Sym& x) { return asin(x); }},
      {"arccos", [](const Sym& x) { return acos(x); }},
      {"arctan", [](const Sym& x) { return atan(x); }},
  };
  for (const Fn& fn : fns) {
    auto f = fn.f;
    sym.def(fn.name, [f](const SymValue& a) { return Unary(a, f); });
  }
  sym.def(
      "arctan2",
      [](const SymValue& y, const SymValue& x) {
        return Binary(y, x,
                      [](const Sym& a, const Sym& b) { return atan2(a, b); });
      },
      "atan2(self, x)");
  sym.def("arctan2", [](const SymValue& y, double x) {
    return Binary(y, Lift(y, x),
                  [](const Sym& a, const Sym& b) { return atan2(a, b); });
  });
  // a where c > 0, else b (IfPositive, dual.hpp): daedalus.if_positive.
  sym.def("_lift", &Lift);
  sym.def_static("_if_positive", [](const SymValue& c, const SymValue& a,
                                    const SymValue& b) {
    if (a.rec != c.rec || b.rec != c.rec)
      throw std::invalid_argument(
          "daedalus.if_positive: the operands belong to different model "
          "recordings; a symbol can only be combined with symbols of "
          "the model it was given by");
    TraceScope scope(&c.rec->graph());
    return SymValue{c.rec,
                    IfPositive(Sym::FromNode(c.node), Sym::FromNode(a.node),
                               Sym::FromNode(b.node))
                        .node()};
  });
  sym.def("_rarctan2", [](const SymValue& x, double y) {
    return Binary(Lift(x, y), x,
                  [](const Sym& a, const Sym& b) { return atan2(a, b); });
  });
}

}  // namespace daedalus::python
