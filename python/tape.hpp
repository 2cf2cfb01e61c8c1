// A model function written in Python, recorded once as an expression and
// evaluated from C++ at every scalar type the library uses (docs/python.md).
//
// The Python module calls each of the user's functions once with symbolic
// arguments (SymValue below): every operation adds a node to a private
// expression graph (src/eval/expr_graph.hpp) whose inputs are numbered
// t | q | v | p. A Tape is the part of that graph some outputs need, in
// recording order. Tape::Evaluate runs it with doubles, with dual numbers
// (the tangent sweeps, sensitivities) or with Sym: then it re-records the
// same operations, in the same order, into the model's own graph, so the
// compiled programs of a Python model are those of the same model written
// in C++. No Python runs while a model is evaluated.
#pragma once

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "daedalus/model.hpp"
#include "eval/expr_graph.hpp"

namespace daedalus::python {

/// A recording: the private graph of one Python model, with its inputs
/// made first (node ids 2 ... 2 + 2 nq + np): t, q (nq), v (nq), p (np).
class Recording {
 public:
  Recording(int nq, int np);
  internal::ExprGraph& graph() { return graph_; }
  const internal::ExprGraph& graph() const { return graph_; }
  int nq() const { return nq_; }
  int np() const { return np_; }
  /// Node of input k (0: t, then q, v, p).
  int InputNode(int k) const { return graph_.InputNode(k); }

 private:
  internal::ExprGraph graph_;
  int nq_, np_;
};

/// A symbolic scalar of a recording, as Python holds it.
struct SymValue {
  std::shared_ptr<Recording> rec;
  int node = 0;
};

/// The nodes that `outputs` (node ids of `rec`) need, in recording order,
/// with operands renumbered into the tape.
class Tape {
 public:
  Tape(const Recording& rec, const std::vector<int>& outputs);

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  int size() const { return static_cast<int>(nodes_.size()); }

  /// Writes the outputs at `x` to out[0 .. num_outputs()).
  template <class S>
  void Evaluate(const Point<S>& x, S* out) const;

 private:
  template <class S>
  S Input(const Point<S>& x, int k) const {
    if (k == 0) return x.t;
    k -= 1;
    if (k < nq_) return x.q[k];
    k -= nq_;
    if (k < nq_) return x.v[k];
    return x.p[k - nq_];
  }
  template <class S>
  static S Pow(const S& a, const S& b) {
    if constexpr (std::is_same_v<S, double> || std::is_same_v<S, Sym>) {
      return pow(a, b);
    } else {
      return exp(b * log(a));  // the duals have pow(x, double) only
    }
  }

  std::vector<internal::ExprNode> nodes_;  // operands: indices into nodes_
  std::vector<int> outputs_;               // indices into nodes_
  int nq_ = 0;
};

template <class S>
void Tape::Evaluate(const Point<S>& x, S* out) const {
  using internal::Op;
  using std::abs;
  // One scratch array per scalar type and thread, reused: evaluations do
  // not nest (a tape calls no other function).
  thread_local std::vector<S> val;
  if (val.size() < nodes_.size()) val.resize(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const internal::ExprNode& n = nodes_[i];
    switch (n.op) {
      case Op::kConst:
        val[i] = S(n.value);
        break;
      case Op::kInput:
        val[i] = Input(x, static_cast<int>(n.value));
        break;
      case Op::kAdd:
        val[i] = val[n.a] + val[n.b];
        break;
      case Op::kSub:
        val[i] = val[n.a] - val[n.b];
        break;
      case Op::kMul:
        val[i] = val[n.a] * val[n.b];
        break;
      case Op::kDiv:
        val[i] = val[n.a] / val[n.b];
        break;
      case Op::kNeg:
        val[i] = -val[n.a];
        break;
      case Op::kSin:
        val[i] = sin(val[n.a]);
        break;
      case Op::kCos:
        val[i] = cos(val[n.a]);
        break;
      case Op::kTan:
        val[i] = tan(val[n.a]);
        break;
      case Op::kExp:
        val[i] = exp(val[n.a]);
        break;
      case Op::kLog:
        val[i] = log(val[n.a]);
        break;
      case Op::kSqrt:
        val[i] = sqrt(val[n.a]);
        break;
      case Op::kPow:
        // A constant exponent stays a constant (as pow(x, 2.5) in C++).
        if (nodes_[n.b].op == Op::kConst) {
          val[i] = pow(val[n.a], nodes_[n.b].value);
        } else {
          val[i] = Pow<S>(val[n.a], val[n.b]);
        }
        break;
      case Op::kSinh:
        val[i] = sinh(val[n.a]);
        break;
      case Op::kCosh:
        val[i] = cosh(val[n.a]);
        break;
      case Op::kTanh:
        val[i] = tanh(val[n.a]);
        break;
      case Op::kAsin:
        val[i] = asin(val[n.a]);
        break;
      case Op::kAcos:
        val[i] = acos(val[n.a]);
        break;
      case Op::kAtan:
        val[i] = atan(val[n.a]);
        break;
      case Op::kAtan2:
        val[i] = atan2(val[n.a], val[n.b]);
        break;
      case Op::kAbs:
        val[i] = abs(val[n.a]);
        break;
      case Op::kIfPos:  // b where a > 0, else 0 (expr_graph.hpp)
        val[i] = IfPositive(val[n.a], val[n.b], S(0.0));
        break;
      case Op::kIfNotPos:  // 0 where a > 0, else b
        val[i] = IfPositive(val[n.a], S(0.0), val[n.b]);
        break;
      case Op::kSign:
        // Made only by differentiation, never by a recording.
        throw std::logic_error("Tape: a recorded sign node");
      case Op::kPwLinear:
      case Op::kPwSlope:
      case Op::kHat:
      case Op::kHatSlope:
        // Made only by the control spline (src/eval/expr_knots.cpp), never
        // by a Python recording.
        throw std::logic_error("Tape: a recorded knot-table node");
    }
  }
  for (size_t k = 0; k < outputs_.size(); ++k) out[k] = val[outputs_[k]];
}

}  // namespace daedalus::python
