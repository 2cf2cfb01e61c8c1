// Forward-mode automatic differentiation: a dual number with one tangent.
//
// Dual<T> carries a value and one directional derivative. Nesting gives
// higher derivatives: Dual<Dual<double>> carries the second derivative along
// two (possibly equal) directions in `.d.d`. The problem author never names
// these types: user functions are generic lambdas, and Daedalus calls them
// with double, Dual<double> and Dual<Dual<double>>.
//
// Dual<double, Tangent<N>> carries N directional derivatives at once (one
// sweep of a user function gives a whole gradient block); Daedalus uses it
// internally to evaluate Jacobians, gradients and mass matrices in few
// sweeps (dynamics.cpp).
//
// Write math functions unqualified (`sin(x)`, not `std::sin(x)`) inside user
// functions so that argument-dependent lookup finds the overloads below for
// dual arguments and <cmath> for doubles. See docs/writing_a_problem.md.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <type_traits>

// Dual-number operators are small but nest deeply (a second-order
// multi-direction value is 80 bytes); compilers stop inlining them at
// depth, which costs more than the arithmetic (bench/README.md). Force it.
#if defined(DAEDALUS_AD_INLINE)
// Set by the build (the sanitizer build compiles them as plain inline).
#elif defined(__GNUC__) || defined(__clang__)
#define DAEDALUS_AD_INLINE [[gnu::always_inline]] inline
#else
#define DAEDALUS_AD_INLINE inline
#endif

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

/// N directional derivatives stored inline: the tangent part of a
/// multi-direction dual Dual<T, Tangent<N, T>>. A vector space over T
/// (lanes scale by T or by double); unused directions are zero.
template <int N, class T = double>
struct Tangent {
  T c[N]{};

  constexpr Tangent() = default;
  // Only zero converts (Dual's constant constructor writes d{}).
  DAEDALUS_AD_INLINE Tangent& operator+=(const Tangent& o) {
    for (int k = 0; k < N; ++k) c[k] += o.c[k];
    return *this;
  }
  DAEDALUS_AD_INLINE Tangent& operator-=(const Tangent& o) {
    for (int k = 0; k < N; ++k) c[k] -= o.c[k];
    return *this;
  }
  template <class U>
  DAEDALUS_AD_INLINE Tangent& operator*=(const U& s) {
    for (int k = 0; k < N; ++k) c[k] *= s;
    return *this;
  }
  template <class U>
  DAEDALUS_AD_INLINE Tangent& operator/=(const U& s) {
    for (int k = 0; k < N; ++k) c[k] /= s;
    return *this;
  }
  DAEDALUS_AD_INLINE friend Tangent operator+(const Tangent& a) { return a; }
  DAEDALUS_AD_INLINE friend Tangent operator-(const Tangent& a) {
    Tangent r;
    for (int k = 0; k < N; ++k) r.c[k] = -a.c[k];
    return r;
  }
  DAEDALUS_AD_INLINE friend Tangent operator+(Tangent a, const Tangent& b) {
    return a += b;
  }
  DAEDALUS_AD_INLINE friend Tangent operator-(Tangent a, const Tangent& b) {
    return a -= b;
  }
  DAEDALUS_AD_INLINE friend Tangent operator*(Tangent a, double s) {
    return a *= s;
  }
  DAEDALUS_AD_INLINE friend Tangent operator*(double s, Tangent a) {
    return a *= s;
  }
  DAEDALUS_AD_INLINE friend Tangent operator/(Tangent a, double s) {
    return a /= s;
  }
  // Scaling by the lane scalar when it is not double (a dual).
  template <class U = T, std::enable_if_t<!std::is_same_v<U, double>, int> = 0>
  DAEDALUS_AD_INLINE friend Tangent operator*(Tangent a, const T& s) {
    return a *= s;
  }
  template <class U = T, std::enable_if_t<!std::is_same_v<U, double>, int> = 0>
  DAEDALUS_AD_INLINE friend Tangent operator*(const T& s, Tangent a) {
    return a *= s;
  }
  template <class U = T, std::enable_if_t<!std::is_same_v<U, double>, int> = 0>
  DAEDALUS_AD_INLINE friend Tangent operator/(Tangent a, const T& s) {
    return a /= s;
  }
};
template <int N, class T>
bool isfinite(const Tangent<N, T>& t) {
  using std::isfinite;
  for (int k = 0; k < N; ++k)
    if (!isfinite(t.c[k])) return false;
  return true;
}

/// Value and derivative: T is the value type (double or a dual), G the
/// tangent type (T for one direction, Tangent<N> over double for N).
template <class T, class G = T>
struct Dual {
  T v{};  ///< value
  G d{};  ///< derivative along the seeded direction(s)

  constexpr Dual() = default;
  // Implicit from arithmetic constants and from the inner type, so that
  // `S(0.5)`, `S x = 0;` and Eigen's internal constants work.
  constexpr Dual(double value) : v(value), d{} {}  // NOLINT
  template <class U = T, std::enable_if_t<!std::is_same_v<U, double>, int> = 0>
  constexpr Dual(const T& value) : v(value), d{} {}  // NOLINT
  constexpr Dual(const T& value, const G& derivative)
      : v(value), d(derivative) {}

  DAEDALUS_AD_INLINE Dual& operator+=(const Dual& o) {
    v += o.v;
    d += o.d;
    return *this;
  }
  DAEDALUS_AD_INLINE Dual& operator-=(const Dual& o) {
    v -= o.v;
    d -= o.d;
    return *this;
  }
  DAEDALUS_AD_INLINE Dual& operator*=(const Dual& o) {
    d = d * o.v + v * o.d;
    v *= o.v;
    return *this;
  }
  DAEDALUS_AD_INLINE Dual& operator/=(const Dual& o) {
    *this = *this / o;
    return *this;
  }
  DAEDALUS_AD_INLINE Dual& operator+=(double o) {
    v += o;
    return *this;
  }
  DAEDALUS_AD_INLINE Dual& operator-=(double o) {
    v -= o;
    return *this;
  }
  DAEDALUS_AD_INLINE Dual& operator*=(double o) {
    v *= o;
    d *= o;
    return *this;
  }
  DAEDALUS_AD_INLINE Dual& operator/=(double o) {
    v /= o;
    d /= o;
    return *this;
  }

  DAEDALUS_AD_INLINE friend Dual operator+(const Dual& a) { return a; }
  DAEDALUS_AD_INLINE friend Dual operator-(const Dual& a) {
    return Dual(-a.v, -a.d);
  }

  DAEDALUS_AD_INLINE friend Dual operator+(const Dual& a, const Dual& b) {
    return Dual(a.v + b.v, a.d + b.d);
  }
  DAEDALUS_AD_INLINE friend Dual operator-(const Dual& a, const Dual& b) {
    return Dual(a.v - b.v, a.d - b.d);
  }
  DAEDALUS_AD_INLINE friend Dual operator*(const Dual& a, const Dual& b) {
    return Dual(a.v * b.v, a.d * b.v + a.v * b.d);
  }
  DAEDALUS_AD_INLINE friend Dual operator/(const Dual& a, const Dual& b) {
    const T inv = T(1.0) / b.v;
    const T q = a.v * inv;
    return Dual(q, (a.d - q * b.d) * inv);
  }
  DAEDALUS_AD_INLINE friend Dual operator+(const Dual& a, double b) {
    return Dual(a.v + b, a.d);
  }
  DAEDALUS_AD_INLINE friend Dual operator+(double a, const Dual& b) {
    return Dual(a + b.v, b.d);
  }
  DAEDALUS_AD_INLINE friend Dual operator-(const Dual& a, double b) {
    return Dual(a.v - b, a.d);
  }
  DAEDALUS_AD_INLINE friend Dual operator-(double a, const Dual& b) {
    return Dual(a - b.v, -b.d);
  }
  DAEDALUS_AD_INLINE friend Dual operator*(const Dual& a, double b) {
    return Dual(a.v * b, a.d * b);
  }
  DAEDALUS_AD_INLINE friend Dual operator*(double a, const Dual& b) {
    return Dual(a * b.v, a * b.d);
  }
  DAEDALUS_AD_INLINE friend Dual operator/(const Dual& a, double b) {
    return Dual(a.v / b, a.d / b);
  }
  DAEDALUS_AD_INLINE friend Dual operator/(double a, const Dual& b) {
    const T q = a / b.v;
    return Dual(q, -q * b.d / b.v);
  }

  // Comparisons look at the value only (branching on a value is allowed; the
  // derivative is that of the branch taken).
  DAEDALUS_AD_INLINE friend bool operator<(const Dual& a, const Dual& b) {
    return a.v < b.v;
  }
  DAEDALUS_AD_INLINE friend bool operator>(const Dual& a, const Dual& b) {
    return a.v > b.v;
  }
  DAEDALUS_AD_INLINE friend bool operator<=(const Dual& a, const Dual& b) {
    return a.v <= b.v;
  }
  DAEDALUS_AD_INLINE friend bool operator>=(const Dual& a, const Dual& b) {
    return a.v >= b.v;
  }
  DAEDALUS_AD_INLINE friend bool operator==(const Dual& a, const Dual& b) {
    return a.v == b.v;
  }
  DAEDALUS_AD_INLINE friend bool operator!=(const Dual& a, const Dual& b) {
    return a.v != b.v;
  }
  DAEDALUS_AD_INLINE friend bool operator<(const Dual& a, double b) {
    return a.v < b;
  }
  DAEDALUS_AD_INLINE friend bool operator>(const Dual& a, double b) {
    return a.v > b;
  }
  DAEDALUS_AD_INLINE friend bool operator<(double a, const Dual& b) {
    return a < b.v;
  }
  DAEDALUS_AD_INLINE friend bool operator>(double a, const Dual& b) {
    return a > b.v;
  }
};

/// The plain value of a (possibly nested) dual number.
inline double Value(double x) { return x; }
template <class T, class G>
double Value(const Dual<T, G>& x) {
  return Value(x.v);
}

// Elementary functions. Each applies the chain rule once; nesting handles
// higher orders.

/// Sine and cosine together: one sincos of the plain value at any nesting
/// depth (sin of a Dual<Dual<double>> would otherwise evaluate four).
DAEDALUS_AD_INLINE void SinCos(double x, double* s, double* c) {
  *s = std::sin(x);  // GCC and clang fuse the pair into one sincos call
  *c = std::cos(x);
}
template <class T, class G>
DAEDALUS_AD_INLINE void SinCos(const Dual<T, G>& x,
                               Dual<T, G>* s,
                               Dual<T, G>* c) {
  T si, co;
  SinCos(x.v, &si, &co);
  *s = Dual<T, G>(si, co * x.d);
  *c = Dual<T, G>(co, -si * x.d);
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> sin(const Dual<T, G>& x) {
  Dual<T, G> s, c;
  SinCos(x, &s, &c);
  return s;
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> cos(const Dual<T, G>& x) {
  Dual<T, G> s, c;
  SinCos(x, &s, &c);
  return c;
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> tan(const Dual<T, G>& x) {
  using std::tan;
  const T t = tan(x.v);
  return Dual<T, G>(t, (1.0 + t * t) * x.d);
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> exp(const Dual<T, G>& x) {
  using std::exp;
  const T e = exp(x.v);
  return Dual<T, G>(e, e * x.d);
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> log(const Dual<T, G>& x) {
  using std::log;
  return Dual<T, G>(log(x.v), x.d / x.v);
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> sqrt(const Dual<T, G>& x) {
  using std::sqrt;
  const T s = sqrt(x.v);
  return Dual<T, G>(s, x.d / (2.0 * s));
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> pow(const Dual<T, G>& x, double p) {
  using std::pow;
  return Dual<T, G>(pow(x.v, p), p * pow(x.v, p - 1.0) * x.d);
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> sinh(const Dual<T, G>& x) {
  using std::cosh;
  using std::sinh;
  return Dual<T, G>(sinh(x.v), cosh(x.v) * x.d);
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> cosh(const Dual<T, G>& x) {
  using std::cosh;
  using std::sinh;
  return Dual<T, G>(cosh(x.v), sinh(x.v) * x.d);
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> tanh(const Dual<T, G>& x) {
  using std::tanh;
  const T t = tanh(x.v);
  return Dual<T, G>(t, (1.0 - t * t) * x.d);
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> asin(const Dual<T, G>& x) {
  using std::asin;
  using std::sqrt;
  return Dual<T, G>(asin(x.v), x.d / sqrt(1.0 - x.v * x.v));
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> acos(const Dual<T, G>& x) {
  using std::acos;
  using std::sqrt;
  return Dual<T, G>(acos(x.v), -x.d / sqrt(1.0 - x.v * x.v));
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> atan(const Dual<T, G>& x) {
  using std::atan;
  return Dual<T, G>(atan(x.v), x.d / (1.0 + x.v * x.v));
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> atan2(const Dual<T, G>& y, const Dual<T, G>& x) {
  using std::atan2;
  const T r2 = x.v * x.v + y.v * y.v;
  return Dual<T, G>(atan2(y.v, x.v), (x.v * y.d - y.v * x.d) / r2);
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> abs(const Dual<T, G>& x) {
  return x.v < 0.0 ? -x : x;
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> fabs(const Dual<T, G>& x) {
  return abs(x);
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> abs2(const Dual<T, G>& x) {
  return x * x;
}
template <class T, class G>
bool isfinite(const Dual<T, G>& x) {
  using std::isfinite;
  return isfinite(x.v) && isfinite(x.d);
}

/// Branch-free selection for model code: `a where c > 0, else b`, for
/// every scalar type a user function is called with (double, the duals
/// here, and Sym, sym.hpp, where it is recorded as a graph node so the
/// function stays compilable). Its derivatives are those of the chosen
/// branch (a piecewise function; the condition's derivative is unused).
/// Use it instead of `if` on a value that depends on the state, the time
/// or the parameters. All three arguments have the same scalar type
/// (write `S(0.0)` for a constant). Both branches are computed; the one
/// not chosen may be infinite or NaN without harm.
DAEDALUS_AD_INLINE double IfPositive(double c, double a, double b) {
  return c > 0.0 ? a : b;
}
template <class T, class G>
DAEDALUS_AD_INLINE Dual<T, G> IfPositive(const Dual<T, G>& c,
                                         const Dual<T, G>& a,
                                         const Dual<T, G>& b) {
  return c.v > 0.0 ? a : b;
}
/// x limited to [lo, hi] (lo <= hi), with IfPositive: derivative that of x
/// strictly inside, 0 outside (the bound is a constant branch). Same as
/// `if (x > hi) x = hi; if (x < lo) x = lo;`, bit for bit.
template <class S>
S Clamp(const S& x, const S& lo, const S& hi) {
  const S upper = IfPositive(x - hi, hi, x);
  return IfPositive(lo - upper, lo, upper);
}

/// Scalar type of a user-function argument: `Scalar<decltype(x)>`.
template <class X>
using Scalar = typename std::decay_t<X>::Scalar;

using D1 = Dual<double>;
using D2 = Dual<D1>;
/// Third order: the linearization (tangent) of a second-order quantity, used
/// for exact Jacobians and parameter sensitivities (dynamics.hpp).
using D3 = Dual<D2>;

/// Directions per multi-direction sweep. Four covers the gradient plus the
/// time derivative of a three-coordinate model in one call and keeps the
/// second-order type small; larger models take the directions in chunks.
inline constexpr int kSweepWidth = 4;
/// First order, kSweepWidth directions at once.
using M1 = Dual<double, Tangent<kSweepWidth>>;
/// Second order: one direction over M1 (a column of second derivatives).
using M2 = Dual<M1>;
/// The same two over a D1 base (the tangent workspace's sweeps).
using TM1 = Dual<D1, Tangent<kSweepWidth, D1>>;
using TM2 = Dual<TM1>;

}  // namespace daedalus

namespace Eigen {

template <class T, class G>
struct NumTraits<daedalus::Dual<T, G>> : NumTraits<double> {
  using Real = daedalus::Dual<T, G>;
  using NonInteger = daedalus::Dual<T, G>;
  using Nested = daedalus::Dual<T, G>;
  using Literal = daedalus::Dual<T, G>;
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

template <class T, class G, typename BinaryOp>
struct ScalarBinaryOpTraits<daedalus::Dual<T, G>, double, BinaryOp> {
  using ReturnType = daedalus::Dual<T, G>;
};
template <class T, class G, typename BinaryOp>
struct ScalarBinaryOpTraits<double, daedalus::Dual<T, G>, BinaryOp> {
  using ReturnType = daedalus::Dual<T, G>;
};

}  // namespace Eigen
