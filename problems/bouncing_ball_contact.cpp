#include "bouncing_ball_contact.hpp"

int main(int argc, char** argv) {
  return daedalus::run(daedalus::problems::BouncingBallContactProblem, argc,
                       argv);
}
