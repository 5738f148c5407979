#pragma once

/// The cluster's links and the routes between devices, derived from the hardware profile. Pure data:
/// both executors read it (the list scheduler directly, the DES through the SimGrid platform built
/// from it), so they see the same bandwidths and latencies.
///
/// Per node: each GPU's NVLink port (send, receive), the NVSwitch's reduction for that port (NVLink
/// SHARP: an all-reduce in the switch moves at its rate) and x16 PCIe link (send, receive); each PCIe
/// switch's uplink to the host (up, down); each NIC (send, receive); the node's share of an
/// oversubscribed fabric (up, down; only on routes when oversubscription > 1); DRAM, CXL and the local SSDs
/// (read, write) as links, so that their bandwidth shares with the buses on the same path; per GPU
/// its object-store client (the requests it keeps in flight over their latency). Two
/// shared object-store links for the cluster (its write and read paths). Links are numbered, not
/// stored: a 16k-GPU cluster has ~10^5 of them and a run touches a few.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/hardware_spec.hpp"
#include "sim/core/device.hpp"

namespace strata {

using LinkId = std::int64_t;

struct LinkSpec {
  std::string name;
  double bandwidth = 0.0;  ///< bytes/s, after the profile's efficiency
  double latency = 0.0;    ///< seconds, per collective step or message
  double call_latency = 0.0;  ///< seconds, once per collective call crossing the link
};

class PlatformLayout {
 public:
  PlatformLayout(const HardwareSpec& hw, std::int64_t gpus);

  /// Links from `src` to `dst`, sender side first. `remote` says the GPUs sit on different nodes
  /// (given separately so a folded executor can route to a mirror of a rank it does not simulate).
  /// `direct`: a peer-to-peer DMA between a GPU and a local SSD, without the host bounce buffer.
  /// `rail`: the GPU whose NIC a node tier's network transfer uses (-1: the node's first NIC).
  /// `in_switch`: a GPU-to-GPU flow of an all-reduce the NVSwitch reduces, which also crosses the
  /// switch's reduction for the sender's port.
  std::vector<LinkId> route(const Device& src, const Device& dst, bool remote, bool direct = false,
                            std::int64_t rail = -1, bool in_switch = false) const;

  LinkSpec link(LinkId id) const;
  /// GPUs whose traffic can use the link (the GPU itself, the GPUs behind a switch or NIC, a node).
  std::vector<std::int64_t> attached_gpus(LinkId id) const;

  std::int64_t gpus() const { return gpus_; }
  /// Every link id is below this (the object store's two paths come last).
  LinkId link_count() const { return object_store_read() + 1; }
  std::int64_t node_of(std::int64_t rank) const { return rank / per_node_gpus_; }

 private:
  enum Slot : int { nvlink_tx, nvlink_rx, switch_reduce, pcie_tx, pcie_rx, uplink_up, uplink_down, nic_tx, nic_rx,
                    fabric_up, fabric_down, dram, cxl, ssd_read, ssd_write, store_client, slot_count };
  LinkId id(std::int64_t node, Slot slot, std::int64_t index = 0) const;
  std::pair<Slot, std::int64_t> decode(LinkId id, std::int64_t& node) const;
  std::int64_t slot_width(Slot s) const;
  std::vector<LinkId> send_side(std::int64_t rank, bool remote) const;
  std::vector<LinkId> receive_side(std::int64_t rank, bool remote) const;
  bool oversubscribed() const { return hw_.nic.oversubscription > 1.0; }
  bool client_limited() const { return hw_.object_store.latency.value > 0.0; }
  LinkId object_store_write() const { return nodes_ * per_node_links_; }
  LinkId object_store_read() const { return nodes_ * per_node_links_ + 1; }

  HardwareSpec hw_;
  std::int64_t gpus_ = 0, per_node_gpus_ = 1, switches_ = 1, nics_ = 0;
  std::vector<std::int64_t> slot_offset_;
  std::int64_t per_node_links_ = 0, nodes_ = 1;
};

}  // namespace strata
