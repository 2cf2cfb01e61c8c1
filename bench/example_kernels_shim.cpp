// C entry points to Daedalus's optimized SUNDIALS kernels
// (src/integrate/serial_ops.hpp), so that bench/slider_crank_overhead.py can
// build a second copy of SUNDIALS's hand-written idasSlCrank_dns example with
// the same vector operations and dense LU as Daedalus: the comparison that
// isolates the framework's own overhead. Bench-only; compiled by the
// script together with src/integrate/serial_ops.cpp.
#include "integrate/serial_ops.hpp"

extern "C" void daedalus_use_fast_vector_ops(N_Vector v) {
  daedalus::internal::UseFastVectorOps(v);
}

extern "C" SUNLinearSolver daedalus_dense_lu(N_Vector y,
                                             SUNMatrix A,
                                             SUNContext ctx) {
  return daedalus::internal::MakeDenseLuSolver(y, A, ctx);
}
