// Every HTTP route of imagod is registered from here, one function per resource file.
#pragma once
#include "api/services.h"
#include "http/router.h"

namespace imago::api {

void register_all_routes(http::Router& router, Services& services);

// Core platform (issue 2).
void register_health_routes(http::Router& router, Services& services);
void register_account_routes(http::Router& router, Services& services);  // validate, me
void register_key_routes(http::Router& router, Services& services);
void register_credit_routes(http::Router& router, Services& services);   // credit summary, usage
void register_admin_routes(http::Router& router, Services& services);

}  // namespace imago::api
