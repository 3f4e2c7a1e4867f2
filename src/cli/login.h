// `imago login` (browser + loopback callback with a PKCE verifier), `imago login --device`
// (RFC 8628) and `imago logout` (revokes this device's key on the server). docs/cli.md.
#pragma once
#include <string>

namespace imago::cli {

struct Output;

int login_browser(const std::string& base_url, Output& out);
int login_device(const std::string& base_url, Output& out);
int logout(const std::string& base_url, Output& out);
std::string this_hostname();

}  // namespace imago::cli
