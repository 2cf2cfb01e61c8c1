// internal::Invoke: calls a stored type-erased user function (ScalarFn,
// VectorFn, MatrixFn of model.hpp) at the scalar type of its argument. The
// evaluators, the model rewrites (src/analysis/model_rewrite.cpp) and the
// controlled model of optimal control (src/optimal_control/
// controlled_model.cpp) reach the user's functions through these three
// overloads.
#pragma once

#include <stdexcept>
#include <type_traits>

#include "daedalus/model.hpp"

namespace daedalus::internal {

/// Calls a user function at the scalar type of its argument (double, D1, D2,
/// D3, M1 or M2; which ones a function carries depends on how it was made).
template <class X>
X Invoke(const ScalarFn& fn, const Point<X>& x) {
  if constexpr (std::is_same_v<X, double>) {
    return fn.f0(x);
  } else if constexpr (std::is_same_v<X, D1>) {
    return fn.f1(x);
  } else if constexpr (std::is_same_v<X, D2>) {
    return fn.f2(x);
  } else if constexpr (std::is_same_v<X, D3>) {
    return fn.f3(x);
  } else if constexpr (std::is_same_v<X, M1>) {
    return fn.m1(x);
  } else if constexpr (std::is_same_v<X, M2>) {
    return fn.m2(x);
  } else if constexpr (std::is_same_v<X, TM1>) {
    return fn.tm1(x);
  } else if constexpr (std::is_same_v<X, Sym>) {
    if (!fn.fs) throw NotTraceable("a function without a recording form");
    return fn.fs(x);
  } else {
    static_assert(std::is_same_v<X, TM2>);
    return fn.tm2(x);
  }
}
template <class X>
void Invoke(const VectorFn& fn, const Point<X>& x, VecX<X>& out) {
  if constexpr (std::is_same_v<X, double>) {
    fn.f0(x, out);
  } else if constexpr (std::is_same_v<X, D1>) {
    fn.f1(x, out);
  } else if constexpr (std::is_same_v<X, D2>) {
    fn.f2(x, out);
  } else if constexpr (std::is_same_v<X, D3>) {
    fn.f3(x, out);
  } else if constexpr (std::is_same_v<X, M1>) {
    fn.m1(x, out);
  } else if constexpr (std::is_same_v<X, Sym>) {
    if (!fn.fs) throw NotTraceable("a function without a recording form");
    fn.fs(x, out);
  } else {
    static_assert(std::is_same_v<X, TM1>);
    fn.tm1(x, out);
  }
}

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
