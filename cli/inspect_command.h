// `bigstep inspect CONFIG [--set k=v]... [--states N] [--seed S]`: prints the finalized model and
// its dynamics (CRBA H, RNEA tau) at N seeded random states as JSON, for external oracles
// (tests/python/test_pinocchio.py builds the same model in Pinocchio).
#pragma once
#include <string>
#include <vector>

namespace bigstep {
int inspect_command(const std::vector<std::string>& args);
}
