// A symbolic scalar: user functions evaluated with Sym record themselves as
// an expression graph, once per model. Daedalus differentiates that graph
// exactly (docs/conventions.md, "Compiled evaluation") and runs the
// equations of motion, the DAE residual and its Jacobian as straight-line
// programs instead of re-evaluating the user's lambdas with dual numbers.
//
// The problem author never names this type. A user function is traceable
// when it computes the same sequence of operations at every state: it may
// branch on sizes, parameters' declared structure and constants, but not on
// the value of a coordinate, a velocity, the time or a parameter. Comparing
// two non-constant Sym values, or reading one with Value(), throws
// NotTraceable; the model is then evaluated by the dual-number path, which
// gives the same results (only slower). A run reports which evaluator it
// used ("evaluator" in the JSON summary). A piecewise function records when
// written with IfPositive or Clamp (dual.hpp) instead of `if`.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <stdexcept>

namespace daedalus {

/// Thrown while recording a user function that cannot be written as one
/// fixed expression (it branches on, or reads, a value that depends on the
/// state or the parameters). Caught by Daedalus, never by the user.
class NotTraceable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A node of the expression graph being recorded on this thread. Copying a
/// Sym copies the handle; arithmetic records new nodes (identical nodes are
/// shared, constants folded).
class Sym {
 public:
  /// The constant 0.
  constexpr Sym() = default;
  /// A constant (0 and 1 need no active recording; other values do).
  Sym(double value);  // NOLINT(google-explicit-constructor)

  static Sym FromNode(std::int32_t node) {
    Sym s;
    s.node_ = node;
    return s;
  }
  std::int32_t node() const { return node_; }

  Sym& operator+=(const Sym& o);
  Sym& operator-=(const Sym& o);
  Sym& operator*=(const Sym& o);
  Sym& operator/=(const Sym& o);

 private:
  std::int32_t node_ = 0;  // node 0 is the constant 0 in every graph
};

Sym operator+(const Sym& a);
Sym operator-(const Sym& a);
Sym operator+(const Sym& a, const Sym& b);
Sym operator-(const Sym& a, const Sym& b);
Sym operator*(const Sym& a, const Sym& b);
Sym operator/(const Sym& a, const Sym& b);

// Comparisons decide only between constants; otherwise NotTraceable.
bool operator<(const Sym& a, const Sym& b);
bool operator>(const Sym& a, const Sym& b);
bool operator<=(const Sym& a, const Sym& b);
bool operator>=(const Sym& a, const Sym& b);
bool operator==(const Sym& a, const Sym& b);
bool operator!=(const Sym& a, const Sym& b);

Sym sin(const Sym& x);
Sym cos(const Sym& x);
void SinCos(const Sym& x, Sym* s, Sym* c);
Sym tan(const Sym& x);
Sym exp(const Sym& x);
Sym log(const Sym& x);
Sym sqrt(const Sym& x);
Sym pow(const Sym& x, double p);
Sym pow(const Sym& x, const Sym& y);
Sym sinh(const Sym& x);
Sym cosh(const Sym& x);
Sym tanh(const Sym& x);
Sym asin(const Sym& x);
Sym acos(const Sym& x);
Sym atan(const Sym& x);
Sym atan2(const Sym& y, const Sym& x);
Sym abs(const Sym& x);
Sym fabs(const Sym& x);
Sym abs2(const Sym& x);
/// `a where c > 0, else b`, recorded as one branch-free selection (both
/// branches are recorded; only the chosen one is read). See dual.hpp.
Sym IfPositive(const Sym& c, const Sym& a, const Sym& b);
/// True: finiteness is checked on the numbers each evaluation produces.
bool isfinite(const Sym& x);
/// The value of a constant; NotTraceable for anything else.
double Value(const Sym& x);

}  // namespace daedalus

namespace Eigen {

template <>
struct NumTraits<daedalus::Sym> : NumTraits<double> {
  using Real = daedalus::Sym;
  using NonInteger = daedalus::Sym;
  using Nested = daedalus::Sym;
  using Literal = daedalus::Sym;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = 1,
    AddCost = 1,
    MulCost = 1
  };
};

template <typename BinaryOp>
struct ScalarBinaryOpTraits<daedalus::Sym, double, BinaryOp> {
  using ReturnType = daedalus::Sym;
};
template <typename BinaryOp>
struct ScalarBinaryOpTraits<double, daedalus::Sym, BinaryOp> {
  using ReturnType = daedalus::Sym;
};

}  // namespace Eigen
