#pragma once

/// Names a device of the cluster the way the task DAG and the platform both understand it: a GPU by
/// its global rank, a memory or storage tier by its node, the shared object store.

#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace strata {

enum class DeviceKind : std::uint8_t { gpu, dram, cxl, local_ssd, object_store };

struct Device {
  DeviceKind kind = DeviceKind::gpu;
  std::int64_t index = 0;  ///< GPU rank; node for dram/cxl/local_ssd; 0 for the object store

  static Device gpu(std::int64_t rank) { return {DeviceKind::gpu, rank}; }
  friend bool operator==(const Device&, const Device&) = default;
};

inline std::string to_string(DeviceKind k) {
  switch (k) {
    case DeviceKind::gpu: return "gpu";
    case DeviceKind::dram: return "dram";
    case DeviceKind::cxl: return "cxl";
    case DeviceKind::local_ssd: return "local_ssd";
    case DeviceKind::object_store: return "object_store";
  }
  return "device";
}

inline std::string to_string(const Device& d) { return fmt::format("{}{}", to_string(d.kind), d.index); }

}  // namespace strata
