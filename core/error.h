// Named errors: every bad input says where (file / field), what it got and what it expected.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace bigstep {

/// Thrown for invalid user input (configs, model specs, shapes). The message names the field.
class InvalidArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {
template <class... Ts>
std::string concat(const Ts&... xs) {
  std::ostringstream os;
  (os << ... << xs);
  return os.str();
}
}  // namespace detail

}  // namespace bigstep

/// BIGSTEP_CHECK_ARG(cond, field, value, expectation): throws InvalidArgument
/// "<field> = <value>: <expectation>" when cond is false.
#define BIGSTEP_CHECK_ARG(cond, field, value, expectation)                                    \
  do {                                                                                        \
    if (!(cond))                                                                              \
      throw ::bigstep::InvalidArgument(::bigstep::detail::concat(field, " = ", value, ": ", \
                                                                 expectation));               \
  } while (0)
