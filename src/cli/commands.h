// The `imago` commands other than login/logout. Each takes the parsed arguments and returns the
// process exit code: 0 success, 1 the request failed, 2 usage error, 3 not logged in.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/output.h"

namespace imago::cli {

struct Args {
  std::vector<std::string> words;             // command words and positional arguments
  std::map<std::string, std::string> values;  // --name VALUE
  std::set<std::string> switches;             // --json, --wait, ...
  std::string value(const std::string& name, const std::string& def = "") const {
    auto it = values.find(name);
    return it == values.end() ? def : it->second;
  }
  bool has(const std::string& name) const { return values.count(name) > 0; }
};

struct Context {
  std::string base_url;
  Output out;
};

int run_command(const Args& args, Context& ctx);
// The usage text of a command group ("" for the overview); empty when there is no such group.
std::string help_for(const std::string& group);

}  // namespace imago::cli
