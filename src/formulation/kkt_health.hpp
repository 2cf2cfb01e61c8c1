// KKT health of a sparse system (docs/diagnostics.md, "KKT health"): the
// reciprocal condition of the Jacobi-scaled Schur complement J M^-1 J' and
// the numerical rank of J, as the dense path reports them.
#pragma once

#include "daedalus/sparse_dynamics.hpp"
#include "formulation/mechanics.hpp"

namespace daedalus::internal {

/// Up to this many constraint rows the sparse system is made dense and
/// DenseKktHealth decides, exactly as on the dense path.
inline constexpr int kDenseHealthRows = 64;

/// KKT health of sparse M (both triangles, SPD) and J. Above
/// kDenseHealthRows rows, the extreme eigenvalues of the scaled complement
/// are estimated by Lanczos iterations on it and on its inverse (sparse
/// Cholesky), and the rank of J below the near-singular threshold by SPQR
/// on the row-normalized J'.
KktHealthSample SparseKktHealth(const SparseMatrixD& M,
                                const SparseMatrixD& J,
                                bool details);

}  // namespace daedalus::internal
