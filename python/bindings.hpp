// The parts of the `daedalus` Python module (docs/python.md), each adding
// its names to the module. The pure-Python layer (python/daedalus/) builds
// the user-facing API on top of them.
#pragma once

#include <pybind11/pybind11.h>

namespace daedalus::python {

/// Sym (symbolic scalars of a recording), Recording and Tape.
void BindSym(pybind11::module_& m);
/// _Builder (a ModelBuilder fed with tapes) and Problem.
void BindModel(pybind11::module_& m);
/// The catalogue, run() and evaluate_batch().
void BindRun(pybind11::module_& m);
/// optimize() (optimal_control.hpp).
void BindOptimize(pybind11::module_& m);

}  // namespace daedalus::python
