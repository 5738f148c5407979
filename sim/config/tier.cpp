#include "sim/config/tier.hpp"

namespace strata {

std::string to_string(Tier t) {
  switch (t) {
    case Tier::none: return "none";
    case Tier::hbm: return "hbm";
    case Tier::dram: return "dram";
    case Tier::cxl: return "cxl";
    case Tier::local_ssd: return "local_ssd";
    case Tier::object_store: return "object_store";
  }
  return "none";
}

}  // namespace strata
