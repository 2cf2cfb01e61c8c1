// Writes docs/support.md from the support matrix's source
// (src/formulation/support.cpp): build/tests/support_table > docs/support.md
#include <iostream>

#include "formulation/support.hpp"

int main() {
  std::cout << daedalus::internal::SupportTableMarkdown();
  return 0;
}
