#pragma once

/// A node's hardware (GPUs, links, memory tiers, storage, NICs) and the cluster's shared object store.
/// Every profile section carries a `source`.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/precision.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/params.hpp"
#include "sim/core/quantity.hpp"

namespace strata {

struct GpuSpec {
  std::string model;
  std::map<Precision, FlopsPerSecond> peak;  ///< dense peak per dtype; absent: unsupported
  Bytes hbm;
  BytesPerSecond hbm_bandwidth;
};

struct PcieSpec {
  std::int64_t generation = 0;
  BytesPerSecond bandwidth;  ///< per GPU x16 link, per direction
  std::int64_t gpus_per_switch = 1;
};

struct HostSpec {
  Bytes dram;
  BytesPerSecond dram_bandwidth;
  std::int64_t cpu_cores = 0;
  double cpu_adam_params_per_s = 0.0;  ///< 0: unknown
};

struct CxlSpec {
  Bytes capacity;
  BytesPerSecond bandwidth;
  Seconds latency;
};

struct LocalSsdSpec {
  std::int64_t count = 0;
  Bytes capacity;  ///< per drive
  BytesPerSecond read_bandwidth;
  BytesPerSecond write_bandwidth;
};

struct NicSpec {
  std::int64_t count = 0;
  BytesPerSecond bandwidth;  ///< per NIC
};

struct ObjectStoreSpec {
  BytesPerSecond bandwidth;  ///< aggregate
  Seconds latency;           ///< per request
};

struct MemoryOverheads {
  Bytes runtime_reserved;      ///< CUDA context, library workspaces
  double fragmentation = 0.0;  ///< allocator overhead as a fraction of allocated bytes
};

struct HardwareSpec {
  std::string name;
  std::string description;
  std::int64_t gpus_per_node = 0;
  GpuSpec gpu;
  BytesPerSecond nvlink_bandwidth;  ///< per GPU, per direction; 0 when absent
  PcieSpec pcie;
  HostSpec host;
  CxlSpec cxl;
  LocalSsdSpec local_ssd;
  NicSpec nic;
  ObjectStoreSpec object_store;
  MemoryOverheads overheads;
};

/// Parameter tables of each profile section, keyed by section name ("" is the top level).
const std::map<std::string, const ParamTable*>& hardware_param_tables();

HardwareSpec parse_hardware(const nlohmann::json& doc, const std::string& pointer, Diagnostics& diag);

}  // namespace strata
