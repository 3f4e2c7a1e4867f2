// `imagod admin ...`: the operator's shell over the same store the server uses (SQLite in WAL mode
// lets it run beside a live server). Output is JSON so it scripts well.
#include "main/admin_command.h"

#include <iostream>

#include "api/spend_cap_views.h"
#include "api/views.h"
#include "auth/members.h"
#include "auth/provisioning.h"
#include "billing/operations.h"
#include "config/config.h"
#include "limits/rate_limiter.h"
#include "store/stores.h"
#include "util/random.h"
#include "util/strings.h"

namespace imago {

namespace {

constexpr const char* kUsage = R"(Usage: imagod admin [--data-dir DIR | --database URL] COMMAND

Commands:
  account create --name NAME [--plan PLAN] [--credits N]   create an account and print its first API secret
  account list [--limit N] [--offset N]
  account show ACCOUNT_ID
  account plan ACCOUNT_ID PLAN [--limits GENERATE,WRITE,READ]   (limits: enterprise only)
  account credits ACCOUNT_ID AMOUNT [--reason TEXT]        top up (AMOUNT > 0)
  account spend-cap ACCOUNT_ID CREDITS|none                the operator's monthly live spend cap
                                                           (credits per calendar month, UTC; none clears it)
  key create ACCOUNT_ID [--alias ALIAS]                    print a new API secret (shown once)
  key revoke KEY_ID
  key rotate KEY_ID                                        revoke KEY_ID and print its replacement
  user create ACCOUNT_ID --email EMAIL                     dashboard member; reads the password from stdin
  user list ACCOUNT_ID

Plans: free, creator, pro, business, enterprise.
)";

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;
};

Result<Args> parse_args(int argc, char** argv) {
  Args a;
  for (int i = 0; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) == 0) {
      std::string name = s.substr(2), value;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      } else if (name == "help") {  // the one flag without a value
      } else {
        if (i + 1 >= argc) return Status::Invalid("--" + name + " needs a value");
        value = argv[++i];
      }
      a.flags[name] = value;
    } else if (s == "-h") {
      a.flags["help"] = "";
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

int print(const boost::json::value& v) {
  std::cout << boost::json::serialize(v) << "\n";
  return 0;
}

int fail(const Status& s) {
  std::cerr << "imagod admin: " << s.message() << "\n";
  return s.code() == Code::kInvalidArgument ? 2 : 1;
}

Result<int64_t> int_flag(const Args& a, const std::string& name, int64_t def) {
  auto it = a.flags.find(name);
  if (it == a.flags.end()) return def;
  auto n = parse_int(it->second);
  if (!n) return Status::Invalid("--" + name + " expects an integer");
  return *n;
}

boost::json::object account_json(const Account& a, const Balance& b) {
  return {{"id", a.id},
          {"name", a.name},
          {"plan", plan_name(a.plan)},
          {"limits", api::limits_json(a.limits())},
          {"balance", b.total()},
          {"plan_credits", b.plan_credits},
          {"topup_credits", b.topup_credits},
          {"created_at", api::time_json(a.created_at)}};
}

int run_command(Stores& st, const Args& a) {
  const auto& p = a.positional;
  auto need = [&](size_t n) { return p.size() >= n; };
  if (p.size() >= 2 && p[0] == "account" && p[1] == "create") {
    auto name = a.flags.count("name") ? a.flags.at("name") : std::string();
    if (name.empty()) return fail(Status::Invalid("account create needs --name"));
    auto plan = parse_plan(a.flags.count("plan") ? a.flags.at("plan") : "free");
    if (!plan) return fail(Status::Invalid("unknown plan"));
    auto credits = int_flag(a, "credits", 0);
    if (!credits.ok()) return fail(credits.status());
    if (*credits < 0) return fail(Status::Invalid("--credits must not be negative"));
    auto created = create_account_with_key(*st.accounts, name, *plan, *credits);
    if (!created.ok()) return fail(created.status());
    return print({{"account_id", created->account.id},
                  {"api_secret", created->first_key.secret},
                  {"key_id", created->first_key.key.id},
                  {"plan", plan_name(*plan)},
                  {"balance", *credits}});
  }
  if (p.size() >= 2 && p[0] == "account" && p[1] == "list") {
    auto limit = int_flag(a, "limit", 100), offset = int_flag(a, "offset", 0);
    if (!limit.ok() || !offset.ok()) return fail(Status::Invalid("--limit/--offset expect integers"));
    auto page = st.accounts->list_accounts(static_cast<int>(*limit), static_cast<int>(*offset));
    if (!page.ok()) return fail(page.status());
    boost::json::array arr;
    for (const auto& acct : page->accounts) {
      auto bal = st.ledger->balance(acct.id);
      arr.push_back(account_json(acct, bal.ok() ? *bal : Balance{}));
    }
    return print({{"data", std::move(arr)}, {"total", page->total}});
  }
  if (need(3) && p[0] == "account" && p[1] == "show") {
    auto acct = st.accounts->get_account(p[2]);
    if (!acct.ok()) return fail(acct.status());
    auto bal = st.ledger->balance(p[2]);
    if (!bal.ok()) return fail(bal.status());
    boost::json::object o = account_json(*acct, *bal);
    boost::json::array keys;
    if (auto ks = st.accounts->list_keys(p[2]); ks.ok()) {
      for (const auto& k : *ks) keys.push_back(api::key_json(k));
    }
    o["keys"] = std::move(keys);
    if (auto spend = st.ledger->live_spend(p[2]); spend.ok())
      o["live_spend_cap"] = api::spend_cap_json(*spend);
    return print(o);
  }
  if (need(4) && p[0] == "account" && p[1] == "spend-cap") {
    std::optional<int64_t> credits;
    if (p[3] != "none") {
      auto n = parse_int(p[3]);
      if (!n) return fail(Status::Invalid("CREDITS must be an integer from 0 to 1000000000, or none"));
      if (Status v = billing::validate_live_spend_cap(*n); !v.ok()) {
        return fail(Status::Invalid("CREDITS must be an integer from 0 to 1000000000, or none"));
      }
      credits = *n;
    }
    Status s = st.ledger->set_live_spend_cap(p[2], billing::CapSetter::kOperator, credits);
    if (!s.ok()) return fail(s);
    auto spend = st.ledger->live_spend(p[2]);
    if (!spend.ok()) return fail(spend.status());
    boost::json::object o = api::spend_cap_json(*spend);
    o["account_id"] = p[2];
    return print(o);
  }
  if (need(4) && p[0] == "account" && p[1] == "plan") {
    auto plan = parse_plan(p[3]);
    if (!plan) return fail(Status::Invalid("unknown plan '" + p[3] + "'"));
    std::optional<PlanLimits> limits;
    if (auto it = a.flags.find("limits"); it != a.flags.end()) {
      if (*plan != Plan::kEnterprise)
        return fail(Status::Invalid("--limits is only allowed with the enterprise plan"));
      auto parts = split(it->second, ',');
      if (parts.size() != 3) return fail(Status::Invalid("--limits expects GENERATE,WRITE,READ"));
      PlanLimits l;
      int* slots[] = {&l.generate_per_min, &l.write_per_min, &l.read_per_min};
      for (size_t i = 0; i < 3; ++i) {
        auto n = parse_int(trim(parts[i]));
        if (!n || *n < 1 || *n > 10'000'000)
          return fail(Status::Invalid("--limits values must be 1..10000000"));
        *slots[i] = static_cast<int>(*n);
      }
      limits = l;
    }
    Status s = st.accounts->set_plan(p[2], *plan, limits);
    if (!s.ok()) return fail(s);
    return print({{"account_id", p[2]}, {"plan", plan_name(*plan)}});
  }
  if (need(4) && p[0] == "account" && p[1] == "credits") {
    auto amount = parse_int(p[3]);
    if (!amount || *amount <= 0) return fail(Status::Invalid("AMOUNT must be a positive integer"));
    LedgerOp op = billing::operator_topup(
        p[2], *amount, a.flags.count("reason") ? a.flags.at("reason") : "top-up (admin CLI)", "");
    auto e = st.ledger->apply(op);
    if (!e.ok()) return fail(e.status());
    return print(api::ledger_entry_json(*e));
  }
  if (need(3) && p[0] == "key" && p[1] == "create") {
    std::string alias = a.flags.count("alias") ? a.flags.at("alias") : "admin";
    auto k = issue_key(*st.accounts, p[2], alias);
    if (!k.ok()) return fail(k.status());
    return print({{"key_id", k->key.id}, {"alias", k->key.alias}, {"api_secret", k->secret}});
  }
  if (need(3) && p[0] == "key" && p[1] == "revoke") {
    Status s = st.accounts->revoke_key(std::nullopt, p[2]);
    if (!s.ok()) return fail(s);
    return print({{"key_id", p[2]}, {"revoked", true}});
  }
  if (need(3) && p[0] == "key" && p[1] == "rotate") {
    auto k = rotate_key(*st.accounts, std::nullopt, p[2]);
    if (!k.ok()) return fail(k.status());
    return print(
        {{"key_id", k->key.id}, {"alias", k->key.alias}, {"api_secret", k->secret}, {"replaces", p[2]}});
  }
  if (need(3) && p[0] == "user" && p[1] == "create") {
    std::string email = a.flags.count("email") ? a.flags.at("email") : std::string();
    if (email.empty()) return fail(Status::Invalid("user create needs --email"));
    // The password comes from stdin so it never shows in the process list or shell history.
    std::string password;
    std::getline(std::cin, password);
    if (!password.empty() && password.back() == '\r') password.pop_back();
    auto windows = make_memory_window_counter(SystemClock::instance());
    MemberAuth auth(*st.members, *st.accounts, *windows, SystemClock::instance());
    auto m = auth.create_member(p[2], email, password);
    if (!m.ok()) return fail(m.status());
    return print({{"member_id", m->id}, {"account_id", m->account_id}, {"email", m->email}});
  }
  if (need(3) && p[0] == "user" && p[1] == "list") {
    auto list = st.members->list_members(p[2]);
    if (!list.ok()) return fail(list.status());
    boost::json::array arr;
    for (const auto& m : *list)
      arr.push_back({{"member_id", m.id}, {"email", m.email}, {"created_at", m.created_at}});
    return print({{"data", std::move(arr)}});
  }
  std::cerr << kUsage;
  return 2;
}

}  // namespace

int admin_main(int argc, char** argv) {
  auto args = parse_args(argc, argv);
  if (!args.ok()) return fail(args.status());
  if (args->positional.empty() || args->flags.count("help")) {
    std::cout << kUsage;
    return args->positional.empty() && !args->flags.count("help") ? 2 : 0;
  }
  Config cfg;
  if (auto it = args->flags.find("data-dir"); it != args->flags.end())
    cfg.data_dir = it->second;
  else if (const char* d = std::getenv("IMAGO_DATA_DIR"); d && *d)
    cfg.data_dir = d;
  if (auto it = args->flags.find("database"); it != args->flags.end())
    cfg.database_url = it->second;
  else if (const char* d = std::getenv("IMAGO_DATABASE_URL"); d && *d)
    cfg.database_url = d;
  else if (const char* d = std::getenv("IMAGO_DATABASE"); d && *d)
    cfg.database_url = d;
  finalize_config(cfg);
  auto stores = open_stores(cfg.database_url, SystemClock::instance());
  if (!stores.ok()) return fail(stores.status());
  return run_command(*stores, *args);
}

}  // namespace imago
