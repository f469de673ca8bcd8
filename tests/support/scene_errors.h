// expect_error(): loads YAML text (source "test.yaml") and expects InvalidArgument whose
// single-line message starts with the file and contains every needle (key path, value, reason).
#pragma once
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/error.h"
#include "io/scene.h"

namespace bigstep::test {

inline void expect_error(const std::string& yaml, const std::vector<std::string>& overrides,
                         const std::vector<std::string>& needles) {
  try {
    load_scene_text(yaml, "test.yaml", overrides);
    FAIL_CHECK("no error; expected a message containing " << needles.front());
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    CHECK(msg.find('\n') == std::string::npos);  // one line
    CHECK(msg.rfind("test.yaml: ", 0) == 0);     // starts with the file
    for (const auto& n : needles) {
      INFO("needle: " << n);
      CHECK(msg.find(n) != std::string::npos);
    }
  }
}

inline void expect_error(const std::string& yaml, const std::vector<std::string>& needles) {
  expect_error(yaml, {}, needles);
}

}  // namespace bigstep::test
