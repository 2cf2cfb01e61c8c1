// Forward-mode automatic differentiation: a dual number with one tangent.
//
// Dual<T> carries a value and one directional derivative. Nesting gives
// higher derivatives: Dual<Dual<double>> carries the second derivative along
// two (possibly equal) directions in `.d.d`. The problem author never names
// these types: user functions are generic lambdas, and Daedalus calls them
// with double, Dual<double> and Dual<Dual<double>>.
//
// Write math functions unqualified (`sin(x)`, not `std::sin(x)`) inside user
// functions so that argument-dependent lookup finds the overloads below for
// dual arguments and <cmath> for doubles. See docs/writing_a_problem.md.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <type_traits>

namespace daedalus {

// Unqualified calls such as `sin(x)` inside namespace daedalus (and in
// problem code that lives in a nested namespace) must find the double
// overloads too, which the dual templates below would otherwise hide.
using std::abs;
using std::acos;
using std::asin;
using std::atan;
using std::atan2;
using std::cos;
using std::cosh;
using std::exp;
using std::fabs;
using std::isfinite;
using std::log;
using std::pow;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;

template <class T>
struct Dual {
  T v{};  ///< value
  T d{};  ///< derivative along the seeded direction

  constexpr Dual() = default;
  // Implicit from arithmetic constants and from the inner type, so that
  // `S(0.5)`, `S x = 0;` and Eigen's internal constants work.
  constexpr Dual(double value) : v(value), d(0.0) {}  // NOLINT
  template <class U = T, std::enable_if_t<!std::is_same_v<U, double>, int> = 0>
  constexpr Dual(const T& value) : v(value), d(0.0) {}  // NOLINT
  constexpr Dual(const T& value, const T& derivative)
      : v(value), d(derivative) {}

  Dual& operator+=(const Dual& o) {
    v += o.v;
    d += o.d;
    return *this;
  }
  Dual& operator-=(const Dual& o) {
    v -= o.v;
    d -= o.d;
    return *this;
  }
  Dual& operator*=(const Dual& o) {
    d = d * o.v + v * o.d;
    v *= o.v;
    return *this;
  }
  Dual& operator/=(const Dual& o) {
    *this = *this / o;
    return *this;
  }
  Dual& operator+=(double o) {
    v += o;
    return *this;
  }
  Dual& operator-=(double o) {
    v -= o;
    return *this;
  }
  Dual& operator*=(double o) {
    v *= o;
    d *= o;
    return *this;
  }
  Dual& operator/=(double o) {
    v /= o;
    d /= o;
    return *this;
  }

  friend Dual operator+(const Dual& a) { return a; }
  friend Dual operator-(const Dual& a) { return Dual(-a.v, -a.d); }

  friend Dual operator+(const Dual& a, const Dual& b) {
    return Dual(a.v + b.v, a.d + b.d);
  }
  friend Dual operator-(const Dual& a, const Dual& b) {
    return Dual(a.v - b.v, a.d - b.d);
  }
  friend Dual operator*(const Dual& a, const Dual& b) {
    return Dual(a.v * b.v, a.d * b.v + a.v * b.d);
  }
  friend Dual operator/(const Dual& a, const Dual& b) {
    const T inv = T(1.0) / b.v;
    const T q = a.v * inv;
    return Dual(q, (a.d - q * b.d) * inv);
  }
  friend Dual operator+(const Dual& a, double b) { return Dual(a.v + b, a.d); }
  friend Dual operator+(double a, const Dual& b) { return Dual(a + b.v, b.d); }
  friend Dual operator-(const Dual& a, double b) { return Dual(a.v - b, a.d); }
  friend Dual operator-(double a, const Dual& b) { return Dual(a - b.v, -b.d); }
  friend Dual operator*(const Dual& a, double b) {
    return Dual(a.v * b, a.d * b);
  }
  friend Dual operator*(double a, const Dual& b) {
    return Dual(a * b.v, a * b.d);
  }
  friend Dual operator/(const Dual& a, double b) {
    return Dual(a.v / b, a.d / b);
  }
  friend Dual operator/(double a, const Dual& b) {
    const T q = a / b.v;
    return Dual(q, -q * b.d / b.v);
  }

  // Comparisons look at the value only (branching on a value is allowed; the
  // derivative is that of the branch taken).
  friend bool operator<(const Dual& a, const Dual& b) { return a.v < b.v; }
  friend bool operator>(const Dual& a, const Dual& b) { return a.v > b.v; }
  friend bool operator<=(const Dual& a, const Dual& b) { return a.v <= b.v; }
  friend bool operator>=(const Dual& a, const Dual& b) { return a.v >= b.v; }
  friend bool operator==(const Dual& a, const Dual& b) { return a.v == b.v; }
  friend bool operator!=(const Dual& a, const Dual& b) { return a.v != b.v; }
  friend bool operator<(const Dual& a, double b) { return a.v < b; }
  friend bool operator>(const Dual& a, double b) { return a.v > b; }
  friend bool operator<(double a, const Dual& b) { return a < b.v; }
  friend bool operator>(double a, const Dual& b) { return a > b.v; }
};

/// The plain value of a (possibly nested) dual number.
inline double Value(double x) { return x; }
template <class T>
double Value(const Dual<T>& x) {
  return Value(x.v);
}

// Elementary functions. Each applies the chain rule once; nesting handles
// higher orders.
template <class T>
Dual<T> sin(const Dual<T>& x) {
  using std::cos;
  using std::sin;
  return Dual<T>(sin(x.v), cos(x.v) * x.d);
}
template <class T>
Dual<T> cos(const Dual<T>& x) {
  using std::cos;
  using std::sin;
  return Dual<T>(cos(x.v), -sin(x.v) * x.d);
}
template <class T>
Dual<T> tan(const Dual<T>& x) {
  using std::tan;
  const T t = tan(x.v);
  return Dual<T>(t, (1.0 + t * t) * x.d);
}
template <class T>
Dual<T> exp(const Dual<T>& x) {
  using std::exp;
  const T e = exp(x.v);
  return Dual<T>(e, e * x.d);
}
template <class T>
Dual<T> log(const Dual<T>& x) {
  using std::log;
  return Dual<T>(log(x.v), x.d / x.v);
}
template <class T>
Dual<T> sqrt(const Dual<T>& x) {
  using std::sqrt;
  const T s = sqrt(x.v);
  return Dual<T>(s, x.d / (2.0 * s));
}
template <class T>
Dual<T> pow(const Dual<T>& x, double p) {
  using std::pow;
  return Dual<T>(pow(x.v, p), p * pow(x.v, p - 1.0) * x.d);
}
template <class T>
Dual<T> sinh(const Dual<T>& x) {
  using std::cosh;
  using std::sinh;
  return Dual<T>(sinh(x.v), cosh(x.v) * x.d);
}
template <class T>
Dual<T> cosh(const Dual<T>& x) {
  using std::cosh;
  using std::sinh;
  return Dual<T>(cosh(x.v), sinh(x.v) * x.d);
}
template <class T>
Dual<T> tanh(const Dual<T>& x) {
  using std::tanh;
  const T t = tanh(x.v);
  return Dual<T>(t, (1.0 - t * t) * x.d);
}
template <class T>
Dual<T> asin(const Dual<T>& x) {
  using std::asin;
  using std::sqrt;
  return Dual<T>(asin(x.v), x.d / sqrt(1.0 - x.v * x.v));
}
template <class T>
Dual<T> acos(const Dual<T>& x) {
  using std::acos;
  using std::sqrt;
  return Dual<T>(acos(x.v), -x.d / sqrt(1.0 - x.v * x.v));
}
template <class T>
Dual<T> atan(const Dual<T>& x) {
  using std::atan;
  return Dual<T>(atan(x.v), x.d / (1.0 + x.v * x.v));
}
template <class T>
Dual<T> atan2(const Dual<T>& y, const Dual<T>& x) {
  using std::atan2;
  const T r2 = x.v * x.v + y.v * y.v;
  return Dual<T>(atan2(y.v, x.v), (x.v * y.d - y.v * x.d) / r2);
}
template <class T>
Dual<T> abs(const Dual<T>& x) {
  return x.v < 0.0 ? -x : x;
}
template <class T>
Dual<T> fabs(const Dual<T>& x) {
  return abs(x);
}
template <class T>
Dual<T> abs2(const Dual<T>& x) {
  return x * x;
}
template <class T>
bool isfinite(const Dual<T>& x) {
  using std::isfinite;
  return isfinite(x.v) && isfinite(x.d);
}

/// Scalar type of a user-function argument: `Scalar<decltype(x)>`.
template <class X>
using Scalar = typename std::decay_t<X>::Scalar;

using D1 = Dual<double>;
using D2 = Dual<D1>;
/// Third order: the linearization (tangent) of a second-order quantity, used
/// for exact Jacobians and parameter sensitivities (dynamics.hpp).
using D3 = Dual<D2>;

}  // namespace daedalus

namespace Eigen {

template <class T>
struct NumTraits<daedalus::Dual<T>> : NumTraits<double> {
  using Real = daedalus::Dual<T>;
  using NonInteger = daedalus::Dual<T>;
  using Nested = daedalus::Dual<T>;
  using Literal = daedalus::Dual<T>;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = 2 * NumTraits<T>::ReadCost,
    AddCost = 2 * NumTraits<T>::AddCost,
    MulCost = 3 * NumTraits<T>::MulCost + NumTraits<T>::AddCost
  };
};

template <class T, typename BinaryOp>
struct ScalarBinaryOpTraits<daedalus::Dual<T>, double, BinaryOp> {
  using ReturnType = daedalus::Dual<T>;
};
template <class T, typename BinaryOp>
struct ScalarBinaryOpTraits<double, daedalus::Dual<T>, BinaryOp> {
  using ReturnType = daedalus::Dual<T>;
};

}  // namespace Eigen
