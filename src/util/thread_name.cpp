#include "util/thread_name.h"

#include <pthread.h>

#include <algorithm>
#include <string>

namespace imago {

void name_this_thread(const char* role) {
  std::string name = std::string("imago-") + role;
  name.resize(std::min<size_t>(name.size(), 15));  // TASK_COMM_LEN - 1
  pthread_setname_np(pthread_self(), name.c_str());
}

}  // namespace imago
