// The compiled part of the `daedalus` Python module (docs/python.md).
#include <pybind11/pybind11.h>

#include "bindings.hpp"

PYBIND11_MODULE(_daedalus, m) {
  m.doc() =
      "Daedalus: constrained mechanical systems as DAEs (compiled part; "
      "import daedalus).";
  daedalus::python::BindSym(m);
  daedalus::python::BindModel(m);
  daedalus::python::BindRun(m);
  daedalus::python::BindOptimize(m);
}
