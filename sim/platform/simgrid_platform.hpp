#pragma once

/// Builds the SimGrid platform for one simulation in code (no XML): a host per simulated GPU
/// (speed = peak × GEMM efficiency), a SimGrid link per platform link some flow crosses, and for
/// each distinct route a pair of endpoint hosts joined by exactly that route (plus its rate cap's
/// link), so a flow's bandwidth is shared with every other flow on any of its links.

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include <simgrid/s4u/Host.hpp>

#include "sim/platform/platform_layout.hpp"

namespace strata {

struct SimgridRouteEnds {
  simgrid::s4u::Host* from = nullptr;
  simgrid::s4u::Host* to = nullptr;
};

/// A route as a flow crosses it: its platform links and, for a rate-capped flow (RoutedFlow::rate_cap),
/// a link of that bandwidth of its own, which only the flows of this route share.
struct SimgridRoute {
  std::vector<LinkId> links;
  double rate_cap = std::numeric_limits<double>::infinity();
};

struct SimgridPlatform {
  std::map<std::int64_t, simgrid::s4u::Host*> gpus;
  std::vector<SimgridRouteEnds> routes;  ///< same order as the routes passed in
};

/// Must be called once, after the engine is created and before it runs. Link latencies are left at
/// zero: executors charge latency per collective step themselves.
SimgridPlatform build_simgrid_platform(const PlatformLayout& layout, const std::map<LinkId, double>& link_bandwidths,
                                       const std::vector<SimgridRoute>& routes,
                                       const std::vector<std::int64_t>& gpu_ranks, double gpu_flops);

/// The engine settings for exact max-min bandwidth sharing (see DESIGN.md, dependency facts).
std::vector<std::string> simgrid_settings();

}  // namespace strata
