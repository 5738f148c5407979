#pragma once

/// Where bytes can sit: the memory and storage tiers a policy places states, checkpoints and data in.

#include <string>

namespace strata {

enum class Tier { none, hbm, dram, cxl, local_ssd, object_store };

std::string to_string(Tier t);

}  // namespace strata
