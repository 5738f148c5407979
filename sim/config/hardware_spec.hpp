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
  Watts tdp;          ///< rated board power, at which kernels.sustained_clock holds; 0: unknown
  Watts idle_power;   ///< board power with clocks up and nothing running
  Watts power_limit;  ///< the deployment's enforced limit; 0: the rated tdp
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
  bool computational = false;  ///< the drives can run the optimizer step (near_storage)
  bool gpudirect_storage = false;  ///< GPU <-> drive DMA without a host bounce buffer is available
};

struct NicSpec {
  std::int64_t count = 0;
  BytesPerSecond bandwidth;  ///< per NIC
  Seconds latency;           ///< per message, end to end across the fabric
  Seconds collective_latency;  ///< once per NCCL collective that crosses the fabric
  std::int64_t collective_sms = 0;  ///< SMs such a collective holds while it runs (0: not modelled)
  /// Fabric oversubscription above the node (1: non-blocking fat tree); r > 1 caps a node's
  /// inter-node traffic at count·bandwidth/r.
  double oversubscription = 1.0;
};

struct ObjectStoreSpec {
  BytesPerSecond bandwidth;  ///< aggregate
  Seconds latency;           ///< per request
  Bytes request_size;        ///< a transfer is cut into requests of this size
  std::int64_t max_in_flight = 1;  ///< outstanding requests per client: latency is paid per round
  std::string redundancy = "none";
  double write_amplification = 1.0;  ///< backend bytes per byte written (replicas, or (k+m)/k)
  /// The bandwidth is the profile's placeholder, not any store's stated or measured rate (the shipped
  /// profiles' 100 GB/s); false once the scenario sets hardware.object_store.bandwidth itself.
  bool placeholder = false;

  /// What one client can move with max_in_flight requests of request_size outstanding, each taking
  /// the latency (Little's law); infinite without latency.
  double client_bandwidth() const;
};

/// Backend bytes per written byte of a redundancy scheme ("none", "replication:N", "ec:K+M");
/// nullopt when the text is not one.
std::optional<double> write_amplification(const std::string& scheme);

/// Achieved fraction of each peak, calibrated once (Korthikanti et al. 2022 Table 5) and documented
/// in the profile. They turn datasheet peaks into the rates the roofline and the links use.
struct Efficiency {
  double gemm = 1.0;     ///< dense matrix multiplies, fraction of peak FLOP/s
  double memory = 1.0;   ///< memory-bound kernels, fraction of HBM bandwidth
  double nvlink = 1.0;   ///< collective bus bandwidth over NVLink, fraction of line rate
  /// One point-to-point send between two GPUs of a node (a pipeline stage's, a context-parallel
  /// ring step), fraction of line rate: NCCL drives a peer with fewer channels than a collective.
  /// The profile's nvlink where it states none.
  double nvlink_p2p = 1.0;
  /// An all-reduce inside a node that the NVSwitch reduces (nvlink.sharp): each GPU sends its
  /// buffer once and receives the result once, at this fraction of the line rate (the switch's
  /// reduction bounds it; its flows also cross the NVLink ports at `nvlink`). 0: not stated, and
  /// such all-reduces are timed as rings.
  double nvlink_sharp = 0.0;
  double network = 1.0;  ///< inter-node transfers, fraction of NIC line rate
  double pcie = 1.0;     ///< host transfers, fraction of PCIe rate
};

/// Kernel-level compute costs of one GPU (sim/graph/kernel_costs): GEMMs by tile and wave
/// quantization over the SMs with a per-tile pipeline overhead along K, fused attention at its
/// measured fraction of peak, elementwise kernels at efficiency.memory of the HBM bandwidth, and a
/// fixed launch/synchronisation cost per kernel. Absent: the
/// roofline at efficiency.gemm applies and the report says the GPU has no kernel tables.
struct KernelSpec {
  bool present = false;
  std::int64_t sm_count = 0;
  std::int64_t tile_m = 128, tile_n = 128;  ///< output tile one SM computes at a time
  double gemm_efficiency = 1.0;   ///< large-GEMM fraction of dense peak (a full wave, long K)
  double k_overhead = 0.0;        ///< K-equivalent of a tile's prologue and epilogue
  Seconds launch;                 ///< per kernel: launch and synchronisation
  std::int64_t attention_tile = 128;  ///< query rows per fused-attention thread block
  double attention_k_overhead = 0.0;  ///< keys-equivalent of a block's fixed work
  /// Large-problem fractions of dense peak, forward and backward (backward FLOPs counted as 2.5x
  /// forward), of FlashAttention-2 and of the vendor's fused kernel (cuDNN).
  double flash2_forward = 1.0, flash2_backward = 1.0;
  double vendor_forward = 1.0, vendor_backward = 1.0;
  /// FlashAttention in Triton; 0: not measured on this GPU (FlashAttention-2's rates stand in).
  double triton_forward = 0.0, triton_backward = 0.0;
  /// Each kernel's rate at head dim 64 and at 256 relative to its rate at 128 (the fractions above);
  /// between them it follows log2 of the head dim, beyond them it stays at the end's. 1: no
  /// measurement at that head dim.
  struct HeadDimScale {
    double at_64 = 1.0, at_256 = 1.0;
  };
  HeadDimScale flash2_head_dim, vendor_head_dim, triton_head_dim;
  double sustained_clock = 1.0;       ///< sustained / boost clock under the power limit
  bool validated = false;             ///< the GPU has rows in docs/validation.md
  double max_published_mfu = 0.0;     ///< the highest MFU a published run reached on it (0: unknown)
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
  Seconds nvlink_latency;           ///< per hop of a collective step
  /// Once per NCCL collective inside a node. nccl-tests curves show a fixed cost of ~100 us per
  /// call at mid sizes whatever the collective (all-reduce, all-gather and reduce-scatter alike),
  /// which per-step latency alone cannot give: all-gather has half the steps of all-reduce.
  Seconds nvlink_collective_latency;
  /// SMs an NCCL collective inside a node holds while it runs: one CTA per channel, each on an SM
  /// of its own (NCCL's CTAs do not share an SM with compute kernels), so kernels running beside it
  /// have the rest. 0: not modelled.
  std::int64_t nvlink_collective_sms = 0;
  /// NVLink SHARP (NVLS): all-reduces inside a node reduce in the switch, at
  /// efficiency.nvlink_sharp of the line rate. Without that rate they are timed as rings, slow, and
  /// the report warns where they are exposed.
  bool nvlink_sharp = false;
  /// SMs such an all-reduce holds while it runs (NCCL's NVLS channels); nvlink_collective_sms where
  /// the profile states none.
  std::int64_t nvlink_sharp_sms = 0;
  PcieSpec pcie;
  HostSpec host;
  CxlSpec cxl;
  LocalSsdSpec local_ssd;
  NicSpec nic;
  ObjectStoreSpec object_store;
  MemoryOverheads overheads;
  Efficiency efficiency;
  KernelSpec kernels;
};

/// Sustained over boost SM clock under the deployment's power limit. kernels.sustained_clock holds at
/// the rated board power (gpu.tdp). Below it the power the board draws above idle is dynamic power,
/// α·C·V²·f, and across the DVFS range the voltage follows the clock (V ∝ f), so it scales with f³:
/// f = f_tdp · ((limit − idle) / (tdp − idle))^(1/3), never above the boost clock. Without a lower limit
/// (or without the power fields) it is kernels.sustained_clock; without kernel tables 1 at the rated
/// power (the roofline's efficiency.gemm holds the clock), scaled by the same law below it.
double sustained_clock(const HardwareSpec& h);
/// True when gpu.power_limit is set and differs from gpu.tdp: the clock is the power law's, not the profile's.
bool power_limited(const HardwareSpec& h);

/// Parameter tables of each profile section, keyed by section name ("" is the top level).
const std::map<std::string, const ParamTable*>& hardware_param_tables();

HardwareSpec parse_hardware(const nlohmann::json& doc, const std::string& pointer, Diagnostics& diag);

}  // namespace strata
