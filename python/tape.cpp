#include "tape.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace daedalus::python {

Recording::Recording(int nq, int np) : nq_(nq), np_(np) {
  // All inputs first, so that every recorded node comes after them.
  const int n = 1 + 2 * nq + np;
  for (int k = 0; k < n; ++k) graph_.Input(k);
}

Tape::Tape(const Recording& rec, const std::vector<int>& outputs)
    : nq_(rec.nq()) {
  const internal::ExprGraph& g = rec.graph();
  // Mark what the outputs need; operands have smaller ids than their
  // nodes, so one backward pass over the ids finds them all.
  int top = 1;
  for (int o : outputs) {
    if (o < 0 || o >= g.size())
      throw std::logic_error("Tape: an output is not a node of the graph");
    top = std::max(top, o);
  }
  std::vector<char> needed(static_cast<size_t>(top) + 1, 0);
  for (int o : outputs) needed[o] = 1;
  for (int id = top; id >= 0; --id) {
    if (!needed[id]) continue;
    const internal::ExprNode& n = g.node(id);
    if (n.a >= 0) needed[n.a] = 1;
    if (n.b >= 0) needed[n.b] = 1;
  }
  // Copy them in recording order, renumbering operands.
  std::vector<int> index(needed.size(), -1);
  for (int id = 0; id <= top; ++id) {
    if (!needed[id]) continue;
    internal::ExprNode n = g.node(id);
    if (n.op == internal::Op::kConst && !std::isfinite(n.value))
      throw std::invalid_argument(
          "the expression holds the non-finite constant " +
          std::to_string(n.value));
    if (n.a >= 0) n.a = index[n.a];
    if (n.b >= 0) n.b = index[n.b];
    index[id] = static_cast<int>(nodes_.size());
    nodes_.push_back(n);
  }
  for (int o : outputs) outputs_.push_back(index[o]);
}

}  // namespace daedalus::python
