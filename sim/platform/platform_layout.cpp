#include "sim/platform/platform_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace strata {

PlatformLayout::PlatformLayout(const HardwareSpec& hw, std::int64_t gpus)
    : hw_(hw), gpus_(gpus), per_node_gpus_(hw.gpus_per_node) {
  switches_ = (per_node_gpus_ + hw.pcie.gpus_per_switch - 1) / hw.pcie.gpus_per_switch;
  nics_ = hw.nic.count;
  nodes_ = (gpus + per_node_gpus_ - 1) / per_node_gpus_;
  slot_offset_.resize(slot_count + 1);
  for (int s = 0; s < slot_count; ++s) slot_offset_[s + 1] = slot_offset_[s] + slot_width(static_cast<Slot>(s));
  per_node_links_ = slot_offset_[slot_count];
}

std::int64_t PlatformLayout::slot_width(Slot s) const {
  switch (s) {
    case nvlink_tx: case nvlink_rx: case switch_reduce: case pcie_tx: case pcie_rx: case store_client:
      return per_node_gpus_;
    case uplink_up: case uplink_down: return switches_;
    case nic_tx: case nic_rx: return nics_;
    case fabric_up: case fabric_down: case dram: case cxl: case ssd_read: case ssd_write: return 1;  // per node
    case slot_count: break;
  }
  throw std::logic_error("bad link slot");
}

LinkId PlatformLayout::id(std::int64_t node, Slot slot, std::int64_t index) const {
  return node * per_node_links_ + slot_offset_[slot] + index;
}

std::pair<PlatformLayout::Slot, std::int64_t> PlatformLayout::decode(LinkId id, std::int64_t& node) const {
  node = id / per_node_links_;
  const std::int64_t within = id % per_node_links_;
  int s = 0;
  while (slot_offset_[s + 1] <= within) ++s;
  return {static_cast<Slot>(s), within - slot_offset_[s]};
}

LinkSpec PlatformLayout::link(LinkId id) const {
  const Efficiency& eff = hw_.efficiency;
  // The object store's backend: writes consume write_amplification bytes per byte (replicas or
  // parity), reads do not. Reads and writes are separate links (the backend's read and write paths).
  if (id == object_store_write())
    return {"object_store_write", hw_.object_store.bandwidth.value / hw_.object_store.write_amplification,
            hw_.object_store.latency.value};
  if (id == object_store_read())
    return {"object_store_read", hw_.object_store.bandwidth.value, hw_.object_store.latency.value};
  std::int64_t node = 0;
  auto [slot, i] = decode(id, node);
  const double ssd_count = static_cast<double>(hw_.local_ssd.count);
  // A copy, not the binding: clang 14 (tools/fuzz, tools/sanitize) cannot capture structured bindings.
  const auto index = i;
  auto name = [&](const char* what) { return fmt::format("node{}.{}{}", node, what, index); };
  switch (slot) {
    case nvlink_tx:
      return {name("nvlink_tx"), hw_.nvlink_bandwidth.value * eff.nvlink, hw_.nvlink_latency.value,
              hw_.nvlink_collective_latency.value};
    case nvlink_rx: return {name("nvlink_rx"), hw_.nvlink_bandwidth.value * eff.nvlink, 0.0};
    // 0 where the switch does not reduce or its rate is not stated: no flow is routed there then.
    case switch_reduce:
      return {name("switch_reduce"), hw_.nvlink_sharp ? hw_.nvlink_bandwidth.value * eff.nvlink_sharp : 0.0, 0.0};
    case pcie_tx: return {name("pcie_tx"), hw_.pcie.bandwidth.value * eff.pcie, 0.0};
    case pcie_rx: return {name("pcie_rx"), hw_.pcie.bandwidth.value * eff.pcie, 0.0};
    case uplink_up: return {name("uplink_up"), hw_.pcie.bandwidth.value * eff.pcie, 0.0};
    case uplink_down: return {name("uplink_down"), hw_.pcie.bandwidth.value * eff.pcie, 0.0};
    case nic_tx:
      return {name("nic_tx"), hw_.nic.bandwidth.value * eff.network, hw_.nic.latency.value,
              hw_.nic.collective_latency.value};
    case nic_rx: return {name("nic_rx"), hw_.nic.bandwidth.value * eff.network, 0.0};
    case fabric_up:
    case fabric_down: {
      const double node_bw = static_cast<double>(nics_) * hw_.nic.bandwidth.value * eff.network;
      return {name(slot == fabric_up ? "fabric_up" : "fabric_down"), node_bw / hw_.nic.oversubscription, 0.0};
    }
    case dram: return {name("dram"), hw_.host.dram_bandwidth.value, 0.0};
    case cxl: return {name("cxl"), hw_.cxl.bandwidth.value, hw_.cxl.latency.value};
    case ssd_read: return {name("ssd_read"), ssd_count * hw_.local_ssd.read_bandwidth.value, 0.0};
    case ssd_write: return {name("ssd_write"), ssd_count * hw_.local_ssd.write_bandwidth.value, 0.0};
    case store_client: return {name("store_client"), hw_.object_store.client_bandwidth(), 0.0};
    case slot_count: break;
  }
  throw std::logic_error("bad link id");
}

std::vector<std::int64_t> PlatformLayout::attached_gpus(LinkId id) const {
  std::vector<std::int64_t> out;
  auto node_range = [&](std::int64_t node, std::int64_t lo, std::int64_t hi) {
    for (std::int64_t g = lo; g < hi; ++g)
      if (node * per_node_gpus_ + g < gpus_) out.push_back(node * per_node_gpus_ + g);
  };
  if (id >= object_store_write()) {
    for (std::int64_t g = 0; g < gpus_; ++g) out.push_back(g);
    return out;
  }
  std::int64_t node = 0;
  auto [slot, i] = decode(id, node);
  switch (slot) {
    case nvlink_tx: case nvlink_rx: case switch_reduce: case pcie_tx: case pcie_rx: case store_client:
      node_range(node, i, i + 1);
      break;
    case uplink_up: case uplink_down:
      node_range(node, i * hw_.pcie.gpus_per_switch, std::min(per_node_gpus_, (i + 1) * hw_.pcie.gpus_per_switch));
      break;
    case nic_tx: case nic_rx:
      for (std::int64_t g = 0; g < per_node_gpus_; ++g)
        if (g * nics_ / per_node_gpus_ == i) node_range(node, g, g + 1);
      break;
    case fabric_up: case fabric_down: case dram: case cxl: case ssd_read: case ssd_write:
      node_range(node, 0, per_node_gpus_);  // shared by the whole node
      break;
    case slot_count: throw std::logic_error("bad link id");
  }
  return out;
}

std::vector<LinkId> PlatformLayout::send_side(std::int64_t rank, bool remote) const {
  const std::int64_t node = rank / per_node_gpus_, g = rank % per_node_gpus_;
  const std::int64_t sw = g / hw_.pcie.gpus_per_switch;
  if (remote) {
    if (nics_ == 0) throw std::logic_error("inter-node transfer on a profile without NICs");
    std::vector<LinkId> links = {id(node, pcie_tx, g), id(node, nic_tx, g * nics_ / per_node_gpus_)};
    if (oversubscribed()) links.push_back(id(node, fabric_up));
    return links;
  }
  if (hw_.nvlink_bandwidth.value > 0) return {id(node, nvlink_tx, g)};
  return {id(node, pcie_tx, g), id(node, uplink_up, sw)};
}

std::vector<LinkId> PlatformLayout::receive_side(std::int64_t rank, bool remote) const {
  const std::int64_t node = rank / per_node_gpus_, g = rank % per_node_gpus_;
  const std::int64_t sw = g / hw_.pcie.gpus_per_switch;
  if (remote) {
    std::vector<LinkId> links;
    if (oversubscribed()) links.push_back(id(node, fabric_down));
    links.push_back(id(node, nic_rx, g * nics_ / per_node_gpus_));
    links.push_back(id(node, pcie_rx, g));
    return links;
  }
  if (hw_.nvlink_bandwidth.value > 0) return {id(node, nvlink_rx, g)};
  return {id(node, uplink_down, sw), id(node, pcie_rx, g)};
}

std::vector<LinkId> PlatformLayout::route(const Device& src, const Device& dst, bool remote, bool direct,
                                          std::int64_t rail, bool in_switch) const {
  if (src.kind == DeviceKind::gpu && dst.kind == DeviceKind::gpu) {
    auto links = send_side(src.index, remote);
    if (in_switch) {
      if (remote || hw_.nvlink_bandwidth.value <= 0)
        throw std::logic_error("an all-reduce in a switch it cannot reach");
      links.push_back(id(src.index / per_node_gpus_, switch_reduce, src.index % per_node_gpus_));
    }
    auto rx = receive_side(dst.index, remote);
    links.insert(links.end(), rx.begin(), rx.end());
    return links;
  }
  // Host-side tiers: a GPU reaches them through its PCIe link and its switch's uplink.
  auto tier_link = [&](const Device& d, bool reading) -> LinkId {
    switch (d.kind) {
      case DeviceKind::dram: return id(d.index, dram);
      case DeviceKind::cxl: return id(d.index, cxl);
      case DeviceKind::local_ssd: return id(d.index, reading ? ssd_read : ssd_write);
      case DeviceKind::object_store: return reading ? object_store_read() : object_store_write();
      case DeviceKind::gpu: break;
    }
    throw std::logic_error("not a tier");
  };
  auto gpu_side = [&](const Device& gpu, bool sending, bool to_store) -> std::vector<LinkId> {
    const std::int64_t node = gpu.index / per_node_gpus_, g = gpu.index % per_node_gpus_;
    const std::int64_t sw = g / hw_.pcie.gpus_per_switch;
    if (to_store) {
      const std::int64_t nic = g * nics_ / per_node_gpus_;
      std::vector<LinkId> links = sending ? std::vector<LinkId>{id(node, pcie_tx, g), id(node, nic_tx, nic)}
                                          : std::vector<LinkId>{id(node, nic_rx, nic), id(node, pcie_rx, g)};
      if (client_limited()) links.insert(sending ? links.end() : links.begin(), id(node, store_client, g));
      return links;
    }
    return sending ? std::vector<LinkId>{id(node, pcie_tx, g), id(node, uplink_up, sw)}
                   : std::vector<LinkId>{id(node, uplink_down, sw), id(node, pcie_rx, g)};
  };
  std::vector<LinkId> links;
  // NVMe reads and writes bounce through a pinned host buffer (DeepSpeed's aio path), so they also
  // cross the node's DRAM, unless the transfer is a peer-to-peer DMA (`direct`, GPUDirect Storage).
  if (src.kind == DeviceKind::gpu) {
    links = gpu_side(src, true, dst.kind == DeviceKind::object_store);
    if (dst.kind == DeviceKind::local_ssd && !direct) links.push_back(id(dst.index, dram));
    links.push_back(tier_link(dst, false));
  } else if (dst.kind == DeviceKind::gpu) {
    links.push_back(tier_link(src, true));
    if (src.kind == DeviceKind::local_ssd && !direct) links.push_back(id(src.index, dram));
    auto rx = gpu_side(dst, false, src.kind == DeviceKind::object_store);
    links.insert(links.end(), rx.begin(), rx.end());
  } else {
    links = {tier_link(src, true)};
    // Node tiers reach the object store, and other nodes' tiers, through the rail's NIC.
    const bool across = src.kind != DeviceKind::object_store && dst.kind != DeviceKind::object_store &&
                        src.index != dst.index;
    const std::int64_t g = rail < 0 ? 0 : rail % per_node_gpus_, nic = g * nics_ / per_node_gpus_;
    if (nics_ > 0 && (dst.kind == DeviceKind::object_store || across)) {
      links.push_back(id(src.index, nic_tx, nic));
      if (across && oversubscribed()) links.push_back(id(src.index, fabric_up));
      if (!across && client_limited()) links.push_back(id(src.index, store_client, g));
    }
    if (nics_ > 0 && (src.kind == DeviceKind::object_store || across)) {
      if (!across && client_limited()) links.push_back(id(dst.index, store_client, g));
      if (across && oversubscribed()) links.push_back(id(dst.index, fabric_down));
      links.push_back(id(dst.index, nic_rx, nic));
    }
    if (across && nics_ == 0) throw std::logic_error("inter-node transfer on a profile without NICs");
    links.push_back(tier_link(dst, false));
  }
  return links;
}

}  // namespace strata
