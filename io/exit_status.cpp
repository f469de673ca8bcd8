#include "io/exit_status.h"

#include <cstdio>
#include <exception>
#include <new>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "io/atomic_write.h"

namespace bigstep {

int exit_status_of_current_exception(const std::string& cmd) {
  try {
    throw;
  } catch (const std::invalid_argument& e) {  // bigstep::InvalidArgument and other bad input
    std::fprintf(stderr, "%s: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const YAML::Exception& e) {  // a YAML error the scene reader did not name (a bug; still input)
    std::fprintf(stderr, "%s: YAML: %s\n", cmd.c_str(), e.what());
    return 2;
  } catch (const WriteError& e) {  // an output file (io/atomic_write.h): "cannot write PATH: why"
    std::fprintf(stderr, "%s: %s\n", cmd.c_str(), e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of memory (try fewer --rollouts or a shorter integrator.duration)\n", cmd.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: failed: %s\n", cmd.c_str(), e.what());
    return 1;
  } catch (...) {
    std::fprintf(stderr, "%s: failed with an unknown exception\n", cmd.c_str());
    return 1;
  }
}

}  // namespace bigstep
