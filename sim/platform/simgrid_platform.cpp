#include "sim/platform/simgrid_platform.hpp"

#include <fmt/format.h>

#include <cmath>

#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

namespace strata {

namespace sg4 = simgrid::s4u;

std::vector<std::string> simgrid_settings() {
  // CM02 without cross-traffic and TCP-gamma gives plain max-min sharing: n equal flows on a link
  // of bandwidth B each get B/n, and a lone flow gets the minimum bandwidth of its route.
  return {"--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:0",
          "--cfg=surf/precision:1e-12", "--cfg=maxmin/precision:1e-12",
          "--log=root.thresh:critical"};
}

SimgridPlatform build_simgrid_platform(const PlatformLayout& layout, const std::map<LinkId, double>& link_bandwidths,
                                       const std::vector<SimgridRoute>& routes,
                                       const std::vector<std::int64_t>& gpu_ranks, double gpu_flops) {
  SimgridPlatform p;
  sg4::NetZone* zone = sg4::create_full_zone("cluster");
  for (std::int64_t r : gpu_ranks) p.gpus[r] = zone->create_host(fmt::format("gpu{}", r), gpu_flops)->seal();
  std::map<LinkId, sg4::Link*> links;
  for (const auto& [id, bandwidth] : link_bandwidths) {
    links[id] = zone->create_link(fmt::format("{}#{}", layout.link(id).name, id), bandwidth)->set_latency(0)->seal();
  }
  for (std::size_t i = 0; i < routes.size(); ++i) {
    SimgridRouteEnds ends;
    ends.from = zone->create_host(fmt::format("route{}.from", i), 1.0)->seal();
    ends.to = zone->create_host(fmt::format("route{}.to", i), 1.0)->seal();
    std::vector<sg4::LinkInRoute> hops;
    for (LinkId l : routes[i].links) hops.emplace_back(links.at(l));
    if (std::isfinite(routes[i].rate_cap))
      hops.emplace_back(zone->create_link(fmt::format("route{}.cap", i), routes[i].rate_cap)->set_latency(0)->seal());
    zone->add_route(ends.from->get_netpoint(), ends.to->get_netpoint(), nullptr, nullptr, hops, false);
    p.routes.push_back(ends);
  }
  zone->seal();
  return p;
}

}  // namespace strata
