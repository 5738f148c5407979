#pragma once

/// What the --html reports inline, embedded at build time (cmake/embed_assets.cmake): Apache ECharts'
/// minified build (third_party/echarts, pinned) and the report page (sim/report/html_report.html).

#include <string_view>

namespace strata {

std::string_view echarts_js();
std::string_view html_template();

}  // namespace strata
