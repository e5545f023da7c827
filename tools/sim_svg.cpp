// The SVG picture of `stepback sim --svg`: one panel per strategy, attempts per second
// against the capacity, with successes, deferrals and losses over the run's seconds.
//
// The picture must read on its own (in a README, without the tables), so every panel names
// its strategy and figures, the axes are labelled in seconds and in multiples of the capacity,
// and a legend explains the colours. It is plain SVG: no scripts, no external files, a
// generic font, so any viewer renders it the same.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "sim.hpp"

namespace stepback::tools {
namespace {

constexpr int kWidth = 1000;
constexpr int kLeft = 64;  // Room for the y tick labels.
constexpr int kRight = 24;
constexpr int kHeader = 92;   // Title, subtitle and legend.
constexpr int kPanel = 236;   // One strategy: title, plot, x tick labels.
constexpr int kPlotTop = 30;  // From the panel's top to the plot's.
constexpr int kPlotHeight = 168;
constexpr int kPlotWidth = kWidth - kLeft - kRight;

// One colour per series; the capacity is black and dashed, the outage grey.
constexpr const char* kAttemptsColour = "#1f5fbf";
constexpr const char* kSuccessColour = "#a8dcb2";
constexpr const char* kDeferColour = "#e08a00";
constexpr const char* kLostColour = "#c62828";

// Writes `text` with the five XML special characters escaped.
void put_escaped(std::FILE* out, const char* text) {
  for (const char* p = text; *p != '\0'; ++p) {
    switch (*p) {
      case '&':
        std::fputs("&amp;", out);
        break;
      case '<':
        std::fputs("&lt;", out);
        break;
      case '>':
        std::fputs("&gt;", out);
        break;
      case '"':
        std::fputs("&quot;", out);
        break;
      case '\'':
        std::fputs("&apos;", out);
        break;
      default:
        std::fputc(*p, out);
    }
  }
}

// Writes a <text> element at (x, y) with the escaped `text`; `attributes` are trusted.
void put_text(std::FILE* out, double x, double y, const char* attributes, const char* text) {
  std::fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" %s>", x, y, attributes);
  put_escaped(out, text);
  std::fputs("</text>\n", out);
}

// Where one panel's plot lies, and what its axes span.
struct Frame {
  double top;       // The plot's top in the whole picture.
  double seconds;   // The x axis spans [0, seconds].
  double y_max;     // The y axis spans [0, y_max] multiples of the capacity.
  std::size_t bin;  // Seconds per plotted point.
  std::uint32_t capacity;

  double x(double t) const { return kLeft + kPlotWidth * std::min(t, seconds) / seconds; }
  // Values above the axis are drawn at its top (the outage's first seconds can be far off).
  double y(double multiple) const {
    return top + kPlotHeight * (1 - std::min(multiple, y_max) / y_max);
  }
};

// The smallest "nice" step (1, 2 or 5 times a power of ten) that splits `span` into at most
// `ticks` parts.
double nice_step(double span, int ticks) {
  const double raw = span / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

// A step in seconds for the x axis: minutes when the span is long enough for them.
double time_step(double seconds) {
  for (const double s : {10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0}) {
    if (seconds / s <= 12) return s;
  }
  return nice_step(seconds, 12);
}

// Counts of `field` in bins of `bin` seconds, each bin its busiest second, so a downsampled
// picture never hides a peak.
std::vector<double> binned(const std::vector<FleetSecond>& seconds,
                           std::uint32_t FleetSecond::*field, std::size_t bin) {
  std::vector<double> out((seconds.size() + bin - 1) / bin, 0.0);
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    out[i / bin] = std::max(out[i / bin], static_cast<double>(seconds[i].*field));
  }
  return out;
}

// The most attempts in one second after recovery, in multiples of the capacity, as plotted.
double peak_after_outage(const Frame& f, const std::vector<double>& attempts, double outage) {
  double peak = 0;
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    if (static_cast<double>(i * f.bin) >= outage) peak = std::max(peak, attempts[i]);
  }
  return peak / f.capacity;
}

// `values` (counts per second) in multiples of the capacity: a polyline `width` wide, or
// with width 0 an area filled down to zero.
void put_series(std::FILE* out, const Frame& f, const std::vector<double>& values, const char* name,
                const char* colour, double width) {
  if (width > 0) {
    std::fprintf(out,
                 "<polyline class=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" "
                 "stroke-linejoin=\"round\" points=\"",
                 name, colour, width);
  } else {
    std::fprintf(out, "<polygon class=\"%s\" fill=\"%s\" points=\"%.1f,%.1f ", name, colour, f.x(0),
                 f.y(0));
  }
  double t = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    t = (static_cast<double>(i) + 0.5) * static_cast<double>(f.bin);
    std::fprintf(out, "%s%.1f,%.1f", i == 0 ? "" : " ", f.x(t), f.y(values[i] / f.capacity));
  }
  if (width <= 0) std::fprintf(out, " %.1f,%.1f", f.x(t), f.y(0));
  std::fputs("\"/>\n", out);
}

// The axes: grid lines and tick labels in multiples of the capacity and in seconds.
void put_axes(std::FILE* out, const Frame& f) {
  const double bottom = f.top + kPlotHeight;
  char label[32];
  const double y_step = nice_step(f.y_max, 5);
  for (int i = 0; i * y_step <= f.y_max + y_step / 1000; ++i) {
    const double m = i * y_step;
    std::fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>\n",
                 kLeft, f.y(m), kLeft + kPlotWidth, f.y(m));
    std::snprintf(label, sizeof label, "%gx", m);
    put_text(out, kLeft - 6, f.y(m) + 4, "text-anchor=\"end\"", label);
  }
  const double t_step = time_step(f.seconds);
  for (int i = 0; i * t_step <= f.seconds + t_step / 1000; ++i) {
    const double t = i * t_step;
    std::fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n",
                 f.x(t), bottom, f.x(t), bottom + 4);
    std::snprintf(label, sizeof label, "%g", t);
    put_text(out, f.x(t), bottom + 16, "text-anchor=\"middle\"", label);
  }
  std::fprintf(out,
               "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"none\" "
               "stroke=\"#888\"/>\n",
               kLeft, f.top, kPlotWidth, kPlotHeight);
  put_text(out, kLeft + kPlotWidth, bottom + 30, "text-anchor=\"end\" fill=\"#555\"",
           "seconds since the outage began");
  std::fprintf(out,
               "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\" "
               "fill=\"#555\">per second, x capacity</text>\n",
               f.top + kPlotHeight / 2.0);
}

// A percentage for a panel title: "0%" when none, else two decimals.
void format_percent(char* text, std::size_t size, std::uint32_t part, std::uint32_t whole) {
  if (part == 0) {
    std::snprintf(text, size, "0%%");
  } else {
    std::snprintf(text, size, "%.2f%%", 100 * static_cast<double>(part) / whole);
  }
}

// The panel's heading: the strategy, whether it is the profile's own, and its figures.
void put_panel_title(std::FILE* out, double y, const FleetScenario& s, const FleetRun& run) {
  const FleetReport& r = run.report;
  char gave_up[16];
  char deferred[16];
  char lost[16];
  format_percent(gave_up, sizeof gave_up, r.deferred_clients + r.lost, s.clients);
  format_percent(deferred, sizeof deferred, r.deferred_clients, s.clients);
  format_percent(lost, sizeof lost, r.lost, s.clients);
  std::fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"14\"><tspan font-weight=\"bold\">",
               kLeft, y);
  put_escaped(out, run.label);
  std::fputs(run.own ? " \xE2\x98\x85 the profile's own" : "", out);
  std::fprintf(out,
               "</tspan>: peak %.2fx capacity, gave up %s (deferred %s, lost %s), "
               "last done %.0f s</text>\n",
               static_cast<double>(r.peak_attempts) / s.capacity, gave_up, deferred, lost,
               static_cast<double>(r.last_done.count()) / 1000);
}

// The frame of a panel whose plot starts at `top`: the y axis fits the load after recovery,
// since the outage's first seconds (the whole fleet at once) would flatten everything else.
Frame frame_of(double top, double seconds, std::size_t bin, const FleetScenario& s,
               const std::vector<double>& attempts) {
  Frame f{top, seconds, 1, bin, s.capacity};
  const double outage = static_cast<double>(s.outage.count()) / 1000;
  const double want = std::max(1.5, 1.15 * peak_after_outage(f, attempts, outage));
  const double step = nice_step(want, 5);
  f.y_max = std::ceil(want / step) * step;
  return f;
}

// The seconds a run's panel spans (the outage and every second the run recorded) and how
// many seconds each plotted point covers: at most one point per pixel column keeps the file
// small whatever the incident's length.
std::size_t span_of(const FleetScenario& s, const FleetRun& run, double* seconds) {
  *seconds = std::max(std::ceil(static_cast<double>(s.outage.count()) / 1000) + 1,
                      static_cast<double>(run.report.per_second.size()));
  const auto bin = static_cast<std::size_t>(std::ceil(*seconds / kPlotWidth));
  *seconds = std::ceil(*seconds / static_cast<double>(bin)) * static_cast<double>(bin);
  return bin;
}

// One strategy's panel, from `top` down. Each panel spans its own run, so a short recovery
// is as legible as a long one; the tick labels say how long each took.
void put_panel(std::FILE* out, double top, const FleetScenario& s, const FleetRun& run) {
  const std::vector<FleetSecond>& ps = run.report.per_second;
  double seconds = 0;
  const std::size_t bin = span_of(s, run, &seconds);
  const std::vector<double> attempts = binned(ps, &FleetSecond::attempts, bin);
  const Frame f = frame_of(top + kPlotTop, seconds, bin, s, attempts);
  if (run.own) {
    std::fprintf(out,
                 "<rect x=\"4\" y=\"%.1f\" width=\"%d\" height=\"%d\" rx=\"6\" fill=\"#fff6d6\" "
                 "stroke=\"#e0b000\"/>\n",
                 top + 8, kWidth - 8, kPanel - 12);
  }
  const double outage = static_cast<double>(s.outage.count()) / 1000;
  std::fprintf(out,
               "<rect class=\"outage\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
               "fill=\"#d9d9d9\"/>\n",
               kLeft, f.top, f.x(outage) - kLeft, kPlotHeight);
  if (f.x(outage) - kLeft > 90) {
    put_text(out, kLeft + 4, f.top + kPlotHeight - 6, "fill=\"#555\"",
             s.network_return ? "network down" : "server down");
  }
  put_axes(out, f);
  // Successes are an area under the attempts (they are attempts that got through), the
  // give-ups lines over both, and the capacity on top of everything.
  put_series(out, f, binned(ps, &FleetSecond::successes, bin), "successes", kSuccessColour, 0);
  put_series(out, f, attempts, "attempts", kAttemptsColour, 1.6);
  if (run.report.deferrals > 0) {
    put_series(out, f, binned(ps, &FleetSecond::deferred, bin), "deferred", kDeferColour, 1.6);
  }
  if (run.report.lost > 0) {
    put_series(out, f, binned(ps, &FleetSecond::lost, bin), "lost", kLostColour, 1.6);
  }
  std::fprintf(out,
               "<line class=\"capacity\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
               "stroke=\"#000\" stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>\n",
               kLeft, f.y(1), kLeft + kPlotWidth, f.y(1));
  const double highest = *std::max_element(attempts.begin(), attempts.end()) / s.capacity;
  if (highest > f.y_max) {
    char note[64];
    std::snprintf(note, sizeof note, "off scale during the outage: up to %.0fx", highest);
    put_text(out, kLeft + kPlotWidth - 6, f.top + 16, "text-anchor=\"end\" fill=\"#555\"", note);
  }
  put_panel_title(out, top + 22, s, run);
}

// One legend entry at x: a swatch (a line, dashed or not, or a box) and its words.
double put_key(std::FILE* out, double x, double y, const char* colour, const char* dash,
               const char* words, double width) {
  if (dash == nullptr) {
    std::fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"22\" height=\"10\" fill=\"%s\"/>\n", x,
                 y - 9, colour);
  } else {
    std::fprintf(out,
                 "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                 "stroke-width=\"2.5\" stroke-dasharray=\"%s\"/>\n",
                 x, y - 4, x + 22, y - 4, colour, dash);
  }
  put_text(out, x + 28, y, "", words);
  return x + width;
}

void put_header(std::FILE* out, const char* title, bool downsampled) {
  put_text(out, kLeft - 50, 26, "font-size=\"18\" font-weight=\"bold\"", title);
  char sub[200];
  std::snprintf(sub, sizeof sub,
                "One panel per jitter strategy, over its own run: counts per second in "
                "multiples of the capacity the server serves after the outage%s.",
                downsampled ? " (a long run plots each span's busiest second)" : "");
  put_text(out, kLeft - 50, 48, "fill=\"#333\"", sub);
  double x = kLeft - 50;
  const double y = 76;
  x = put_key(out, x, y, kAttemptsColour, "none", "attempts", 110);
  x = put_key(out, x, y, kSuccessColour, nullptr, "successes", 116);
  x = put_key(out, x, y, kDeferColour, "none", "deferred (run again later)", 214);
  x = put_key(out, x, y, kLostColour, "none", "lost (gave up for good)", 196);
  x = put_key(out, x, y, "#000", "6 4", "capacity", 108);
  x = put_key(out, x, y, "#d9d9d9", nullptr, "outage", 90);
  std::fprintf(out,
               "<rect x=\"%.1f\" y=\"%.1f\" width=\"22\" height=\"12\" rx=\"3\" "
               "fill=\"#fff6d6\" stroke=\"#e0b000\"/>\n",
               x, y - 10);
  put_text(out, x + 28, y, "", "\xE2\x98\x85 profile's own");
}

}  // namespace

void write_fleet_svg(std::FILE* out, const char* title, const FleetScenario& scenario,
                     const std::vector<FleetRun>& runs) {
  bool downsampled = false;
  for (const FleetRun& run : runs) {
    double seconds = 0;
    downsampled = downsampled || span_of(scenario, run, &seconds) > 1;
  }
  const int height = kHeader + static_cast<int>(runs.size()) * kPanel + 8;
  std::fprintf(out,
               "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n<title>",
               kWidth, height, kWidth, height);
  put_escaped(out, title);
  std::fprintf(out, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", kWidth, height);
  put_header(out, title, downsampled);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::fprintf(out, "<g class=\"strategy\">\n");
    put_panel(out, kHeader + static_cast<double>(i) * kPanel, scenario, runs[i]);
    std::fputs("</g>\n", out);
  }
  std::fputs("</svg>\n", out);
}

}  // namespace stepback::tools
