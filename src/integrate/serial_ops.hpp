// Optimized kernels behind SUNDIALS's object interfaces, for the vectors
// and dense Newton systems of the integrator adapters.
//
// Debian's SUNDIALS 6.4 libraries are built without optimization (their
// code keeps every local variable on the stack: a third of the
// instructions of libsundials_idas address the frame pointer). Its serial
// vector kernels then cost 10 to 30 times what optimized loops cost on
// the short vectors of a mechanism, and its dense LU solve about 2.9 k
// instructions for a 10 x 10 system (bench/README.md). SUNDIALS lets a
// user supply both: a vector's operations table and a linear solver
// object. Daedalus supplies
//  - UseFastVectorOps: the serial vector's elementwise operations, norms
//    and fused operations as plain loops compiled with the library (the
//    same arithmetic as nvector_serial, element by element and in the same
//    summation order, so results agree to the last bit for all but the
//    fused operations of more than two vectors, which sum in vector order);
//  - MakeDenseLuSolver: a dense LU with partial pivoting that factors the
//    SUNDIALS dense matrix in place, like SUNLinSol_Dense.
// Clones of a vector copy its operations table, so the vectors IDAS and
// CVODES make from ours use the fast operations too.
#pragma once

#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_nvector.h>

namespace daedalus::internal {

/// Replaces the arithmetic operations of serial vector `v` (made by
/// N_VNew_Serial) with the optimized ones.
void UseFastVectorOps(N_Vector v);

/// A direct linear solver for SUNDIALS dense matrices: setup factors A in
/// place (LU with partial pivoting; a zero pivot is the recoverable
/// SUNLS_LUFACT_FAIL), solve applies the factors. Same contract as
/// SUNLinSol_Dense(y, A, ctx). Free with SUNLinSolFree.
SUNLinearSolver MakeDenseLuSolver(N_Vector y, SUNMatrix A, SUNContext ctx);

}  // namespace daedalus::internal
