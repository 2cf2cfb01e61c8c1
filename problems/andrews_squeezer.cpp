#include "andrews_squeezer.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::AndrewsSqueezerProblem, argc, argv);
}
