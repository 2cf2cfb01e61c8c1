// Expression graphs recorded from user functions evaluated with Sym
// (include/daedalus/sym.hpp), their exact derivatives, and a reference
// evaluator. ExprProgram (expr_program.hpp) turns a set of outputs into a
// straight-line program.
//
// Nodes are created after their operands, so node ids are a topological
// order. Identical nodes are shared (hash-consing) and trivial identities
// are applied as nodes are made (constant folding, x + 0, x * 1, x * 0,
// x - x, double negation), so derivative graphs stay small: a derivative
// that is structurally zero is the constant node 0.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "daedalus/sym.hpp"

namespace daedalus::internal {

enum class Op : std::uint8_t {
  kConst,  // value
  kInput,  // input number `value`
  kAdd,
  kSub,
  kMul,
  kDiv,
  kNeg,
  kSin,
  kCos,
  kTan,
  kExp,
  kLog,
  kSqrt,
  kPow,  // a^b
  kSinh,
  kCosh,
  kTanh,
  kAsin,
  kAcos,
  kAtan,
  kAtan2,  // atan2(a, b)
  kAbs,
  kSign,  // -1 for a < 0, else 1 (the derivative of |a|, as dual.hpp)
  // Branch-free selection (IfPositive): the pair of one Select() is
  // kIfPos(c, a) + kIfNotPos(c, b). The value not chosen is never read, so
  // an infinite or NaN branch that is not selected does not leak through.
  kIfPos,     // b where a > 0, else 0
  kIfNotPos,  // 0 where a > 0, else b
  // Piecewise-linear interpolation in t = a on a knot table (the controls'
  // splines, expr_knots.cpp); b numbers a table, not a node. With t
  // clamped to the knots and [k_i, k_i+1] the interval holding it:
  kPwLinear,  // c_i + (c_i+1 - c_i) (t - k_i) / h_i; b: coefficient table
  kPwSlope,   // its d/dt, (c_i+1 - c_i) / h_i (0 outside the knots)
  kHat,       // d kPwLinear / d c_j (value: j); b: knot set
  kHatSlope,  // d kPwSlope / d c_j = d kHat / dt (value: j); b: knot set
};
const char* ToString(Op op);

/// Whether b of a node numbers a knot table (kPwLinear ... kHatSlope).
inline bool IsKnotOp(Op op) { return op >= Op::kPwLinear; }

// The knot operations' values, shared by the graph's reference evaluator
// and the programs. The arithmetic is ControlSpline's for doubles and dual
// numbers, so that both evaluators give the same values.
inline int KnotInterval(const double* k, int n, double tc) {
  int lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (k[mid] <= tc)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}
// Whether interval i holds tc (as KnotInterval picks it).
inline bool InKnotInterval(const double* k, int n, int i, double tc) {
  return i >= 0 && i <= n - 2 && tc >= k[i] &&
         (tc < k[i + 1] || (i == n - 2 && tc <= k[i + 1]));
}
/// The value of knot operation `op` at t on the n knots k, with
/// coefficient i given by c(i) (kPwLinear, kPwSlope) or spline j (kHat,
/// kHatSlope).
template <class C>
double KnotOpValue(Op op, const double* k, int n, double t, C c, int j) {
  const bool inside = !(t < k[0] || t > k[n - 1]);
  const double tc = t < k[0] ? k[0] : (t > k[n - 1] ? k[n - 1] : t);
  switch (op) {
    case Op::kPwLinear: {
      const int i = KnotInterval(k, n, tc);
      const double a = c(i), b = c(i + 1);
      return a + (b - a) * ((tc - k[i]) / (k[i + 1] - k[i]));
    }
    case Op::kPwSlope: {
      if (!inside) return 0.0;
      const int i = KnotInterval(k, n, tc);
      return (c(i + 1) - c(i)) / (k[i + 1] - k[i]);
    }
    case Op::kHat:
      if (InKnotInterval(k, n, j, tc))
        return 1.0 - (tc - k[j]) / (k[j + 1] - k[j]);
      if (InKnotInterval(k, n, j - 1, tc))
        return (tc - k[j - 1]) / (k[j] - k[j - 1]);
      return 0.0;
    case Op::kHatSlope:
      if (!inside) return 0.0;
      if (InKnotInterval(k, n, j, tc)) return -1.0 / (k[j + 1] - k[j]);
      if (InKnotInterval(k, n, j - 1, tc)) return 1.0 / (k[j] - k[j - 1]);
      return 0.0;
    default:
      return std::numeric_limits<double>::quiet_NaN();
  }
}

struct ExprNode {
  Op op = Op::kConst;
  std::int32_t a = -1, b = -1;
  double value = 0.0;  // kConst: the constant; kInput: the input number
};

class ExprGraph {
 public:
  /// Node 0 is the constant 0, node 1 the constant 1.
  ExprGraph();

  /// Upper bound on the number of nodes; making more throws
  /// std::length_error (the caller falls back to the dual-number path).
  static constexpr int kMaxNodes = 400000;

  int size() const { return static_cast<int>(nodes_.size()); }
  const ExprNode& node(int id) const { return nodes_[id]; }

  int Constant(double c);
  /// The node of input number k (one per k).
  int Input(int k);
  int num_inputs() const { return static_cast<int>(input_nodes_.size()); }
  /// The node of input number k, or -1 when it was never made.
  int InputNode(int k) const {
    return k >= 0 && k < num_inputs() ? input_nodes_[k] : -1;
  }

  int Add(int a, int b);
  int Sub(int a, int b);
  int Mul(int a, int b);
  int Div(int a, int b);
  int Neg(int a);
  /// Elementary functions of one argument (kSin ... kSign).
  int Unary(Op op, int a);
  /// kPow, kAtan2, kIfPos, kIfNotPos (and the arithmetic operators).
  int Binary(Op op, int a, int b);
  /// The node of `a where c > 0, else b` (IfPositive in sym.hpp): its
  /// derivatives are those of the chosen branch; c's derivative is unused.
  int Select(int c, int a, int b);
  /// The piecewise-linear interpolation of the nodes `coef` on `knots`
  /// (increasing, one coefficient each) at the node t, t clamped to the
  /// knots (kPwLinear): one node whatever the number of knots.
  int PwLinear(int t,
               const std::vector<double>& knots,
               const std::vector<int>& coef);

  /// A knot operation's table: its knot set and coefficient nodes.
  struct KnotTable {
    int knots = 0;
    std::vector<int> coef;
  };
  const KnotTable& table(int k) const {
    return tables_[static_cast<std::size_t>(k)];
  }
  const std::vector<double>& knot_set(int k) const {
    return knot_sets_[static_cast<std::size_t>(k)];
  }
  /// Calls f(operand) for each operand node of node `id` (a knot table's
  /// coefficients for kPwLinear and kPwSlope).
  template <class F>
  void ForOperands(int id, F f) const {
    const ExprNode& nd = nodes_[static_cast<std::size_t>(id)];
    if (nd.a >= 0) f(nd.a);
    if (nd.op == Op::kPwLinear || nd.op == Op::kPwSlope) {
      for (int c : tables_[static_cast<std::size_t>(nd.b)].coef) f(c);
    } else if (!IsKnotOp(nd.op) && nd.b >= 0) {
      f(nd.b);
    }
  }

  bool IsConstant(int id) const { return nodes_[id].op == Op::kConst; }
  bool IsZero(int id) const {
    return IsConstant(id) && nodes_[id].value == 0.0;
  }
  bool IsOne(int id) const { return IsConstant(id) && nodes_[id].value == 1.0; }

  /// Forward-mode derivatives of `outputs` along a direction in input
  /// space: seed[k] is the node of the derivative of input k (0 for none;
  /// inputs beyond seed.size() have zero derivative). Seeds may be any
  /// nodes, so directional derivatives along symbolic directions work.
  std::vector<int> Derivative(const std::vector<int>& outputs,
                              const std::vector<int>& seed);

  /// Reverse mode: the gradient of sum_i weights[i] * outputs[i] with
  /// respect to the inputs numbered `wrt` (one node each; the constant 0
  /// for an input the outputs do not read). One backward sweep over the
  /// outputs' cone, so the result's size is a small multiple of the cone's
  /// whatever the number of inputs (a vector-Jacobian product, where
  /// Derivative gives one Jacobian column per call). Weights may be any
  /// nodes (inputs: a symbolic adjoint vector). Same rules as Derivative.
  std::vector<int> Gradient(const std::vector<int>& outputs,
                            const std::vector<int>& weights,
                            const std::vector<int>& wrt);

  /// Every node's value for the given input values (reference evaluator
  /// for tests; inputs beyond `inputs` are NaN).
  std::vector<double> Evaluate(const std::vector<double>& inputs) const;

 private:
  struct Key {
    Op op;
    std::int32_t a, b;
    std::uint64_t bits;
    bool operator==(const Key& o) const {
      return op == o.op && a == o.a && b == o.b && bits == o.bits;
    }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  int Make(Op op, int a, int b, double value);
  int Rule(int id, const std::vector<int>& d, const std::vector<int>& seed);
  // Knot operations (expr_knots.cpp): a knot set's number, a node (folded
  // when constant), the forward rule, the reverse sweep's step.
  int Knots(const std::vector<double>& knots);
  int KnotNode(Op op, int t, int knots, const std::vector<int>& coef, int j);
  int KnotRule(int id, const std::vector<int>& d);
  void KnotAdjoint(int id, int g, std::vector<int>* bar);

  std::vector<ExprNode> nodes_;
  std::unordered_map<Key, int, KeyHash> cse_;
  std::vector<int> input_nodes_;
  std::vector<std::vector<double>> knot_sets_;
  std::map<std::vector<double>, int> knot_index_;
  std::vector<KnotTable> tables_;
  std::map<std::pair<int, std::vector<int>>, int> table_index_;
};

/// Makes `g` the graph that Sym operations on this thread record into, for
/// the lifetime of the scope (scopes nest).
class TraceScope {
 public:
  explicit TraceScope(ExprGraph* g);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  ExprGraph* previous_;
};

/// The graph Sym operations record into on this thread; throws
/// std::logic_error when there is none.
ExprGraph& ActiveGraph();

}  // namespace daedalus::internal
