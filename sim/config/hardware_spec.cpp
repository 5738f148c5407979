#include "sim/config/hardware_spec.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace strata {

using nlohmann::json;

namespace {

const Param kSource{.key = "source", .kind = ParamKind::string,
                    .doc = "datasheet, paper or derivation behind the numbers"};

const ParamTable kTop = {
    {.key = "name", .kind = ParamKind::string, .doc = "profile name", .optional = true},
    {.key = "description", .kind = ParamKind::string, .doc = "one line", .optional = true},
    {.key = "gpus_per_node", .kind = ParamKind::integer, .doc = "GPUs in one node", .min = 1, .max = 1024},
    {.key = "gpu", .kind = ParamKind::object, .doc = "the accelerator"},
    {.key = "nvlink", .kind = ParamKind::object, .doc = "GPU-GPU link inside a node"},
    {.key = "pcie", .kind = ParamKind::object, .doc = "GPU-host link"},
    {.key = "host", .kind = ParamKind::object, .doc = "CPU and DRAM"},
    {.key = "cxl", .kind = ParamKind::object, .doc = "CXL memory expansion", .optional = true},
    {.key = "local_ssd", .kind = ParamKind::object, .doc = "node-local NVMe drives"},
    {.key = "nic", .kind = ParamKind::object, .doc = "compute-fabric NICs"},
    {.key = "object_store", .kind = ParamKind::object, .doc = "shared remote storage"},
    {.key = "memory_overheads", .kind = ParamKind::object, .doc = "HBM not available to tensors",
     .optional = true},
    {.key = "efficiency", .kind = ParamKind::object, .doc = "achieved fractions of the peaks", .optional = true},
    {.key = "kernels", .kind = ParamKind::object,
     .doc = "kernel-level compute costs (absent: roofline at efficiency.gemm)", .optional = true},
};

/// A fused-attention kernel's rate at `head_dim` relative to its rate at 128 (KernelSpec::HeadDimScale).
Param head_dim_param(const char* kernel, const char* name, int head_dim) {
  return {.key = fmt::format("{}_head_dim_{}", kernel, head_dim), .kind = ParamKind::number,
          .default_value = 1.0,
          .doc = fmt::format("{}'s rate at head dim {} relative to head dim 128 (1: not measured)", name, head_dim),
          .min = 0.1, .max = 4.0};
}

const ParamTable kKernels = {
    {.key = "sm_count", .kind = ParamKind::integer, .doc = "streaming multiprocessors", .min = 1, .max = 100000},
    {.key = "gemm_tile_m", .kind = ParamKind::integer, .default_value = 128, .doc = "GEMM output tile rows",
     .min = 1, .max = 4096},
    {.key = "gemm_tile_n", .kind = ParamKind::integer, .default_value = 128, .doc = "GEMM output tile columns",
     .min = 1, .max = 4096},
    {.key = "gemm_efficiency", .kind = ParamKind::number, .doc = "large-GEMM fraction of dense peak",
     .min = 0.01, .max = 1.0},
    {.key = "gemm_k_overhead", .kind = ParamKind::number, .default_value = 0.0,
     .doc = "K-equivalent of a tile's prologue and epilogue", .min = 0.0, .max = 1e6},
    {.key = "launch_overhead", .kind = ParamKind::quantity, .default_value = 0,
     .doc = "launch and synchronisation per kernel", .dim = Dimension::seconds},
    {.key = "attention_tile", .kind = ParamKind::integer, .default_value = 128,
     .doc = "query rows per fused-attention thread block", .min = 1, .max = 4096},
    {.key = "attention_k_overhead", .kind = ParamKind::number, .default_value = 0.0,
     .doc = "keys-equivalent of a fused-attention block's fixed work", .min = 0.0, .max = 1e6},
    {.key = "flash2_forward", .kind = ParamKind::number, .doc = "FlashAttention-2 forward, fraction of peak",
     .min = 0.01, .max = 1.0},
    {.key = "flash2_backward", .kind = ParamKind::number,
     .doc = "FlashAttention-2 backward (2.5x forward FLOPs), fraction of peak", .min = 0.01, .max = 1.0},
    {.key = "vendor_forward", .kind = ParamKind::number, .doc = "vendor fused attention (cuDNN) forward, fraction of peak",
     .min = 0.01, .max = 1.0},
    {.key = "vendor_backward", .kind = ParamKind::number,
     .doc = "vendor fused attention backward (2.5x forward FLOPs), fraction of peak", .min = 0.01, .max = 1.0},
    {.key = "triton_forward", .kind = ParamKind::number, .default_value = 0.0,
     .doc = "FlashAttention in Triton forward, fraction of peak (0: not measured: FlashAttention-2's stands in)",
     .min = 0.0, .max = 1.0},
    {.key = "triton_backward", .kind = ParamKind::number, .default_value = 0.0,
     .doc = "FlashAttention in Triton backward (2.5x forward FLOPs), fraction of peak (0: not measured)",
     .min = 0.0, .max = 1.0},
    head_dim_param("flash2", "FlashAttention-2", 64),
    head_dim_param("flash2", "FlashAttention-2", 256),
    head_dim_param("vendor", "the vendor fused kernel", 64),
    head_dim_param("vendor", "the vendor fused kernel", 256),
    head_dim_param("triton", "FlashAttention in Triton", 64),
    head_dim_param("triton", "FlashAttention in Triton", 256),
    {.key = "sustained_clock", .kind = ParamKind::number, .default_value = 1.0,
     .doc = "sustained / boost clock under the power limit", .min = 0.1, .max = 1.0},
    {.key = "validated", .kind = ParamKind::boolean, .default_value = false,
     .doc = "the GPU has measured rows in docs/validation.md"},
    {.key = "max_published_mfu", .kind = ParamKind::number, .default_value = 0.0,
     .doc = "highest MFU a published run reached on this GPU (0: unknown)", .min = 0.0, .max = 1.0},
    kSource,
};

const ParamTable kGpu = {
    {.key = "model", .kind = ParamKind::string, .doc = "product name"},
    {.key = "peak_tflops", .kind = ParamKind::object, .doc = "dense peak per dtype"},
    {.key = "hbm", .kind = ParamKind::quantity, .doc = "device memory capacity", .dim = Dimension::bytes, .min = 1},
    {.key = "hbm_bandwidth", .kind = ParamKind::quantity, .doc = "device memory bandwidth",
     .dim = Dimension::bytes_per_second, .min = 1},
    {.key = "tdp", .kind = ParamKind::quantity, .default_value = 0,
     .doc = "rated board power, at which kernels.sustained_clock holds (0: unknown)", .dim = Dimension::watts},
    {.key = "idle_power", .kind = ParamKind::quantity, .default_value = 0,
     .doc = "board power with the clocks up and no kernel running: the part a lower clock does not save",
     .dim = Dimension::watts},
    {.key = "power_limit", .kind = ParamKind::quantity, .default_value = 0,
     .doc = "the deployment's enforced board power limit (nvidia-smi -pl); below tdp the SM clock drops "
            "(0: the rated tdp)",
     .dim = Dimension::watts},
    kSource,
};

const ParamTable kPeak = [] {
  ParamTable t;
  for (const auto& p : precision_names())
    t.push_back({.key = p, .kind = ParamKind::quantity, .doc = "dense peak, " + p,
                 .dim = Dimension::flops_per_second, .min = 1, .optional = true});
  return t;
}();

const ParamTable kNvlink = {
    {.key = "bandwidth", .kind = ParamKind::quantity, .doc = "per GPU, per direction (0: none)",
     .dim = Dimension::bytes_per_second},
    {.key = "latency", .kind = ParamKind::quantity, .default_value = 0, .doc = "per collective step",
     .dim = Dimension::seconds},
    {.key = "collective_latency", .kind = ParamKind::quantity, .default_value = 0,
     .doc = "once per NCCL collective inside a node, beside its steps (fitted on nccl-tests curves)",
     .dim = Dimension::seconds},
    {.key = "collective_sms", .kind = ParamKind::integer, .default_value = 0,
     .doc = "SMs an NCCL collective inside a node holds while it runs (its channels, one CTA each, never "
            "sharing an SM with compute): kernels beside it run on the rest (0: not modelled)",
     .min = 0, .max = 100000},
    {.key = "sharp_sms", .kind = ParamKind::integer,
     .doc = "SMs an all-reduce reduced in the switch holds while it runs (NCCL's NVLS channels, one CTA each); "
            "collective_sms when absent",
     .min = 0, .max = 100000, .optional = true},
    {.key = "sharp", .kind = ParamKind::boolean, .default_value = false,
     .doc = "the NVSwitch reduces in the switch (NVLink SHARP), so NCCL's all-reduce inside a node beats a ring: "
            "timed at efficiency.nvlink_sharp; without it as a ring, and the report's warnings say so"},
    kSource,
};

const ParamTable kPcie = {
    {.key = "generation", .kind = ParamKind::integer, .doc = "PCIe generation", .min = 1, .max = 7},
    {.key = "bandwidth", .kind = ParamKind::quantity, .doc = "per GPU x16 link, per direction",
     .dim = Dimension::bytes_per_second, .min = 1},
    {.key = "gpus_per_switch", .kind = ParamKind::integer, .default_value = 1,
     .doc = "GPUs sharing one PCIe switch uplink", .min = 1, .max = 1024},
    kSource,
};

const ParamTable kHost = {
    {.key = "dram", .kind = ParamKind::quantity, .doc = "host memory per node", .dim = Dimension::bytes, .min = 1},
    {.key = "dram_bandwidth", .kind = ParamKind::quantity, .doc = "aggregate DRAM bandwidth",
     .dim = Dimension::bytes_per_second, .min = 1},
    {.key = "cpu_cores", .kind = ParamKind::integer, .default_value = 0, .doc = "CPU cores per node", .min = 0, .max = 1e6},
    {.key = "cpu_adam_params_per_s", .kind = ParamKind::number, .default_value = 0.0,
     .doc = "CPU-Adam update rate, parameters/s (0: unknown)", .min = 0.0, .max = 1e15},
    kSource,
};

const ParamTable kCxl = {
    {.key = "capacity", .kind = ParamKind::quantity, .default_value = 0, .doc = "CXL memory per node",
     .dim = Dimension::bytes},
    {.key = "bandwidth", .kind = ParamKind::quantity, .default_value = 0, .doc = "aggregate bandwidth",
     .dim = Dimension::bytes_per_second},
    {.key = "latency", .kind = ParamKind::quantity, .default_value = 0, .doc = "load latency",
     .dim = Dimension::seconds},
    kSource,
};

const ParamTable kSsd = {
    {.key = "count", .kind = ParamKind::integer, .doc = "data drives per node", .min = 0, .max = 1024},
    {.key = "capacity", .kind = ParamKind::quantity, .doc = "per drive", .dim = Dimension::bytes},
    {.key = "read_bandwidth", .kind = ParamKind::quantity, .doc = "sequential read, per drive",
     .dim = Dimension::bytes_per_second},
    {.key = "write_bandwidth", .kind = ParamKind::quantity, .doc = "sequential write, per drive",
     .dim = Dimension::bytes_per_second},
    {.key = "computational", .kind = ParamKind::boolean, .default_value = false,
     .doc = "drives run the optimizer step next to the data (computational storage; near_storage checkpoints)"},
    {.key = "gpudirect_storage", .kind = ParamKind::boolean, .default_value = false,
     .doc = "GPUs and drives can DMA to each other without a host bounce buffer (NVIDIA GPUDirect Storage: "
            "nvidia-fs driver, supported NVMe and file system)"},
    kSource,
};

const ParamTable kNic = {
    {.key = "count", .kind = ParamKind::integer, .doc = "compute NICs per node", .min = 0, .max = 1024},
    {.key = "bandwidth", .kind = ParamKind::quantity, .doc = "line rate per NIC",
     .dim = Dimension::bytes_per_second},
    {.key = "latency", .kind = ParamKind::quantity, .default_value = 0, .doc = "per message across the fabric",
     .dim = Dimension::seconds},
    {.key = "collective_latency", .kind = ParamKind::quantity, .default_value = 0,
     .doc = "once per NCCL collective across nodes, beside its steps (fitted on nccl-tests curves)",
     .dim = Dimension::seconds},
    {.key = "collective_sms", .kind = ParamKind::integer, .default_value = 0,
     .doc = "SMs an NCCL collective across nodes holds while it runs: kernels beside it run on the rest "
            "(0: not modelled)",
     .min = 0, .max = 100000},
    {.key = "oversubscription", .kind = ParamKind::number, .default_value = 1.0,
     .doc = "fabric oversubscription above the node (1: non-blocking)", .min = 1.0, .max = 1000.0},
    kSource,
};

const ParamTable kObjectStore = {
    {.key = "bandwidth", .kind = ParamKind::quantity, .doc = "aggregate bandwidth",
     .dim = Dimension::bytes_per_second, .min = 1},
    {.key = "latency", .kind = ParamKind::quantity, .doc = "per-request latency", .dim = Dimension::seconds},
    {.key = "request_size", .kind = ParamKind::quantity, .default_value = "8 MiB",
     .doc = "bytes per request (boto3 s3transfer's default multipart chunk)", .dim = Dimension::bytes, .min = 1},
    {.key = "max_in_flight", .kind = ParamKind::integer, .default_value = 10,
     .doc = "requests a client keeps outstanding (boto3 s3transfer's default max_concurrency)", .min = 1,
     .max = 1000000},
    {.key = "redundancy", .kind = ParamKind::string, .default_value = "none",
     .doc = "how written bytes are protected: none, replication:N (N copies) or ec:K+M (erasure coding); "
            "writes consume bandwidth x N or x (K+M)/K"},
    {.key = "placeholder", .kind = ParamKind::boolean, .default_value = false,
     .doc = "the bandwidth and latency are a placeholder, not a figure of any real store (the shipped profiles'): "
            "reports say so while checkpoints or training data go through the store, until a --set of "
            "hardware.object_store.bandwidth states yours"},
    kSource,
};

const ParamTable kOverheads = {
    {.key = "runtime_reserved", .kind = ParamKind::quantity, .default_value = 0,
     .doc = "HBM taken by the CUDA context and library workspaces", .dim = Dimension::bytes},
    {.key = "fragmentation", .kind = ParamKind::number, .default_value = 0.0,
     .doc = "allocator overhead, fraction of allocated bytes", .min = 0.0, .max = 1.0},
    kSource,
};

Param fraction(const char* key, const char* doc) {
  return {.key = key, .kind = ParamKind::number, .default_value = 1.0, .doc = doc, .min = 0.01, .max = 1.0};
}

const ParamTable kEfficiency = {
    fraction("gemm", "matrix multiplies, fraction of peak FLOP/s"),
    fraction("memory", "memory-bound kernels, fraction of HBM bandwidth"),
    fraction("nvlink", "collectives over NVLink, fraction of line rate"),
    {.key = "nvlink_p2p", .kind = ParamKind::number,
     .doc = "one point-to-point send between two GPUs of a node (pipeline stages, context-parallel ring), "
            "fraction of line rate; nvlink's when absent, and no cap at or above it",
     .min = 0.01, .max = 1.0, .optional = true},
    {.key = "nvlink_sharp", .kind = ParamKind::number,
     .doc = "an all-reduce inside a node reduced in the NVSwitch (nvlink.sharp): each GPU sends its buffer once "
            "and receives the result once, at this fraction of line rate (and within nvlink's, the links it "
            "crosses); absent: such all-reduces run as rings",
     .min = 0.01, .max = 1.0, .optional = true},
    fraction("network", "inter-node transfers, fraction of NIC line rate"),
    fraction("pcie", "host transfers, fraction of PCIe rate"),
    kSource,
};

}  // namespace

double ObjectStoreSpec::client_bandwidth() const {
  if (latency.value <= 0.0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(max_in_flight) * request_size.value / latency.value;
}

std::optional<double> write_amplification(const std::string& scheme) {
  if (scheme == "none") return 1.0;
  // Whole positive numbers only: "replication:3", "ec:8+3".
  auto number = [](const std::string& s, std::int64_t min) -> std::optional<std::int64_t> {
    if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    const std::int64_t v = std::stoll(s);
    return v >= min ? std::optional(v) : std::nullopt;
  };
  if (scheme.rfind("replication:", 0) == 0) {
    if (auto n = number(scheme.substr(12), 1)) return static_cast<double>(*n);
  } else if (scheme.rfind("ec:", 0) == 0) {
    const std::string km = scheme.substr(3);
    const auto plus = km.find('+');
    if (plus == std::string::npos) return std::nullopt;
    auto k = number(km.substr(0, plus), 1), m = number(km.substr(plus + 1), 0);
    if (k && m) return static_cast<double>(*k + *m) / static_cast<double>(*k);
  }
  return std::nullopt;
}

const std::map<std::string, const ParamTable*>& hardware_param_tables() {
  static const std::map<std::string, const ParamTable*> tables = {
      {"", &kTop},         {"gpu", &kGpu},   {"gpu.peak_tflops", &kPeak},     {"nvlink", &kNvlink},
      {"pcie", &kPcie},    {"host", &kHost}, {"cxl", &kCxl},                  {"local_ssd", &kSsd},
      {"nic", &kNic},      {"object_store", &kObjectStore}, {"memory_overheads", &kOverheads},
      {"efficiency", &kEfficiency}, {"kernels", &kKernels}};
  return tables;
}

bool power_limited(const HardwareSpec& h) {
  return h.gpu.tdp.value > 0.0 && h.gpu.power_limit.value > 0.0 && h.gpu.power_limit.value != h.gpu.tdp.value;
}

double sustained_clock(const HardwareSpec& h) {
  // Without kernel tables the roofline's efficiency.gemm already holds the clock at the rated power.
  const double at_tdp = h.kernels.present ? h.kernels.sustained_clock : 1.0;
  if (!power_limited(h)) return at_tdp;
  const double dynamic = (h.gpu.power_limit.value - h.gpu.idle_power.value) / (h.gpu.tdp.value - h.gpu.idle_power.value);
  return std::min(1.0, at_tdp * std::cbrt(dynamic));
}

HardwareSpec parse_hardware(const json& doc, const std::string& pointer, Diagnostics& diag) {
  HardwareSpec h;
  const std::size_t errors_before = diag.size();
  ObjectReader top(doc, pointer, kTop, diag);
  if (!top.ok()) {
    if (doc.is_null()) diag.add(pointer, "missing hardware (expected a name, a path or an object)");
    return h;
  }
  h.name = top.string("name");
  h.description = top.string("description");
  h.gpus_per_node = top.integer("gpus_per_node");

  ObjectReader gpu(top.object("gpu"), top.child_pointer("gpu"), kGpu, diag);
  h.gpu.model = gpu.string("model");
  h.gpu.hbm = Bytes(gpu.quantity("hbm"));
  h.gpu.hbm_bandwidth = BytesPerSecond(gpu.quantity("hbm_bandwidth"));
  h.gpu.tdp = Watts(gpu.quantity("tdp"));
  h.gpu.idle_power = Watts(gpu.quantity("idle_power"));
  h.gpu.power_limit = Watts(gpu.quantity("power_limit"));
  if (diag.size() == errors_before) {
    if (h.gpu.power_limit.value > 0.0 && h.gpu.tdp.value <= 0.0)
      gpu.error("power_limit", "needs gpu.tdp, the rated power the profile's clock holds at (expected a power like "
                               "\"700 W\")");
    else if (h.gpu.tdp.value > 0.0 && h.gpu.idle_power.value >= h.gpu.tdp.value)
      gpu.error("idle_power", fmt::format("must be below gpu.tdp ({:g} W)", h.gpu.tdp.value));
    else if (h.gpu.power_limit.value > 0.0 && h.gpu.power_limit.value <= h.gpu.idle_power.value)
      gpu.error("power_limit", fmt::format("must be above gpu.idle_power ({:g} W): below it no kernel runs",
                                           h.gpu.idle_power.value));
  }
  gpu.string("source");
  ObjectReader peak(gpu.object("peak_tflops"), gpu.child_pointer("peak_tflops"), kPeak, diag);
  for (const auto& name : precision_names())
    if (peak.has(name)) h.gpu.peak[*precision_from_string(name)] = FlopsPerSecond(peak.quantity(name));

  ObjectReader nvlink(top.object("nvlink"), top.child_pointer("nvlink"), kNvlink, diag);
  h.nvlink_bandwidth = BytesPerSecond(nvlink.quantity("bandwidth"));
  h.nvlink_latency = Seconds(nvlink.quantity("latency"));
  h.nvlink_collective_latency = Seconds(nvlink.quantity("collective_latency"));
  h.nvlink_collective_sms = nvlink.integer("collective_sms");
  h.nvlink_sharp = nvlink.boolean("sharp");
  h.nvlink_sharp_sms = nvlink.has("sharp_sms") ? nvlink.integer("sharp_sms") : h.nvlink_collective_sms;
  nvlink.string("source");

  ObjectReader pcie(top.object("pcie"), top.child_pointer("pcie"), kPcie, diag);
  h.pcie.generation = pcie.integer("generation");
  h.pcie.bandwidth = BytesPerSecond(pcie.quantity("bandwidth"));
  h.pcie.gpus_per_switch = pcie.integer("gpus_per_switch");
  pcie.string("source");

  ObjectReader host(top.object("host"), top.child_pointer("host"), kHost, diag);
  h.host.dram = Bytes(host.quantity("dram"));
  h.host.dram_bandwidth = BytesPerSecond(host.quantity("dram_bandwidth"));
  h.host.cpu_cores = host.integer("cpu_cores");
  h.host.cpu_adam_params_per_s = host.number("cpu_adam_params_per_s");
  host.string("source");

  if (top.has("cxl")) {
    ObjectReader cxl(top.object("cxl"), top.child_pointer("cxl"), kCxl, diag);
    h.cxl.capacity = Bytes(cxl.quantity("capacity"));
    h.cxl.bandwidth = BytesPerSecond(cxl.quantity("bandwidth"));
    h.cxl.latency = Seconds(cxl.quantity("latency"));
    cxl.string("source");
  }

  ObjectReader ssd(top.object("local_ssd"), top.child_pointer("local_ssd"), kSsd, diag);
  h.local_ssd.count = ssd.integer("count");
  h.local_ssd.capacity = Bytes(ssd.quantity("capacity"));
  h.local_ssd.read_bandwidth = BytesPerSecond(ssd.quantity("read_bandwidth"));
  h.local_ssd.write_bandwidth = BytesPerSecond(ssd.quantity("write_bandwidth"));
  h.local_ssd.computational = ssd.boolean("computational");
  h.local_ssd.gpudirect_storage = ssd.boolean("gpudirect_storage");
  ssd.string("source");

  ObjectReader nic(top.object("nic"), top.child_pointer("nic"), kNic, diag);
  h.nic.count = nic.integer("count");
  h.nic.bandwidth = BytesPerSecond(nic.quantity("bandwidth"));
  h.nic.latency = Seconds(nic.quantity("latency"));
  h.nic.collective_latency = Seconds(nic.quantity("collective_latency"));
  h.nic.collective_sms = nic.integer("collective_sms");
  h.nic.oversubscription = nic.number("oversubscription");
  nic.string("source");

  // A rate that divides must not be zero where its device exists: a drive, a NIC or CXL memory with
  // no bandwidth would make every transfer over it take forever. (Checked on valid fields only.)
  const bool fields_valid = diag.size() == errors_before;
  if (fields_valid && h.cxl.capacity.value > 0.0 && h.cxl.bandwidth.value <= 0.0)
    diag.add(top.child_pointer("cxl") + "/bandwidth",
             "must be greater than 0 when cxl.capacity is set (got 0, expected a bandwidth like \"64 GB/s\")");
  if (fields_valid && h.local_ssd.count > 0) {
    if (h.local_ssd.read_bandwidth.value <= 0.0)
      ssd.error("read_bandwidth", "must be greater than 0 when local_ssd.count > 0 (got 0, expected a bandwidth "
                                  "like \"7 GB/s\")");
    if (h.local_ssd.write_bandwidth.value <= 0.0)
      ssd.error("write_bandwidth", "must be greater than 0 when local_ssd.count > 0 (got 0, expected a bandwidth "
                                   "like \"3 GB/s\")");
  }
  if (fields_valid && h.nic.count > 0 && h.nic.bandwidth.value <= 0.0)
    nic.error("bandwidth", "must be greater than 0 when nic.count > 0 (got 0, expected a bandwidth like \"400 Gb/s\")");
  // A switch that reduces is reached over NVLink: without it an all-reduce has nowhere to go.
  if (fields_valid && h.nvlink_sharp && h.nvlink_bandwidth.value <= 0.0)
    nvlink.error("bandwidth", "must be greater than 0 when nvlink.sharp is true (got 0, expected a bandwidth like "
                              "\"450 GB/s\", or nvlink.sharp false: a switch that reduces is reached over NVLink)");

  ObjectReader store(top.object("object_store"), top.child_pointer("object_store"), kObjectStore, diag);
  h.object_store.bandwidth = BytesPerSecond(store.quantity("bandwidth"));
  h.object_store.latency = Seconds(store.quantity("latency"));
  h.object_store.request_size = Bytes(store.quantity("request_size"));
  h.object_store.max_in_flight = store.integer("max_in_flight");
  const std::string redundancy = store.string("redundancy");
  if (auto amp = write_amplification(redundancy)) h.object_store.write_amplification = *amp;
  else if (store.has("redundancy"))
    store.error("redundancy", fmt::format("'{}' is not a redundancy scheme (expected none, replication:N with N >= 1 "
                                          "or ec:K+M with K >= 1, M >= 0)", redundancy));
  h.object_store.redundancy = redundancy;
  // A bandwidth given with --set (or a sweep axis) is the user's statement of their store.
  h.object_store.placeholder = store.boolean("placeholder") && !store.overridden("bandwidth");
  store.string("source");

  if (top.has("memory_overheads")) {
    ObjectReader ov(top.object("memory_overheads"), top.child_pointer("memory_overheads"), kOverheads, diag);
    h.overheads.runtime_reserved = Bytes(ov.quantity("runtime_reserved"));
    h.overheads.fragmentation = ov.number("fragmentation");
    ov.string("source");
  }

  if (top.has("efficiency")) {
    ObjectReader eff(top.object("efficiency"), top.child_pointer("efficiency"), kEfficiency, diag);
    h.efficiency.gemm = eff.number("gemm");
    h.efficiency.memory = eff.number("memory");
    h.efficiency.nvlink = eff.number("nvlink");
    h.efficiency.nvlink_p2p = eff.has("nvlink_p2p") ? eff.number("nvlink_p2p") : h.efficiency.nvlink;
    h.efficiency.nvlink_sharp = eff.has("nvlink_sharp") ? eff.number("nvlink_sharp") : 0.0;
    h.efficiency.network = eff.number("network");
    h.efficiency.pcie = eff.number("pcie");
    eff.string("source");
  }

  if (top.has("kernels")) {
    ObjectReader k(top.object("kernels"), top.child_pointer("kernels"), kKernels, diag);
    KernelSpec& ks = h.kernels;
    ks.present = true;
    ks.sm_count = k.integer("sm_count");
    ks.tile_m = k.integer("gemm_tile_m");
    ks.tile_n = k.integer("gemm_tile_n");
    ks.gemm_efficiency = k.number("gemm_efficiency");
    ks.k_overhead = k.number("gemm_k_overhead");
    ks.launch = Seconds(k.quantity("launch_overhead"));
    ks.attention_tile = k.integer("attention_tile");
    ks.attention_k_overhead = k.number("attention_k_overhead");
    ks.flash2_forward = k.number("flash2_forward");
    ks.flash2_backward = k.number("flash2_backward");
    ks.vendor_forward = k.number("vendor_forward");
    ks.vendor_backward = k.number("vendor_backward");
    ks.triton_forward = k.number("triton_forward");
    ks.triton_backward = k.number("triton_backward");
    // One pass measured and not the other would silently fall back to FlashAttention-2 for both.
    if ((ks.triton_forward > 0.0) != (ks.triton_backward > 0.0))
      k.error(ks.triton_forward > 0.0 ? "triton_backward" : "triton_forward",
              fmt::format("must be set with {} (got 0, expected a fraction of peak in (0, 1], or 0 for both)",
                          ks.triton_forward > 0.0 ? "triton_forward" : "triton_backward"));
    ks.flash2_head_dim = {k.number("flash2_head_dim_64"), k.number("flash2_head_dim_256")};
    ks.vendor_head_dim = {k.number("vendor_head_dim_64"), k.number("vendor_head_dim_256")};
    ks.triton_head_dim = {k.number("triton_head_dim_64"), k.number("triton_head_dim_256")};
    ks.sustained_clock = k.number("sustained_clock");
    ks.validated = k.boolean("validated");
    ks.max_published_mfu = k.number("max_published_mfu");
    k.string("source");
  }
  return h;
}

}  // namespace strata
