#include "api/routes.h"

namespace imago::api {

void register_all_routes(http::Router& router, Services& services) {
  register_health_routes(router, services);
  register_account_routes(router, services);
  register_key_routes(router, services);
  register_credit_routes(router, services);
  register_admin_routes(router, services);
}

}  // namespace imago::api
