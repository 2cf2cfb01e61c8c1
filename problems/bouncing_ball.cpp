#include "bouncing_ball.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::BouncingBallProblem, argc, argv);
}
