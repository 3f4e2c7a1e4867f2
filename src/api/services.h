// The dependency bag moved to src/core/services.h (a floor the job handlers may include too).
// Kept so that branches written before the move still build; new code includes core/services.h.
#pragma once
#include "core/services.h"
