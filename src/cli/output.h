// How commands speak: human lines on stderr/stdout, or one JSON document with --json.
#pragma once
#include <unistd.h>

#include <boost/json.hpp>
#include <iostream>
#include <string>

namespace imago::cli {

struct Output {
  bool json = false;
  bool tty = ::isatty(STDERR_FILENO) == 1;

  // Progress and prompts go to stderr so stdout stays clean for data.
  void note(const std::string& line) const { std::cerr << line << "\n"; }
  int fail(const std::string& message, int code = 1) const {
    if (json) std::cout << boost::json::serialize(boost::json::object{{"error", message}}) << "\n";
    std::cerr << "imago: " << message << "\n";
    return code;
  }
  void data(const boost::json::value& v) const { std::cout << boost::json::serialize(v) << "\n"; }
};

}  // namespace imago::cli
