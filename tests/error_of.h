#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "common/error.h"
#include "common/json.h"

// What a decision or command refused with, for tests of the spec's errors.
namespace scribe::testing {

// The scribe::Error that `f` throws; a test failure (and Error("none")) when
// it throws none.
inline Error error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error thrown";
  return Error("none", "");
}

// The code of the scribe::Error that `f` throws, "" when it throws none;
// its extras into *extras when given.
inline std::string code_of(const std::function<void()>& f, Json* extras = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (extras) *extras = e.extras();
    return e.code();
  }
  return "";
}

}  // namespace scribe::testing
