// The matrix-valued counterpart of internal::Invoke (model.hpp): calls a
// stored matrix function (damping) at the scalar type of its argument. The
// model rewrites (src/analysis/model_rewrite.cpp) and the controlled model
// of optimal control (src/optimal_control/controlled_model.cpp) forward the
// original model's functions through these three overloads.
#pragma once

#include <stdexcept>
#include <type_traits>

#include "daedalus/model.hpp"

namespace daedalus::internal {

/// Matrix functions carry a value, first-order and recording form only
/// (model.hpp): other scalar types are a logic error of the caller.
template <class X>
void Invoke(const MatrixFn& fn, const Point<X>& x, MatX<X>& out) {
  if constexpr (std::is_same_v<X, double>) {
    fn.f0(x, out);
  } else if constexpr (std::is_same_v<X, D1>) {
    fn.f1(x, out);
  } else if constexpr (std::is_same_v<X, Sym>) {
    if (!fn.fs) throw NotTraceable("a function without a recording form");
    fn.fs(x, out);
  } else {
    throw std::logic_error("a matrix function evaluated beyond first order");
  }
}

}  // namespace daedalus::internal
